# --- Analysis stage: the paper's Tables 1-4, omnibus tests, logistic readings, naive vs blocked -
# Every table is written as CSV (full precision, in the HTML report) plus Markdown and LaTeX. The
# tables other jobs read or the Python API computes, and those of every pair (K(K-1)/2 rows), are
# also written as Parquet (typed; tests/workflow/test_api_equals_workflow.py holds the API to
# them); the report and the Markdown and LaTeX renderings show the first tables.RENDER_ROWS rows
# of a table of every pair and say so.


# --- Table 1: per-model accuracy, naive and clustered SE, Wilson interval ------------------------
rule analysis_models:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("analysis_models"),
    output:
        **table_outputs(
            "models",
            "analysis_models",
            "2. Analysis",
            {"table": "per-model accuracy"},
            parquet=True,
        ),
        **table_outputs(
            "sampling_variance",
            "analysis_sampling_variance",
            "2. Analysis",
            {"table": "repeated samples (epochs)"},
            tex=False,
        ),
    log:
        "results/logs/analysis_models/analysis_models.log",
    benchmark:
        "results/benchmarks/analysis_models/analysis_models.tsv"
    params:
        level=lookup(dpath="level", within=config),
    message:
        "--- Per-model accuracy table."
    script:
        "../scripts/job.py"


# --- Table 3 in shards (analysis.shards > 1): each job the pairs of one block, unadjusted --------
rule analysis_pairwise_shard:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("analysis_pairwise_shard"),
    output:
        tests="results/pairwise/shard{shard}_of_{shards}.parquet",
    log:
        "results/logs/analysis_pairwise_shard/shard{shard}_of_{shards}.log",
    benchmark:
        "results/benchmarks/analysis_pairwise_shard/shard{shard}_of_{shards}.tsv"
    wildcard_constraints:
        shard=r"\d+",
        shards=r"\d+",
    params:
        shard=lambda wildcards: int(wildcards.shard),
        shards=lambda wildcards: int(wildcards.shards),
    message:
        "--- Pairwise tests, shard {wildcards.shard} of {wildcards.shards}."
    script:
        "../scripts/job.py"


# --- Table 3: unpaired, paired and McNemar tests of every pair ----------------------------------
# With analysis.shards > 1 it gathers the shards and adjusts over the whole family (Holm and
# Bonferroni need every pair's p); else it computes every pair itself.
rule analysis_pairwise:
    input:
        scores=rules.subsample.output.scores,
        shards=pairwise_shards(),
        code=package_code("analysis_pairwise"),
    output:
        **table_outputs(
            "pairwise",
            "analysis_pairwise",
            "2. Analysis",
            {"table": "pairwise tests"},
            parquet=True,
            shown=True,
        ),
    log:
        "results/logs/analysis_pairwise/analysis_pairwise.log",
    benchmark:
        "results/benchmarks/analysis_pairwise/analysis_pairwise.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- Pairwise tests."
    script:
        "../scripts/job.py"


# --- Omnibus tests: RM-ANOVA (with Greenhouse-Geisser), one-way ANOVA, Friedman, Cochran's Q ---
rule analysis_omnibus:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("analysis_omnibus"),
    output:
        **table_outputs(
            "omnibus", "analysis_omnibus", "2. Analysis", {"table": "omnibus tests"}, parquet=True
        ),
    log:
        "results/logs/analysis_omnibus/analysis_omnibus.log",
    benchmark:
        "results/benchmarks/analysis_omnibus/analysis_omnibus.tsv"
    message:
        "--- Omnibus tests."
    script:
        "../scripts/job.py"


# --- Tables 2 and 4: mixed models (1|category) and (1|category) + (1|category:question) ---------
rule analysis_mixed:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("analysis_mixed"),
    output:
        **table_outputs(
            "variance_components",
            "analysis_variance_components",
            "2. Analysis",
            {"table": "variance components"},
            parquet=True,
        ),
        **table_outputs(
            "mixed_contrasts",
            "analysis_mixed_contrasts",
            "2. Analysis",
            {"table": "mixed-model contrasts"},
            parquet=True,
            shown=True,
        ),
    log:
        "results/logs/analysis_mixed/analysis_mixed.log",
    benchmark:
        "results/benchmarks/analysis_mixed/analysis_mixed.tsv"
    params:
        method=lookup(dpath="analysis/mixed_method", within=config),
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- Mixed models: variance components and contrasts."
    script:
        "../scripts/job.py"


