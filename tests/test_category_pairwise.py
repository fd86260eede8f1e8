"""Per-category pairs: McNemar per cell against scipy, Holm and BH against statsmodels, the
discordant-split homogeneity test against statsmodels, and the model x category interaction
against lme4 (tests/reference/make_interaction_reference.R, committed output)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_chisquare

from evalbars.category_pairwise import (
    CATEGORY_PAIR_COLUMNS,
    adjust_bh,
    category_pairwise_table,
    category_summary,
    discordant_homogeneity,
    interaction_test,
)
from evalbars.figures.claims import category_heatmap
from evalbars.scores import WideScores, wide_scores

DATA = Path(__file__).resolve().parent / "data"
R_INTERACTION = Path(__file__).resolve().parent / "reference" / "r_output" / "interaction"


def r_interaction(name):
    return json.loads((R_INTERACTION / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def balanced():
    return wide_scores(pd.read_csv(DATA / "synthetic_balanced.csv"))


def test_bh_matches_statsmodels():
    p = np.random.default_rng(3).uniform(size=(5, 40)) ** 3
    for row in p:
        np.testing.assert_allclose(adjust_bh(row), multipletests(row, method="fdr_bh")[1])
    np.testing.assert_allclose(adjust_bh(p)[2], multipletests(p[2], method="fdr_bh")[1])


def test_every_cell_is_mcnemar_on_that_categorys_questions(balanced):
    table = category_pairwise_table(balanced)
    assert list(table.columns) == CATEGORY_PAIR_COLUMNS
    categories = sorted(set(balanced.categories))
    assert len(table) == len(categories) * 6
    for row in table.sample(8, random_state=1).itertuples():
        keep = balanced.categories == row.category
        a = balanced.scores[keep, balanced.models.index(row.model_a)]
        b = balanced.scores[keep, balanced.models.index(row.model_b)]
        n10, n01 = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
        assert (row.n10, row.n01, row.n) == (n10, n01, keep.sum())
        assert row.diff == pytest.approx(a.mean() - b.mean())
        expected = stats.binomtest(n10, n10 + n01, 0.5).pvalue if n10 + n01 else 1.0
        assert row.p_mcnemar == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(table["p_holm"], multipletests(table["p_mcnemar"], method="holm")[1])
    np.testing.assert_allclose(table["p_bh"], multipletests(table["p_mcnemar"], method="fdr_bh")[1])


def test_discordant_homogeneity_matches_statsmodels_chisquare():
    n10 = np.array([12, 5, 9, 0, 20])
    n01 = np.array([4, 6, 9, 0, 5])
    chi2, df, p = discordant_homogeneity(n10, n01)
    used = (n10 + n01) > 0
    expected = proportions_chisquare(n10[used], (n10 + n01)[used])
    assert (chi2, p) == pytest.approx(expected[:2], rel=1e-10)
    assert df == 3
    assert np.isnan(discordant_homogeneity([3, 0], [0, 0])[0])


def test_interaction_matches_lme4_on_the_synthetic_fixture(balanced):
    ref = r_interaction("synthetic_balanced")
    got = interaction_test(balanced)
    assert got["lrt"] == pytest.approx(ref["lrt"]["chisq"], rel=1e-5)
    assert got["lrt_df"] == ref["lrt"]["df"] and not got["boundary"]
    assert got["lrt_p"] == pytest.approx(ref["lrt"]["p"], rel=1e-4)
    assert got["f"] == pytest.approx(ref["split_plot_f"]["f"], rel=1e-10)
    assert (got["f_df1"], got["f_df2"]) == (ref["split_plot_f"]["df1"], ref["split_plot_f"]["df2"])
    assert got["f_p"] == pytest.approx(ref["split_plot_f"]["p"], rel=1e-8)


def test_interaction_matches_lme4_on_the_default_subsample(real_wide):
    ref = r_interaction("mmlu_pro_default_subsample")
    ids = "\n".join(str(q) for q in sorted(real_wide.question_ids))
    assert hashlib.sha256(ids.encode()).hexdigest() == ref["source"]["question_ids_sha256"]
    got = interaction_test(real_wide)
    assert got["lrt"] == pytest.approx(ref["lrt"]["chisq"], rel=1e-5)
    assert got["lrt_p"] == pytest.approx(ref["lrt"]["p"], rel=1e-4)
    assert got["f"] == pytest.approx(ref["split_plot_f"]["f"], rel=1e-10)


def test_summary_counts_naive_wins_and_survivors(real_wide):
    table = category_pairwise_table(real_wide)
    summary = category_summary(table, real_wide)
    pairs = summary[summary["test"] == "discordant split"]
    assert len(pairs) == 15 and (pairs[["wins_a", "wins_b", "ties"]].sum(axis=1) == 14).all()
    total = summary[summary["model_a"] == "all pairs"].iloc[0]
    assert total["wins_a"] + total["wins_b"] + total["ties"] == len(table) == 14 * 15
    assert total["significant_holm"] == table["significant_holm"].sum()
    # Many naive category wins; almost none survive a correction over all 210 tests.
    assert total["wins_a"] > 100 and total["significant_holm"] <= 2
    assert total["significant_mcnemar"] > total["significant_bh"] >= total["significant_holm"]


def test_interaction_refuses_incomplete_data(balanced):
    scores = balanced.scores.copy()
    scores[0, 0] = np.nan
    with pytest.raises(ValueError, match="every model scored on every question"):
        interaction_test(
            WideScores(scores, balanced.models, balanced.question_ids, balanced.categories)
        )


def test_heatmap_keeps_neighbour_pairs_when_there_are_many():
    rng = np.random.default_rng(4)
    scores = (rng.random((300, 12)) < np.linspace(0.9, 0.2, 12)).astype(float)
    wide = WideScores(
        scores, [f"m{i:02d}" for i in range(12)], np.arange(300), np.array(["x", "y", "z"] * 100)
    )
    table = category_pairwise_table(wide)
    assert table[["model_a", "model_b"]].drop_duplicates().shape[0] == 66
    figure = category_heatmap(table)
    labels = [tick.get_text() for tick in figure.axes[0].get_xticklabels()]
    assert labels == [f"m{i:02d} vs m{i + 1:02d}" for i in range(11)]
    assert (
        figure.axes[0].get_title(loc="left").endswith("neighbours in accuracy order, top 12 models")
    )
    few = category_heatmap(
        table[table["model_a"].isin(["m00", "m01"]) & (table["model_b"] < "m05")]
    )
    assert len(few.axes[0].get_xticklabels()) == 7  # 4 + 3 pairs: all drawn
