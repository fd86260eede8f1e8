# --- Leaderboard verdicts: letters, split-half stability, adjacent-pair resolution, SNR ---------
# What a leaderboard maintainer may print beside the ranks: which systems are tied (letters),
# how stable the order is (split halves), how many questions each adjacent gap needs, and
# whether the benchmark (and each category) has the signal-to-noise to rank at all; the best
# model, honestly (the top score corrected for selection, the confidence sets for the best and
# the top k); and, where the run has costs, what each model costs and the cost-accuracy frontier.


# --- leaderboard.csv (one row per system) and benchmark_quality.csv ------------------------------
rule leaderboard_table:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("leaderboard_table"),
    output:
        **table_outputs(
            "leaderboard",
            "leaderboard_table",
            "5. Leaderboard verdicts",
            {"item": "letters, stability, resolution"},
            parquet=True,
            tex=False,
        ),
        **table_outputs(
            "benchmark_quality",
            "leaderboard_quality",
            "5. Leaderboard verdicts",
            {"item": "signal-to-noise"},
            tex=False,
        ),
        **table_outputs(
            "winner",
            "leaderboard_winner",
            "5. Leaderboard verdicts",
            {"item": "the top score, corrected"},
            parquet=True,
            tex=False,
        ),
    log:
        "results/logs/leaderboard_table/leaderboard_table.log",
    benchmark:
        "results/benchmarks/leaderboard_table/leaderboard_table.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
        level=lookup(dpath="level", within=config),
        power=lookup(dpath="leaderboard/power", within=config),
        splits=lookup(dpath="leaderboard/splits", within=config),
        seed=lookup(dpath="leaderboard/seed", within=config),
        top_k=lookup(dpath="leaderboard/top_k", within=config),
    message:
        "--- Leaderboard verdicts: letters, stability, resolution, signal-to-noise, the best."
    script:
        "../scripts/job.py"


# --- The board with intervals and letters, and the adjacent-pair resolution strip --------------
rule leaderboard_figure:
    input:
        table=rules.leaderboard_table.output.leaderboard_parquet,
        code=package_code("leaderboard_figure"),
    output:
        **figure_outputs(
            "leaderboard_verdicts",
            "leaderboard_figure",
            "5. Leaderboard verdicts",
            {"item": "board and resolution strip"},
        ),
        **figure_outputs(
            "best_set",
            "leaderboard_best_set",
            "5. Leaderboard verdicts",
            {"item": "confidence set for the best"},
        ),
    log:
        "results/logs/leaderboard_figure/leaderboard_figure.log",
    benchmark:
        "results/benchmarks/leaderboard_figure/leaderboard_figure.tsv"
    params:
        level=lookup(dpath="level", within=config),
        alpha=lookup(dpath="alpha", within=config),
        max_systems=lookup(dpath="display/max_systems", within=config),
    message:
        "--- Leaderboard verdicts figure."
    script:
        "../scripts/job.py"


# --- Cost beside accuracy (only where the run has costs: `prices:`, or a `cost` column) --------
if COSTED:

    # --- data/costs.parquet: the cost of every analysed (model, question) ----------------------
    rule costs:
        input:
            unpack(item_inputs),
            item_table=rules.subsample.output.item_table,
            code=package_code("costs"),
        output:
            costs="data/costs.parquet",
        log:
            "results/logs/costs/costs.log",
        benchmark:
            "results/benchmarks/costs/costs.tsv"
        params:
            sources=PREDICTION_SOURCES,
            prices=lookup(dpath="prices", within=config),
        message:
            "--- The cost of every answer: token usage times the price table."
        script:
            "../scripts/job.py"

    # --- cost.csv (one row per costed model) and frontier.csv ----------------------------------
    rule cost_table:
        input:
            scores=rules.subsample.output.scores,
            costs=rules.costs.output.costs,
            code=package_code("cost_table"),
        output:
            **table_outputs(
                "cost",
                "cost_table",
                "5. Leaderboard verdicts",
                {"item": "cost per question"},
                parquet=True,
                tex=False,
            ),
            **table_outputs(
                "frontier",
                "cost_frontier_table",
                "5. Leaderboard verdicts",
                {"item": "cost-accuracy frontier"},
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/cost_table/cost_table.log",
        benchmark:
            "results/benchmarks/cost_table/cost_table.tsv"
        params:
            alpha=lookup(dpath="alpha", within=config),
            level=lookup(dpath="level", within=config),
            seed=lookup(dpath="leaderboard/seed", within=config),
        message:
            "--- Cost per question, accuracy per dollar and the cost-accuracy frontier."
        script:
            "../scripts/job.py"

    # --- The cost-accuracy frontier, both intervals drawn ---------------------------------------
    rule cost_figure:
        input:
            cost=rules.cost_table.output.cost_parquet,
            frontier=rules.cost_table.output.frontier_parquet,
            code=package_code("cost_figure"),
        output:
            **figure_outputs(
                "cost_frontier",
                "cost_figure",
                "5. Leaderboard verdicts",
                {"item": "cost-accuracy frontier figure"},
            ),
        log:
            "results/logs/cost_figure/cost_figure.log",
        benchmark:
            "results/benchmarks/cost_figure/cost_figure.tsv"
        params:
            alpha=lookup(dpath="alpha", within=config),
            max_systems=lookup(dpath="display/max_systems", within=config),
        message:
            "--- The cost-accuracy frontier figure."
        script:
            "../scripts/job.py"


# --- Target rule of the leaderboard stage --------------------------------------------------------
rule leaderboard_all:
    input:
        rules.leaderboard_table.output,
        rules.leaderboard_figure.output,
        cost_outputs(),