# --- Logistic readings: the GLMM (Laplace) and GEE on the 0/1 samples --------------------------
rule analysis_logistic:
    input:
        scores=rules.subsample.output.scores,
        code=package_code("analysis_logistic"),
    output:
        **table_outputs(
            "logistic_fits",
            "analysis_logistic_fits",
            "2. Analysis",
            {"table": "logistic fits"},
            parquet=True,
        ),
        **table_outputs(
            "logistic_effects",
            "analysis_logistic_effects",
            "2. Analysis",
            {"table": "logistic effects per model"},
        ),
        logistic_contrasts_csv="results/tables/logistic_contrasts.csv",
        logistic_contrasts_parquet="results/tables/logistic_contrasts.parquet",
    log:
        "results/logs/analysis_logistic/analysis_logistic.log",
    benchmark:
        "results/benchmarks/analysis_logistic/analysis_logistic.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
        max_cells=lookup(dpath="analysis/logistic_max_cells", within=config),
    message:
        "--- Logistic mixed model and GEE."
    script:
        "../scripts/job.py"


# --- Each pair's verdict: linear mixed model, logistic mixed model and GEE side by side --------
rule analysis_logistic_verdicts:
    input:
        lmm_contrasts=rules.analysis_mixed.output.mixed_contrasts_parquet,
        logistic_contrasts=rules.analysis_logistic.output.logistic_contrasts_parquet,
        logistic_fits=rules.analysis_logistic.output.logistic_fits_parquet,
        code=package_code("analysis_logistic_verdicts"),
    output:
        **table_outputs(
            "logistic_verdicts",
            "analysis_logistic_verdicts",
            "2. Analysis",
            {"table": "linear vs logistic verdicts"},
            parquet=True,
            shown=True,
        ),
        **figure_outputs(
            "logistic_verdicts",
            "analysis_logistic_verdicts_figure",
            "2. Analysis",
            {"figure": "linear vs logistic"},
            key="logistic_verdicts_figure",
        ),
    log:
        "results/logs/analysis_logistic_verdicts/analysis_logistic_verdicts.log",
    benchmark:
        "results/benchmarks/analysis_logistic_verdicts/analysis_logistic_verdicts.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- Linear versus logistic verdicts."
    script:
        "../scripts/job.py"


# --- Naive versus blocked, side by side ---------------------------------------------------------
rule analysis_naive_vs_blocked:
    input:
        pairwise_table=rules.analysis_pairwise.output.pairwise_parquet,
        omnibus_table=rules.analysis_omnibus.output.omnibus_parquet,
        mixed_contrasts=rules.analysis_mixed.output.mixed_contrasts_parquet,
        logistic_contrasts=rules.analysis_logistic.output.logistic_contrasts_parquet,
        code=package_code("analysis_naive_vs_blocked"),
    output:
        **table_outputs(
            "naive_vs_blocked",
            "analysis_naive_vs_blocked",
            "2. Analysis",
            {"table": "naive vs blocked"},
            parquet=True,
        ),
    log:
        "results/logs/analysis_naive_vs_blocked/analysis_naive_vs_blocked.log",
    benchmark:
        "results/benchmarks/analysis_naive_vs_blocked/analysis_naive_vs_blocked.tsv"
    params:
        alpha=lookup(dpath="alpha", within=config),
    message:
        "--- Naive versus blocked summary."
    script:
        "../scripts/job.py"


# --- Target rule of the analysis stage -----------------------------------------------------------
rule analysis_all:
    input:
        rules.analysis_models.output,
        rules.analysis_pairwise.output,
        rules.analysis_omnibus.output,
        rules.analysis_mixed.output,
        rules.analysis_logistic.output,
        rules.analysis_logistic_verdicts.output,
        rules.analysis_naive_vs_blocked.output,


# --- Judge versus corrected: PPI++ with the human labels (only where the run has labels) -------
if LABELLED:

    rule analysis_judge_corrected:
        input:
            scores=rules.subsample.output.scores,
            code=package_code("analysis_judge_corrected"),
        output:
            **table_outputs(
                "judge_corrected",
                "analysis_judge_corrected",
                "2. Analysis",
                {"table": "judge versus corrected"},
                parquet=True,
            ),
        log:
            "results/logs/analysis_judge_corrected/analysis_judge_corrected.log",
        benchmark:
            "results/benchmarks/analysis_judge_corrected/analysis_judge_corrected.tsv"
        params:
            level=lookup(dpath="level", within=config),
            alpha=lookup(dpath="alpha", within=config),
        message:
            "--- Judge-only, human-only and judge-corrected (PPI++) readings."
        script:
            "../scripts/job.py"
