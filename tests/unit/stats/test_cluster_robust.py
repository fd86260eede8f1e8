"""CR0, CR1 and CR2 of a mean against R (clubSandwich, sandwich) and against exact identities;
the sign-flip test against scipy's exact permutation test and brute-force subset means.

R's numbers are committed in ``tests/reference/r_output/cluster_robust.json`` (written by
``tests/reference/make_r_cluster_robust_reference.R`` from ``tests/data/cluster_robust_*.csv``);
these tests never call R.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars.stats.cluster_robust import (
    ClusterRobustMean,
    cluster_robust_mean,
    clustering_applicable,
    cr0_mean,
    cr1_mean,
    cr2_mean,
    degenerate_se,
    sign_flip_can_reject,
    sign_flip_clusters_needed,
    sign_flip_mean,
)
from evalbars.stats.intervals import clustered_se

TESTS = Path(__file__).resolve().parents[2]
R_REFERENCE = json.loads((TESTS / "reference" / "r_output" / "cluster_robust.json").read_text())
DATASETS = sorted(R_REFERENCE["datasets"])
CASES = [(name, kind) for name in DATASETS for kind in ("unweighted", "weighted")]
# R's JSON holds 15 significant digits; the measured agreement is ~5e-15 relative.
RELATIVE = 1e-9
ABSOLUTE = 1e-12


def _load(name: str, kind: str):
    frame = pd.read_csv(TESTS / "data" / f"{name}.csv", dtype={"cluster": str})
    weights = frame["weight"].to_numpy(float) if kind == "weighted" else None
    return frame["score"].to_numpy(float), frame["cluster"].to_numpy(), weights


@pytest.fixture(scope="module")
def fitted():
    """Every (data set, weighting): our three results and R's record."""
    results = {}
    for name, kind in CASES:
        scores, clusters, weights = _load(name, kind)
        ours = {
            f.__name__[:3]: f(scores, clusters, weights) for f in (cr0_mean, cr1_mean, cr2_mean)
        }
        results[name, kind] = ours, R_REFERENCE["datasets"][name][kind]
    return results


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_estimates_ses_and_counts_match_r(fitted, name, kind):
    ours, r = fitted[name, kind]
    for method in ("cr0", "cr1", "cr2"):
        assert ours[method].estimate == pytest.approx(r["estimate"], rel=RELATIVE, abs=ABSOLUTE)
        assert ours[method].se == pytest.approx(r[method]["se"], rel=RELATIVE)
        assert ours[method].clusters == r["clusters"]
        assert ours[method].questions == r["questions"]
    # CR1 with p = 1: clubSandwich's CR1 (G/(G-1) only) and CR1S (Stata) are the same number.
    assert ours["cr1"].se == pytest.approx(r["cr1"]["se_clubsandwich_cr1"], rel=RELATIVE)


@pytest.mark.parametrize(("name", "kind"), CASES)
@pytest.mark.parametrize("method", ["cr1", "cr2"])
def test_df_p_quantiles_and_intervals_match_r(fitted, name, kind, method):
    ours, r = fitted[name, kind]
    result, reference = ours[method], r[method]
    assert result.df == pytest.approx(reference["df"], rel=RELATIVE)
    assert result.p_value() == pytest.approx(reference["p"], rel=RELATIVE)
    assert result.p_value(null=r["null"]) == pytest.approx(reference["p_null"], rel=RELATIVE)
    for level in (0.95, 0.90):
        key = f"level_{level:g}"
        quantile = reference["t_quantile"][key]
        assert result.critical_value(level) == pytest.approx(quantile, rel=RELATIVE)
        low, high = result.interval(level)
        assert [low, high] == pytest.approx(reference["interval"][key], rel=RELATIVE, abs=ABSOLUTE)


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_sandwich_vcovcl_agrees_where_it_should(fitted, name, kind):
    ours, r = fitted[name, kind]
    if name == "cluster_robust_g6" and kind == "weighted":
        # sandwich counts the question of weight 0 in n: its SEs are off by exactly 64/65.
        factor = r["questions"] / (r["questions"] + 1)
        assert r["cr0"]["se_sandwich_hc0"] == pytest.approx(ours["cr0"].se * factor, rel=RELATIVE)
        assert r["cr1"]["se_sandwich_hc1"] == pytest.approx(ours["cr1"].se * factor, rel=RELATIVE)
    else:
        assert r["cr0"]["se_sandwich_hc0"] == pytest.approx(ours["cr0"].se, rel=RELATIVE)
        assert r["cr1"]["se_sandwich_hc1"] == pytest.approx(ours["cr1"].se, rel=RELATIVE)
    if kind == "unweighted":  # with weights sandwich's HC2 uses a non-symmetric adjustment
        assert r["cr2"]["se_sandwich_hc2"] == pytest.approx(ours["cr2"].se, rel=RELATIVE)


