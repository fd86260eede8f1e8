"""Simulation studies: seed 000's leaderboard numbers, precision, the paper's FWER study, clustering.

Monte Carlo results are checked against exact values computed independently here
(binomial enumeration, the studentized range, closed forms) within four Monte Carlo
standard errors, and against the numbers the seeds and the paper state.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars import omnibus, pairwise
from evalbars import simulate as sim
from evalbars.intervals import clustered_se, wilson_interval
from evalbars.io import WideScores

SEED = 2025  # the config default, so these are the workflow's own numbers
TOL_SE = 4  # Monte Carlo tolerance, in standard errors
RATES = np.array([0.82, 0.80, 0.79, 0.77, 0.72])


def exact_leaderboard(questions: int, rates) -> dict:
    """Exact TOP1 (random tie-break), P(B > A), P(B = A) by binomial enumeration.

    P(A first) = sum_k P(X_A = k) E[1/(1 + J); others <= k] with J the number of
    others tied at k; E[1/(1+J)] = int_0^1 prod_m (P(X_m < k) + u P(X_m = k)) du.
    """
    k = np.arange(questions + 1)
    pmf = np.array([stats.binom.pmf(k, questions, p) for p in rates])
    below = np.array([stats.binom.cdf(k - 1, questions, p) for p in rates])
    nodes, weights = np.polynomial.legendre.leggauss(16)
    u, w = (nodes + 1) / 2, weights / 2
    tie_share = np.prod(below[1:, :, None] + u * pmf[1:, :, None], axis=0) @ w
    b_above = float((pmf[0] * stats.binom.sf(k, questions, rates[1])).sum())
    tie = float((pmf[0] * pmf[1]).sum())
    return {
        "top1": float((pmf[0] * tie_share).sum()),
        "b_above_a": b_above,
        "tie": tie,
        "wrong": b_above + tie / 2,
    }


def assert_mc(value, se, target):
    assert abs(value - target) <= TOL_SE * se, f"{value} vs {target} (MC SE {se})"


# --- 1. The unpaired leaderboard (seed 000) ----------------------------------------------------


def frames(result: sim.LeaderboardResult) -> sim.LeaderboardResult:
    """A leaderboard result with each column mapping as a DataFrame."""
    return sim.LeaderboardResult(*(pd.DataFrame(table) for table in result))


def fwer_frame(models, *args, **kwargs) -> pd.DataFrame:
    """:func:`simulate_fwer` for each K in ``models``, as one DataFrame."""
    return pd.concat(
        [pd.DataFrame(sim.simulate_fwer(k, *args, **kwargs)) for k in models], ignore_index=True
    )


@pytest.fixture(scope="module")
def default_leaderboard():
    return frames(sim.simulate_leaderboard(200, 1.0, runs=10_000, seed=SEED))


def test_exact_values_match_the_seed():
    exact = exact_leaderboard(200, RATES)
    assert exact["top1"] == pytest.approx(
        0.5723, abs=5e-4
    )  # "an independent computation gives 0.571"
    assert exact["b_above_a"] == pytest.approx(0.28, abs=0.005)  # seed: B above A in about 28%
    assert exact["wrong"] == pytest.approx(0.30, abs=0.01)  # seed: "roughly 30% of the runs"


def test_defaults_top1_b_above_a_and_higher_score_wins(default_leaderboard):
    summary = default_leaderboard.summary.set_index("rule")
    exact = exact_leaderboard(200, RATES)
    row = summary.loc["higher_score_wins"]
    assert_mc(row["top1"], row["top1_se"], exact["top1"])
    assert_mc(row["b_above_a"], row["b_above_a_se"], exact["b_above_a"])
    assert_mc(row["wrong"], row["wrong_se"], exact["wrong"])
    assert row["undecided"] == 0
    # A - B in points: mean 2, SD 100 sqrt((.82 .18 + .8 .2)/200) = 3.922.
    assert_mc(row["mean_a_minus_b_points"], row["mean_a_minus_b_se"], 2.0)
    assert row["sd_a_minus_b_points"] == pytest.approx(3.922, rel=0.03)
    runs = default_leaderboard.runs
    assert len(runs) == 10_000
    assert (runs["a_minus_b_points"] < 0).mean() == pytest.approx(row["b_above_a"])
    assert (runs["top_model"] == "A").mean() == pytest.approx(row["top1"])


def test_non_overlap_rule_is_almost_never_wrong_and_rarely_decides(default_leaderboard):
    row = default_leaderboard.summary.set_index("rule").loc["intervals_must_not_overlap"]
    assert row["wrong"] <= 0.005  # WRONG about zero
    assert row["undecided"] > 0.95  # UNDECIDED past 95%


def test_5000_questions_whiskers_about_a_point_and_b_rarely_above():
    summary = pd.DataFrame(
        sim.simulate_leaderboard(5000, 1.0, runs=10_000, seed=SEED).summary
    ).iloc[0]
    exact_whisker = np.mean(100 * 1.959964 * np.sqrt(RATES * (1 - RATES) / 5000))
    assert summary["mean_whisker_points"] == pytest.approx(exact_whisker, abs=0.01)
    assert round(summary["mean_whisker_points"], 1) in (1.1, 1.2)  # "about a point each side"
    assert summary["b_above_a"] < 0.01
    assert_mc(
        summary["b_above_a"], summary["b_above_a_se"], exact_leaderboard(5000, RATES)["b_above_a"]
    )
    assert summary["mean_a_minus_b_points"] == pytest.approx(
        2.0, abs=TOL_SE * summary["mean_a_minus_b_se"]
    )


def test_spread_zero_top1_is_one_in_five():
    summary = pd.DataFrame(sim.simulate_leaderboard(200, 0.0, runs=10_000, seed=SEED).summary).iloc[
        0
    ]
    assert_mc(summary["top1"], summary["top1_se"], 0.2)
    assert_mc(summary["wrong"], summary["wrong_se"], 0.5)


def test_ties_for_first_are_broken_at_random():
    # With 10 questions ties for first are common; a fixed tie order would favour one model.
    runs = pd.DataFrame(sim.simulate_leaderboard(10, 0.0, runs=20_000, seed=SEED).runs)
    shares = runs["top_model"].value_counts(normalize=True).reindex(list("ABCDE"))
    se = np.sqrt(0.2 * 0.8 / 20_000)
    assert np.all(np.abs(shares - 0.2) <= TOL_SE * se), shares


def test_leaderboard_rates_spread():
    assert sim.leaderboard_rates(1.0) == pytest.approx(RATES)
    assert sim.leaderboard_rates(0.0) == pytest.approx(np.full(5, 0.78))
    assert sim.leaderboard_rates(2.0) == pytest.approx(0.78 + 2 * (RATES - 0.78))
    with pytest.raises(ValueError):
        sim.leaderboard_rates(10.0)


def test_one_run_is_consistent(default_leaderboard):
    one = default_leaderboard.one_run
    assert len(one) == 5 * 200
    counts = one.groupby("model")["correct"].sum()
    ranks = one.drop_duplicates("model").set_index("model")["final_rank"]
    assert sorted(ranks) == [1, 2, 3, 4, 5]
    # The model ranked first has the highest count (ties broken either way).
    assert counts[ranks.idxmin()] == counts.max()
    assert (np.diff(counts[ranks.sort_values().index].to_numpy()) <= 0).all()


def test_same_seed_same_frames_and_settings_are_order_independent():
    first = frames(sim.simulate_leaderboard(500, 1.0, runs=2000, seed=7))
    sim.simulate_leaderboard(200, 0.0, runs=2000, seed=7)  # another setting in between
    again = frames(sim.simulate_leaderboard(500, 1.0, runs=2000, seed=7))
    for a, b in zip(first, again):
        pd.testing.assert_frame_equal(a, b)
    other = frames(sim.simulate_leaderboard(500, 1.0, runs=2000, seed=8))
    assert not first.runs.equals(other.runs)
    fwer = pd.DataFrame(sim.simulate_fwer(3, 100, 0.5, replications=300, seed=7))
    sim.simulate_fwer(4, 100, 0.5, replications=300, seed=7)
    pd.testing.assert_frame_equal(
        fwer, pd.DataFrame(sim.simulate_fwer(3, 100, 0.5, replications=300, seed=7))
    )
    pd.testing.assert_frame_equal(
        pd.DataFrame(sim.simulate_clustered(4, 0.3, 400, 300, seed=7)),
        pd.DataFrame(sim.simulate_clustered(4, 0.3, 400, 300, seed=7)),
    )


def test_setting_seed_depends_on_parameter_values():
    a = sim.setting_rng(1, "fwer", 4, 400, 0.5).random(3)
    assert np.array_equal(a, sim.setting_rng(1, "fwer", 4, 400, 0.5).random(3))
    assert not np.array_equal(a, sim.setting_rng(1, "fwer", 4, 400, 0.05).random(3))
    assert not np.array_equal(a, sim.setting_rng(1, "clustered", 4, 400, 0.5).random(3))
    with pytest.raises(ValueError):
        sim.setting_rng(1, "fwer", -1)


# --- 2. Precision and questions needed -----------------------------------------------------------


def test_wilson_160_of_200():
    low, high = wilson_interval(160, 200)
    assert (round(100 * float(low), 1), round(100 * float(high), 1)) == (73.9, 85.0)


def test_half_widths_at_80_percent():
    table = sim.precision_table((100, 200, 1000, 5000), 0.8, 0.95)
    assert table["half_width_points"].round(1).tolist() == [7.8, 5.5, 2.5, 1.1]
    assert sim.wilson_halfwidth(0.8, 200) * 100 == pytest.approx(table["half_width_points"][1])


def test_questions_to_resolve_unpaired_is_1_28_over_gap_squared():
    gaps = np.array([0.10, 0.05, 0.02, 0.01])
    needed = sim.questions_to_resolve_unpaired(gaps)
    assert needed == pytest.approx([128, 512, 3200, 12800])
    assert needed == pytest.approx(1.28 / gaps**2)
    assert needed == pytest.approx([130, 500, 3200, 12800], rel=0.03)  # the seed's rounding
    table = sim.questions_needed_table(gaps, disagreements={"half": 0.5, "tiny": 0.015})
    unpaired = table[table["design"] == "unpaired"]["questions_per_model"]
    assert unpaired.tolist() == [128, 512, 3200, 12800]  # whole questions, no float noise
    tiny = table[table["source"] == "tiny"]["questions_per_model"]
    assert tiny.isna().tolist() == [True, True, True, False]  # a gap above the disagreement rate


def test_questions_to_resolve_paired():
    gaps = np.array([0.10, 0.05, 0.02, 0.01])
    # Two independent models at 80% disagree on 2 * .8 * .2 = 32% of questions: k^2 fewer.
    assert sim.questions_to_resolve_paired(gaps, 0.32) == pytest.approx(
        sim.questions_to_resolve_unpaired(gaps) - 4
    )
    # Var(d) = delta - gap^2 for P(d = +-1) = (delta +- gap) / 2: N = 4 Var(d) / gap^2.
    delta, gap = 0.2, 0.05
    values, probs = (
        np.array([-1, 0, 1]),
        np.array([(delta - gap) / 2, 1 - delta, (delta + gap) / 2]),
    )
    var_d = probs @ values**2 - (probs @ values) ** 2
    assert sim.questions_to_resolve_paired(gap, delta) == pytest.approx(4 * var_d / gap**2)
    assert np.isnan(sim.questions_to_resolve_paired(0.3, 0.2))


def _items(scores: dict) -> pd.DataFrame:
    rows = [
        {"model": m, "question_id": q, "category": "c", "correct": v}
        for m, column in scores.items()
        for q, v in enumerate(column)
    ]
    return pd.DataFrame(rows)


def test_disagreement_rates_by_hand():
    items = _items({"x": [1, 1, 1, 0, 0], "y": [1, 0, 1, 1, 0], "z": [0, 0, 0, 0, 1]})
    table = sim.disagreement_rates(items).set_index(["model_a", "model_b"])
    assert table.loc[("x", "y"), "disagreement"] == pytest.approx(2 / 5)
    assert table.loc[("x", "z"), "disagreement"] == pytest.approx(4 / 5)
    assert table.loc[("y", "z"), "disagreement"] == pytest.approx(4 / 5)
    assert table.loc[("x", "y"), "diff"] == pytest.approx(0.0)
    assert table.loc[("x", "z"), "diff"] == pytest.approx(2 / 5)
    needed = sim.precision_tables(items=items).questions_needed
    assert "data: median of 3 pairs" in set(needed["source"])
    assert needed.loc[needed["source"].str.startswith("data"), "disagreement"].iloc[
        0
    ] == pytest.approx(0.8)


@pytest.mark.realdata
def test_disagreement_rates_on_the_default_subsample(default_subsample):
    items = default_subsample.items
    table = sim.disagreement_rates(items)
    assert len(table) == 15
    wide = items.pivot(index="question_id", columns="model", values="correct")
    for row in table.itertuples():
        direct = (wide[row.model_a] != wide[row.model_b]).mean()
        assert row.disagreement == pytest.approx(direct)
        assert row.diff >= 0
        assert row.questions == 1497


# --- 3. The paper's FWER study (section 5.1) ------------------------------------------------------

O12 = {3: 0.1223, 4: 0.2033, 5: 0.2858, 6: 0.3656, 8: 0.5093, 10: 0.6274, 12: 0.7208}


def test_studentized_range_fwer_matches_scipy_and_o12():
    ks = np.arange(2, 13)
    ours = sim.studentized_range_fwer(ks, 0.05)
    theirs = stats.studentized_range.sf(stats.norm.ppf(0.975) * np.sqrt(2), ks, np.inf)
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours[0] == pytest.approx(0.05, abs=1e-9)
    for k, value in O12.items():
        assert round(float(sim.studentized_range_fwer(k)), 4) == value
    assert sim.independent_tests_fwer(4) == pytest.approx(0.2649, abs=1e-4)
    assert float(sim.studentized_range_fwer(4, 0.05 / 6)) == pytest.approx(0.0415, abs=1e-4)


@pytest.fixture(scope="module")
def paper_fwer():
    return pd.DataFrame(sim.simulate_fwer(4, 400, 0.5, replications=2000, seed=SEED)).set_index(
        "method"
    )


def test_paper_fwer_targets(paper_fwer):
    uncorrected = paper_fwer.loc["uncorrected"]
    assert_mc(uncorrected["fwer"], uncorrected["fwer_se"], 0.2033)
    assert abs(uncorrected["fwer"] - 0.192) <= TOL_SE * 0.009  # paper: 0.192 (MC SE 0.009)
    assert uncorrected["fwer"] < 0.2649  # below the independence benchmark
    bonferroni = paper_fwer.loc["bonferroni"]
    assert_mc(bonferroni["fwer"], bonferroni["fwer_se"], 0.0415)  # paper: 0.042 (SE 0.005)
    assert paper_fwer.loc["holm", "fwer"] == bonferroni["fwer"]  # same first step under the null
    for omnibus_test in ("rm_anova", "friedman"):
        row = paper_fwer.loc[omnibus_test]
        assert_mc(row["fwer"], row["fwer_se"], 0.05)  # paper RM-ANOVA: 0.052 (SE 0.005)
    assert paper_fwer["fwer_se"].loc["uncorrected"] == pytest.approx(
        np.sqrt(0.2 * 0.8 / 2000), abs=0.001
    )
    assert paper_fwer["power_any"].isna().all()


def test_fwer_across_models_follows_the_studentized_range():
    table = fwer_frame(range(2, 7), 400, 0.5, replications=1000, seed=SEED)
    uncorrected = table[table["method"] == "uncorrected"]
    for row in uncorrected.itertuples():
        assert_mc(row.fwer, row.fwer_se, row.studentized_range_fwer)


def test_power_under_a_true_gap():
    table = fwer_frame(range(2, 5), 400, 0.5, 0.08, replications=2000, seed=SEED)
    two = table[table["models"] == 2].set_index("method")
    # K = 2: one test; power = P(|Z| > 1.96) with Z ~ N(gap / SE, 1), SE from the design:
    # y = w A + (1 - w) mu, s0 ~ Bern(c + (1 - c) y), s1 ~ Bern(y), c = gap / (1 - mu).
    mu, kappa, gap = 0.6, 1.0, 0.08
    w = sim.shared_component_weight(0.5)
    c = gap / (1 - mu)
    second_moment = mu**2 + w**2 * mu * (1 - mu) / (kappa + 1)
    differ = (c + (1 - c) * mu) + mu - 2 * (c * mu + (1 - c) * second_moment)
    shift = gap / np.sqrt((differ - gap**2) / 400)
    power = stats.norm.sf(1.959964 - shift) + stats.norm.cdf(-1.959964 - shift)
    row = two.loc["uncorrected"]
    assert_mc(row["power_any"], row["power_any_se"], power)
    assert two.loc["bonferroni", "power_any"] == row["power_any"] == two.loc["holm", "power_any"]
    four = table[table["models"] == 4].set_index("method")
    assert four.loc["holm", "power_all"] >= four.loc["bonferroni", "power_all"]
    assert four.loc["uncorrected", "power_any"] >= four.loc["holm", "power_any"]
    assert np.isnan(four.loc["rm_anova", "fwer"])  # undefined under the alternative


def test_conditional_means_have_correlation_rho_and_the_right_means():
    rng = np.random.default_rng(3)
    for rho in (0.0, 0.5, 0.9):
        x = sim.draw_conditional_means(rng, 200_000, 3, rho, gap=0.1, mean_accuracy=0.6)
        corr = np.corrcoef(x, rowvar=False)
        assert corr[np.triu_indices(3, 1)] == pytest.approx(rho, abs=0.01)
        assert x.mean(axis=0) == pytest.approx([0.7, 0.6, 0.6], abs=0.003)
        assert x.min() >= 0 and x.max() <= 1


def test_integrating_out_the_model_component_keeps_the_score_distribution():
    # Explicit Bernoulli(x_ik) versus draw_shared_scores: same means and same between-model
    # score correlation w^2 / (kappa + 1) = 0.125 at rho = 0.5, kappa = 1.
    rng = np.random.default_rng(4)
    x = sim.draw_conditional_means(rng, 400_000, 2, 0.5)
    explicit = rng.random(x.shape) < x
    integrated = sim.draw_shared_scores(rng, 1, 400_000, 2, 0.5)[0]
    for scores in (explicit, integrated):
        assert scores.mean(axis=0) == pytest.approx([0.6, 0.6], abs=0.003)
        assert np.corrcoef(scores, rowvar=False)[0, 1] == pytest.approx(0.125, abs=0.006)


def test_paired_z_tests_match_pairwise_table():
    rng = np.random.default_rng(5)
    scores = sim.draw_shared_scores(rng, 3, 150, 4, 0.5, gap=0.1)
    z, p = sim.paired_z_tests(scores)
    models = ["m0", "m1", "m2", "m3"]
    a, b = np.triu_indices(4, 1)
    for r in range(3):
        wide = WideScores(scores[r].astype(float), models, np.arange(150), np.array(["c"] * 150))
        table = pairwise.pairwise_table(wide).set_index(["model_a", "model_b"])
        for j, (i, k) in enumerate(zip(a, b)):
            key = (models[i], models[k])
            sign = 1
            if key not in table.index:
                key, sign = (models[k], models[i]), -1
            assert sign * z[r, j] == pytest.approx(table.loc[key, "z_paired"])
            assert p[r, j] == pytest.approx(table.loc[key, "p_paired"])


def test_adjusting_many_families_at_once_equals_one_at_a_time():
    p = np.random.default_rng(6).uniform(0, 0.2, size=(50, 6))
    p[0] = [0.01, 0.04, 0.03, 0.005, 0.2, 0.01]  # ties included
    for method in ("bonferroni", "holm"):
        rows = pairwise.adjust_pvalues(p, method)
        for r in range(p.shape[0]):
            assert rows[r] == pytest.approx(pairwise.adjust_pvalues(p[r], method))


def test_friedman_via_cochran_equals_friedman_and_scipy():
    scores = sim.draw_shared_scores(np.random.default_rng(8), 5, 120, 4, 0.5).astype(float)
    via_cochran = omnibus.cochran_q(scores)
    assert via_cochran.statistic == pytest.approx(omnibus.friedman(scores).statistic)
    reference = stats.friedmanchisquare(*scores[0].T)
    assert via_cochran.statistic[0] == pytest.approx(reference.statistic)
    assert via_cochran.p[0] == pytest.approx(reference.pvalue)


# --- 4. Clustered questions --------------------------------------------------------------------------


def test_o16_clustered_se_toy():
    scores, clusters = [1, 1, 0, 0, 1, 0], list("aabbcc")
    assert clustered_se(scores, clusters) == pytest.approx(0.23570, abs=5e-6)
    assert np.std(scores, ddof=1) / np.sqrt(6) == pytest.approx(0.22361, abs=5e-6)
    assert clustered_se(scores, clusters) * np.sqrt(3 / 2) == pytest.approx(
        0.28868, abs=5e-6
    )  # CR1
    # Label order and position do not matter; stacks give each row's SE.
    assert clustered_se([1, 1, 0, 1, 0, 0], list("cabacb")) == pytest.approx(0.23570, abs=5e-6)
    stack = np.array([scores, [1, 0, 1, 0, 1, 0], [1, 1, 1, 1, 0, 0]])
    assert clustered_se(stack, clusters) == pytest.approx(
        [clustered_se(row, clusters) for row in stack]
    )
    # One question per cluster: the naive SE with ddof = 0.
    assert clustered_se(scores, list("abcdef")) == pytest.approx(np.std(scores) / np.sqrt(6))


def test_balanced_random_intercept_se_matches_statsmodels_and_miller():
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(9)
    nested = (rng.random((30, 5)) < rng.beta(1.5, 1.0, size=(30, 1))).astype(float)
    se, boundary = sim.balanced_random_intercept_se(nested)
    assert not boundary
    frame = pd.DataFrame({"y": nested.ravel(), "cluster": np.repeat(np.arange(30), 5)})
    fit = smf.mixedlm("y ~ 1", frame, groups=frame["cluster"]).fit(reml=True)
    assert se == pytest.approx(fit.bse["Intercept"], rel=1e-3)
    miller = clustered_se(nested.ravel(), np.repeat(np.arange(30), 5))
    assert se == pytest.approx(miller * np.sqrt(30 / 29))
    # No between-cluster variation beyond chance: the boundary, and the naive (ddof=1) SE.
    flat = np.tile([1.0, 0.0, 1.0, 0.0], (10, 1))
    se_flat, boundary_flat = sim.balanced_random_intercept_se(flat)
    assert boundary_flat
    assert se_flat == pytest.approx(flat.std(ddof=1) / np.sqrt(flat.size))


@pytest.mark.parametrize(("cluster_size", "target"), [(4, 1.4), (6, 1.6), (12, 2.1)])
def test_clustered_settings_reproduce_the_paper_ratios(cluster_size, target):
    table = pd.DataFrame(sim.simulate_clustered(cluster_size, 0.31, 1200, 2000, seed=SEED))
    table = table.set_index("estimator")
    miller = table.loc["clustered_miller"]
    assert miller["se_ratio_to_naive"] == pytest.approx(target, abs=0.05)  # paper: ~1.4, 1.6, 2.1
    assert (
        abs(miller["se_ratio_to_naive"] - miller["analytic_se_ratio"])
        <= 0.02 + TOL_SE * miller["se_ratio_to_naive_se"]
    )
    # Coverage: naive 2 Phi(1.96 / sqrt(DEFF)) - 1; clustered and mixed model near 95%.
    naive = table.loc["naive"]
    assert_mc(
        naive["coverage"],
        naive["coverage_se"],
        2 * stats.norm.cdf(1.959964 / miller["analytic_se_ratio"]) - 1,
    )
    for estimator in ("clustered_miller", "mixed_model"):
        row = table.loc[estimator]
        assert_mc(row["coverage"], row["coverage_se"], 0.95)
    assert table.loc["mixed_model", "se_mean"] >= miller["se_mean"]
    assert miller["true_se"] == pytest.approx(
        np.sqrt(0.24 * (1 + (cluster_size - 1) * 0.31) / 1200)
    )


# --- Tables and figures ------------------------------------------------------------------------------


def test_combine_settings_sorts_independently_of_input_order():
    parts = [sim.simulate_leaderboard(n, 1.0, runs=500, seed=1).summary for n in (500, 100, 200)]
    combined = sim.combine_settings(parts, ["spread", "questions", "rule"])
    assert combined["questions"].tolist() == [100, 100, 200, 200, 500, 500]
    pd.testing.assert_frame_equal(
        combined, sim.combine_settings(parts[::-1], ["spread", "questions", "rule"])
    )


def test_figures_state_their_findings():
    settings = [frames(sim.simulate_leaderboard(n, 1.0, runs=2000, seed=1)) for n in (100, 200)]
    table = sim.combine_settings([s.summary for s in settings], ["spread", "questions", "rule"])
    default = settings[1]
    figures = sim.leaderboard_figures(table, default.runs, default.one_run, spread=1.0)
    assert set(figures) == {
        "one_run",
        "leader_grid",
        "difference_histogram",
        "decision_rules",
        "played_out",
    }
    share = (default.runs["a_minus_b_points"] < 0).mean()
    assert f"{share:.0%} of runs" in figures["difference_histogram"].axes[0].get_title(loc="left")
    wrong = table[(table["questions"] == 200) & (table["rule"] == "higher_score_wins")][
        "wrong"
    ].iloc[0]
    assert f"{wrong:.0%}" in figures["decision_rules"].get_suptitle()
    tables = sim.precision_tables()
    precision = sim.precision_figures(tables.precision, tables.questions_needed)
    assert "±7.8 points at 100 questions" in precision["halfwidth"].axes[0].get_title(loc="left")
    assert "3,200 questions per model unpaired" in precision["questions_needed"].axes[0].get_title(
        loc="left"
    )
    fwer = pd.concat(
        [
            fwer_frame(range(2, 5), 200, 0.5, replications=200, seed=1),
            fwer_frame(range(2, 5), 200, 0.5, 0.08, replications=200, seed=1),
        ]
    )
    fwer_figs = sim.fwer_figures(fwer, models=4, questions=200)
    assert set(fwer_figs) == {"methods", "models", "power"}
    clustered = pd.concat(
        [pd.DataFrame(sim.simulate_clustered(m, 0.31, 240, 200, seed=1)) for m in (4, 12)]
    )
    title = sim.clustered_figure(clustered).get_suptitle()
    ratio = clustered[clustered["estimator"] == "clustered_miller"]["se_ratio_to_naive"]
    assert f"{ratio.min():.1f}×" in title and f"{ratio.max():.1f}×" in title


def test_time_settings_runs_every_grid_row_of_the_shipped_config():
    # The shipped grids' columns must match the simulation functions' parameters.
    import yaml
    from snakemake.utils import validate

    from .conftest import REPO

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"), set_default=True)
    config["simulation"]["leaderboard"]["runs"] = 200
    config["simulation"]["fwer"]["replications"] = 20
    config["simulation"]["clustered"]["replications"] = 20
    timings = sim.time_settings(config, root=REPO)
    grids = {
        study: pd.read_csv(REPO / config["simulation"][study]["grid"], sep="\t")
        for study in ("leaderboard", "fwer", "clustered")
    }
    assert timings["study"].value_counts().to_dict() == {s: len(g) for s, g in grids.items()}
    assert (timings["seconds"] > 0).all()
