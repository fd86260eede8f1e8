# --- Leaderboard verdicts: letters, split-half stability, adjacent-pair resolution, SNR ---------
# What a leaderboard maintainer may print beside the ranks: which systems are tied (letters),
# how stable the order is (split halves), how many questions each adjacent gap needs, and
# whether the benchmark (and each category) has the signal-to-noise to rank at all.


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
    message:
        "--- Leaderboard verdicts: letters, split-half stability, resolution, signal-to-noise."
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
    log:
        "results/logs/leaderboard_figure/leaderboard_figure.log",
    benchmark:
        "results/benchmarks/leaderboard_figure/leaderboard_figure.tsv"
    params:
        level=lookup(dpath="level", within=config),
        max_systems=lookup(dpath="display/max_systems", within=config),
    message:
        "--- Leaderboard verdicts figure."
    script:
        "../scripts/job.py"


# --- Target rule of the leaderboard stage --------------------------------------------------------
rule leaderboard_all:
    input:
        rules.leaderboard_table.output,
        rules.leaderboard_figure.output,
