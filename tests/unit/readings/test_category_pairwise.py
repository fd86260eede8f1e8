"""Per-category pairs: McNemar per cell against scipy, Holm and BH against statsmodels, the
discordant-split homogeneity test against statsmodels, and the model x category interaction
against lme4 (tests/reference/make_interaction_reference.R, committed output)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_chisquare

from evalbars.data.scores import WideScores, wide_scores
from evalbars.readings.category_pairwise import (
    CATEGORY_PAIR_COLUMNS,
    category_pairwise_table,
    category_summary,
    compare_categories,
    discordant_homogeneity,
    interaction_test,
    pairs_among,
)
from evalbars.render.figures.claims import category_heatmap
from evalbars.stats.pairwise import adjust_pvalues

from ...helpers import run_workflow_job

DATA = Path(__file__).resolve().parents[2] / "data"
R_INTERACTION = Path(__file__).resolve().parents[2] / "reference" / "r_output" / "interaction"


def r_interaction(name):
    return json.loads((R_INTERACTION / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def balanced():
    return wide_scores(pd.read_csv(DATA / "synthetic_balanced.csv"))


def test_bh_matches_statsmodels():
    p = np.random.default_rng(3).uniform(size=(5, 40)) ** 3
    adjusted = adjust_pvalues(p, "bh")
    for row, got in zip(p, adjusted, strict=True):
        np.testing.assert_allclose(got, multipletests(row, method="fdr_bh")[1])
        np.testing.assert_allclose(adjust_pvalues(row, "bh"), got)


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


CATEGORY_OUTPUTS = {
    "category_pairwise_csv": "category_pairwise.csv",
    "category_pairwise_parquet": "category_pairwise.parquet",
    "category_pairwise_shown": "shown.csv",
    "category_pairwise_md": "category_pairwise.md",
    "category_pairwise_tex": "category_pairwise.tex",
    "category_summary_csv": "category_summary.csv",
    "category_summary_md": "category_summary.md",
    "category_summary_tex": "category_summary.tex",
    "category_pairwise_figure_png": "category_pairwise.png",
    "category_pairwise_figure_svg": "category_pairwise.svg",
}
CATEGORY_TABLES = [key for key in CATEGORY_OUTPUTS if "figure" not in key and "shown" not in key]


def run_category_job(tmp_path, name, item_table, **params):
    out = tmp_path / name
    out.mkdir()
    output = {key: out / file for key, file in CATEGORY_OUTPUTS.items()}
    run_workflow_job(
        "category_pairwise",
        log=out / "log",
        input={"scores": item_table},  # the pivot of a Parquet item table, as of scores.npz
        output=output,
        params={"alpha": 0.05, "max_models": None} | params,
    )
    return {key: output[key].read_bytes() for key in CATEGORY_TABLES}


def test_display_max_systems_changes_no_number_of_the_category_tables(tmp_path):
    # display.max_systems used to choose which pairs entered the Holm/BH family
    frame = pd.read_csv(DATA / "synthetic_balanced.csv")
    assert frame["model"].nunique() == 4
    item_table = tmp_path / "items.parquet"
    frame.to_parquet(item_table)
    wide = run_category_job(tmp_path, "wide", item_table, max_systems=40)
    narrow = run_category_job(tmp_path, "narrow", item_table, max_systems=2)
    assert narrow == wide
    table = pd.read_csv(tmp_path / "wide" / "category_pairwise.csv")
    assert len(table[["model_a", "model_b"]].drop_duplicates()) == 6  # every pair
    # the analysis key does change the family: 3 models, 3 pairs, and their own adjustment
    top = run_category_job(tmp_path, "top", item_table, max_systems=40, max_models=3)
    fewer = pd.read_csv(tmp_path / "top" / "category_pairwise.csv")
    assert len(fewer[["model_a", "model_b"]].drop_duplicates()) == 3
    assert top["category_pairwise_csv"] != wide["category_pairwise_csv"]
    np.testing.assert_allclose(fewer["p_holm"], multipletests(fewer["p_mcnemar"], method="holm")[1])


def test_compare_categories_restricts_to_the_most_accurate_models(balanced):
    everything = compare_categories(balanced)
    assert everything.models == balanced.models
    pd.testing.assert_frame_equal(everything.table, category_pairwise_table(balanced))
    top = compare_categories(balanced, max_models=2)
    order = [m for m in balanced.models if m in top.models]
    assert top.models == order and len(top.models) == 2
    assert set(top.models) == set(
        pd.Series(balanced.scores.mean(axis=0), balanced.models).nlargest(2).index
    )
    assert len(top.table) == len(set(balanced.categories))  # one pair in every category
    drawn = pairs_among(everything.table, top.models)
    np.testing.assert_array_equal(drawn["p_mcnemar"], top.table["p_mcnemar"])


def test_pairs_with_epochs_are_adjusted_on_their_paired_z_not_a_sign_test(balanced):
    # A sign test of epoch means favours the model with fewer samples: where a pair's cells
    # hold repeated samples the exact McNemar p is empty and its paired z enters the family.
    epochs = wide_scores(pd.read_csv(DATA / "synthetic_epochs.csv"))
    assert epochs.has_repeats
    table = category_pairwise_table(epochs)
    assert list(table.columns) == CATEGORY_PAIR_COLUMNS
    assert table["p_mcnemar"].isna().all() and not table["significant_mcnemar"].any()
    assert set(table["test"]) == {"paired z (repeated samples per question)"}
    np.testing.assert_allclose(table["p_holm"], multipletests(table["p_paired"], method="holm")[1])
    np.testing.assert_allclose(table["p_bh"], multipletests(table["p_paired"], method="fdr_bh")[1])
    split = category_summary(table)
    assert split["statistic"].isna().all() and split["p"].isna().all()
    # One 0/1 sample per cell: the exact test, as before.
    exact = category_pairwise_table(balanced)
    assert set(exact["test"]) == {"exact McNemar"} and exact["p_mcnemar"].notna().all()
    assert category_summary(exact)["p"].notna().any()