def test_singletons_cr2_is_hc2_of_the_mean():
    scores, clusters, _ = _load("cluster_robust_singletons", "unweighted")
    reference = R_REFERENCE["datasets"]["cluster_robust_singletons"]["unweighted"]
    result = cr2_mean(scores, clusters)
    assert result.se == pytest.approx(reference["hc2"]["se"], rel=RELATIVE)
    n = scores.size
    hc2 = np.sqrt(((scores - scores.mean()) ** 2 / (1 - 1 / n)).sum()) / n
    assert result.se == pytest.approx(hc2, rel=1e-13)
    assert result.df == pytest.approx(n - 1, rel=1e-13)


def _random_data(rng, sizes, weighted=True):
    clusters = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    scores = rng.normal(0.5, 0.3, clusters.size) + 0.2 * rng.normal(size=len(sizes))[clusters]
    weights = rng.integers(1, 5, clusters.size).astype(float) if weighted else None
    return scores, clusters.astype(str), weights


def _dense_cr2(scores, clusters, weights):
    """CR2 and its df by clubSandwich's matrices (target I, inverse_var = FALSE), densely."""
    y, w = np.asarray(scores, float), np.asarray(weights, float)
    n, total = y.size, w.sum()
    hat = np.outer(np.ones(n), w) / total
    residual = y - (w * y).sum() / total
    complement = np.eye(n) - hat
    rows, components = [], []
    for label in np.unique(clusters):
        j = np.flatnonzero(clusters == label)
        gram = (complement @ complement.T)[np.ix_(j, j)]
        values, vectors = np.linalg.eigh(gram)
        adjustment = vectors @ np.diag(values**-0.5) @ vectors.T
        g = adjustment @ w[j]
        components.append(g @ residual[j])
        embedded = np.zeros(n)
        embedded[j] = g
        rows.append(complement.T @ embedded)
    p = np.array(rows) @ np.array(rows).T
    se = np.sqrt(np.sum(np.square(components))) / total
    return se, np.trace(p) ** 2 / np.sum(p**2)


@pytest.mark.parametrize("sizes", [[3, 9, 1, 14], [5, 5], [2, 7, 4, 4, 11, 1, 6]])
def test_closed_form_cr2_equals_dense_clubsandwich_matrices(sizes):
    scores, clusters, weights = _random_data(np.random.default_rng(len(sizes)), sizes)
    se, df = _dense_cr2(scores, clusters, weights)
    result = cr2_mean(scores, clusters, weights)
    assert result.se == pytest.approx(se, rel=1e-11)
    assert result.df == pytest.approx(df, rel=1e-11)


def test_cr1_is_cr0_times_the_stata_factor():
    scores, clusters, weights = _random_data(np.random.default_rng(1), [4, 8, 3, 12, 6])
    cr0, cr1 = cr0_mean(scores, clusters, weights), cr1_mean(scores, clusters, weights)
    g, n = 5, scores.size
    assert cr1.se == pytest.approx(cr0.se * np.sqrt(g / (g - 1) * (n - 1) / (n - 1)), rel=1e-14)
    assert cr0.se == clustered_se(scores, clusters, weights)
    assert (cr0.df, cr1.df) == (np.inf, g - 1)
    assert cr0.critical_value() == pytest.approx(1.959963984540054, rel=1e-14)


@pytest.mark.parametrize("g", [2, 3, 6, 14])
def test_equal_cluster_sizes_cr2_is_cr1_with_g_minus_1_df(g):
    scores, clusters, _ = _random_data(np.random.default_rng(g), [9] * g, weighted=False)
    cr1, cr2 = cr1_mean(scores, clusters), cr2_mean(scores, clusters)
    assert cr2.se == pytest.approx(cr1.se, rel=1e-13)
    assert cr2.df == pytest.approx(g - 1, rel=1e-13)
    assert cr2.p_value() == pytest.approx(cr1.p_value(), rel=1e-10)


