"""Per-model accuracy table (evalbars.stats.accuracy): published values, conventions, real data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.data.scores import accuracy_order, wide_scores
from evalbars.stats.accuracy import accuracy_table, sampling_variance_table
from evalbars.stats.intervals import clustered_se

from ...helpers import DATA, MODEL_COLUMNS, ones_then_zeros, wide_from


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


def test_jeffreys_interval_columns_are_rs_qbeta():
    # R: qbeta(c(.025, .975), 19.5, 22.5) and qbeta(c(.025, .975), 0.5, 10.5), for 19 of 41
    # and 0 of 10 right: the Jeffreys posterior Beta(k + 1/2, n - k + 1/2).
    expected = {
        (19, 41): (0.317626104238719, 0.614169738653724),
        (0, 10): (4.78904331575819e-05, 0.217196267509211),
    }
    for (k, n), (low, high) in expected.items():
        row = accuracy_table(wide_from([ones_then_zeros(n, k)])).iloc[0]
        assert row["jeffreys_low"] == pytest.approx(low, rel=1e-12)
        assert row["jeffreys_high"] == pytest.approx(high, rel=1e-12)


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


def epochs_items(seed=0):
    """Three models, 60 questions in 3 categories, 1 to 4 samples per cell, some cells empty."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, skill in (("A", 0.7), ("B", 0.5), ("C", 0.4)):
        for q in range(60):
            truth = np.clip(skill + rng.normal(0, 0.25), 0, 1)
            for epoch in range(1, rng.integers(0, 5) + 1):
                rows.append((m, q, epoch, "xyz"[q % 3], float(rng.random() < truth)))
    return pd.DataFrame(rows, columns=["model", "question_id", "epoch", "category", "correct"])


def test_accuracy_with_epochs_is_over_all_samples_and_clusters_by_question():
    items = epochs_items()
    wide = wide_scores(items)
    table = accuracy_table(wide).set_index("model")
    for model, group in items.groupby("model"):
        row = table.loc[model]
        assert row["samples"] == len(group) and row["n"] == group["question_id"].nunique()
        assert row["accuracy"] == pytest.approx(group["correct"].mean(), rel=1e-12)
        assert row["correct"] == group["correct"].sum()
        # Brute force on the samples themselves: naive SE, then questions and categories as
        # clusters (Miller's Eq. 4 over individual samples).
        p = group["correct"].mean()
        assert row["se_naive"] == pytest.approx(np.sqrt(p * (1 - p) / len(group)), rel=1e-12)
        by_question = clustered_se(group["correct"], group["question_id"])
        assert row["se_questions"] == pytest.approx(by_question, rel=1e-12)
        assert row["se_clustered"] == pytest.approx(
            clustered_se(group["correct"], group["category"]), rel=1e-12
        )
        # Repeated samples of a question are worth less than as many new questions.
        assert row["se_questions"] > row["se_naive"]


def test_one_sample_per_question_gives_the_classical_table():
    wide = wide_scores(pd.read_csv(DATA / "synthetic_balanced.csv"))
    table = accuracy_table(wide)
    np.testing.assert_allclose(table["se_questions"], table["se_naive"], rtol=1e-12)
    assert (table["samples"] == table["n"]).all()
    variance = sampling_variance_table(wide)
    assert variance["var_within"].isna().all() and (variance["mean_epochs"] == 1).all()


def test_sampling_variance_split_by_hand():
    items = epochs_items(seed=3)
    variance = sampling_variance_table(wide_scores(items)).set_index("model")
    for model, group in items.groupby("model"):
        cells = group.groupby("question_id")["correct"]
        k, means = cells.size(), cells.mean()
        repeated = k >= 2
        within = (cells.var(ddof=1)[repeated] * (k[repeated] - 1)).sum() / (k[repeated] - 1).sum()
        between = max(means.var(ddof=1) - within * (1 / k).mean(), 0.0)
        row = variance.loc[model]
        assert row["var_within"] == pytest.approx(within, rel=1e-12)
        assert row["var_between"] == pytest.approx(between, rel=1e-12)
        n = len(k)
        assert row["se_one_epoch"] == pytest.approx(np.sqrt((between + within) / n), rel=1e-12)
        assert row["se_double_epochs"] == pytest.approx(
            np.sqrt((between + within / (2 * k.mean())) / n), rel=1e-12
        )
        assert row["se_double_epochs"] < row["se_one_epoch"]


def test_tables_in_blocks_of_models_equal_the_one_block_tables(monkeypatch):
    # Epochs and missing cells, every per-model column computed block by block of models. A
    # block of one column sums down it pairwise rather than row after row, so the variances
    # may differ in the last digit; everything else is digit for digit.
    wide = wide_scores(epochs_items(seed=5))
    whole = accuracy_table(wide), sampling_variance_table(wide)
    monkeypatch.setattr(
        "evalbars.data.blocks.BLOCK_CELLS", wide.scores.shape[0]
    )  # one model a block
    pd.testing.assert_frame_equal(accuracy_table(wide), whole[0], check_exact=True)
    pd.testing.assert_frame_equal(sampling_variance_table(wide), whole[1], rtol=1e-14)


def test_sampling_variance_from_the_accuracy_table_is_the_same_table():
    # se_observed is accuracy_table's se_questions: taken from it, digit for digit the same.
    wide = wide_scores(epochs_items(seed=7))
    alone = sampling_variance_table(wide)
    shared = sampling_variance_table(wide, accuracy_table(wide))
    pd.testing.assert_frame_equal(shared, alone, check_exact=True)
    assert np.isfinite(alone["se_observed"]).all() and (alone["se_observed"] > 0).all()
