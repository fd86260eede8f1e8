"""Per-model accuracy table (evalbars.accuracy): published values, conventions, real data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.accuracy import accuracy_table
from evalbars.scores import accuracy_order, wide_scores

from .test_pairwise import DATA, MODEL_COLUMNS, ones_then_zeros, wide_from


def test_wilson_and_naive_se_real_counts():
    # MMLU-Pro's gpt-4o biology summary (upstream eval_results), 622 of 717: Wilson (0.8407, 0.8904), naive SE 0.012661.
    row = accuracy_table(wide_from([ones_then_zeros(717, 622)])).iloc[0]
    assert (row["n"], row["correct"]) == (717, 622)
    assert row["accuracy"] == pytest.approx(0.867503, abs=5e-7)
    assert row["se_naive"] == pytest.approx(0.012661, abs=5e-7)
    assert row["ci_low"] == pytest.approx(0.8407, abs=5e-5)
    assert row["ci_high"] == pytest.approx(0.8904, abs=5e-5)
    assert (
        accuracy_table(wide_from([ones_then_zeros(717, 622)]), level=0.99).iloc[0]["ci_low"]
        < 0.8407
    )


def test_clustered_se_convention_toy():
    # Scores [1,1,0,0,1,0] in clusters a,a,b,b,c,c: Miller's Eq. 4 without C/(C-1) gives 0.23570;
    # naive with ddof = 0: sqrt(0.25 / 6) = 0.20412.
    row = accuracy_table(wide_from([[1, 1, 0, 0, 1, 0]], categories=list("aabbcc"))).iloc[0]
    assert row["se_clustered"] == pytest.approx(0.23570, abs=5e-6)
    assert row["se_naive"] == pytest.approx(np.sqrt(0.25 / 6), rel=1e-12)
    # One cluster: the deviations sum to zero, so the clustered SE is not estimable.
    single = accuracy_table(wide_from([[1, 1, 0, 0, 1, 0]], categories=list("aaaaaa"))).iloc[0]
    assert np.isnan(single["se_clustered"])


def test_accuracy_table_columns_and_order():
    wide = wide_scores(pd.read_csv(DATA / "synthetic_incomplete.csv"))
    table = accuracy_table(wide)
    assert table.columns.tolist() == MODEL_COLUMNS
    assert table["model"].tolist() == accuracy_order(wide)
    answered = np.isfinite(wide.scores)
    by_model = table.set_index("model")
    for k, model in enumerate(wide.models):
        assert by_model.loc[model, "n"] == answered[:, k].sum()
        assert by_model.loc[model, "accuracy"] == pytest.approx(np.nanmean(wide.scores[:, k]))
    assert (table["ci_low"] < table["accuracy"]).all() and (
        table["accuracy"] < table["ci_high"]
    ).all()


def test_real_accuracy_table(real_wide):
    table = accuracy_table(real_wide, level=0.95)
    assert table["model"].tolist()[0] == "Mistral-7B-v0.1"
    assert (table["n"] == 1497).all()
    assert table["correct"].sum() == np.nansum(real_wide.scores)
    assert table["accuracy"].is_monotonic_decreasing
    # With 14 categories of very different difficulty, clustering inflates the SE.
    assert (table["se_clustered"] > table["se_naive"]).all()
