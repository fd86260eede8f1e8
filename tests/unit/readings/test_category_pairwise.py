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
from evalbars.stats.pairwise import adjust_pvalues, exact_readings_not_applicable

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
    "category_summary_parquet": "category_summary.parquet",
    "category_summary_shown": "summary_shown.csv",
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


# --- The vectorized summary against the per-pair definition ------------------------------------


def per_pair_summary(table, wide=None):
    """:func:`category_summary` as one :func:`discordant_homogeneity` per pair (its definition,
    and the loop the vectorized summary replaced), with the all-pairs rows of
    :func:`interaction_test`."""
    rows = []
    for (a, b), group in table.groupby(["model_a", "model_b"], sort=False):
        chi2, df, p = discordant_homogeneity(group["n10"], group["n01"])
        if (group["test"] != "exact McNemar").any():
            chi2, p = np.nan, np.nan
        winner = group["naive_winner"]
        rows.append(
            {
                "model_a": a,
                "model_b": b,
                "categories": len(group),
                "wins_a": int((winner == a).sum()),
                "wins_b": int((winner == b).sum()),
                "ties": int((winner == "").sum()),
                "significant_mcnemar": int(group["significant_mcnemar"].sum()),
                "significant_holm": int(group["significant_holm"].sum()),
                "significant_bh": int(group["significant_bh"].sum()),
                "test": "discordant split",
                "statistic": chi2,
                "df": df,
                "df2": np.nan,
                "p": p,
            }
        )
    summary = pd.DataFrame(rows)
    if wide is None or not np.isfinite(wide.scores).all() or len(set(wide.categories)) < 2:
        return summary
    result = interaction_test(wide)
    counts = ["wins_a", "wins_b", "ties"] + [f"significant_{t}" for t in ("mcnemar", "holm", "bh")]
    totals = {"model_a": "all pairs", "model_b": "", "categories": table["category"].nunique()}
    totals |= {column: int(summary[column].sum()) for column in counts}
    extra = [
        totals
        | {"test": "model x category LRT (ML)", "statistic": result["lrt"]}
        | {"df": result["lrt_df"], "df2": np.nan, "p": result["lrt_p"]},
        totals
        | {"test": "model x category split-plot F", "statistic": result["f"]}
        | {"df": result["f_df1"], "df2": result["f_df2"], "p": result["f_p"]},
    ]
    return pd.concat([summary, pd.DataFrame(extra)], ignore_index=True)


def random_board(seed, categories, per_category=12, models=7, missing=0.0, cells=None):
    """A seeded 0/1 board: model m1 a copy of m0 (no discordant question in any category),
    m2 m0 with some right answers made wrong (m0 wins every discordant question), the others
    independent; ``missing`` a share of empty cells; ``cells`` ``"partial"`` (a few scores of
    0.5 for m3) or ``"repeats"`` (a few cells of m3 with two samples)."""
    rng = np.random.default_rng(seed)
    n = categories * per_category
    scores = (rng.random((n, models)) < rng.uniform(0.3, 0.9, models)).astype(float)
    scores[:, 1] = scores[:, 0]
    scores[:, 2] = np.where(rng.random(n) < 0.3, 0.0, scores[:, 0])
    scores[rng.random((n, models)) < missing] = np.nan
    samples = None
    touched = rng.choice(n, 3, replace=False)
    if cells == "partial":
        scores[touched, 3] = 0.5
    elif cells == "repeats":
        samples = np.isfinite(scores).astype(np.int64)
        samples[touched, 3] = 2
        scores[touched, 3] = [0.5, 1.0, 0.0]
    names = np.array([f"cat {c:02d}" for c in range(categories)])
    return WideScores(
        scores,
        [f"m{m}" for m in range(models)],
        np.arange(n),
        np.repeat(names, per_category),
        samples=samples,
    )


BOARDS = {
    "one category": {"categories": 1, "per_category": 40},
    "two categories": {"categories": 2, "per_category": 30},
    "three, missing cells": {"categories": 3, "per_category": 20, "missing": 0.15},
    "fourteen": {"categories": 14},
    "fourteen, missing cells": {"categories": 14, "missing": 0.1},
    "fifty-seven": {"categories": 57, "per_category": 16, "models": 9},
    "fifty-seven, missing cells": {"categories": 57, "per_category": 16, "missing": 0.05},
    "partial credit": {"categories": 3, "per_category": 20, "cells": "partial"},
    "repeated samples": {"categories": 14, "cells": "repeats"},
}