def test_unequal_sizes_unweighted_closed_forms():
    sizes = np.array([3, 10, 4, 25, 8])
    scores, clusters, _ = _random_data(np.random.default_rng(5), sizes, weighted=False)
    result = cr2_mean(scores, clusters)
    n = sizes.sum()
    labels, codes = np.unique(clusters, return_inverse=True)
    counts = np.bincount(codes)
    share = counts / n
    sums = np.bincount(codes, weights=scores - scores.mean())
    assert result.se == pytest.approx(np.sqrt((sums**2 / (1 - share)).sum()) / n, rel=1e-13)
    q = share**2 / (1 - share)
    df = 1 / ((share**2).sum() + q.sum() ** 2 - (q**2).sum())
    assert result.df == pytest.approx(df, rel=1e-13)
    assert result.df < len(sizes) - 1


def test_weights_scale_free_constant_weights_unweighted_and_zero_weight_drops():
    scores, clusters, weights = _random_data(np.random.default_rng(7), [5, 3, 9, 6])
    base = cr2_mean(scores, clusters, weights)
    scaled = cr2_mean(scores, clusters, 3.5 * weights)
    assert (scaled.se, scaled.df) == pytest.approx((base.se, base.df), rel=1e-13)
    plain = cr2_mean(scores, clusters)
    constant = cr2_mean(scores, clusters, np.full(scores.size, 2.0))
    assert (constant.se, constant.df) == pytest.approx((plain.se, plain.df), rel=1e-13)
    dropped = weights.copy()
    dropped[0] = 0.0
    kept = np.arange(1, scores.size)
    with_zero = cr2_mean(np.where(dropped > 0, scores, np.nan), clusters, dropped)
    without = cr2_mean(scores[kept], clusters[kept], weights[kept])
    assert (with_zero.estimate, with_zero.se, with_zero.df) == pytest.approx(
        (without.estimate, without.se, without.df), rel=1e-13
    )
    assert with_zero.questions == scores.size - 1


def test_one_cluster_is_not_estimable():
    scores = np.array([0.2, 0.9, 0.4])
    for function in (cr0_mean, cr1_mean, cr2_mean):
        result = function(scores, ["a", "a", "a"])
        assert result.estimate == pytest.approx(0.5)
        assert np.isnan(result.se) and np.isnan(result.df) and result.clusters == 1
        assert np.isnan(result.p_value()) and all(np.isnan(result.interval()))
    verdict = clustering_applicable(["a", "a", "a"])
    assert (verdict.applicable, verdict.clusters) == (False, 1)
    assert not clustering_applicable(["a", "b"], weights=[0, 0]).applicable
    # A cluster whose questions all have weight 0 does not count.
    assert clustering_applicable(["a", "a", "b"], weights=[1, 2, 0]).clusters == 1


def test_two_clusters_have_one_degree_of_freedom():
    scores, clusters, weights = _random_data(np.random.default_rng(2), [4, 11], weighted=False)
    cr1, cr2 = cr1_mean(scores, clusters), cr2_mean(scores, clusters)
    assert cr1.df == 1 and cr2.df == pytest.approx(1.0, rel=1e-13)
    assert cr2.critical_value() == pytest.approx(12.706204736174694, rel=1e-12)
    verdict = clustering_applicable(clusters)
    assert (
        verdict.applicable and verdict.clusters == 2 and "one degree of freedom" in verdict.reason
    )
    assert clustering_applicable(np.repeat(list("abc"), 3)).applicable


