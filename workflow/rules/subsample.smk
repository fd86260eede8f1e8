# --- Seeded category-stratified subsample -------------------------------------------------------
rule subsample:
    input:
        item_table=rules.items.output.item_table,
        code=package_code("subsample"),
    output:
        questions_csv="data/subsample/questions.csv",
        item_table="data/subsample/items.parquet",
        # The question x model matrix every analysis job reads (one pivot, here).
        scores="data/subsample/scores.npz",
        manifest="data/subsample/manifest.json",
        allocation_csv=report(
            "results/tables/subsample_allocation.csv",
            caption="../report/subsample_allocation.rst",
            category="1. Data",
            labels={"table": "subsample allocation"},
        ),
    log:
        "results/logs/subsample/subsample.log",
    benchmark:
        "results/benchmarks/subsample/subsample.tsv"
    threads: DATA_PATH_THREADS
    params:
        n=CHOICES.subsample_size,
        seed=lookup(dpath="subsample/seed", within=config),
        question_set=lookup(dpath="question_set", within=config),
        score=lookup(dpath="score", within=config),
    message:
        "--- Drawing the seeded category-stratified subsample (threads: {threads})."
    script:
        "../scripts/job.py"


# --- Target rule of the data stages ---------------------------------------------------------------
rule data_all:
    input:
        rules.items.output,
        rules.subsample.output,
        audit_outputs(),
