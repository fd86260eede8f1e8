"""The shipped corpus examples (config/examples/helm.yaml, lighteval, every_eval_ever,
swe_bench) run the workflow's data stages up to the report's first screen, with the tools' own
numbers. The readers themselves: tests/unit/data/test_corpora_readers.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from ..workflow_runs import SNAKEMAKE

pytestmark = pytest.mark.workflow

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO / "tests" / "data" / "corpora"
EXAMPLES = {
    "helm": {"synth/model-a": 35 / 48, "synth/model-c": 19 / 48},
    "lighteval": {"synth/model-a": 33 / 36},
    "every_eval_ever": {"evalbars/fake-strong": 29 / 39, "evalbars/fake-mid": 18 / 39},
    "swe_bench": {"20241029_agent-b": 13 / 20, "20240402_agent-old": 5 / 20},
}


@pytest.mark.workflow
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_example_config_runs_the_workflow(example, tmp_path):
    # The example's relative paths: results/examples/<name>/../../../tests/data/corpora.
    shutil.copytree(CORPORA, tmp_path / "tests" / "data" / "corpora")
    workdir = tmp_path / "results" / "examples" / example
    workdir.mkdir(parents=True)
    config = REPO / "config" / "examples" / f"{example}.yaml"
    # Every stage that reads the data (what `evalbars report` runs), up to the report's first
    # screen; the simulation studies do not read the data.
    stages = ["data_all", "analysis_all", "ranks_all", "claims_all", "leaderboard_all"]
    subprocess.run(
        [*SNAKEMAKE, *stages, "report_landing", "-d", str(workdir), "--cores", "2"]
        + ["--configfile", str(config)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    tables = workdir / "results" / "tables"
    models = pd.read_csv(tables / "models.csv").set_index("model")
    for model, accuracy in EXAMPLES[example].items():
        assert models.loc[model, "accuracy"] == pytest.approx(accuracy)
    k = len(models)
    assert len(pd.read_csv(tables / "pairwise.csv")) == k * (k - 1) // 2
    assert len(pd.read_csv(tables / "leaderboard.csv")) == k
    landing = (workdir / "results" / "report" / "landing.html").read_text()
    assert f"{k} models read: " in landing
