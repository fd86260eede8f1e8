"""Omnibus tests: published worked examples, R reference values, other implementations, identities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats
from statsmodels.stats.anova import AnovaRM
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q

from evalbars.data.scores import WideScores, wide_scores
from evalbars.stats import omnibus

from ...reference.r_results import R_RESULTS

DATA = Path(__file__).resolve().parents[2] / "data"
SYNTHETIC = ["synthetic_balanced", "synthetic_boundary", "synthetic_boundary_question"]

# R friedman.test help page: Hollander & Wolfe (1973) p. 140, 22 players x 3 methods.
ROUNDING_TIMES = np.array(
    [
        [5.40, 5.50, 5.55], [5.85, 5.70, 5.75], [5.20, 5.60, 5.50], [5.55, 5.50, 5.40],
        [5.90, 5.85, 5.70], [5.45, 5.55, 5.60], [5.40, 5.40, 5.35], [5.45, 5.50, 5.35],
        [5.25, 5.15, 5.00], [5.85, 5.80, 5.70], [5.25, 5.20, 5.10], [5.65, 5.55, 5.45],
        [5.60, 5.35, 5.45], [5.05, 5.00, 4.95], [5.50, 5.50, 5.40], [5.45, 5.55, 5.50],
        [5.55, 5.55, 5.35], [5.45, 5.50, 5.55], [5.50, 5.45, 5.25], [5.65, 5.60, 5.40],
        [5.70, 5.65, 5.55], [6.30, 6.30, 6.25],
    ]
)  # fmt: skip


def synthetic_wide(name: str) -> WideScores:
    return wide_scores(pd.read_csv(DATA / f"{name}.csv"))


def random_binary(shape, seed=0, p=0.4):
    return (np.random.default_rng(seed).random(shape) < p).astype(float)


# --- Published worked examples -------------------------------------------------------------------


def test_rm_anova_matches_pingouin_docstring():
    # pingouin's rm_anova docstring: rm_anova(read_dataset("rm_anova_wide")), listwise deletion of the NaN row.
    wide = pg.read_dataset("rm_anova_wide").dropna().to_numpy()
    result = omnibus.rm_anova(wide)
    assert (result.df1, result.df2) == (3.0, 24.0)
    assert result.f == pytest.approx(5.200652, abs=5e-7)
    assert result.p == pytest.approx(0.006557, abs=5e-7)
    assert result.epsilon == pytest.approx(0.694329, abs=5e-7)


def test_friedman_rounding_times_matches_r():
    # R friedman.test(RoundingTimes) (Hollander and Wolfe): chi-squared = 11.142857142857142, p = 0.00380504077551136.
    result = omnibus.friedman(ROUNDING_TIMES)
    assert result.df == 2
    assert result.statistic == pytest.approx(11.14285714285714, rel=1e-12)
    assert result.p == pytest.approx(0.00380504077551136, rel=1e-10)


@pytest.mark.parametrize(
    "matrix, statistic, p",
    [
        # evalstats' tests/test_compare_prompts.py, 6 x 3 (R: 10.333, p = 0.005704).
        (
            [[0.82, 0.79, 0.76], [0.91, 0.88, 0.86], [0.73, 0.71, 0.69],
             [0.65, 0.67, 0.63], [0.84, 0.82, 0.80], [0.77, 0.74, 0.72]],
            10.333, 0.005704,
        ),
        # rstatix PR #265 (A, B, C columns): 9.3333, p = 0.009404.
        (np.array([[4, 6, 3, 5, 4, 5], [7, 8, 6, 7, 9, 6], [6, 9, 7, 8, 8, 9]]).T, 9.3333, 0.009404),
    ],
)  # fmt: skip
def test_friedman_printed_examples(matrix, statistic, p):
    result = omnibus.friedman(matrix)
    assert result.statistic == pytest.approx(statistic, abs=5e-4)
    assert result.p == pytest.approx(p, abs=5e-7)


def test_cochran_q_pingouin_dataset():
    # pingouin read_dataset("cochran"): Q = 6.705882, df = 2, p = 0.034981; equal to the tie-corrected Friedman statistic.
    data = pg.read_dataset("cochran")
    wide = data.pivot(index="Subject", columns="Time", values="Energetic").to_numpy(dtype=float)
    q = omnibus.cochran_q(wide)
    assert q.df == 2
    assert q.statistic == pytest.approx(6.705882, abs=5e-7)
    assert q.p == pytest.approx(0.034981, abs=5e-7)
    assert omnibus.friedman(wide).statistic == pytest.approx(q.statistic, rel=1e-12)


def test_cochran_q_with_two_models_is_uncorrected_mcnemar():
    # Exact identity: K = 2 -> (b - c)^2 / (b + c).
    x = random_binary((300, 2), seed=3)
    b = int(((x[:, 0] == 1) & (x[:, 1] == 0)).sum())
    c = int(((x[:, 0] == 0) & (x[:, 1] == 1)).sum())
    assert omnibus.cochran_q(x).statistic == pytest.approx((b - c) ** 2 / (b + c), rel=1e-12)


# --- R reference values (tests/reference/make_r_reference.R), closed forms at 1e-8 ------------------


@pytest.mark.parametrize("name", SYNTHETIC)
def test_closed_forms_match_r(name, reference_wide):
    ref = R_RESULTS[name]
    wide = reference_wide(name)
    assert wide.complete
    rm = omnibus.rm_anova(wide.scores)
    one = omnibus.oneway_anova(wide.scores)
    fr = omnibus.friedman(wide.scores)
    cq = omnibus.cochran_q(wide.scores)
    r_rm, r_one, r_fr = ref["rm_anova"], ref["oneway"], ref["friedman"]
    assert (rm.df1, rm.df2) == (r_rm["df1"], r_rm["df2"])
    assert (one.df1, one.df2) == (r_one["df1"], r_one["df2"])
    for ours, theirs in [
        (rm.f, r_rm["F"]),
        (rm.p, r_rm["p"]),
        (rm.ms_error, r_rm["ms_error"]),
        (rm.ss_error, r_rm["ss_error"]),
        (rm.ss_model / rm.df1, r_rm["ms_model"]),
        (rm.epsilon, r_rm["gg_epsilon"]),
        (rm.p_gg, r_rm["p_gg"]),
        (one.f, r_one["F"]),
        (one.p, r_one["p"]),
        (one.ss_within / one.df2, r_one["ms_error"]),
        (fr.statistic, r_fr["statistic"]),
        (fr.p, r_fr["p"]),
        (cq.statistic, r_fr["cochran_q"]),
        (cq.p, r_fr["p_cochran_q"]),
    ]:
        assert float(ours) == pytest.approx(theirs, rel=1e-8)


def test_oneway_on_incomplete_data_matches_r():
    # R anova(lm(correct ~ model)) on every available row (groups of unequal size).
    ref = R_RESULTS["synthetic_incomplete"]["oneway"]
    wide = synthetic_wide("synthetic_incomplete")
    assert not wide.complete
    one = omnibus.oneway_anova(wide.scores)
    assert (one.df1, one.df2) == (ref["df1"], ref["df2"])
    assert one.f == pytest.approx(ref["F"], rel=1e-8)
    assert one.p == pytest.approx(ref["p"], rel=1e-8)


# --- Other implementations ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_scipy_pingouin_statsmodels(seed):
    x = random_binary((80, 5), seed=seed)
    long = pd.DataFrame(x).rename_axis("question").reset_index()
    long = long.melt(id_vars="question", var_name="model", value_name="y")
    rm = omnibus.rm_anova(x)
    pg_rm = pg.rm_anova(long, dv="y", within="model", subject="question", correction=True)
    assert rm.f == pytest.approx(pg_rm["F"].iloc[0], rel=1e-10)
    assert rm.p == pytest.approx(pg_rm["p_unc"].iloc[0], rel=1e-10)
    assert rm.epsilon == pytest.approx(pg_rm["eps"].iloc[0], rel=1e-10)
    assert rm.p_gg == pytest.approx(pg_rm["p_GG_corr"].iloc[0], rel=1e-10)
    sm = AnovaRM(long, depvar="y", subject="question", within=["model"]).fit().anova_table
    assert rm.f == pytest.approx(sm["F Value"].iloc[0], rel=1e-10)
    one = omnibus.oneway_anova(x)
    sp_one = stats.f_oneway(*x.T)
    assert one.f == pytest.approx(sp_one.statistic, rel=1e-10)
    assert one.p == pytest.approx(sp_one.pvalue, rel=1e-10)
    fr = omnibus.friedman(x)
    assert fr.statistic == pytest.approx(stats.friedmanchisquare(*x.T).statistic, rel=1e-10)
    pg_fr = pg.friedman(long, dv="y", within="model", subject="question")
    assert fr.statistic == pytest.approx(pg_fr["Q"].iloc[0], rel=1e-10)
    cq = omnibus.cochran_q(x)
    assert cq.statistic == pytest.approx(sm_cochrans_q(x).statistic, rel=1e-10)
    assert cq.statistic == pytest.approx(
        pg.cochran(long, dv="y", within="model", subject="question")["Q"].iloc[0], rel=1e-10
    )


def test_continuous_scores_with_ties_match_scipy():
    x = np.round(np.random.default_rng(9).normal(size=(40, 4)), 1)
    x[::5, 1] = x[::5, 0]  # force within-row ties
    assert omnibus.friedman(x).statistic == pytest.approx(
        stats.friedmanchisquare(*x.T).statistic, rel=1e-10
    )


# --- Stacks: one call for many replicates ----------------------------------------------------------


def test_stacked_matrices_give_the_per_slice_results():
    stack = random_binary((7, 60, 4), seed=11)
    rm, one, fr, cq = (
        f(stack)
        for f in (omnibus.rm_anova, omnibus.oneway_anova, omnibus.friedman, omnibus.cochran_q)
    )
    assert rm.f.shape == one.f.shape == fr.statistic.shape == cq.statistic.shape == (7,)
    for i, x in enumerate(stack):
        assert rm.f[i] == pytest.approx(float(omnibus.rm_anova(x).f), rel=1e-12)
        assert rm.epsilon[i] == pytest.approx(float(omnibus.rm_anova(x).epsilon), rel=1e-12)
        assert one.p[i] == pytest.approx(float(omnibus.oneway_anova(x).p), rel=1e-12)
        assert fr.statistic[i] == pytest.approx(stats.friedmanchisquare(*x.T).statistic, rel=1e-10)
    nested = random_binary((2, 3, 30, 4), seed=12)
    assert omnibus.rm_anova(nested).f.shape == (2, 3)


def test_rm_anova_refuses_missing_scores():
    x = random_binary((10, 3))
    x[0, 0] = np.nan
    with pytest.raises(ValueError, match="complete rows"):
        omnibus.rm_anova(x)
    with pytest.raises(ValueError, match="0/1"):
        omnibus.cochran_q(np.full((5, 3), 0.5))


# --- The omnibus table ------------------------------------------------------------------------------


def test_omnibus_table_rows_and_listwise_deletion():
    wide = synthetic_wide("synthetic_incomplete")
    table = omnibus.omnibus_table(wide)
    assert table.columns.tolist() == [
        "test",
        "statistic",
        "df1",
        "df2",
        "p",
        "epsilon",
        "n_questions",
    ]
    assert table["test"].tolist() == [
        "rm_anova",
        "rm_anova_gg",
        "oneway_anova",
        "friedman",
        "cochran_q",
    ]
    complete = wide.scores[np.isfinite(wide.scores).all(axis=1)]
    assert table["n_questions"].iloc[0] == len(complete) < len(wide.scores)
    rows = table.set_index("test")
    assert rows.loc["rm_anova", "statistic"] == pytest.approx(float(omnibus.rm_anova(complete).f))
    eps = rows.loc["rm_anova", "epsilon"]
    assert rows.loc["rm_anova_gg", "df1"] == pytest.approx(eps * rows.loc["rm_anova", "df1"])
    assert rows.loc["rm_anova_gg", "df2"] == pytest.approx(eps * rows.loc["rm_anova", "df2"])
    assert rows.loc["oneway_anova", "df2"] == 4 * len(complete) - 4
    assert np.isnan(rows.loc["friedman", "df2"])


# --- Passes in blocks of questions -------------------------------------------------------------------


def test_blocked_passes_and_binary_ranks_equal_the_direct_computation(monkeypatch):
    """Sums in blocks of questions (as on a board of thousands of models) give the one-block
    statistics to round-off, and 0/1 scores ranked without sorting are scipy's average ranks."""
    rng = np.random.default_rng(4)
    x = (rng.random((300, 7)) < rng.random(7)).astype(float)
    np.testing.assert_array_equal(omnibus._binary_ranks(x), stats.rankdata(x, axis=-1))
    whole = (omnibus.rm_anova(x), omnibus.oneway_anova(x), omnibus.friedman(x))
    monkeypatch.setattr("evalbars.data.blocks.BLOCK_CELLS", 7 * 16)  # 16 questions a block
    blocked = (omnibus.rm_anova(x), omnibus.oneway_anova(x), omnibus.friedman(x))
    for a, b in zip(whole, blocked, strict=True):
        for field in a._fields:
            np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-12)
    assert blocked[2].statistic == whole[2].statistic  # half-integer rank sums: exact
