"""Beta posteriors, independent and paired Bayesian comparisons (evalbars.stats.bayes).

Oracles: O-BAYES-PAIR of docs/methods-peers-2026-12-02.md, section 2b (bayes_evals @ b971184
on Altman's table [[14, 5], [0, 22]]: paired P(A > B) 0.977-0.982 over seeds 0-4,
independent 0.866-0.868, Beta(1, 1) intervals A (0.3200, 0.6133), B (0.2155, 0.4955)); and
the MMLU-Pro pair 1 of docs/peer-crosscheck-2026-12-02.md (n = 1,497, discordant 217 / 136,
accuracies 424/1497 = .28323 and 343/1497 = .22912, paired Wald (.029663, .078554)).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special, stats

from evalbars.stats import bayes
from evalbars.stats.bayes import (
    JEFFREYS_PRIOR,
    UNIFORM_PRIOR,
    beta_interval,
    beta_posterior_parameters,
    dirichlet_paired_posterior,
    independent_comparison,
    paired_posterior,
    probit_paired_posterior,
)
from evalbars.stats.intervals import z_for_level

ALTMAN = (14, 5, 0, 22)
# bayes_evals' paired P(A > B) on ALTMAN: seeds 0-4 at 100,000 draws gave .97898, .97730,
# .98145, .98088, .98184 (mean .9801); the same model with the exact bivariate-normal CDF and
# 4e7 prior draws (effective 175,000) gives .98026.
BAYES_EVALS_ALTMAN = 0.9801
# Pair 1 of the MMLU-Pro subsample: n11 = 424 - 217, n00 = 1497 - 207 - 217 - 136.
LARGE = (207, 217, 136, 937)
TABLES = np.array([ALTMAN, LARGE, (10, 0, 0, 0), (3, 2, 1, 4), (0, 0, 0, 0), (0, 29, 21, 0)])


def paired_wald(n11, n10, n01, n00, level=0.95):
    """Paired z interval with Miller's ddof=0 SE of the per-question differences."""
    n = n11 + n10 + n01 + n00
    diff = (n10 - n01) / n
    half = z_for_level(level) * np.sqrt(((n10 + n01) / n - diff**2) / n)
    return diff - half, diff + half


# --- Beta posteriors -----------------------------------------------------------------------------


def test_jeffreys_parameters_are_the_ones_the_rank_draws_use():
    # ranks/unpaired.py draws rng.beta(k + 0.5, n - k + 0.5): the shared helper must give the
    # same floats, hence the same draws from the same seed.
    k, n = np.array([0.0, 3.3, 160.0, 200.0]), np.array([10.0, 7.0, 200.0, 200.0])
    alpha, beta = beta_posterior_parameters(k, n)
    assert np.array_equal(alpha, k + 0.5) and np.array_equal(beta, n - k + 0.5)
    old = np.random.default_rng(3).beta(k + 0.5, n - k + 0.5, size=(5, 4))
    new = np.random.default_rng(3).beta(*beta_posterior_parameters(k, n), size=(5, 4))
    assert np.array_equal(old, new)


def test_beta_intervals_of_altman_match_bayes_evals():
    low, high = beta_interval([19, 14], 41, prior=UNIFORM_PRIOR)
    assert np.round(low, 4).tolist() == [0.3200, 0.2155]
    assert np.round(high, 4).tolist() == [0.6133, 0.4955]


@pytest.mark.parametrize("prior", [JEFFREYS_PRIOR, UNIFORM_PRIOR])
def test_beta_interval_is_the_posterior_quantiles(prior):
    k, n = np.array([0, 1, 19, 41]), 41
    low, high = beta_interval(k, n, 0.9, prior)
    posterior = stats.beta(k + prior[0], n - k + prior[1])
    np.testing.assert_allclose(low, posterior.ppf(0.05), rtol=1e-12)
    np.testing.assert_allclose(high, posterior.ppf(0.95), rtol=1e-12)


def test_beta_posterior_rejects_bad_counts_and_priors():
    with pytest.raises(ValueError, match="between 0 and n"):
        beta_posterior_parameters(11, 10)
    with pytest.raises(ValueError, match="positive"):
        beta_interval(1, 10, prior=(0, 1))
    with pytest.raises(ValueError, match="level"):
        beta_interval(1, 10, level=1.0)


# --- Independent comparison --------------------------------------------------------------------


