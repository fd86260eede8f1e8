"""The pass@k band's coverage study: its truth, its draws and its reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from evalbars.seeding import STUDY_CODES
from evalbars.studies.passk_band import (
    SCENARIOS,
    STUDY,
    draw_paired_counts,
    simulate_passk_band,
    true_difference,
)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_true_difference_is_the_beta_integral(scenario):
    a_a, b_a, a_b, b_b = SCENARIOS[scenario]
    for k in (1, 4, 16):

        def expected_pass(a, b, k=k):
            return integrate.quad(lambda p: (1 - (1 - p) ** k) * stats.beta.pdf(p, a, b), 0, 1)[0]

        value = expected_pass(a_a, b_a) - expected_pass(a_b, b_b)
        assert true_difference([k], scenario)[0] == pytest.approx(value, abs=1e-7)
    assert true_difference([1], "crossing")[0] == pytest.approx(0.5 - 0.4)


def test_the_copula_keeps_each_models_beta_and_couples_them():
    rng = np.random.default_rng(0)
    c_a, c_b, labels = draw_paired_counts(rng, 400, 60, 20, "crossing", categories=6)
    assert np.bincount(labels).tolist() == [10] * 6
    # Sample means of c/n are unbiased for the Beta means 0.5 and 0.4.
    assert (c_a / 20).mean() == pytest.approx(0.5, abs=0.01)
    assert (c_b / 20).mean() == pytest.approx(0.4, abs=0.01)
    assert np.corrcoef(c_a.ravel(), c_b.ravel())[0, 1] > 0.4


def test_the_study_is_seeded_and_its_own():
    assert STUDY_CODES[STUDY] == 38
    first = simulate_passk_band(questions=30, samples=5, categories=5, replicates=150, draws=200)
    again = simulate_passk_band(questions=30, samples=5, categories=5, replicates=150, draws=200)
    other = simulate_passk_band(
        questions=30, samples=5, categories=5, replicates=150, draws=200, seed=1
    )
    columns = ["coverage", "pointwise_all_k", "mean_band_width", "mean_critical_value"]
    assert first[columns].equals(again[columns])
    assert not first[columns].equals(other[columns])
    assert first["clustered_by"].tolist() == ["question", "category"]
    # The band is at least as wide as the pointwise intervals, so it covers at least as often.
    assert (first["coverage"] >= first["pointwise_all_k"]).all()
