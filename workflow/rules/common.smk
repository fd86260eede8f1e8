# --- Imports, config validation and helpers shared by every stage -------------------------------
# No line here may hold the word rule, a space and later a colon: snakemake --lint takes such
# text for a rule and reports rules mixed with functions.
# Helpers delegate to evalbars.pipeline.smk, where they are unit-tested. No rules in this file.

import re
import sys
from pathlib import Path

import pandas as pd
import snakemake.io
from snakemake.utils import Paramspace, validate

from evalbars.pipeline import report_guard, smk

# Every config file Snakemake merged is checked for a key given twice (YAML keeps the last).
smk.validate_config(
    config,
    Path(workflow.basedir) / "workflow/schemas/config.schema.yaml",
    True,
    config_files=workflow.configfiles,
)
# Snakemake's report puts job parameters (the claims, with their model names) in <script> blocks
# unescaped: keep a name holding "</script>" from ending them (evalbars.pipeline.report_guard).
if any(arg == "--report" or arg.startswith("--report=") for arg in sys.argv):
    report_guard.guard_report_data()
# A lock left by a killed run stops Snakemake before any hook: name the remedy up front.
LOCK_HINT = smk.stale_lock_hint() if workflow.exec_mode.name == "DEFAULT" else None
if LOCK_HINT and "--unlock" not in sys.argv:
    print(f"evalbars: {LOCK_HINT}", file=sys.stderr)

ARCHIVES = smk.archives(config)
PREDICTION_SOURCES = smk.prediction_sources(config)
try:  # one line, not Snakemake's wildcard traceback, for a file name it cannot take
    SOURCE_FILES = smk.source_files(PREDICTION_SOURCES)
except smk.ConfigError as exc:
    sys.exit(f"evalbars: {exc}")
# Human labels of judge scores (a labels file, or a human column in a table of predictions): the
# judge-corrected table is then one of the run's outputs.
LABELLED = smk.labelled_run(config, PREDICTION_SOURCES)
# Repeated samples of a question, and several runs of a model (from the sources' headers): the
# repeats stage's tables are then among the run's outputs (workflow/rules/repeats.smk).
SHAPE = smk.source_shape(config, PREDICTION_SOURCES)
# Costs (a price table, or a cost column in a table of predictions): the cost table, the
# frontier and its figure are then among the run's outputs.
COSTED = smk.costed_run(config, PREDICTION_SOURCES)
# The replication check compares with the paper, so it runs only on the paper's data.
REPLICATION_APPLIES = smk.replication_applies(config)
# Settings whose shipped values are the paper's (subsample.n: auto, the example claims), fitted
# to the data; the report's first screen says what was chosen and why.
CHOICES = smk.run_choices(config)
# Every rule's script: it runs the rule's job (evalbars.jobs.registry, evalbars.jobs.run).
JOB_ADAPTER = Path(workflow.basedir) / "workflow" / "scripts" / "job.py"
# Threads of the item table and the subsample: every analysis job waits for them, so they run
# alone, and a second thread lets Arrow decode their Parquet columns in parallel (Arrow sizes its
# pool by OMP_NUM_THREADS, which Snakemake sets to a rule's threads). Capped at --cores;
# `--set-threads items=N subsample=N` changes them. The files are the same at any count.
DATA_PATH_THREADS = 2


wildcard_constraints:
    archive="|".join(re.escape(name) for name in ARCHIVES) or "no-archive",


def archive_sha256(wildcards):
    """Pinned checksum of the archive a download job fetches."""
    return smk.archive_checksum(config, wildcards.archive)


def item_inputs(wildcards):
    """Everything the item table is built from: verified archives and the user's files
    (every file under a directory entry)."""
    return {
        "archives": [f"data/raw/{name}" for name in ARCHIVES],
        "predictions": outside_storage(SOURCE_FILES),
        "labels": outside_storage([config["labels"]] if config.get("labels") else []),
    }


# With a default storage provider (`evalbars report --storage s3://...`, docs/guides/cloud.md)
# Snakemake looks every input up in the bucket. The user's files and evalbars' modules are not
# the run's outputs: they are read where they are (local()). A job with a local() input runs on
# the submitting machine when jobs share no file system (cloud executors): the item table jobs,
# which read the user's files, do; evalbars' modules are then no inputs (smk.storage_mode).
STORAGE = smk.storage_mode(workflow.storage_settings)


def outside_storage(paths):
    """``paths`` (files outside the run) as inputs read where they are, never from storage."""
    return [local(path) for path in paths] if STORAGE else list(paths)


def audit_outputs():
    """The audit of the harnesses' published standard errors, where the run reads the user's
    predictions (MMLU-Pro's archives publish none)."""
    if not PREDICTION_SOURCES:
        return []
    return ["results/tables/harness_stderr.csv", "results/tables/harness_stderr.parquet"]


def judge_corrected_inputs(wildcards):
    """The judge-versus-corrected table, for the jobs that show it, where the run has labels."""
    if not LABELLED:
        return {}
    return {"judge_corrected": "results/tables/judge_corrected.parquet"}


def repeats_landing_inputs(wildcards):
    """The pass@k figure and the run-to-run table, for the report's first screen, where the
    data have repeated samples or runs (SHAPE)."""
    found = {}
    if SHAPE.samples:
        found["passk_png"] = "results/figures/passk_curve.png"
    if SHAPE.runs:
        found["run_variance"] = "results/tables/run_variance.parquet"
    return found


def frontier_inputs(wildcards):
    """The cost-accuracy frontier, for the report's first screen, where the run has costs."""
    if not COSTED:
        return {}
    return {"frontier": "results/tables/frontier.parquet"}


