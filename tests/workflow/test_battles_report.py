"""Pairwise battles through the workflow: `evalbars report battles.csv --claim "A > B"` as a
newcomer types it (the battles stage in one job, `jobs: per_stage`), the command it prints to
rerun the run, run as printed, and the shipped example config (config/examples/battles.yaml,
Arena-Hard-Auto's judgments) run by plain Snakemake rule by rule.

The jobs themselves: tests/unit/jobs/test_battles.py; the doors: tests/unit/cli/test_battles.py.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbars import api

from ..conftest import DATA, REPO
from ..workflow_runs import SNAKEMAKE, snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
BATTLES = DATA / "battles"
CLUSTERED = BATTLES / "clustered.csv"
CLAIM = "model-a > model-f"
BIN = Path(sys.executable).parent


def digests(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def battles_report(tmp_path_factory):
    output = tmp_path_factory.mktemp("battles") / "battles-report"
    before = digests(BATTLES)
    result = subprocess.run(
        [*EVALBARS, "report", str(CLUSTERED), "--claim", CLAIM, "--output", str(output)],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert digests(BATTLES) == before  # the user's files are never modified
    assert result.returncode == 0, result.stderr[-3000:]
    return output, result


def test_report_prints_the_report_the_claims_answer_and_the_rerun(battles_report):
    output, result = battles_report
    lines = result.stdout.splitlines()
    assert lines[0] == f"report: {output / 'report.html'}"
    assert lines[1] == "The claim is supported by the clustered reading."
    assert lines[2].startswith(f"  {CLAIM}: per-battle supported (p ")
    assert "; clustered, Holm supported (p " in lines[2]
    assert lines[3] == (
        f"rerun or edit: evalbars run --directory {output} --configfile {output / 'config.yaml'}"
    )
    assert "steps (100%) done" in result.stderr
    config = yaml.safe_load((output / "config.yaml").read_text())
    assert config["data"] == "battles" and config["run"]["stages"] == ["battles"]


def test_the_tables_are_the_apis(battles_report):
    output, _ = battles_report
    tables = output / "results" / "tables"
    battles = api.read_battles(CLUSTERED)
    # The API's tables equal the run's files, dtypes included (tests/workflow/
    # test_api_equals_workflow.py, BATTLE_TABLES).
    claims = pd.read_parquet(tables / "battles_claims.parquet")
    pd.testing.assert_frame_equal(api.battle_claims(battles, [CLAIM]), claims)
    assert claims["verdict"].tolist() == ["supported"] * 4
    board = pd.read_parquet(tables / "battles_leaderboard.parquet")
    pd.testing.assert_frame_equal(api.battles_table(battles), board)
    assert board["model"].tolist()[:2] == ["model-a", "model-b"] and board["tier"].max() == 1
    side = pd.read_csv(tables / "battles_naive_vs_blocked.csv")
    assert (side["separated_per_battle"].sum(), side["separated_clustered"].sum()) == (4, 3)
    assert len(pd.read_csv(tables / "battles_pairwise.csv")) == 3 * 15
    assert len(pd.read_csv(tables / "battles_plan.csv")) == 5
    for name in ("battles_ratings", "battles_intervals"):
        assert (output / "results" / "figures" / f"{name}.png").stat().st_size > 10_000


def test_the_first_screen_opens_the_report(battles_report):
    output, _ = battles_report
    landing = (output / "results" / "report" / "battles_landing.html").read_text()
    assert (
        "600 battles on 150 prompts between 6 models (15 of 15 pairs met); 85 ties (14.2%)"
        in landing
    )
    assert "clustered by prompt (150 prompts, 600 battles)" in landing
    assert "The claim is supported by the clustered reading." in landing
    assert "Of 15 pairs, 4 are separated by the per-battle reading" in landing
    assert "Tiers of the clustered reading (1, max-t over the adjacent gaps)" in landing
    report = (output / "report.html").read_text(errors="replace")
    assert "What the battles support" in report and "Bradley-Terry model to them" in report
    assert "Naive versus blocked" not in report  # no accuracy first screen


def test_the_printed_rerun_command_runs_as_printed(battles_report):
    output, result = battles_report
    line = result.stdout.splitlines()[-1].removeprefix("rerun or edit: ")
    words = shlex.split(line)
    assert words[0] == "evalbars" and (BIN / "evalbars").is_file()
    before = digests(output / "results" / "tables")
    env = snakemake_env()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    rerun = subprocess.run(words, capture_output=True, text=True, env=env)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert rerun.stdout == f"report: {output / 'report.html'}\n"
    assert digests(output / "results" / "tables") == before  # nothing to redo


def test_the_example_config_runs_rule_by_rule(tmp_path):
    # The example's relative paths: results/examples/battles/../../../tests/data/battles.
    shutil.copytree(BATTLES, tmp_path / "tests" / "data" / "battles")
    workdir = tmp_path / "results" / "examples" / "battles"
    workdir.mkdir(parents=True)
    config = REPO / "config" / "examples" / "battles.yaml"
    done = subprocess.run(
        [*SNAKEMAKE, "-d", str(workdir), "--cores", "2", "--configfile", str(config)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=snakemake_env(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = workdir / "results" / "logs"
    for rule in ("battles_read", "battles_fit", "battles_tables", "battles_claims"):
        assert (logs / rule / f"{rule}.log").is_file()  # one job per rule
    assert not (logs / "stage_battles").exists()
    tables = workdir / "results" / "tables"
    board = pd.read_csv(tables / "battles_leaderboard.csv").set_index("model")
    assert board.loc["baseline-model", "rating"] == 1000.0
    assert board["tier"].tolist() == [1, 2, 2, 2, 3]
    claims = pd.read_csv(tables / "battles_claims.csv", keep_default_na=False, na_values=[""])
    quoted = claims[(claims["reading"] == "clustered") & (claims["adjustment"] == "holm")]
    assert quoted["claim"].tolist() == [
        "model-alpha > model-beta + 50 Elo",
        "best: model-alpha",
        "model-beta > model-gamma",
    ]
    assert quoted["verdict"].tolist() == ["supported", "supported", "not supported"]
    landing = (workdir / "results" / "report" / "battles_landing.html").read_text()
    assert "2 of 3 claims are supported by the clustered reading" in landing
