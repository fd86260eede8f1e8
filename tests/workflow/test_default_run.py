"""The default workflow end to end: a dry run plans every stage, one real run of the README's
configuration (with its report), and what reruns after an edit of a module or a config key.

Expensive runs are shared: one default run (the README's configuration) serves every test
that only reads its outputs. Runs on other inputs (interruptions, bad input, users' files) are in
``test_workflow_inputs.py``, so that the two files can run side by side (``pytest -n 2``). The
config schema and its checks: tests/unit/pipeline/test_config.py; the linters:
.pre-commit-config.yaml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

import evalbars
from evalbars.jobs.registry import JOBS
from evalbars.pipeline import smk

from ..conftest import DEFAULT_SUBSAMPLE, REPO
from ..helpers import MODEL_COLUMNS, PAIR_COLUMNS
from ..workflow_runs import embedded_results, make_workdir, planned_jobs, run_snakemake
from . import test_report_in_browser as browser_test
from .test_api_equals_workflow import API_TABLES, assert_api_equals_workflow

pytestmark = pytest.mark.workflow


def test_dry_run_plans_every_stage(tmp_path):
    workdir = make_workdir(tmp_path)
    result = run_snakemake(workdir, "-n", "--cores", "1")
    stats = dict(
        line.split()
        for line in result.stdout.splitlines()
        if re.fullmatch(r"\w+\s+\d+", line.strip())
    )
    assert stats["download"] == "6" and stats["items"] == "1" and stats["subsample"] == "1"


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    """A copy of the evalbars package that this module's workflow runs import (``PYTHONPATH``
    puts it before the checkout), so a test that edits a module edits the copy, never the
    package source."""
    root = tmp_path_factory.mktemp("package")
    copy = root / "evalbars"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(Path(evalbars.__file__).parent, copy, ignore=ignore)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
        )
        yield copy


@pytest.fixture(scope="module")
def default_run(tmp_path_factory, package_copy):
    """The default workflow, run once end to end, plus its HTML report (with the package copy)."""
    workdir = make_workdir(tmp_path_factory.mktemp("default"))
    # the README's command
    run_snakemake(workdir, "--cores", "2", "--report", "results/report.html", "--report-after-run")
    return workdir


def test_default_run_builds_the_item_table_and_subsample(default_run):
    items = pd.read_parquet(default_run / "data" / "items.parquet")
    assert len(items) == 72_192
    questions = pd.read_csv(default_run / "data" / "subsample" / "questions.csv")
    assert len(questions) == DEFAULT_SUBSAMPLE["n"] and questions["category"].nunique() == 14
    assert questions["question_id"].is_monotonic_increasing
    allocation = pd.read_csv(default_run / "results" / "tables" / "subsample_allocation.csv")
    assert allocation["allocated"].sum() == 1497 and allocation["allocated"].min() >= 1
    manifest = json.loads((default_run / "data" / "subsample" / "manifest.json").read_text())
    assert manifest["questions"] == 1497 and manifest["seed"] == DEFAULT_SUBSAMPLE["seed"]
    missing = pd.read_csv(default_run / "results" / "tables" / "missing_predictions.csv")
    assert missing.set_index("model")["missing_predictions"]["Qwen1.5-7B-Chat"] == 2809


#: Column contracts of the analysis tables (issue: users script against them).
TABLE_COLUMNS = {
    "models": MODEL_COLUMNS,
    "pairwise": PAIR_COLUMNS,
    "omnibus": ["test", "statistic", "df1", "df2", "p"],
    "variance_components": ["model_spec", "component", "variance", "boundary"],
    "mixed_contrasts": [
        "model_spec",
        "model_a",
        "model_b",
        "estimate",
        "se",
        "z",
        "p",
        "p_bonferroni",
        "p_holm",
        "p_tukey",
    ],
    "claims": ["claim", "reading", "estimate_points", "p_adjusted", "verdict", "questions_needed"],
    "category_pairwise": ["category", "model_a", "model_b", "diff", "p_mcnemar", "p_holm", "p_bh"],
    "category_summary": ["model_a", "model_b", "wins_a", "significant_holm", "test", "p"],
    "plan": ["gap_points", "procedure", "questions_closed_form", "questions_simulated"],
    "logistic_verdicts": [
        "model_a",
        "model_b",
        "lmm_difference",
        "lmm_ci_low",
        "lmm_ci_high",
        "lmm_z",
        "lmm_p_holm",
        "glmm_log_odds_ratio",
        "glmm_accuracy_difference",
        "glmm_ci_low",
        "glmm_ci_high",
        "glmm_z",
        "glmm_p_holm",
        "gee_log_odds_ratio",
        "gee_accuracy_difference",
        "gee_ci_low",
        "gee_ci_high",
        "gee_z",
        "gee_p_holm",
        "lmm_verdict",
        "glmm_verdict",
        "gee_verdict",
        "agree",
        "glmm_converged",
        "gee_converged",
    ],
    "logistic_fits": ["method", "variance_question", "variance_category", "loglik", "alpha"],
    "logistic_effects": [
        "model",
        "glmm_log_odds",
        "glmm_se",
        "glmm_marginal_accuracy",
        "glmm_marginal_accuracy_se",
        "gee_log_odds",
        "gee_se",
        "gee_accuracy",
        "gee_accuracy_se",
        "glmm_converged",
        "gee_converged",
    ],
}
FIGURES = [
    "replication",
    "ranks_forest",
    "ranks_range",
    "sim_leaderboard_one_run",
    "sim_leaderboard_leader_grid",
    "sim_leaderboard_difference_histogram",
    "sim_leaderboard_decision_rules",
    "sim_leaderboard_played_out",
    "sim_precision_halfwidth",
    "sim_questions_needed",
    "sim_fwer_methods",
    "sim_fwer_models",
    "sim_fwer_power",
    "sim_clustered",
    "claims",
    "category_pairwise",
    "ranks_overview",
    "logistic_verdicts",
]


def test_default_run_writes_every_stage(default_run):
    tables = default_run / "results" / "tables"
    for name, columns in TABLE_COLUMNS.items():
        frame = pd.read_csv(tables / f"{name}.csv")
        assert set(columns) <= set(frame.columns), (name, frame.columns.tolist())
        assert (tables / f"{name}.md").stat().st_size > 0 and (
            tables / f"{name}.tex"
        ).stat().st_size > 0
    assert len(pd.read_csv(tables / "pairwise.csv")) == 15
    assert len(pd.read_csv(tables / "mixed_contrasts.csv")) == 30
    naive = pd.read_csv(tables / "naive_vs_blocked.csv")
    assert len(naive) == 15
    # the logistic readings: the linear model's pairs in its order, and their counts in
    # naive_vs_blocked equal to the verdict table's verdicts
    verdicts = pd.read_csv(tables / "logistic_verdicts.csv")
    nested = pd.read_csv(tables / "mixed_contrasts.csv").query("model_spec == 'category_question'")
    assert verdicts[["model_a", "model_b"]].values.tolist() == (
        nested[["model_a", "model_b"]].values.tolist()
    )
    counts = naive[naive["quantity"] == "significant_pairs"].set_index("procedure")["value"]
    assert verdicts[["glmm_converged", "gee_converged"]].all(axis=None)
    for reading in ("glmm", "gee"):
        separated = (verdicts[f"{reading}_verdict"] != "not separated").sum()
        assert counts[f"{reading}_holm"] == separated
    assert (
        counts["lmm_category_question_holm"] == (verdicts["lmm_verdict"] != "not separated").sum()
    )
    replication = pd.read_csv(tables / "replication.csv")
    assert (
        set(replication["policy"]) == {"wrong", "random_guess"}
        and (replication["n_seeds"] >= 200).all()
    )
    ranks = pd.read_csv(tables / "ranks.csv")
    assert set(ranks["reading"]) == {"unpaired", "paired"} and len(ranks) == 12
    simulations = default_run / "results" / "simulations"
    for name in ("leaderboard", "fwer", "clustered", "precision", "questions_needed"):
        assert len(pd.read_csv(simulations / f"{name}.csv")) > 0
    for name in FIGURES:
        for suffix in (".png", ".svg"):
            assert (default_run / "results" / "figures" / f"{name}{suffix}").stat().st_size > 1000


def test_the_api_tables_equal_the_default_runs_files(default_run):
    # evalbars.api on the run's subsample with its config's settings (test_api_equals_workflow.py);
    # no labels (no judge_corrected) and no prediction files (no harness_stderr)
    compared = assert_api_equals_workflow(default_run, default_run / "config" / "config.yaml")
    assert compared == set(API_TABLES.values()) - {"judge_corrected", "harness_stderr"}


def test_report_is_self_contained_html(default_run):
    report = (default_run / "results" / "report.html").read_text()
    assert report.lstrip().lower().startswith("<!doctype html")
    for name in (
        "subsample_allocation.csv",
        "missing_predictions.csv",
        "question_coverage.csv",
        "naive_vs_blocked.csv",
        "replication.png",
        "ranks.csv",
        "leaderboard.csv",
        "sim_fwer_models.png",
        "claims.csv",
        "category_pairwise.png",
        "plan.csv",
    ):
        assert name in report, name


def test_rerun_is_a_no_op(default_run):
    result = run_snakemake(default_run, "-n", "--cores", "1")
    assert "Nothing to be done" in result.stdout + result.stderr


def rule_descendants(workdir: Path) -> dict:
    """``{rule: rules downstream of it}`` from Snakemake's own rule graph."""
    dot = run_snakemake(workdir, "--rulegraph", "--cores", "1").stdout
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    children: dict = {}
    for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M):
        children.setdefault(names[a], set()).add(names[b])

    def below(rule):
        found = set(children.get(rule, ()))
        for child in list(found):
            found |= below(child)
        return found

    return {rule: below(rule) for rule in names.values()}