def costs_file():
    """The cost of every (model, question), for the cost claims, where the run has costs (else
    no file: a plain value, not an input function, so that a stage's job gets it too)."""
    return "data/costs.parquet" if COSTED else []


def cost_outputs():
    """The cost table, the frontier and its figure, where the run has costs (COSTED)."""
    if not COSTED:
        return []
    return [*rules.cost_table.output, *rules.cost_figure.output]


def repeats_outputs():
    """Every output of the repeats stage this run makes (none without repeats or runs)."""
    made = []
    if SHAPE.samples:
        made += [
            rules.repeats_pass_at_k.output,
            rules.repeats_passk_curve.output,
            rules.repeats_passk_figure.output,
            rules.repeats_sampling_plan.output,
        ]
    if SHAPE.runs:
        made += [rules.repeats_run_variance.output]
    return made


def package_code(rule):
    """The module of a rule's job and every evalbars module it imports (and what the adapter
    imports): as inputs, an edit to one reruns its jobs (evalbars.pipeline.smk.job_code); none
    where jobs share no file system with this machine (see STORAGE)."""
    if STORAGE == "isolated":
        return []
    return outside_storage(smk.job_code(rule, JOB_ADAPTER))


def pairwise_shards():
    """The shard files the pairwise table is gathered from: `analysis.shards` blocks of pairs
    (pairwise.pair_range), none when it is 1 (one job computes every pair)."""
    shards = lookup(dpath="analysis/shards", within=config)
    if shards == 1:
        return []
    return [f"results/pairwise/shard{s}_of_{shards}.parquet" for s in range(shards)]


def simulation_grid(study):
    """The Paramspace of a simulation study's grid, validated against its schema. A relative
    path is looked up in the run directory, then beside the Snakefile (the shipped grids)."""
    configured = Path(lookup(dpath=f"simulation/{study}/grid", within=config))
    path = configured
    if not path.is_absolute() and not path.exists():
        path = Path(workflow.basedir) / path
    schema = Path(workflow.basedir) / "workflow" / "schemas" / f"grid_{study}.schema.yaml"
    try:  # one line naming the file, the row and the problem, not a traceback
        smk.check_grid(path, schema, f"simulation.{study}.grid", configured=configured)
    except smk.ConfigError as exc:
        sys.exit(f"evalbars: {exc}")
    grid = pd.read_csv(path, sep="\t")
    validate(grid, schema=f"../schemas/grid_{study}.schema.yaml")
    return Paramspace(grid)


def table_outputs(
    name,
    caption,
    category,
    labels,
    *,
    key=None,
    subcategory=None,
    parquet=False,
    shown=False,
    md=True,
    tex=True,
):
    """Named outputs of one table, for `**table_outputs(...)` in a rule's `output:`.

    `results/tables/<name>.csv` with its Markdown, LaTeX and Parquet companions, under the keys
    `<key>_csv`, `<key>_md`, `<key>_tex` and `<key>_parquet`: `key` (default `name`) is the
    name of the table in what the rule's job function returns (evalbars.jobs), which the
    adapter writes by these keys. The Parquet file is what other jobs read (a CSV is for
    people). The report shows the CSV, or with `shown=True` its first rows,
    `results/report/<name>.csv` (key `<key>_shown`), for tables of every pair. `caption` names
    `workflow/report/<caption>.rst`."""
    key = key or name
    entry = report(
        f"results/{'report' if shown else 'tables'}/{name}.csv",
        caption=f"../report/{caption}.rst",
        category=category,
        subcategory=subcategory,
        labels=labels,
    )
    outputs = {f"{key}_csv": f"results/tables/{name}.csv" if shown else entry}
    if parquet:
        outputs[f"{key}_parquet"] = f"results/tables/{name}.parquet"
    if shown:
        outputs[f"{key}_shown"] = entry
    if md:
        outputs[f"{key}_md"] = f"results/tables/{name}.md"
    if tex:
        outputs[f"{key}_tex"] = f"results/tables/{name}.tex"
    return outputs


def figure_outputs(name, caption, category, labels, *, key=None, subcategory=None):
    """Named outputs of one figure, for `**figure_outputs(...)` in a rule's `output:`:
    `results/figures/<name>.png` in the report (key `<key>_png`, `key` defaulting to `name`)
    and its SVG (`<key>_svg`)."""
    key = key or name
    return {
        f"{key}_png": report(
            f"results/figures/{name}.png",
            caption=f"../report/{caption}.rst",
            category=category,
            subcategory=subcategory,
            labels=labels,
        ),
        f"{key}_svg": f"results/figures/{name}.svg",
    }


def stage_outputs(members):
    """Every output of a stage's rules, with its flags (its `report(...)`), for `output:` of
    its stage rule."""
    return {
        name: with_flags(path)
        for member in members
        for name, path in member.rule.output._allitems()
        if name
    }


def with_flags(path):
    """A rule's output as a new string carrying the same flags: given as it is to another rule's
    `output:`, it lost them (Snakemake 9 takes flags from annotated strings, not from another
    rule's files), and `evalbars report`'s report held none of the stages' tables."""
    value = str(path)
    for name, setting in getattr(path, "flags", {}).items():
        value = snakemake.io.flag(value, name, setting)
    return value


def stage_inputs(members):
    """The inputs of a stage's rules that none of the stage's rules makes, for the stage's own
    rule, the code of every member under its own key."""
    made = {str(path) for member in members for path in member.output}
    inputs = {}
    for member in members:
        for name, value in member.input.items():
            values = value if isinstance(value, list) else [value]
            # with their flags: local(), or the bucket's object under a default storage provider
            outside = [with_flags(v) for v in values if str(v) not in made]
            if outside:
                inputs[f"{member.rule.name}_{name}"] = outside
    return inputs