@pytest.mark.parametrize("name", BOARDS)
def test_vectorized_summary_is_the_per_pair_definition_to_the_bit(name):
    wide = random_board(sum(map(ord, name)), **BOARDS[name])
    table = category_pairwise_table(wide)
    got = category_summary(table, wide)
    pd.testing.assert_frame_equal(got, per_pair_summary(table, wide), check_exact=True)
    # and on any table: rows shuffled (pairs in their new first-appearance order, each pair's
    # categories in their new order), and a pair's rows not next to each other
    shuffled = table.sample(frac=1.0, random_state=5)
    pd.testing.assert_frame_equal(
        category_summary(shuffled), per_pair_summary(shuffled), check_exact=True
    )
    pairs = got[got["test"] == "discordant split"].set_index(["model_a", "model_b"])
    assert len(pairs) == 21 or len(pairs) == 36

    def pair(x, y):  # either orientation (the accuracy order decides it)
        return pairs.loc[(x, y)] if (x, y) in pairs.index else pairs.loc[(y, x)]

    # the boards hold the cases the summary must get right
    assert pair("m0", "m1")["df"] == 0  # no discordant question: empty
    assert np.isnan(pair("m0", "m1")["statistic"])
    assert np.isnan(pair("m0", "m2")["p"])  # one model wins every discordant question
    categories = BOARDS[name]["categories"]
    exact = table.groupby(["model_a", "model_b"], sort=False)["test"].agg(
        lambda t: (t == "exact McNemar").all()
    )
    assert pairs["p"].notna().any() == (categories > 1)
    assert pairs.loc[~exact.reindex(pairs.index), "p"].isna().all()
    if BOARDS[name].get("cells"):  # the pairs of m3: no 2x2 table to split, though df counts
        assert (~exact).sum() >= 1 and (pairs.loc[~exact.reindex(pairs.index), "df"] > 0).all()
    testable = categories > 1 and not BOARDS[name].get("missing")
    assert (got["model_a"] == "all pairs").sum() == 2 * testable
    if categories == 57:  # most pairs split over 8 or more categories: pairwise summation
        assert (pairs["df"] >= 7).mean() > 0.5 and pairs["statistic"].notna().sum() > 10


def test_the_fifty_seven_category_board_would_catch_a_sum_in_another_order():
    # With more than 8 terms numpy sums by pairs, so a running sum (or a bincount) of the
    # chi-square terms differs in the last bits: the bit-for-bit test above would see it.
    wide = random_board(sum(map(ord, "fifty-seven")), **BOARDS["fifty-seven"])
    table = category_pairwise_table(wide)
    differs = 0
    for _, group in table.groupby(["model_a", "model_b"], sort=False):
        b, c = group["n10"].to_numpy(float), group["n01"].to_numpy(float)
        b, c = b[b + c > 0], c[b + c > 0]
        if b.sum() == 0 or c.sum() == 0:
            continue
        share = b.sum() / (b + c).sum()
        terms = (b - (b + c) * share) ** 2 / ((b + c) * share * (1 - share))
        running = 0.0
        for term in terms:
            running += term
        differs += running != np.sum(terms)
    assert differs > 0


def test_text_columns_name_each_rows_winner_and_test():
    # The winner and test labels are built from codes; row by row they are the definitions.
    wide = random_board(11, 5, cells="repeats", missing=0.1)
    scores = wide.scores.copy()
    scores[:4, 5] = 0.5  # partial credit for m5 on the first category's questions
    wide = WideScores(scores, wide.models, wide.question_ids, wide.categories, wide.samples)
    table = category_pairwise_table(wide)
    text = pd.Series(["x"]).dtype
    for column in ("category", "model_a", "model_b", "naive_winner", "test"):
        assert table[column].dtype == text
    assert len(set(table["test"])) == 3
    for row in table.itertuples():
        winner = row.model_a if row.diff > 0 else row.model_b if row.diff < 0 else ""
        assert row.naive_winner == winner
        part = wide.rows(wide.categories == row.category)
        reason = exact_readings_not_applicable(part, row.model_a, row.model_b)
        assert row.test == ("exact McNemar" if reason is None else f"paired z ({reason})")
        assert np.isnan(row.p_mcnemar) == (reason is not None)
