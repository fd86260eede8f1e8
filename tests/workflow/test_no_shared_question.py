"""`evalbars report` on a HELM suite folder whose models share no question (issue 37).

crfm-helm's own suite (tests/data/corpora/helm_unshared, made by
tests/reference/corpora/helm/make_helm_unshared.py): model-a ran MMLU addition, model-b
multiplication, model-c both. The report stopped at its first screen with "unexpected error
(a bug...): IndexError"; it now completes, and its console and first screen say that no
question is shared by every model and what that leaves out.
"""

from __future__ import annotations

import html
import subprocess
import sys

import pandas as pd
import pytest

from ..conftest import DATA
from ..workflow_runs import snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
SUITE = DATA / "corpora" / "helm_unshared"
NOTE = (
    "no question is answered by every model (3 models, 16 questions): each pair is compared on "
    "the questions both answered (0 to 8 per pair), and the readings of every model at once (the "
    "omnibus tests, the paired ranks) are left out; 1 of the 3 pairs shares no question "
    "('synth/model-a' and 'synth/model-b'), so it has only unpaired readings"
)


def test_report_on_a_suite_whose_models_share_no_question_completes_and_says_so(tmp_path):
    output = tmp_path / "helm-report"
    result = subprocess.run(
        [*EVALBARS, "report", str(SUITE), "--output", str(output), "--cores", "2"],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "unexpected error" not in result.stderr
    assert f"evalbars report: {NOTE}" in result.stderr.splitlines()
    assert result.stdout.splitlines()[0] == f"report: {output / 'report.html'}"
    landing = (output / "results" / "report" / "landing.html").read_text()
    assert html.escape(NOTE) in landing
    tables = output / "results" / "tables"
    # Every model is read, each on the questions it answered; the omnibus tests have none.
    models = pd.read_csv(tables / "models.csv").set_index("model")
    assert models["n"].to_dict() == {"synth/model-a": 8, "synth/model-b": 8, "synth/model-c": 16}
    omnibus = pd.read_csv(tables / "omnibus.csv")
    assert (omnibus["n_questions"] == 0).all() and omnibus["p"].isna().all()
    assert len(pd.read_csv(tables / "pairwise.csv")) == 3
