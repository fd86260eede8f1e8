# --- Canonical item table: one row per (model, question) ---------------------------------------
rule items:
    input:
        unpack(item_inputs),
        code=package_code("items"),
    output:
        item_table="data/items.parquet",
        missing_csv=report(
            "results/tables/missing_predictions.csv",
            caption="../report/missing_predictions.rst",
            category="1. Data",
            labels={"table": "missing predictions"},
        ),
        coverage_csv=report(
            "results/tables/question_coverage.csv",
            caption="../report/question_coverage.rst",
            category="1. Data",
            labels={"table": "question coverage"},
        ),
    log:
        "results/logs/items/items.log",
    benchmark:
        "results/benchmarks/items/items.tsv"
    threads: DATA_PATH_THREADS
    params:
        archive_models=ARCHIVES,
        sources=PREDICTION_SOURCES,
        policy=lookup(dpath="missing_prediction", within=config),
        seed=lookup(dpath="missing_prediction_seed", within=config),
        max_unshared_share=lookup(dpath="max_unshared_share", within=config),
        subsample_n=CHOICES.subsample_size,
        question_set=lookup(dpath="question_set", within=config),
        labels=lookup(dpath="labels", within=config),
    message:
        "--- Building the canonical item table (threads: {threads})."
    script:
        "../scripts/job.py"


# --- The standard errors the harnesses published, recomputed (only with predictions entries) ---
if PREDICTION_SOURCES:

    rule harness_stderr:
        input:
            unpack(item_inputs),
            item_table=rules.items.output.item_table,
            code=package_code("harness_stderr"),
        output:
            **table_outputs(
                "harness_stderr",
                "harness_stderr",
                "1. Data",
                {"table": "published standard errors"},
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/harness_stderr/harness_stderr.log",
        benchmark:
            "results/benchmarks/harness_stderr/harness_stderr.tsv"
        params:
            sources=PREDICTION_SOURCES,
        message:
            "--- Auditing the standard errors the harnesses published."
        script:
            "../scripts/job.py"