@pytest.fixture(scope="module")
def descendants(default_run) -> dict:
    return rule_descendants(default_run)


@pytest.mark.parametrize(
    "module",
    ["stats/omnibus.py", "stats/intervals.py", "render/figures/ranks.py", "jobs/claims.py"],
)
def test_editing_a_module_reruns_exactly_the_jobs_that_import_it(
    default_run, descendants, package_copy, module
):
    path = package_copy / module  # the runs' copy: the package source is never written
    adapter = REPO / "workflow" / "scripts" / "job.py"
    users = {rule for rule in JOBS if str(path) in smk.job_code(rule, adapter, package_copy)}
    # Rules the default run has no job of (the pairwise shards of a large board) plan nothing.
    users &= set(descendants)
    assert users, f"no rule of the default run imports {module}"
    downstream = descendants
    original, stat = path.read_bytes(), path.stat()
    try:
        # Snakemake 9 reruns a job for a newer input only if its content changed (it compares
        # checksums), so edit the module rather than touch it.
        path.write_bytes(original + b"\n# an edit\n")
        result = run_snakemake(default_run, "-n", "--cores", "1")
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    planned = planned_jobs(result.stdout)
    expected = users | set().union(*(downstream[rule] for rule in users))
    assert set(planned) == expected, result.stdout[-3000:]
    # The edit itself is the reason given for the jobs whose code imports the module (those
    # downstream of another such job give the upstream job's output as their reason).
    first = users - set().union(*(downstream[rule] for rule in users))
    edited = result.stdout.count(f"Reason: Updated input files: {path}")
    assert edited == sum(planned[rule] for rule in first)
    assert "Nothing to be done" in run_snakemake(default_run, "-n", "--cores", "1").stdout


