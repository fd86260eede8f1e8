# --- Simulate stage: seeded simulation studies -----------------------------------------------------
# Every row of a grid under config/simulation/ is its own job; its numbers depend only on the row's
# values and simulation/seed (evalbars.seeding), never on job order.
# On a cluster (profiles/slurm) the setting jobs of all three grids form the group
# `simulation_settings`: the profile's `group-components` sets how many settings one cluster job
# runs (groups change nothing when running locally). Tables and figures are local rules: seconds
# of work each, less than a cluster job costs to start.

LEADERBOARD_GRID = simulation_grid("leaderboard")
FWER_GRID = simulation_grid("fwer")
CLUSTERED_GRID = simulation_grid("clustered")
LEADERBOARD_FIGURE_SETTING = LEADERBOARD_GRID.wildcard_pattern.format(
    **lookup(dpath="simulation/leaderboard/figure", within=config)
)


# --- 1. The unpaired leaderboard (leaderboard-luck explainer): one job per (questions, spread) ---
rule sim_leaderboard:
    input:
        code=package_code("sim_leaderboard"),
    output:
        summary=f"results/simulations/leaderboard/{LEADERBOARD_GRID.wildcard_pattern}/summary.parquet",
        runs=f"results/simulations/leaderboard/{LEADERBOARD_GRID.wildcard_pattern}/runs.parquet",
        one_run=f"results/simulations/leaderboard/{LEADERBOARD_GRID.wildcard_pattern}/one_run.parquet",
    log:
        f"results/logs/sim_leaderboard/{LEADERBOARD_GRID.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/sim_leaderboard/{LEADERBOARD_GRID.wildcard_pattern}.tsv"
    group:
        "simulation_settings"
    params:
        setting=LEADERBOARD_GRID.instance,
        runs=lookup(dpath="simulation/leaderboard/runs", within=config),
        true_rates=lookup(dpath="simulation/leaderboard/true_rates", within=config),
        seed=lookup(dpath="simulation/seed", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- Leaderboard simulation: {wildcards}."
    script:
        "../scripts/job.py"


rule sim_leaderboard_table:
    input:
        settings=expand(
            "results/simulations/leaderboard/{setting}/summary.parquet",
            setting=LEADERBOARD_GRID.instance_patterns,
        ),
        code=package_code("sim_leaderboard_table"),
    output:
        leaderboard_parquet="results/simulations/leaderboard.parquet",
        leaderboard_csv=report(
            "results/simulations/leaderboard.csv",
            caption="../report/sim_leaderboard_table.rst",
            category="6. Simulations",
            subcategory="Leaderboard luck",
            labels={"item": "table: every setting and rule"},
        ),
    log:
        "results/logs/sim_leaderboard_table/sim_leaderboard_table.log",
    localrule: True
    params:
        sort_by=["spread", "questions", "rule"],
    message:
        "--- Collecting the leaderboard settings."
    script:
        "../scripts/job.py"


rule sim_leaderboard_figures:
    input:
        table=rules.sim_leaderboard_table.output.leaderboard_parquet,
        runs=f"results/simulations/leaderboard/{LEADERBOARD_FIGURE_SETTING}/runs.parquet",
        one_run=f"results/simulations/leaderboard/{LEADERBOARD_FIGURE_SETTING}/one_run.parquet",
        code=package_code("sim_leaderboard_figures"),
    output:
        **figure_outputs(
            "sim_leaderboard_one_run",
            "sim_leaderboard_one_run",
            "6. Simulations",
            {"item": "(a) one run's leaderboard"},
            key="one_run",
            subcategory="Leaderboard luck",
        ),
        **figure_outputs(
            "sim_leaderboard_leader_grid",
            "sim_leaderboard_leader_grid",
            "6. Simulations",
            {"item": "(b) the leader's questions"},
            key="leader_grid",
            subcategory="Leaderboard luck",
        ),
        **figure_outputs(
            "sim_leaderboard_difference_histogram",
            "sim_leaderboard_difference_histogram",
            "6. Simulations",
            {"item": "(c) A minus B over runs"},
            key="difference_histogram",
            subcategory="Leaderboard luck",
        ),
        **figure_outputs(
            "sim_leaderboard_decision_rules",
            "sim_leaderboard_decision_rules",
            "6. Simulations",
            {"item": "(d) decision rules across N"},
            key="decision_rules",
            subcategory="Leaderboard luck",
        ),
        **figure_outputs(
            "sim_leaderboard_played_out",
            "sim_leaderboard_played_out",
            "6. Simulations",
            {"item": "(e) one run played out"},
            key="played_out",
            subcategory="Leaderboard luck",
        ),
    log:
        "results/logs/sim_leaderboard_figures/sim_leaderboard_figures.log",
    localrule: True
    params:
        spread=lookup(dpath="simulation/leaderboard/figure/spread", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- Leaderboard figures."
    script:
        "../scripts/job.py"


# --- 2. Precision and questions needed (closed forms) ---------------------------------------------
rule sim_precision:
    input:
        item_table=branch(
            lookup(dpath="simulation/precision/from_data", within=config),
            then=rules.subsample.output.item_table,
        ),
        code=package_code("sim_precision"),
    output:
        precision_parquet="results/simulations/precision.parquet",
        questions_needed_parquet="results/simulations/questions_needed.parquet",
        precision_csv=report(
            "results/simulations/precision.csv",
            caption="../report/sim_precision_table.rst",
            category="6. Simulations",
            subcategory="Precision and questions needed",
            labels={"item": "table: interval half-widths"},
        ),
        questions_needed_csv=report(
            "results/simulations/questions_needed.csv",
            caption="../report/sim_questions_needed_table.rst",
            category="6. Simulations",
            subcategory="Precision and questions needed",
            labels={"item": "table: questions needed"},
        ),
    log:
        "results/logs/sim_precision/sim_precision.log",
    localrule: True
    params:
        precision=lookup(dpath="simulation/precision", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- Interval half-widths and questions needed per gap."
    script:
        "../scripts/job.py"


rule sim_precision_figures:
    input:
        precision=rules.sim_precision.output.precision_parquet,
        questions_needed=rules.sim_precision.output.questions_needed_parquet,
        code=package_code("sim_precision_figures"),
    output:
        **figure_outputs(
            "sim_precision_halfwidth",
            "sim_precision_halfwidth",
            "6. Simulations",
            {"item": "figure: half-width over N"},
            key="halfwidth",
            subcategory="Precision and questions needed",
        ),
        **figure_outputs(
            "sim_questions_needed",
            "sim_questions_needed",
            "6. Simulations",
            {"item": "figure: questions needed"},
            key="questions_needed",
            subcategory="Precision and questions needed",
        ),
    log:
        "results/logs/sim_precision_figures/sim_precision_figures.log",
    localrule: True
    params:
        level=lookup(dpath="level", within=config),
    message:
        "--- Precision figures."
    script:
        "../scripts/job.py"


# --- 3. Family-wise error and power on shared questions (the paper's section 5.1) ----------------
rule sim_fwer:
    input:
        code=package_code("sim_fwer"),
    output:
        summary=f"results/simulations/fwer/{FWER_GRID.wildcard_pattern}/summary.parquet",
    log:
        f"results/logs/sim_fwer/{FWER_GRID.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/sim_fwer/{FWER_GRID.wildcard_pattern}.tsv"
    group:
        "simulation_settings"
    params:
        setting=FWER_GRID.instance,
        replications=lookup(dpath="simulation/fwer/replications", within=config),
        mean_accuracy=lookup(dpath="simulation/fwer/mean_accuracy", within=config),
        concentration=lookup(dpath="simulation/fwer/concentration", within=config),
        seed=lookup(dpath="simulation/seed", within=config),
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- FWER simulation: {wildcards}."
    script:
        "../scripts/job.py"


rule sim_fwer_table:
    input:
        settings=expand(
            "results/simulations/fwer/{setting}/summary.parquet",
            setting=FWER_GRID.instance_patterns,
        ),
        code=package_code("sim_fwer_table"),
    output:
        fwer_parquet="results/simulations/fwer.parquet",
        fwer_csv=report(
            "results/simulations/fwer.csv",
            caption="../report/sim_fwer_table.rst",
            category="6. Simulations",
            subcategory="Family-wise error",
            labels={"item": "table: every setting, K and method"},
        ),
    log:
        "results/logs/sim_fwer_table/sim_fwer_table.log",
    localrule: True
    params:
        sort_by=["gap", "rho", "questions", "models", "method"],
    message:
        "--- Collecting the FWER settings."
    script:
        "../scripts/job.py"


rule sim_fwer_figures:
    input:
        table=rules.sim_fwer_table.output.fwer_parquet,
        code=package_code("sim_fwer_figures"),
    output:
        **figure_outputs(
            "sim_fwer_methods",
            "sim_fwer_methods",
            "6. Simulations",
            {"item": "figure: FWER by method"},
            key="methods",
            subcategory="Family-wise error",
        ),
        **figure_outputs(
            "sim_fwer_models",
            "sim_fwer_models",
            "6. Simulations",
            {"item": "figure: FWER across K"},
            key="models",
            subcategory="Family-wise error",
        ),
        **figure_outputs(
            "sim_fwer_power",
            "sim_fwer_power",
            "6. Simulations",
            {"item": "figure: power under a true gap"},
            key="power",
            subcategory="Family-wise error",
        ),
    log:
        "results/logs/sim_fwer_figures/sim_fwer_figures.log",
    localrule: True
    params:
        figure=lookup(dpath="simulation/fwer/figure", within=config),
    message:
        "--- FWER figures."
    script:
        "../scripts/job.py"


# --- 4. Clustered questions: naive vs clustered vs mixed-model SE ---------------------------------
rule sim_clustered:
    input:
        code=package_code("sim_clustered"),
    output:
        summary=f"results/simulations/clustered/{CLUSTERED_GRID.wildcard_pattern}/summary.parquet",
    log:
        f"results/logs/sim_clustered/{CLUSTERED_GRID.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/sim_clustered/{CLUSTERED_GRID.wildcard_pattern}.tsv"
    group:
        "simulation_settings"
    params:
        setting=CLUSTERED_GRID.instance,
        questions=lookup(dpath="simulation/clustered/questions", within=config),
        replications=lookup(dpath="simulation/clustered/replications", within=config),
        mean_accuracy=lookup(dpath="simulation/clustered/mean_accuracy", within=config),
        seed=lookup(dpath="simulation/seed", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- Clustered-questions simulation: {wildcards}."
    script:
        "../scripts/job.py"


rule sim_clustered_table:
    input:
        settings=expand(
            "results/simulations/clustered/{setting}/summary.parquet",
            setting=CLUSTERED_GRID.instance_patterns,
        ),
        code=package_code("sim_clustered_table"),
    output:
        clustered_parquet="results/simulations/clustered.parquet",
        clustered_csv=report(
            "results/simulations/clustered.csv",
            caption="../report/sim_clustered_table.rst",
            category="6. Simulations",
            subcategory="Clustered questions",
            labels={"item": "table: SEs and coverage"},
        ),
    log:
        "results/logs/sim_clustered_table/sim_clustered_table.log",
    localrule: True
    params:
        sort_by=["design_effect", "cluster_size", "icc", "estimator"],
    message:
        "--- Collecting the clustered-questions settings."
    script:
        "../scripts/job.py"


rule sim_clustered_figure:
    input:
        table=rules.sim_clustered_table.output.clustered_parquet,
        code=package_code("sim_clustered_figure"),
    output:
        **figure_outputs(
            "sim_clustered",
            "sim_clustered",
            "6. Simulations",
            {"item": "figure: SE ratio and coverage"},
            subcategory="Clustered questions",
        ),
    log:
        "results/logs/sim_clustered_figure/sim_clustered_figure.log",
    localrule: True
    params:
        level=lookup(dpath="level", within=config),
    message:
        "--- Clustered-questions figure."
    script:
        "../scripts/job.py"


# --- Target rule of the simulate stage -------------------------------------------------------------
rule simulate_all:
    input:
        rules.sim_leaderboard_table.output,
        rules.sim_leaderboard_figures.output,
        rules.sim_precision.output,
        rules.sim_precision_figures.output,
        rules.sim_fwer_table.output,
        rules.sim_fwer_figures.output,
        rules.sim_clustered_table.output,
        rules.sim_clustered_figure.output,
