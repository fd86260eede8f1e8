# --- Battles stage (config `data: battles`): pairwise battles read as Bradley-Terry ratings ------
# The files under `predictions` hold battles (model_a, model_b, winner: LMArena, Arena-Hard-Auto,
# a plain table). Read -> fit (Parquet between the jobs) -> tables, claims and figures; the
# report's first screen of a battles run. Settings under `battles:` in the config.

BATTLES = smk.battles_run(config)


# --- The battles, what was read, and each model's battles ---------------------------------------
rule battles_read:
    input:
        files=SOURCE_FILES,
        code=package_code("battles_read"),
    output:
        **table_outputs(
            "battles_models",
            "battles_models",
            "1. Battles",
            {"item": "what was read"},
            tex=False,
        ),
        battles="results/battles/battles.parquet",
        summary="results/battles/summary.json",
    log:
        "results/logs/battles_read/battles_read.log",
    benchmark:
        "results/benchmarks/battles_read/battles_read.tsv"
    params:
        sources=PREDICTION_SOURCES,
        strong_weight=lookup(dpath="battles/strong_weight", within=config),
        baseline=lookup(dpath="battles/baseline", within=config),
        answers=lookup(dpath="battles/answers", within=config),
    message:
        "--- Reading the battles."
    script:
        "../scripts/job.py"


# --- The Bradley-Terry fit, its covariances and the prompt-cluster bootstrap ---------------------
rule battles_fit:
    input:
        battles=rules.battles_read.output.battles,
        summary=rules.battles_read.output.summary,
        code=package_code("battles_fit"),
    output:
        fit="results/battles/fit.parquet",
        draws="results/battles/bootstrap.parquet",
    log:
        "results/logs/battles_fit/battles_fit.log",
    benchmark:
        "results/benchmarks/battles_fit/battles_fit.tsv"
    params:
        ties=lookup(dpath="battles/ties", within=config),
        cluster=lookup(dpath="battles/cluster", within=config),
        style=lookup(dpath="battles/style", within=config),
        bootstrap=lookup(dpath="battles/bootstrap", within=config),
        seed=lookup(dpath="battles/seed", within=config),
    message:
        "--- Fitting the Bradley-Terry ratings and the prompt-cluster bootstrap."
    script:
        "../scripts/job.py"


# --- Leaderboard, every pair, per-battle against clustered, the plan ----------------------------
rule battles_tables:
    input:
        battles=rules.battles_read.output.battles,
        summary=rules.battles_read.output.summary,
        fit=rules.battles_fit.output.fit,
        draws=rules.battles_fit.output.draws,
        code=package_code("battles_tables"),
    output:
        **table_outputs(
            "battles_leaderboard",
            "battles_leaderboard",
            "1. Battles",
            {"item": "ratings, letters, tiers, ranks"},
            parquet=True,
            tex=False,
        ),
        **table_outputs(
            "battles_pairwise",
            "battles_pairwise",
            "1. Battles",
            {"item": "every pair with Holm"},
            parquet=True,
            tex=False,
            shown=True,
        ),
        **table_outputs(
            "battles_naive_vs_blocked",
            "battles_naive_vs_blocked",
            "1. Battles",
            {"item": "per battle against clustered"},
            parquet=True,
            tex=False,
            shown=True,
        ),
        **table_outputs(
            "battles_plan",
            "battles_plan",
            "1. Battles",
            {"item": "battles needed"},
            tex=False,
        ),
    log:
        "results/logs/battles_tables/battles_tables.log",
    benchmark:
        "results/benchmarks/battles_tables/battles_tables.tsv"
    params:
        cluster=lookup(dpath="battles/cluster", within=config),
        alpha=lookup(dpath="alpha", within=config),
        level=lookup(dpath="level", within=config),
        power=lookup(dpath="claims_options/power", within=config),
        anchor=lookup(dpath="battles/anchor", within=config),
        anchor_rating=lookup(dpath="battles/anchor_rating", within=config),
        seed=lookup(dpath="battles/seed", within=config),
    message:
        "--- Battles: ratings, pairs, per battle against clustered, battles needed."
    script:
        "../scripts/job.py"


# --- The claims about the ratings, margins in Elo points ----------------------------------------
rule battles_claims:
    input:
        battles=rules.battles_read.output.battles,
        summary=rules.battles_read.output.summary,
        code=package_code("battles_claims"),
    output:
        **table_outputs(
            "battles_claims",
            "battles_claims",
            "0. Your claims",
            {"item": "verdicts"},
            parquet=True,
            tex=False,
        ),
    log:
        "results/logs/battles_claims/battles_claims.log",
    benchmark:
        "results/benchmarks/battles_claims/battles_claims.tsv"
    params:
        claims=CHOICES.claims,
        alpha=lookup(dpath="alpha", within=config),
        adjust=lookup(dpath="claims_options/adjust", within=config),
        power=lookup(dpath="claims_options/power", within=config),
        ties=lookup(dpath="battles/ties", within=config),
        cluster=lookup(dpath="battles/cluster", within=config),
        style=lookup(dpath="battles/style", within=config),
    message:
        "--- Battles: the claims' verdicts."
    script:
        "../scripts/job.py"


# --- Ratings with intervals and tiers; per battle against clustered ----------------------------
rule battles_figures:
    input:
        leaderboard=rules.battles_tables.output.battles_leaderboard_parquet,
        naive_vs_blocked=rules.battles_tables.output.battles_naive_vs_blocked_parquet,
        code=package_code("battles_figures"),
    output:
        **figure_outputs(
            "battles_ratings",
            "battles_ratings_figure",
            "1. Battles",
            {"item": "ratings and tiers"},
        ),
        **figure_outputs(
            "battles_intervals",
            "battles_intervals_figure",
            "1. Battles",
            {"item": "per battle against clustered, figure"},
        ),
    log:
        "results/logs/battles_figures/battles_figures.log",
    benchmark:
        "results/benchmarks/battles_figures/battles_figures.tsv"
    params:
        level=lookup(dpath="level", within=config),
        max_systems=lookup(dpath="display/max_systems", within=config),
    message:
        "--- Battles figures."
    script:
        "../scripts/job.py"


# --- The report's first screen of a battles run -------------------------------------------------
rule battles_landing:
    input:
        summary=rules.battles_read.output.summary,
        leaderboard=rules.battles_tables.output.battles_leaderboard_parquet,
        naive_vs_blocked=rules.battles_tables.output.battles_naive_vs_blocked_parquet,
        claims=rules.battles_claims.output.battles_claims_parquet,
        fit=rules.battles_fit.output.fit,
        code=package_code("battles_landing"),
    output:
        landing=report(
            "results/report/battles_landing.html",
            caption="../report/battles_landing.rst",
            category="0. Your claims",
            labels={"item": "summary"},
        ),
    log:
        "results/logs/battles_landing/battles_landing.log",
    localrule: True
    params:
        notes=CHOICES.notes,
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- The report's first screen."
    script:
        "../scripts/job.py"


# --- Target rule of the battles stage ------------------------------------------------------------
rule battles_all:
    input:
        rules.battles_read.output,
        rules.battles_fit.output,
        rules.battles_tables.output,
        rules.battles_claims.output,
        rules.battles_figures.output,
