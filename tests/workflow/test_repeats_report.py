"""Issue 38's done command, as a user types it, on both repeat fixtures (two models, two runs of
three samples each): `evalbars report LOGS --runs all --score pass@5 --claim "A > B"` writes
every table of the repeats stage, reads every reading on pass@5 (the runs' samples pooled: six
per question), and opens on how many runs and samples were read."""

from __future__ import annotations

import dataclasses
import html
import subprocess
import sys
from math import comb

import numpy as np
import pandas as pd
import pytest
import yaml

import evalbars.api as api
from evalbars.data.scores import read_wide_scores

from ..conftest import DATA
from ..workflow_runs import embedded_results, report_front_page, snakemake_env
from .test_api_equals_workflow import (
    REPEAT_TABLES,
    assert_tables_equal_files,
    repeat_tables,
    run_config,
    run_items,
)

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
FIXTURES = {
    "inspect": (DATA / "harness" / "inspect_epochs_runs", "mockllm", "score_match"),
    "lm_eval": (DATA / "harness" / "lm_eval_repeats", "evalbars", "score_strict"),
}
REPEATS_TABLES = [
    "pass_at_k.csv",
    "passk_curve.csv",
    "sampling_plan.csv",
    "run_variance.csv",
    "run_aware.csv",
    "run_signs.csv",
]


@pytest.fixture(scope="module", params=sorted(FIXTURES))
def report(request, tmp_path_factory):
    folder, prefix, column = FIXTURES[request.param]
    claim = f"{prefix}/fake-strong > {prefix}/fake-weak"
    output = tmp_path_factory.mktemp(request.param) / "report"
    result = subprocess.run(
        [*EVALBARS, "report", str(folder / "logs"), "--runs", "all", "--score", "pass@5"]
        + ["--claim", claim, "--output", str(output)],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return output, folder, prefix, column, claim


def test_the_done_command_writes_every_table_of_repeated_samples_and_runs(report):
    output, *_ = report
    tables = output / "results" / "tables"
    assert all((tables / name).is_file() for name in REPEATS_TABLES)
    assert (output / "results" / "figures" / "passk_curve.png").is_file()
    config = yaml.safe_load((output / "config.yaml").read_text())
    assert config["score"] == "pass@5" and config["predictions"][0]["runs"] == "all"
    embedded = embedded_results(output / "report.html")
    assert {"pass_at_k.csv", "passk_curve.png", "run_variance.csv"} <= embedded


def test_pass_at_k_csv_is_the_oracle_formula_averaged_over_questions(report):
    output, folder, _, column, _ = report
    truth = pd.read_csv(folder / "truth" / "samples.csv")
    counts = truth.groupby(["model", "question_id"])[column].agg(["size", "sum"])
    table = pd.read_csv(output / "results" / "tables" / "pass_at_k.csv")
    assert sorted(set(table["k"])) == [1, 2, 3, 4, 5, 6]
    for row in table.itertuples():
        cells = counts.loc[row.model]
        oracle = [
            1.0 if n - c < row.k else 1 - comb(n - c, row.k) / comb(n, row.k)
            for n, c in zip(cells["size"], cells["sum"].astype(int), strict=True)
        ]
        assert row.estimate == pytest.approx(sum(oracle) / len(oracle), abs=1e-12)
        assert row.questions == len(oracle)


def test_every_reading_reads_pass_at_5_and_the_runs_are_read_as_runs(report):
    output, _, prefix, _, claim = report
    tables = output / "results" / "tables"
    claims = pd.read_csv(tables / "claims.csv", keep_default_na=False)
    exact = claims[claims["reading"].isin(["mcnemar", "bayes"])]
    assert (exact["note"] == "not applicable (pass@5 scores)").all()
    runs = claims[claims["reading"] == "runs"]
    assert runs["note"].str.startswith("not applicable to pass@5 scores").all()
    variance = pd.read_csv(tables / "run_variance.csv")
    assert variance["runs"].tolist() == [2, 2]
    assert (variance["samples"] == 6 * variance["questions"]).all()
    signs = pd.read_csv(tables / "run_signs.csv")
    assert len(signs) == 4 and set(signs["pairing"]) == {"every pair"}
    curve = pd.read_csv(tables / "passk_curve.csv")
    assert set(curve["model_a"]) == {f"{prefix}/fake-strong"} and curve["k"].max() == 6
    assert set(curve["source"]) == {f"claim {claim}"}


def test_the_first_screen_says_how_many_runs_and_samples_were_read(report):
    output, *_ = report
    front = html.unescape(report_front_page(output / "report.html"))
    assert (
        "Runs and samples: 2 runs of each model, 6 samples of each question; the readings read "
        "pass@5 of each question's samples (pooled over runs)."
    ) in front
    assert "Repeated samples and runs" in front and "Run-to-run noise" in front


def test_the_api_tables_equal_the_runs_files(report):
    # evalbars.api on the run's items with the repeats stage's settings: each table equals the
    # Parquet file the stage wrote, dtypes included (test_api_equals_workflow.py, REPEAT_TABLES)
    output, *_ = report
    config = run_config(output / "config.yaml")
    assert assert_tables_equal_files(output, repeat_tables(output, config)) == REPEAT_TABLES
    # and the score matrix every reading read is the API's: pass@5 of the pooled samples
    wide = api.score_matrix(run_items(output, config), config["score"])
    stored = read_wide_scores(output / "data" / "subsample" / "scores.npz")
    assert wide.score == stored.score == "pass@5"
    for field in dataclasses.fields(wide):
        left, right = getattr(wide, field.name), getattr(stored, field.name)
        if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
            np.testing.assert_array_equal(left, right, strict=True, err_msg=field.name)
        else:
            assert left == right, field.name
