"""CR0, CR1 and CR2 of a mean against R (clubSandwich, sandwich) and against exact identities.

R's numbers are committed in ``tests/reference/r_output/cluster_robust.json`` (written by
``tests/reference/make_r_cluster_robust_reference.R`` from ``tests/data/cluster_robust_*.csv``);
these tests never call R.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.stats.cluster_robust import (
    ClusterRobustMean,
    cluster_robust_mean,
    clustering_applicable,
    cr0_mean,
    cr1_mean,
    cr2_mean,
)
from evalbars.stats.intervals import clustered_se

TESTS = Path(__file__).resolve().parents[1]
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
