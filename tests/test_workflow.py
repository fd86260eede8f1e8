"""The Snakemake workflow: lint, formatting, config schema, dry run, and real end-to-end runs."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from evalbars import workflow as wf

from .conftest import DEFAULT_SUBSAMPLE, REPO, mirror_location

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

pytestmark = pytest.mark.workflow


def run_snakemake(workdir: Path, *args, check=True):
    env = dict(os.environ)
    if mirror_location():
        env["EVALBARS_MIRROR"] = mirror_location()
    result = subprocess.run(
        [*SNAKEMAKE, "-d", str(workdir), *args], capture_output=True, text=True, env=env, cwd=REPO
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def make_workdir(tmp_path: Path, **overrides) -> Path:
    workdir = tmp_path / "work"
    (workdir / "config").mkdir(parents=True)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config.update(overrides)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    for extra in (REPO / "config").iterdir():
        if extra.is_dir():
            shutil.copytree(extra, workdir / "config" / extra.name)
    return workdir


def test_lint_is_clean_apart_from_software_deployment():
    # We ship one pip/uv environment instead of per-rule conda envs (conda channels are not
    # reachable where this is built), so only that lint is tolerated.
    result = subprocess.run([*SNAKEMAKE, "--lint"], capture_output=True, text=True, cwd=REPO)
    output = result.stdout + result.stderr
    lints = [line.strip() for line in output.splitlines() if line.startswith("    * ")]
    others = [lint for lint in lints if not lint.startswith("* Specify a conda environment or container")]
    assert "Lints for" in output or result.returncode == 0, output[-2000:]
    assert others == [], output[-4000:]


def test_snakefmt_check():
    result = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "Snakefile", "workflow/"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_default_config_is_valid_and_fills_defaults():
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(SCHEMA))
    minimal = {"models": ["Yi-6B"]}
    validate(minimal, str(SCHEMA))
    assert minimal["subsample"] == {"n": 1497, "seed": 2024}
    assert minimal["missing_prediction"] == "wrong"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"missing_prediction": "drop"}, "'drop' is not one of"),
        ({"subsample": {"n": 0}}, "subsample"),
        ({"alpha": 1.5}, "alpha"),
        ({"modles": ["Yi-6B"]}, "Additional properties are not allowed"),
    ],
)
def test_schema_rejects_bad_config(bad, message):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text()) | bad
    with pytest.raises(Exception, match=message):
        validate(config, str(SCHEMA))


def test_unknown_model_is_a_clear_config_error():
    with pytest.raises(wf.ConfigError, match=r"no pinned checksum for Nonexistent-7B \(model_outputs_Nonexistent-7B_5shots\.zip\)"):
        wf.archives({"models": ["Nonexistent-7B"]})
    with pytest.raises(wf.ConfigError, match="nothing to analyse"):
        wf.prediction_sources({"models": [], "predictions": []})


def test_dry_run_plans_every_stage(tmp_path):
    workdir = make_workdir(tmp_path)
    result = run_snakemake(workdir, "-n", "--cores", "1")
    stats = dict(
        line.split() for line in result.stdout.splitlines() if re.fullmatch(r"\w+\s+\d+", line.strip())
    )
    assert stats["download"] == "6" and stats["items"] == "1" and stats["subsample"] == "1"


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default workflow, run once end to end, plus its HTML report."""
    workdir = make_workdir(tmp_path_factory.mktemp("default"))
    run_snakemake(workdir, "--cores", "2")
    run_snakemake(workdir, "--cores", "1", "--report", "results/report.html")
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


def test_report_is_self_contained_html(default_run):
    report = (default_run / "results" / "report.html").read_text()
    assert report.lstrip().lower().startswith("<!doctype html")
    assert "subsample_allocation.csv" in report and "missing_predictions.csv" in report


def test_rerun_is_a_no_op(default_run):
    result = run_snakemake(default_run, "-n", "--cores", "1")
    assert "Nothing to be done" in result.stdout + result.stderr


def test_bad_user_predictions_fail_cleanly(tmp_path):
    bad = tmp_path / "mine.csv"
    bad.write_text("model,question_id,correct,category\nM,1,1,x\nM,2,maybe,x\n")
    before = hashlib.sha256(bad.read_bytes()).hexdigest()
    workdir = make_workdir(tmp_path, models=[], predictions=[str(bad)], subsample={"n": "all"})
    result = run_snakemake(workdir, "--cores", "1", "data_all", check=False)
    assert result.returncode != 0
    assert "mine.csv, record 2: correct must be 0/1 or true/false, got 'maybe'" in result.stderr
    assert not (workdir / "data" / "items.parquet").exists()
    assert not (workdir / "results" / "tables" / "missing_predictions.csv").exists()
    assert hashlib.sha256(bad.read_bytes()).hexdigest() == before


def test_user_predictions_alone_run_through_the_data_stage(tmp_path):
    mine = tmp_path / "mine.csv"
    rows = [f"{m},{q},{(q * 7 + len(m)) % 3 == 0:d},{'ab'[q % 2]}" for m in ("M1", "M2") for q in range(40)]
    mine.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    workdir = make_workdir(tmp_path, models=[], predictions=[str(mine)], subsample={"n": 10, "seed": 3})
    run_snakemake(workdir, "--cores", "1", "data_all")
    drawn = pd.read_parquet(workdir / "data" / "subsample" / "items.parquet")
    assert len(drawn) == 20 and drawn.groupby("category")["question_id"].nunique().to_dict() == {"a": 5, "b": 5}
