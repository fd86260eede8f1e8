# --- Repeated samples and runs: pass@k curves, run-to-run noise (where the data have them) -----
# A question sampled several times (lm-eval repeats, Inspect epochs, lighteval's n samples, a
# table's epoch or sample column) gives each model a pass@k curve and each compared pair a
# pass@k difference over k; a model read in two or more runs (`runs: all`) gives the run-to-run
# tables. Whether the data have them is read from the sources' headers while the DAG is built
# (SHAPE, evalbars.data.readers.shape); every job reads the subsample's sample-level rows.


if SHAPE.samples:

    # --- pass_at_k.csv: each model's pass@k for k = 1..n with its interval -----------------------
    rule repeats_pass_at_k:
        input:
            item_table=rules.subsample.output.item_table,
            code=package_code("repeats_pass_at_k"),
        output:
            **table_outputs(
                "pass_at_k",
                "repeats_pass_at_k",
                "2. Analysis",
                {"table": "pass@k curves"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/repeats_pass_at_k/repeats_pass_at_k.log",
        benchmark:
            "results/benchmarks/repeats_pass_at_k/repeats_pass_at_k.tsv"
        params:
            level=lookup(dpath="level", within=config),
        message:
            "--- pass@k of every model for every k."
        script:
            "../scripts/job.py"

    # --- passk_curve.csv: each compared pair's pass@k difference over k, with a band ------------
    rule repeats_passk_curve:
        input:
            item_table=rules.subsample.output.item_table,
            checked=rules.claims_check.output.checked,
            code=package_code("repeats_passk_curve"),
        output:
            **table_outputs(
                "passk_curve",
                "repeats_passk_curve",
                "2. Analysis",
                {"table": "pass@k differences over k"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/repeats_passk_curve/repeats_passk_curve.log",
        benchmark:
            "results/benchmarks/repeats_passk_curve/repeats_passk_curve.tsv"
        params:
            level=lookup(dpath="level", within=config),
            baseline=lookup(dpath="repeats/baseline", within=config),
            draws=lookup(dpath="repeats/draws", within=config),
            seed=lookup(dpath="repeats/seed", within=config),
        message:
            "--- pass@k differences over k, with a band over every k."
        script:
            "../scripts/job.py"

    # --- The pass@k differences drawn, one panel per pair ---------------------------------------
    rule repeats_passk_figure:
        input:
            table=rules.repeats_passk_curve.output.passk_curve_parquet,
            code=package_code("repeats_passk_figure"),
        output:
            **figure_outputs(
                "passk_curve",
                "repeats_passk_figure",
                "2. Analysis",
                {"figure": "pass@k differences over k"},
                key="passk_curve_figure",
                subcategory="Repeated samples and runs",
            ),
        log:
            "results/logs/repeats_passk_figure/repeats_passk_figure.log",
        benchmark:
            "results/benchmarks/repeats_passk_figure/repeats_passk_figure.tsv"
        message:
            "--- pass@k differences figure."
        script:
            "../scripts/job.py"

    # --- sampling_plan.csv: more questions, more samples or more runs? --------------------------
    rule repeats_sampling_plan:
        input:
            item_table=rules.subsample.output.item_table,
            code=package_code("repeats_sampling_plan"),
        output:
            **table_outputs(
                "sampling_plan",
                "repeats_sampling_plan",
                "2. Analysis",
                {"table": "more questions or more samples?"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/repeats_sampling_plan/repeats_sampling_plan.log",
        benchmark:
            "results/benchmarks/repeats_sampling_plan/repeats_sampling_plan.tsv"
        params:
            target_se=lookup(dpath="repeats/target_se", within=config),
        message:
            "--- More questions or more samples: the sampling plan."
        script:
            "../scripts/job.py"


if SHAPE.runs:

    # --- run_variance.csv, run_aware.csv, run_signs.csv: run-to-run noise -----------------------
    rule repeats_run_variance:
        input:
            item_table=rules.subsample.output.item_table,
            checked=rules.claims_check.output.checked,
            code=package_code("repeats_run_variance"),
        output:
            **table_outputs(
                "run_variance",
                "repeats_run_variance",
                "2. Analysis",
                {"table": "run-to-run noise"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
            **table_outputs(
                "run_aware",
                "repeats_run_aware",
                "2. Analysis",
                {"table": "gaps with runs as a random effect"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
            **table_outputs(
                "run_signs",
                "repeats_run_signs",
                "2. Analysis",
                {"table": "gap in every run"},
                subcategory="Repeated samples and runs",
                parquet=True,
                tex=False,
            ),
        log:
            "results/logs/repeats_run_variance/repeats_run_variance.log",
        benchmark:
            "results/benchmarks/repeats_run_variance/repeats_run_variance.tsv"
        params:
            alpha=lookup(dpath="alpha", within=config),
            power=lookup(dpath="claims_options/power", within=config),
            level=lookup(dpath="level", within=config),
            baseline=lookup(dpath="repeats/baseline", within=config),
        message:
            "--- Run-to-run noise: variance components, gaps with runs, signs per run."
        script:
            "../scripts/job.py"


# --- Target rule of the repeats stage ------------------------------------------------------------
rule repeats_all:
    input:
        repeats_outputs(),
