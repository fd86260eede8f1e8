"""Exact binomial coverage against the O-CLT oracle table and the Beta(1, 1) identity.

The table is O-CLT of docs/methods-peers-2026-12-02.md, section 2b (exact 95% coverage, the
uniform-theta average and theta = 0.9), printed to 4 decimals; it agrees with Bowyer,
Aitchison and Ivanova (2025, arXiv:2503.01747).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from evalbars.stats.bayes import Z_UNDERCOVERS_BELOW_N
from evalbars.stats.coverage import (
    INTERVAL_METHODS,
    average_coverage,
    binomial_interval,
    clopper_pearson_interval,
    coverage_at,
)

# n: (uniform average: Wald, Wilson, Clopper-Pearson, Jeffreys, Beta(1,1)), (theta = 0.9: same)
O_CLT = {
    10: ((0.7693, 0.9541, 0.9838, 0.9531, 0.9500), (0.6497, 0.9298, 0.9872, 0.9872, 0.9298)),
    20: ((0.8458, 0.9530, 0.9770, 0.9511, 0.9500), (0.8760, 0.9568, 0.9887, 0.9568, 0.9568)),
    50: ((0.9006, 0.9518, 0.9693, 0.9501, 0.9500), (0.8789, 0.9703, 0.9703, 0.9417, 0.9703)),
    100: ((0.9223, 0.9511, 0.9646, 0.9499, 0.9500), (0.9324, 0.9364, 0.9557, 0.9557, 0.9364)),
    200: ((0.9346, 0.9507, 0.9609, 0.9499, 0.9500), (0.9271, 0.9561, 0.9669, 0.9409, 0.9561)),
    500: ((0.9430, 0.9503, 0.9572, 0.9499, 0.9500), (0.9427, 0.9563, 0.9634, 0.9475, 0.9563)),
}


@pytest.mark.parametrize("n", sorted(O_CLT))
def test_the_oracle_table_to_its_four_printed_decimals(n):
    average, at_point_nine = O_CLT[n]
    ours_average = [round(average_coverage(n, m), 4) for m in INTERVAL_METHODS]
    ours_point = [round(float(coverage_at(0.9, n, m)), 4) for m in INTERVAL_METHODS]
    assert ours_average == list(average)
    assert ours_point == list(at_point_nine)


@pytest.mark.parametrize("n", [1, 2, 7, 10, 41, 100, 500, 1497])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_the_uniform_prior_interval_averages_exactly_its_level(n, level):
    assert abs(average_coverage(n, "beta_uniform", level) - level) < 1e-12


@pytest.mark.parametrize("method", INTERVAL_METHODS)
def test_the_average_equals_adaptive_quadrature_of_the_pointwise_coverage(method):
    # An independent route to the Beta-integral formula: integrate C(theta) numerically, with
    # the interval bounds (where C jumps) as breakpoints.
    n = 20
    low, high = binomial_interval(np.arange(n + 1.0), n, method)
    jumps = np.unique(np.clip(np.concatenate([low, high]), 0, 1))
    edges = np.concatenate([[0.0], jumps[(jumps > 0) & (jumps < 1)], [1.0]])
    total = sum(
        integrate.quad(lambda t: float(coverage_at(t, n, method)), a, b, epsabs=1e-13)[0]
        for a, b in zip(edges[:-1], edges[1:], strict=True)
    )
    assert abs(total - average_coverage(n, method)) < 1e-10


def test_the_under_coverage_threshold_is_where_wald_reaches_094():
    assert Z_UNDERCOVERS_BELOW_N == 332
    assert average_coverage(331, "wald") < 0.94 <= average_coverage(332, "wald")
    # The average coverage rises with n, so no larger n falls back below 0.94.
    wald = [average_coverage(n, "wald") for n in range(300, 420, 7)]
    assert np.all(np.diff(wald) > 0)


def test_clopper_pearson_equals_scipy_exact_interval():
    for k, n in [(0, 10), (3, 10), (10, 10), (19, 41), (424, 1497)]:
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        low, high = clopper_pearson_interval(k, n)
        assert abs(low - ci.low) < 1e-12 and abs(high - ci.high) < 1e-12


def test_wald_is_a_point_at_zero_and_all_successes():
    low, high = binomial_interval(np.array([0, 10]), 10, "wald")
    assert low.tolist() == high.tolist() == [0.0, 1.0]
    # At theta = 1/2 and n = 10, k = 3..7 cover (k = 2 gives 0.2 + 0.248 < 0.5).
    assert coverage_at(0.5, 10, "wald") == pytest.approx(1 - 2 * (1 + 10 + 45) / 1024, abs=1e-15)


def test_pointwise_coverage_is_vectorised_over_theta():
    theta = np.array([[0.1, 0.5], [0.9, 0.99]])
    values = coverage_at(theta, 50, "wilson")
    assert values.shape == (2, 2)
    assert values[1, 0] == coverage_at(0.9, 50, "wilson")


def test_bad_arguments():
    with pytest.raises(ValueError, match="method"):
        average_coverage(10, "agresti")
    with pytest.raises(ValueError, match="whole number"):
        coverage_at(0.5, 0, "wald")
