# --- Leaderboard verdicts: letters, split-half stability, adjacent-pair resolution, SNR ---------
# What a leaderboard maintainer may print beside the ranks: which systems are tied (letters),
# how stable the order is (split halves), how many questions each adjacent gap needs, and
# whether the benchmark (and each category) has the signal-to-noise to rank at all.


# --- leaderboard.csv (one row per system) and benchmark_quality.csv ------------------------------
rule leaderboard_table:
    input:
        item_table=rules.subsample.output.item_table,
        code=package_code("leaderboard_table"),
    output:
        csv=report(
            "results/tables/leaderboard.csv",
            caption="../report/leaderboard_table.rst",
            category="5. Leaderboard verdicts",
            labels={"item": "letters, stability, resolution"},
        ),
        md="results/tables/leaderboard.md",
        quality_csv=report(
            "results/tables/benchmark_quality.csv",
            caption="../report/leaderboard_quality.rst",
            category="5. Leaderboard verdicts",
            labels={"item": "signal-to-noise"},
        ),
        quality_md="results/tables/benchmark_quality.md",
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
        "../scripts/leaderboard_table.py"


# --- The board with intervals and letters, and the adjacent-pair resolution strip --------------
rule leaderboard_figure:
    input:
        table=rules.leaderboard_table.output.csv,
        code=package_code("leaderboard_figure"),
    output:
        png=report(
            "results/figures/leaderboard_verdicts.png",
            caption="../report/leaderboard_figure.rst",
            category="5. Leaderboard verdicts",
            labels={"item": "board and resolution strip"},
        ),
        svg="results/figures/leaderboard_verdicts.svg",
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
        "../scripts/leaderboard_figure.py"


# --- Target rule of the leaderboard stage --------------------------------------------------------
rule leaderboard_all:
    input:
        rules.leaderboard_table.output,
        rules.leaderboard_figure.output,