@pytest.mark.parametrize("function", [cr0_mean, cr1_mean, cr2_mean])
def test_stacks_equal_row_by_row_calls(function):
    rng = np.random.default_rng(11)
    sizes = [6, 2, 9, 4]
    clusters = rng.permutation(np.repeat(list("dcab"), sizes))  # unsorted labels
    scores = rng.normal(size=(3, 2, clusters.size))
    weights = rng.integers(1, 4, scores.shape).astype(float)
    weights[..., 0] = 0.0  # a question left out of every stack
    weights[1, 0, clusters == "a"] = 0.0  # one stack loses a whole cluster
    for stack_weights in (None, weights, weights[0, 0]):
        stacked = function(scores, clusters, stack_weights)
        assert stacked.se.shape == (3, 2)
        for index in np.ndindex(3, 2):
            row_weights = (
                None
                if stack_weights is None
                else np.broadcast_to(stack_weights, scores.shape)[index]
            )
            row = function(scores[index], clusters, row_weights)
            assert isinstance(row.se, float)
            for field in ("estimate", "se", "df", "clusters", "questions"):
                assert getattr(stacked, field)[index] == pytest.approx(
                    getattr(row, field), rel=1e-13
                )
            assert stacked.interval()[0][index] == pytest.approx(row.interval()[0], rel=1e-13)
            assert stacked.p_value()[index] == pytest.approx(row.p_value(), rel=1e-13)
    assert function(scores, clusters, weights).clusters[1, 0] == 3


def test_label_order_does_not_matter():
    scores, clusters, weights = _random_data(np.random.default_rng(3), [3, 8, 5])
    order = np.argsort(clusters, kind="stable")
    shuffled = cr2_mean(scores, clusters, weights)
    ordered = cr2_mean(scores[order], clusters[order], weights[order])
    assert (shuffled.se, shuffled.df) == pytest.approx((ordered.se, ordered.df), rel=1e-13)


def test_dispatch_and_interval_p_duality():
    scores, clusters, _ = _random_data(np.random.default_rng(4), [5, 7, 3, 9], weighted=False)
    result = cluster_robust_mean(scores, clusters, method="CR2")
    assert isinstance(result, ClusterRobustMean) and result.method == "CR2"
    assert result == cr2_mean(scores, clusters)
    low, high = result.interval(0.9)
    assert result.p_value(null=low) == pytest.approx(0.1, rel=1e-10)
    assert result.p_value(null=high) == pytest.approx(0.1, rel=1e-10)
    with pytest.raises(ValueError, match="method"):
        cluster_robust_mean(scores, clusters, method="CR3")
    with pytest.raises(ValueError, match="level"):
        result.interval(1.0)
    with pytest.raises(ValueError, match="clusters"):
        cr2_mean(scores, clusters[:-1])


# --- The sign-flip randomization test and the degenerate-SE rule --------------------------------


def _subset_means(scores, clusters, weights):
    """Every nonempty set of clusters' pooled mean, by brute force."""
    labels = np.unique(clusters)
    means = []
    for size in range(1, labels.size + 1):
        for chosen in itertools.combinations(labels, size):
            inside = np.isin(clusters, chosen)
            means.append((weights * scores)[inside].sum() / weights[inside].sum())
    return np.sort(means)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("null", [0.0, -0.05, 0.1])
def test_sign_flip_p_values_equal_scipys_exact_permutation_test(weighted, null):
    scores, clusters, weights = _random_data(np.random.default_rng(8), [5, 9, 3, 12, 7, 4, 8])
    weights = weights if weighted else np.ones(scores.size)
    result = sign_flip_mean(scores, clusters, weights, nulls=null)
    sums = pd.Series(weights * (scores - null)).groupby(clusters).sum().to_numpy()
    for alternative, ours in (("greater", result.p_greater), ("less", result.p_less)):
        exact = stats.permutation_test(
            (sums,),
            np.sum,
            permutation_type="samples",
            alternative=alternative,
            n_resamples=np.inf,
        )
        assert ours == pytest.approx(exact.pvalue, rel=1e-12)
    assert result.patterns == 2**7 and result.enumerated
    assert result.estimate == pytest.approx(np.average(scores, weights=weights), rel=1e-13)


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_sign_flip_interval_is_hartigans_subset_means_and_inverts_the_test(level):
    scores, clusters, weights = _random_data(np.random.default_rng(9), [4, 6, 2, 9, 5, 3, 7, 4])
    result = sign_flip_mean(scores, clusters, weights, level=level)
    means = _subset_means(scores, clusters, weights)  # the 255 nonempty subsets of 8 clusters
    # k = floor(P (1 - level) / 2) patterns may lie beyond each bound, the empty set (-inf)
    # among them: low is the kth smallest nonempty subset mean, high the kth largest.
    k = int(np.floor(256 * (1 - level) / 2))
    assert (result.low, result.high) == pytest.approx((means[k - 1], means[-k]), rel=1e-13)
    # Nulls just outside the interval are rejected at (1 - level)/2, those on its ends are not.
    step = 1e-9
    edges = sign_flip_mean(
        scores,
        clusters,
        weights,
        nulls=[result.low - step, result.low, result.high, result.high + step],
        level=level,
    )
    half = (1 - level) / 2
    assert edges.p_greater[0] <= half < edges.p_greater[1]
    assert edges.p_less[3] <= half < edges.p_less[2]


