# --- Replication check: the paper's reported numbers against our subsample distribution -------


# --- Every reported quantity, for each missing-prediction policy and subsample seed -------------
rule replication_runs:
    input:
        item_table=rules.items.output.item_table,
        code=package_code("replication_runs"),
    output:
        runs="results/tables/replication_seeds.csv",
    log:
        "results/logs/replication_runs/replication_runs.log",
    benchmark:
        "results/benchmarks/replication_runs/replication_runs.tsv"
    params:
        policies=lookup(dpath="replication/policies", within=config),
        n_seeds=lookup(dpath="replication/n_seeds", within=config),
        seed=lookup(dpath="replication/seed", within=config),
        n=lookup(dpath="subsample/n", within=config),
        subsample_seed=lookup(dpath="subsample/seed", within=config),
        items_policy=lookup(dpath="missing_prediction", within=config),
        policy_seed=lookup(dpath="missing_prediction_seed", within=config),
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- Replication check: the paper's quantities over subsample seeds."
    script:
        "../scripts/replication_runs.py"


# --- Paper value versus our distribution: table and figure --------------------------------------
rule replication_table:
    input:
        runs=rules.replication_runs.output.runs,
        code=package_code("replication_table"),
    output:
        csv=report(
            "results/tables/replication.csv",
            caption="../report/replication.rst",
            category="3. Replication",
            labels={"item": "table"},
        ),
        md="results/tables/replication.md",
        tex="results/tables/replication.tex",
        png=report(
            "results/figures/replication.png",
            caption="../report/replication_figure.rst",
            category="3. Replication",
            labels={"item": "figure"},
        ),
        svg="results/figures/replication.svg",
    log:
        "results/logs/replication_table/replication_table.log",
    message:
        "--- Replication table and figure."
    script:
        "../scripts/replication_table.py"


# --- Target rule of the replication stage --------------------------------------------------------
rule replication_all:
    input:
        rules.replication_table.output if REPLICATION_APPLIES else [],