def test_independent_comparison_of_altman():
    value = float(independent_comparison(19, 41, 14, 41, prior=UNIFORM_PRIOR))
    assert 0.866 <= value <= 0.868
    a, b = stats.beta(20, 23), stats.beta(15, 28)
    exact = integrate.quad(lambda x: a.pdf(x) * b.cdf(x), 0, 1, epsabs=1e-14)[0]
    assert abs(value - exact) < 1e-10


def test_independent_comparison_is_vectorised_and_complementary():
    ka, na = np.array([[0, 5], [424, 100]]), np.array([[10, 10], [1497, 101]])
    kb, nb = np.array([3, 1]), np.array([10, 1000])
    forward = independent_comparison(ka, na, kb, nb)
    backward = independent_comparison(kb, nb, ka, na)
    assert forward.shape == (2, 2)
    np.testing.assert_allclose(forward + backward, 1, atol=1e-12)
    one = independent_comparison(424, 1497, 3, 10)
    assert one == forward[1, 0]
    # A narrow and a wide posterior, either way round.
    narrow, wide = stats.beta(5000.5, 5000.5), stats.beta(2.5, 3.5)
    exact = integrate.quad(lambda x: narrow.pdf(x) * wide.cdf(x), 0.45, 0.55, epsabs=1e-14)[0]
    assert abs(independent_comparison(5000, 10000, 2, 5) - exact) < 1e-10


# --- Paired: the Dirichlet model ---------------------------------------------------------------


def test_dirichlet_probability_is_exact_and_mcnemar_like():
    post = dirichlet_paired_posterior(*ALTMAN, np.random.default_rng(0), draws=2000)
    assert post.prob_a_better == 1 - 2.0**-6
    assert post.mean == pytest.approx(5 / 45, abs=1e-15)
    # 1 - I_1/2(n10 + 1, n01 + 1) = P(Binomial(n10 + n01 + 1, 1/2) <= n10).
    table = TABLES.T
    post = dirichlet_paired_posterior(*table, np.random.default_rng(0), draws=200)
    expected = stats.binom.cdf(table[1], table[1] + table[2] + 1, 0.5)
    np.testing.assert_allclose(post.prob_a_better, expected, rtol=1e-12)


def test_dirichlet_interval_matches_direct_dirichlet_draws():
    ours = dirichlet_paired_posterior(*ALTMAN, np.random.default_rng(1), draws=100_000)
    cells = np.random.default_rng(2).dirichlet(np.array(ALTMAN) + 1.0, size=100_000)
    low, high = np.quantile(cells[:, 1] - cells[:, 2], [0.025, 0.975])
    assert abs(ours.low - low) < 0.004 and abs(ours.high - high) < 0.004
    assert ours.effective_draws == 100_000


# --- Paired: the probit model ------------------------------------------------------------------


def test_bivariate_normal_orthant_matches_scipy():
    points = [(0.3, -0.2, 0.5), (0.0, 0.0, 0.3), (0.0, 1.2, -0.7), (-1.5, 0.0, 0.9), (2, 2, 0.99)]
    for h, k, rho in points:
        ours = bayes._orthant(np.array(h), np.array(k), rho, np.sqrt(1 - rho**2))
        reference = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf([h, k])
        assert abs(ours - reference) < 1e-7  # scipy's own (Genz) accuracy is about 1e-8


def test_probit_matches_bayes_evals_on_altman():
    post = probit_paired_posterior(*ALTMAN, np.random.default_rng(2025), draws=60_000)
    assert 0.977 <= post.prob_a_better <= 0.982
    # The Monte Carlo SE at these effective draws is about 7e-4, well inside the tolerance.
    assert abs(post.prob_a_better - BAYES_EVALS_ALTMAN) < 0.005
    assert post.effective_draws > 0.5 * post.draws


def test_probit_matches_prior_draw_importance_sampling_at_small_n():
    # At n = 10 bayes_evals' sampler (prior draws weighted by the likelihood) is accurate, so it
    # checks the Dirichlet proposal's Jacobian and prior ratio independently.
    rng = np.random.default_rng(11)
    size = 400_000
    theta_a, theta_b = rng.random(size), rng.random(size)
    rho = 2 * rng.beta(4, 2, size) - 1
    mu_a, mu_b = special.ndtri(theta_a), special.ndtri(theta_b)
    p11 = bayes._orthant(mu_a, mu_b, rho, np.sqrt(1 - rho**2))
    cells = np.stack([p11, theta_a - p11, theta_b - p11, 1 - theta_a - theta_b + p11], -1)
    weights = np.exp(special.xlogy([3, 2, 1, 4], np.clip(cells, 0, None)).sum(-1))
    reference = (weights * (theta_a > theta_b)).sum() / weights.sum()
    reference_mean = (weights * (theta_a - theta_b)).sum() / weights.sum()
    post = probit_paired_posterior(3, 2, 1, 4, np.random.default_rng(4), draws=40_000)
    assert abs(post.prob_a_better - reference) < 0.008
    assert abs(post.mean - reference_mean) < 0.004