#: A config edit and the jobs it must rerun: the rules that read the key (their params), and what
#: depends on their outputs; nothing upstream (the item table, the subsample) and nothing beside.
CONFIG_EDITS = {
    "claims": (
        {"claims": ["Mistral-7B-v0.1 > Yi-6B"]},
        {"claims_check", "claims_table", "claims_figure", "plan_table", "report_landing"},
    ),
    "claims_options": (
        {"claims_options": {"family": "claims_and_all_pairs", "power": 0.9, "plan_gaps": [1, 3]}},
        {"claims_table", "claims_figure", "plan_table", "report_landing"},
    ),
    # A display key changes figures, never a statistic (category_pairwise draws its heatmap in
    # the same job; its tables stay byte-identical, tests/unit/readings/test_category_pairwise.py).
    "display": (
        {"display": {"max_systems": 3}},
        {"ranks_figures", "leaderboard_figure", "category_pairwise"},
    ),
}


@pytest.mark.parametrize("key", sorted(CONFIG_EDITS))
def test_a_config_key_reruns_only_the_jobs_that_read_it(default_run, key):
    edit, expected = CONFIG_EDITS[key]
    path = default_run / "config" / "config.yaml"
    original = path.read_text()
    try:
        path.write_text(yaml.safe_dump({**yaml.safe_load(original), **edit}))
        planned = planned_jobs(run_snakemake(default_run, "-n", "--cores", "1").stdout)
    finally:
        path.write_text(original)
    assert set(planned) - {"all"} == expected


