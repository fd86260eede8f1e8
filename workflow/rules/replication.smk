# --- Replication check: the paper's reported numbers against our subsample distribution -------


# The subsample seeds are spread over replication.jobs jobs (each a contiguous chunk of the seed
# list; never more jobs than seeds), then combined. The combined table is byte-identical whatever
# the number of jobs (evalbars.readings.replication.combine_chunks); the chunk files carry the job count in
# their name, so a run with another count never mixes old chunks in.
REPLICATION_JOBS = min(
    lookup(dpath="replication/jobs", within=config),
    lookup(dpath="replication/n_seeds", within=config),
)
REPLICATION_CHUNK = f"results/replication/seeds/chunk{{chunk}}_of_{REPLICATION_JOBS}.parquet"


# --- Every reported quantity, for each missing-prediction policy, one chunk of seeds per job ----
rule replication_chunk:
    input:
        item_table=rules.items.output.item_table,
        code=package_code("replication_chunk"),
    output:
        runs=REPLICATION_CHUNK,
    log:
        f"results/logs/replication_chunk/chunk{{chunk}}_of_{REPLICATION_JOBS}.log",
    benchmark:
        f"results/benchmarks/replication_chunk/chunk{{chunk}}_of_{REPLICATION_JOBS}.tsv"
    wildcard_constraints:
        chunk=r"\d+",
    params:
        chunk=lambda wildcards: int(wildcards.chunk),
        policies=lookup(dpath="replication/policies", within=config),
        n_seeds=lookup(dpath="replication/n_seeds", within=config),
        seed=lookup(dpath="replication/seed", within=config),
        jobs=REPLICATION_JOBS,
        n=CHOICES.subsample_size,
        configured_seed=lookup(dpath="subsample/seed", within=config),
        items_policy=lookup(dpath="missing_prediction", within=config),
        policy_seed=lookup(dpath="missing_prediction_seed", within=config),
        alpha=lookup(dpath="alpha", within=config),
    message:
        f"--- Replication check: seed chunk {{wildcards.chunk}} of {REPLICATION_JOBS}."
    script:
        "../scripts/job.py"


# --- The chunks in one table: policy by policy, the configured seed first, then the seed list ---
# Local jobs (here and replication_table): seconds of work, less than a cluster job's start-up.
rule replication_runs:
    input:
        chunks=expand(REPLICATION_CHUNK, chunk=range(REPLICATION_JOBS)),
        code=package_code("replication_runs"),
    output:
        replication_seeds_csv="results/tables/replication_seeds.csv",
        replication_seeds_parquet="results/tables/replication_seeds.parquet",
    log:
        "results/logs/replication_runs/replication_runs.log",
    benchmark:
        "results/benchmarks/replication_runs/replication_runs.tsv"
    localrule: True
    params:
        policies=lookup(dpath="replication/policies", within=config),
    message:
        f"--- Replication check: combining {REPLICATION_JOBS} seed chunk(s)."
    script:
        "../scripts/job.py"


# --- Paper value versus our distribution: table and figure --------------------------------------
rule replication_table:
    input:
        runs=rules.replication_runs.output.replication_seeds_parquet,
        code=package_code("replication_table"),
    output:
        **table_outputs("replication", "replication", "3. Replication", {"item": "table"}),
        **figure_outputs(
            "replication",
            "replication_figure",
            "3. Replication",
            {"item": "figure"},
            key="replication_figure",
        ),
    log:
        "results/logs/replication_table/replication_table.log",
    localrule: True
    message:
        "--- Replication table and figure."
    script:
        "../scripts/job.py"


# --- Target rule of the replication stage --------------------------------------------------------
rule replication_all:
    input:
        rules.replication_table.output if REPLICATION_APPLIES else [],