def test_large_n_intervals_are_the_paired_wald_and_do_not_depend_on_the_seed():
    wald_low, wald_high = paired_wald(*LARGE)
    assert (round(wald_low, 6), round(wald_high, 6)) == (0.029663, 0.078554)
    runs = [
        probit_paired_posterior(*LARGE, np.random.default_rng(seed), draws=20_000)
        for seed in (0, 1)
    ]
    runs.append(dirichlet_paired_posterior(*LARGE, np.random.default_rng(0), draws=20_000))
    for post in runs:
        assert abs(post.low - wald_low) < 0.002 and abs(post.high - wald_high) < 0.002
        assert post.prob_a_better > 0.9999
    # Seeds differ by Monte Carlo error only (a 2.5% quantile's SE here is about 2.5e-4).
    assert abs(runs[0].low - runs[1].low) < 0.0015 and abs(runs[0].high - runs[1].high) < 0.0015
    # The prior-draw sampler's failure mode: here the weights stay even.
    assert min(runs[0].effective_draws, runs[1].effective_draws) > 0.8 * 20_000


@pytest.mark.parametrize("function", [probit_paired_posterior, dirichlet_paired_posterior])
def test_seeds_reproduce_and_stacks_equal_single_calls(function):
    stacked = function(*TABLES.T, np.random.default_rng(5), draws=1000)
    again = function(*TABLES.T, np.random.default_rng(5), draws=1000)
    for ours, theirs in zip(stacked[:5], again[:5], strict=True):
        assert ours.tobytes() == theirs.tobytes()
    for i, table in enumerate(TABLES):
        single = function(*table, np.random.default_rng(5), draws=1000)
        assert [float(x) for x in single[:5]] == [float(x[i]) for x in stacked[:5]]
        assert np.ndim(single.prob_a_better) == 0
    # 18 pairs cross a block boundary of the implementation (16) and change nothing.
    tiled = function(*np.tile(TABLES, (3, 1)).T, np.random.default_rng(5), draws=1000)
    assert np.array_equal(tiled.high, np.tile(stacked.high, 3))
    grid = function(
        *TABLES[:6].reshape(2, 3, 4).transpose(2, 0, 1), np.random.default_rng(5), draws=1000
    )
    assert grid.low.shape == (2, 3)
    assert np.array_equal(grid.low.ravel(), stacked.low[:6])


def test_probit_effective_draws_stay_above_the_floor_on_hard_tables():
    hard = np.array([(0, 1000, 0, 0), (0, 0, 20, 0), (500, 0, 0, 500), (1, 0, 0, 0), (0, 6, 44, 0)])
    post = probit_paired_posterior(*hard.T, np.random.default_rng(0), draws=2000)
    assert np.all(post.effective_draws > 3 * bayes.MIN_EFFECTIVE_SHARE * 2000)


def test_probit_warns_below_the_effective_draws_floor(monkeypatch):
    monkeypatch.setattr(bayes, "MIN_EFFECTIVE_SHARE", 0.999)
    with pytest.warns(RuntimeWarning, match="effective draws"):
        probit_paired_posterior(*ALTMAN, np.random.default_rng(0), draws=500)


def test_paired_reading_and_bad_inputs():
    rng = np.random.default_rng(0)
    assert bayes.PAIRED_READING == "dirichlet"
    assert paired_posterior(*ALTMAN, rng, draws=500).model == "dirichlet"
    assert paired_posterior(*ALTMAN, rng, draws=500, model="probit").model == "probit"
    with pytest.raises(ValueError, match="model"):
        paired_posterior(*ALTMAN, rng, model="logit")
    with pytest.raises(TypeError, match="Generator"):
        dirichlet_paired_posterior(*ALTMAN, 0)
    with pytest.raises(ValueError, match="non-negative"):
        probit_paired_posterior(1, -1, 0, 2, rng)
    with pytest.raises(ValueError, match="whole number"):
        probit_paired_posterior(*ALTMAN, rng, draws=10)
