"""The repeated-sample fixtures end to end: logs -> one row per (model, question, run, sample)
-> pass@k, run variance and per-run signs, checked against the fakes' truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.readers import SourceOptions
from evalbars.data.readers.inspect_logs import read_inspect_log
from evalbars.data.readers.lm_eval_filters import rescore_samples_file
from evalbars.stats.repeats.pass_at_k import pass_at_k_curve, sample_counts
from evalbars.stats.repeats.run_variance import gap_sign_by_run, run_variance_table

HARNESS = Path(__file__).parents[2] / "data" / "harness"
LM = HARNESS / "lm_eval_repeats"
INSPECT = HARNESS / "inspect_epochs_runs"


def _inspect_samples() -> pd.DataFrame:
    runs = pd.read_csv(INSPECT / "truth" / "runs.csv")
    frames = []
    for run in runs.itertuples():
        frame = read_inspect_log(INSPECT / "logs" / run.log, SourceOptions())
        assert (frame["model"] == run.model).all()
        frames.append(frame.assign(run=run.seed, sample=frame["epoch"]))
    columns = ["model", "question_id", "category", "run", "sample", "correct"]
    return pd.concat(frames, ignore_index=True)[columns].astype({"correct": float})


def _lm_eval_samples(filter_name: str = "strict-match") -> pd.DataFrame:
    runs = pd.read_csv(LM / "truth" / "runs.csv")
    frames = []
    for run in runs.itertuples():
        samples = LM / "logs" / run.samples
        table = rescore_samples_file(samples, LM / "logs" / run.results, "toyarith_repeats")
        docs = {}
        for text in samples.read_text().splitlines():
            line = json.loads(text)
            docs[line["doc_id"]] = (line["doc"]["id"], line["doc"]["category"])
        table = table[table["filter"] == filter_name]
        frames.append(
            pd.DataFrame(
                {
                    "model": run.model,
                    "question_id": table["doc_id"].map({d: v[0] for d, v in docs.items()}),
                    "category": table["doc_id"].map({d: v[1] for d, v in docs.items()}),
                    "run": run.seed,
                    "sample": table["repeat"],
                    "correct": table["score"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_the_inspect_logs_score_what_the_fake_wrote():
    samples = _inspect_samples()
    truth = pd.read_csv(INSPECT / "truth" / "samples.csv")
    merged = samples.merge(
        truth.rename(columns={"seed": "run", "epoch": "sample"}),
        on=["model", "question_id", "run", "sample"],
        validate="one_to_one",
    )
    assert len(merged) == len(samples) == 2 * 2 * 20 * 3
    assert (merged["correct"] == merged["score_match"]).all()


@pytest.mark.parametrize("harness", ["inspect", "lm_eval"])
def test_pass_at_k_and_run_variance_on_the_fixtures(harness):
    samples = _inspect_samples() if harness == "inspect" else _lm_eval_samples()
    counts = sample_counts(samples)
    assert set(counts["samples"]) == {6}  # 3 samples in each of 2 runs
    curve = pass_at_k_curve(counts)
    for model, rows in samples.groupby("model"):
        row = curve[(curve["model"] == model) & (curve["k"] == 1)].iloc[0]
        assert row["estimate"] == pytest.approx(rows["correct"].mean())
        assert row["clustered_by"] == "category"
    # pass@k rises with k, pass^k would fall: the curve is monotone.
    for _, rows in curve.groupby("model"):
        assert np.all(np.diff(rows["estimate"]) >= -1e-12)
    table = run_variance_table(samples)
    assert table["runs"].tolist() == [2, 2]
    assert table["method"].tolist() == ["anova", "anova"]  # complete: every question, run, sample
    assert (table["var_within"] > 0).all() and (table["var_question"] > 0).all()
    assert (table["flaky_questions"] <= table["questions"]).all()


def test_the_gap_in_each_run_on_the_lm_eval_fixture():
    samples = _lm_eval_samples()
    signs = gap_sign_by_run(samples, "evalbars/fake-strong", "evalbars/fake-weak")
    assert signs.pairing == "run"
    truth = pd.read_csv(LM / "truth" / "samples.csv")
    expected = truth.groupby(["seed", "model"])["score_strict"].mean().unstack()
    np.testing.assert_allclose(
        signs.table["gap"],
        (expected["evalbars/fake-strong"] - expected["evalbars/fake-weak"]).to_numpy(),
    )
