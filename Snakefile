# evalbars: from item-level benchmark predictions to the statistics a careful reviewer asks for.
#
# Results path convention:
#   data/raw/<archive>             verified downloads (never edited)
#   data/items.parquet             canonical item table, one row per (model, question)
#   data/subsample/                the seeded category-stratified subsample
#   results/tables/                tables (CSV, plus Markdown and LaTeX renderings)
#   results/figures/               figures (PNG and SVG)
#   results/simulations/           simulation-study tables
#   results/logs/<rule>/           one log per job


import sys

from snakemake.utils import min_version

from evalbars.pipeline import smk

min_version("9.18")


# --- load configuration -------------------------------------------------------------------------
# A config is data: one that asks Snakemake to evaluate it as a YTE template (Python expressions
# run as it loads) is refused before it loads. (Snakemake loads a --configfile before this file
# runs; `evalbars run --configfile` checks those first.)
try:
    smk.refuse_templating("config/config.yaml")
except smk.ConfigError as exc:
    sys.exit(f"evalbars: {exc}")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# --- load rules -----------------------------------------------------------------------------------
include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/items.smk"
include: "workflow/rules/subsample.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/replication.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/repeats.smk"
include: "workflow/rules/leaderboard.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/battles.smk"


if config["jobs"] == "per_stage":

    include: "workflow/rules/stages.smk"


# --- target rules ---------------------------------------------------------------------------------
# The default target makes the stages the run records (config `run.stages`; every stage unless
# a run directory's config.yaml says otherwise, as `evalbars report` writes it), and the report's
# first screen: plain `snakemake` and `evalbars run` make the same. In a battles run (`data:
# battles`) the battles stage stands in for the stages that read item-level scores, and the
# first screen is the battles one (evalbars.pipeline.smk.run_stages).
STAGE_TARGETS = {
    "data": rules.data_all.input,
    "analysis": rules.analysis_all.input,
    "replication": rules.replication_all.input,
    "ranks": rules.ranks_all.input,
    "simulations": rules.simulate_all.input,
    "claims": rules.claims_all.input,
    "repeats": rules.repeats_all.input,
    "leaderboard": rules.leaderboard_all.input,
    "battles": rules.battles_all.input,
}


rule all:
    default_target: True
    input:
        [STAGE_TARGETS[stage] for stage in smk.run_stages(config)],
        rules.battles_landing.output if BATTLES else rules.report_landing.output,