def test_sign_flip_cannot_reject_with_five_clusters_or_fewer():
    assert sign_flip_clusters_needed(0.05) == 6 and sign_flip_clusters_needed(0.1) == 5
    for g in (2, 3, 5):
        scores = np.arange(1.0, g + 1)  # every cluster far above the null of 0
        result = sign_flip_mean(scores, np.arange(g))
        assert result.p_greater == 2.0**-g and not sign_flip_can_reject(g, 0.05)
        assert (result.low, result.high) == (-np.inf, np.inf)
    six = sign_flip_mean(np.arange(1.0, 7), np.arange(6))
    assert six.p_greater == 1 / 64 and six.p_value() == 1 / 32 and six.low == 1.0
    assert sign_flip_can_reject(6, 0.05)


def test_sign_flip_stacks_draws_and_empty_clusters():
    rng = np.random.default_rng(12)
    clusters = rng.permutation(np.repeat(np.arange(9), 5))
    scores = rng.normal(0.1, 1.0, size=(4, clusters.size))
    stacked = sign_flip_mean(scores, clusters, nulls=[0.0, 0.2])
    for row in range(4):
        alone = sign_flip_mean(scores[row], clusters, nulls=[0.0, 0.2])
        np.testing.assert_array_equal(stacked.p_greater[row], alone.p_greater)
        assert (stacked.low[row], stacked.high[row]) == pytest.approx((alone.low, alone.high))
    # A cluster with no weight leaves the test of the other 8: each pattern counts twice.
    weights = np.where(clusters == 0, 0.0, 1.0)
    without = sign_flip_mean(scores[0], clusters, weights)
    dropped = sign_flip_mean(scores[0][clusters != 0], clusters[clusters != 0])
    assert without.clusters == 8 and without.p_greater == dropped.p_greater
    assert (without.low, without.high) == pytest.approx((dropped.low, dropped.high), rel=1e-13)
    # Beyond 16 clusters: the identity and 9,999 seeded draws, the same for the same seed.
    many = np.repeat(np.arange(20), 3)
    values = rng.normal(0.3, 1.0, many.size)
    drawn = sign_flip_mean(values, many, draws=10_000, seed=5)
    assert not drawn.enumerated and drawn.patterns == 10_000
    assert drawn == sign_flip_mean(values, many, draws=10_000, seed=5)
    assert drawn.p_greater >= 1e-4 and drawn.low < drawn.estimate < drawn.high


def test_degenerate_se_is_zero_up_to_round_off_on_varying_data():
    # Three categories of 100 with 10 fail -> pass and 6 pass -> fail each: every category's
    # mean difference is +0.04, so the CR2 SE is 0 (1e-17 by round-off) though 48 questions
    # flipped both ways.
    d = np.tile(np.r_[np.ones(10), -np.ones(6), np.zeros(84)], 3)
    categories = np.repeat(list("abc"), 100)
    robust = cr2_mean(d, categories)
    assert robust.se < 1e-15 and degenerate_se(robust.se, d)
    paired = d.std() / np.sqrt(d.size)
    assert not degenerate_se(paired, d)
    # A difference of moments of a constant 1/3 is not exactly 0; it is degenerate all the same.
    constant = np.full(300, 1 / 3)
    moments = np.sqrt(max(np.mean(constant**2) - np.mean(constant) ** 2, 0) / 300)
    assert degenerate_se(moments, constant) and degenerate_se(np.nan, constant)
    # The smallest real SE: one question of 10,000 differs.
    one = np.r_[1.0, np.zeros(9999)]
    assert not degenerate_se(one.std() / 100, one)
    stacked = degenerate_se(np.array([0.0, 0.05]), np.vstack([d, d]))
    np.testing.assert_array_equal(stacked, [True, False])
