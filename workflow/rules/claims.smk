# --- Claims stage: the user's ranking claims tested as stated, per-category pairs, planning ------
# Claims are listed under `claims:` in the config; their verdicts come first in the HTML report.


# --- The claims to test, checked against the data before the stage writes anything -----------
# Only the claims stage reads `claims:`, so editing a claim reruns only its jobs.
rule claims_check:
    input:
        item_table=rules.items.output.item_table,
        code=package_code("claims_check"),
    output:
        checked="results/claims/claims.json",
    log:
        "results/logs/claims_check/claims_check.log",
    # First among ready jobs: a claim that names an unknown model stops the run early.
    priority: 50
    params:
        claims=CHOICES.claims,
        notes=CHOICES.notes,
        costed=COSTED,
    message:
        "--- Checking the claims against the data."
    script:
        "../scripts/job.py"


# --- Verdicts of every claim under every reading ------------------------------------------------
rule claims_table:
    input:
        scores=rules.subsample.output.scores,
        costs=costs_file(),
        checked=rules.claims_check.output.checked,
        # the sample rows: read only for claims `at pass@K` and the runs reading
        item_table=rules.subsample.output.item_table,
        code=package_code("claims_table"),
    output:
        **table_outputs(
            "claims", "claims_table", "0. Your claims", {"item": "verdicts"}, parquet=True
        ),
        **table_outputs(
            "claim_scores",
            "claim_scores",
            "0. Your claims",
            {"item": "the claimed models' scores, corrected"},
            tex=False,
        ),
    log:
        "results/logs/claims_table/claims_table.log",
    benchmark:
        "results/benchmarks/claims_table/claims_table.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
        family=lookup(dpath="claims_options/family", within=config),
        adjust=lookup(dpath="claims_options/adjust", within=config),
        power=lookup(dpath="claims_options/power", within=config),
        replicates=lookup(dpath="ranks/replicates", within=config),
        seed=lookup(dpath="ranks/seed", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- Claims: verdicts under every reading."
    script:
        "../scripts/job.py"


# --- Each claim's intervals against its threshold ------------------------------------------------
rule claims_figure:
    input:
        table=rules.claims_table.output.claims_parquet,
        code=package_code("claims_figure"),
    output:
        **figure_outputs(
            "claims",
            "claims_figure",
            "0. Your claims",
            {"item": "intervals against thresholds"},
            key="claims_figure",
        ),
    log:
        "results/logs/claims_figure/claims_figure.log",
    benchmark:
        "results/benchmarks/claims_figure/claims_figure.tsv"
    message:
        "--- Claims figure."
    script:
        "../scripts/job.py"


# --- Every pair in every category: corrections, homogeneity, heatmap ----------------------------
rule category_pairwise:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("category_pairwise"),
    output:
        **table_outputs(
            "category_pairwise",
            "category_pairwise",
            "0. Your claims",
            {"item": "per-category pairs"},
            parquet=True,
            shown=True,
        ),
        **table_outputs(
            "category_summary",
            "category_summary",
            "0. Your claims",
            {"item": "category wins and homogeneity"},
            parquet=True,
            shown=True,
        ),
        **figure_outputs(
            "category_pairwise",
            "category_heatmap",
            "0. Your claims",
            {"item": "per-category heatmap"},
            key="category_pairwise_figure",
        ),
    log:
        "results/logs/category_pairwise/category_pairwise.log",
    benchmark:
        "results/benchmarks/category_pairwise/category_pairwise.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
        max_models=lookup(dpath="analysis/category_pairwise_models", within=config),
        max_systems=lookup(dpath="display/max_systems", within=config),
    message:
        "--- Every pair in every category."
    script:
        "../scripts/job.py"


# --- How many questions would settle it ----------------------------------------------------------
rule plan_table:
    input:
        item_table=rules.subsample.output.item_table,
        checked=rules.claims_check.output.checked,
        code=package_code("plan_table"),
    output:
        **table_outputs("plan", "plan_table", "0. Your claims", {"item": "questions needed"}),
    log:
        "results/logs/plan_table/plan_table.log",
    benchmark:
        "results/benchmarks/plan_table/plan_table.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
        power=lookup(dpath="claims_options/power", within=config),
        gaps=lookup(dpath="claims_options/plan_gaps", within=config),
        seed=lookup(dpath="simulation/seed", within=config),
    message:
        "--- Questions needed per gap and procedure."
    script:
        "../scripts/job.py"


# --- Target rule of the claims stage -------------------------------------------------------------
rule claims_all:
    input:
        rules.claims_check.output,
        rules.claims_table.output,
        rules.claims_figure.output,
        rules.category_pairwise.output,
        rules.plan_table.output,
