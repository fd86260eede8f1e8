# --- Rank uncertainty (the rank-uncertainty calculator): intervals, neighbours, tiers, ranks ---
# Two readings of the subsample's ordering in one table: unpaired (each model an independent
# estimate; the `evalbars ranks` calculator) and paired (bootstrap over the shared questions).


# --- Both readings: CSV (tidy, column `reading`) and Markdown (side by side) -------------------
rule ranks_table:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("ranks_table"),
    output:
        **table_outputs("ranks", "ranks", "4. Ranks", {"item": "table"}, parquet=True, tex=False),
    log:
        "results/logs/ranks_table/ranks_table.log",
    benchmark:
        "results/benchmarks/ranks_table/ranks_table.tsv"
    params:
        level=lookup(dpath="level", within=config),
        draws=lookup(dpath="ranks/draws", within=config),
        replicates=lookup(dpath="ranks/replicates", within=config),
        seed=lookup(dpath="ranks/seed", within=config),
        stratify=lookup(dpath="ranks/stratify", within=config),
    message:
        "--- Rank uncertainty: unpaired and paired readings."
    script:
        "../scripts/job.py"


# --- Forest plot (tiers shaded), rank-range plot and overview of every system ---------------
rule ranks_figures:
    input:
        table=rules.ranks_table.output.ranks_parquet,
        code=package_code("ranks_figures"),
    output:
        **figure_outputs("ranks_forest", "ranks_forest", "4. Ranks", {"item": "forest plot"}),
        **figure_outputs("ranks_range", "ranks_range", "4. Ranks", {"item": "rank ranges"}),
        **figure_outputs(
            "ranks_overview",
            "ranks_overview",
            "4. Ranks",
            {"item": "every system"},
        ),
    log:
        "results/logs/ranks_figures/ranks_figures.log",
    benchmark:
        "results/benchmarks/ranks_figures/ranks_figures.tsv"
    params:
        level=lookup(dpath="level", within=config),
        max_systems=lookup(dpath="display/max_systems", within=config),
    message:
        "--- Rank uncertainty figures."
    script:
        "../scripts/job.py"


# --- Target rule of the ranks stage -------------------------------------------------------------
rule ranks_all:
    input:
        rules.ranks_table.output,
        rules.ranks_figures.output,
