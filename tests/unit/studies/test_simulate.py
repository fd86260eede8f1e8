"""Simulation studies: the leaderboard-luck explainer's numbers, the paper's FWER study, clustering,
the release gate's type-I error at few categories.

Monte Carlo results are checked against exact values computed independently here
(binomial enumeration, the studentized range, closed forms) within four Monte Carlo
standard errors, and against the numbers the explainer and the paper state.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from evalbars.data.scores import WideScores
from evalbars.seeding import setting_rng
from evalbars.stats import omnibus, pairwise
from evalbars.stats.intervals import clustered_se
from evalbars.stats.pairwise import paired_z_tests
from evalbars.studies import combine_settings
from evalbars.studies.cluster_type1 import METHODS, gate_clusters_table, simulate_gate_clusters
from evalbars.studies.clustered import balanced_random_intercept_se, simulate_clustered
from evalbars.studies.fwer import (
    draw_conditional_means,
    draw_shared_scores,
    independent_tests_fwer,
    shared_component_weight,
    simulate_fwer,
    studentized_range_fwer,
)
from evalbars.studies.leaderboard import (
    leaderboard_rates,
    simulate_leaderboard,
)

from ...helpers import frames, fwer_frame

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


# --- 1. The unpaired leaderboard (the leaderboard-luck explainer) ----------------------------------------------------


@pytest.fixture(scope="module")
def default_leaderboard():
    return frames(simulate_leaderboard(200, spread=1.0, runs=10_000, seed=SEED))


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
        simulate_leaderboard(5000, spread=1.0, runs=10_000, seed=SEED).summary
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
    summary = pd.DataFrame(
        simulate_leaderboard(200, spread=0.0, runs=10_000, seed=SEED).summary
    ).iloc[0]
    assert_mc(summary["top1"], summary["top1_se"], 0.2)
    assert_mc(summary["wrong"], summary["wrong_se"], 0.5)


def test_ties_for_first_are_broken_at_random():
    # With 10 questions ties for first are common; a fixed tie order would favour one model.
    runs = pd.DataFrame(simulate_leaderboard(10, spread=0.0, runs=20_000, seed=SEED).runs)
    shares = runs["top_model"].value_counts(normalize=True).reindex(list("ABCDE"))
    se = np.sqrt(0.2 * 0.8 / 20_000)
    assert np.all(np.abs(shares - 0.2) <= TOL_SE * se), shares


def test_leaderboard_rates_spread():
    assert leaderboard_rates(1.0) == pytest.approx(RATES)
    assert leaderboard_rates(0.0) == pytest.approx(np.full(5, 0.78))
    assert leaderboard_rates(2.0) == pytest.approx(0.78 + 2 * (RATES - 0.78))
    with pytest.raises(ValueError):
        leaderboard_rates(10.0)


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
    first = frames(simulate_leaderboard(500, spread=1.0, runs=2000, seed=7))
    simulate_leaderboard(200, spread=0.0, runs=2000, seed=7)  # another setting in between
    again = frames(simulate_leaderboard(500, spread=1.0, runs=2000, seed=7))
    for a, b in zip(first, again, strict=True):
        pd.testing.assert_frame_equal(a, b)
    other = frames(simulate_leaderboard(500, spread=1.0, runs=2000, seed=8))
    assert not first.runs.equals(other.runs)
    fwer = pd.DataFrame(simulate_fwer(3, questions=100, rho=0.5, replications=300, seed=7))
    simulate_fwer(4, questions=100, rho=0.5, replications=300, seed=7)
    pd.testing.assert_frame_equal(
        fwer, pd.DataFrame(simulate_fwer(3, questions=100, rho=0.5, replications=300, seed=7))
    )
    pd.testing.assert_frame_equal(
        pd.DataFrame(simulate_clustered(4, 0.3, questions=400, replications=300, seed=7)),
        pd.DataFrame(simulate_clustered(4, 0.3, questions=400, replications=300, seed=7)),
    )


def test_setting_seed_depends_on_parameter_values():
    a = setting_rng(1, "fwer", 4, 400, 0.5).random(3)
    assert np.array_equal(a, setting_rng(1, "fwer", 4, 400, 0.5).random(3))
    assert not np.array_equal(a, setting_rng(1, "fwer", 4, 400, 0.05).random(3))
    assert not np.array_equal(a, setting_rng(1, "clustered", 4, 400, 0.5).random(3))
    with pytest.raises(ValueError):
        setting_rng(1, "fwer", -1)


# --- 3. The paper's FWER study (section 5.1) ------------------------------------------------------

# Exact FWER of uncorrected all-pairs tests (studentized range, df = infinity).
STUDENTIZED_RANGE_FWER = {
    3: 0.1223,
    4: 0.2033,
    5: 0.2858,
    6: 0.3656,
    8: 0.5093,
    10: 0.6274,
    12: 0.7208,
}


def test_studentized_range_fwer_published_values():
    ks = np.arange(2, 13)
    ours = studentized_range_fwer(ks, 0.05)
    theirs = stats.studentized_range.sf(stats.norm.ppf(0.975) * np.sqrt(2), ks, np.inf)
    assert ours == pytest.approx(theirs, abs=1e-6)
    assert ours[0] == pytest.approx(0.05, abs=1e-9)
    for k, value in STUDENTIZED_RANGE_FWER.items():
        assert round(float(studentized_range_fwer(k)), 4) == value
    assert independent_tests_fwer(4) == pytest.approx(0.2649, abs=1e-4)
    assert float(studentized_range_fwer(4, 0.05 / 6)) == pytest.approx(0.0415, abs=1e-4)


@pytest.fixture(scope="module")
def paper_fwer():
    return pd.DataFrame(
        simulate_fwer(4, questions=400, rho=0.5, replications=2000, seed=SEED)
    ).set_index("method")


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
    table = fwer_frame(range(2, 7), questions=400, rho=0.5, replications=1000, seed=SEED)
    uncorrected = table[table["method"] == "uncorrected"]
    for row in uncorrected.itertuples():
        assert_mc(row.fwer, row.fwer_se, row.studentized_range_fwer)


def test_power_under_a_true_gap():
    table = fwer_frame(range(2, 5), questions=400, rho=0.5, gap=0.08, replications=2000, seed=SEED)
    two = table[table["models"] == 2].set_index("method")
    # K = 2: one test; power = P(|Z| > 1.96) with Z ~ N(gap / SE, 1), SE from the design:
    # y = w A + (1 - w) mu, s0 ~ Bern(c + (1 - c) y), s1 ~ Bern(y), c = gap / (1 - mu).
    mu, kappa, gap = 0.6, 1.0, 0.08
    w = shared_component_weight(0.5)
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
        x = draw_conditional_means(rng, 200_000, 3, rho, gap=0.1, mean_accuracy=0.6)
        corr = np.corrcoef(x, rowvar=False)
        assert corr[np.triu_indices(3, 1)] == pytest.approx(rho, abs=0.01)
        assert x.mean(axis=0) == pytest.approx([0.7, 0.6, 0.6], abs=0.003)
        assert x.min() >= 0 and x.max() <= 1


def test_integrating_out_the_model_component_keeps_the_score_distribution():
    # Explicit Bernoulli(x_ik) versus draw_shared_scores: same means and same between-model
    # score correlation w^2 / (kappa + 1) = 0.125 at rho = 0.5, kappa = 1.
    rng = np.random.default_rng(4)
    x = draw_conditional_means(rng, 400_000, 2, 0.5)
    explicit = rng.random(x.shape) < x
    integrated = draw_shared_scores(rng, 1, 400_000, 2, 0.5)[0]
    for scores in (explicit, integrated):
        assert scores.mean(axis=0) == pytest.approx([0.6, 0.6], abs=0.003)
        assert np.corrcoef(scores, rowvar=False)[0, 1] == pytest.approx(0.125, abs=0.006)


def test_paired_z_tests_match_pairwise_table():
    rng = np.random.default_rng(5)
    scores = draw_shared_scores(rng, 3, 150, 4, 0.5, gap=0.1)
    z, p = paired_z_tests(scores)
    models = ["m0", "m1", "m2", "m3"]
    a, b = np.triu_indices(4, 1)
    for r in range(3):
        wide = WideScores(scores[r].astype(float), models, np.arange(150), np.array(["c"] * 150))
        table = pairwise.pairwise_table(wide).set_index(["model_a", "model_b"])
        for j, (i, k) in enumerate(zip(a, b, strict=True)):
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
    scores = draw_shared_scores(np.random.default_rng(8), 5, 120, 4, 0.5).astype(float)
    via_cochran = omnibus.cochran_q(scores)
    assert via_cochran.statistic == pytest.approx(omnibus.friedman(scores).statistic)
    reference = stats.friedmanchisquare(*scores[0].T)
    assert via_cochran.statistic[0] == pytest.approx(reference.statistic)
    assert via_cochran.p[0] == pytest.approx(reference.pvalue)


# --- 4. Clustered questions --------------------------------------------------------------------------


def test_clustered_se_convention_toy():
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
    rng = np.random.default_rng(9)
    nested = (rng.random((30, 5)) < rng.beta(1.5, 1.0, size=(30, 1))).astype(float)
    se, boundary = balanced_random_intercept_se(nested)
    assert not boundary
    frame = pd.DataFrame({"y": nested.ravel(), "cluster": np.repeat(np.arange(30), 5)})
    fit = smf.mixedlm("y ~ 1", frame, groups=frame["cluster"]).fit(reml=True)
    assert se == pytest.approx(fit.bse["Intercept"], rel=1e-3)
    miller = clustered_se(nested.ravel(), np.repeat(np.arange(30), 5))
    assert se == pytest.approx(miller * np.sqrt(30 / 29))
    # No between-cluster variation beyond chance: the boundary, and the naive (ddof=1) SE.
    flat = np.tile([1.0, 0.0, 1.0, 0.0], (10, 1))
    se_flat, boundary_flat = balanced_random_intercept_se(flat)
    assert boundary_flat
    assert se_flat == pytest.approx(flat.std(ddof=1) / np.sqrt(flat.size))


@pytest.mark.parametrize(("cluster_size", "target"), [(4, 1.4), (6, 1.6), (12, 2.1)])
def test_clustered_settings_reproduce_the_paper_ratios(cluster_size, target):
    table = pd.DataFrame(
        simulate_clustered(cluster_size, 0.31, questions=1200, replications=2000, seed=SEED)
    )
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
    parts = [simulate_leaderboard(n, spread=1.0, runs=500, seed=1).summary for n in (500, 100, 200)]
    combined = combine_settings(parts, ["spread", "questions", "rule"])
    assert combined["questions"].tolist() == [100, 100, 200, 200, 500, 500]
    pd.testing.assert_frame_equal(
        combined, combine_settings(parts[::-1], ["spread", "questions", "rule"])
    )


# --- The release gate's type-I error at few categories (studies.cluster_type1) -----------------


def _rates(table):
    return table.set_index("method")["rate"]


def test_gate_clusters_at_three_strongly_clustered_categories():
    # Intra-category correlation 0.3 (half the questions discordant): CR2 with Satterthwaite t,
    # the gate's reading before, rejects a true null about 12% of the time; the gate's
    # sign-flip test cannot reject with 3 categories (its smallest one-sided p is 1/8).
    table = simulate_gate_clusters(
        3, cluster_size=107, correlation=0.3, discordance=0.5, replications=2000, seed=SEED
    )
    rates = _rates(table)
    assert rates["cr2_satterthwaite"] > 0.065 + TOL_SE * np.sqrt(0.065 * 0.935 / 2000)
    assert rates["gate"] == rates["sign_flip"] == 0.0
    attainable = table.set_index("method")["attainable"]
    assert attainable["gate"] == 0.0 and attainable["cr2_satterthwaite"] == 0.05
    assert table["correlation"].iloc[0] == pytest.approx(0.3)
    assert table["design_effect"].iloc[0] == pytest.approx(1 + (107 - 1) * 0.3)


def test_gate_clusters_wild_bootstrap_over_rejects_at_four_categories():
    # Webb's six-point wild cluster bootstrap, the other candidate: above the 6.5% band at 4
    # equal categories with correlation 0.3; the sign-flip test cannot reject there either.
    table = simulate_gate_clusters(
        4, cluster_size=107, correlation=0.3, discordance=0.5, replications=2000, seed=SEED
    )
    rates = _rates(table)
    assert rates["wild_webb"] > 0.065 + TOL_SE * np.sqrt(0.065 * 0.935 / 2000)
    assert rates["gate"] == 0.0


def test_gate_clusters_at_eight_categories_stays_below_the_exact_size():
    # 8 categories: 256 sign patterns, the test rejects on at most 2 x 6 of them: 4.69%.
    table = simulate_gate_clusters(
        8, cluster_size=107, correlation=0.3, discordance=0.5, replications=2000, seed=SEED
    ).set_index("method")
    assert table.loc["sign_flip", "attainable"] == 12 / 256
    gate = table.loc["gate"]
    assert gate["rate"] == table.loc["sign_flip", "rate"]
    assert gate["rate"] <= 12 / 256 + TOL_SE * gate["mc_se"]
    assert gate["rate"] >= 0.035 - TOL_SE * gate["mc_se"]


def test_gate_clusters_reads_cr2_from_thirty_degrees_of_freedom_and_is_seeded():
    # 40 equal categories: CR2's df are 39, so the gate's reading is CR2 with t.
    settings = dict(cluster_size=20, design_effect=2.0, replications=300, seed=SEED)
    table = simulate_gate_clusters(40, **settings).set_index("method")
    assert table.loc["gate", "rejections"] == table.loc["cr2_satterthwaite", "rejections"]
    assert table.loc["gate", "mean_df"] == pytest.approx(39)
    again = simulate_gate_clusters(40, **settings).set_index("method")
    pd.testing.assert_frame_equal(table, again)
    grid = gate_clusters_table(
        cluster_counts=(6, 3), correlations=(0.1,), discordance=0.5, replications=50
    )
    assert list(grid["clusters"].unique()) == [3, 6] and list(grid["method"][:7]) == list(METHODS)