def test_alpha_reruns_the_tests_that_use_it_and_what_reads_them(default_run, descendants):
    path = default_run / "config" / "config.yaml"
    original = path.read_text()
    try:
        path.write_text(yaml.safe_dump({**yaml.safe_load(original), "alpha": 0.01}))
        planned = set(planned_jobs(run_snakemake(default_run, "-n", "--cores", "1").stdout))
    finally:
        path.write_text(original)
    # Not the data stages, the simulations that test no hypothesis, or the rank figures.
    assert not planned & {"download", "items", "subsample", "sim_leaderboard", "sim_clustered"}
    assert not planned & {"analysis_models", "analysis_omnibus", "ranks_table", "ranks_figures"}
    assert {"analysis_pairwise", "analysis_mixed", "claims_table", "replication_chunk"} <= planned
    assert "sim_fwer" in planned  # the family-wise error study runs at the configured alpha
    assert "leaderboard_table" in planned
    # ...and everything downstream of a job that reruns.
    assert set().union(*(descendants[rule] for rule in planned - {"all"})) - {"all"} <= planned


def test_the_papers_report_opens_in_a_browser_on_its_answer(default_run, tmp_path):
    # The report the README's reproduction writes, in headless Chromium: no error, the headline
    # and the claims figure on the first screen, the five files of the README embedded.
    executable = browser_test.chromium_executable()
    if executable is None:
        pytest.skip("chromium is not installed (Debian's package chromium; .ci/run installs it)")
    browser = browser_test.Chromium(executable, tmp_path / "profile")
    try:
        page = browser_test.Page(browser)
        page.open(default_run / "results" / "report.html", browser_test.LANDING_SHOWN)
        browser.drain(1.0)
        assert page.problems() == [] and page.dialogs() == []
        headline = page.evaluate(f"{browser_test.LANDING_SHOWN}.innerText")
        # the README's answer, word for word
        readme = (REPO / "README.md").read_text()
        assert headline.strip() in readme and headline.startswith("No claim survives the Holm")
        verdict = browser_test.rectangle(page, ".evalbars-landing p.verdict")
        assert browser_test.shown_on_first_screen(verdict) == 1.0
        # Three claims draw three panels under the claims table: the first is on the first
        # screen (the figure starts 666 px down at 1280 x 900), the rest a scroll away.
        figure = browser_test.rectangle(page, ".evalbars-landing img")
        assert figure["top"] < browser_test.HEIGHT - 200
        assert browser_test.shown_on_first_screen(figure) > 0.3
        png = page.screenshot()
    finally:
        browser.close()
    folder = Path(os.environ.get("EVALBARS_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "paper-report-first-screen.png").write_bytes(png)
    embedded = embedded_results(default_run / "results" / "report.html")
    assert set(browser_test.readme_tables()) <= embedded
