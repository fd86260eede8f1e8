"""Anytime-valid confidence sequences: confseq's boundary, coverage under 20 looks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalbars.stats import sequential

OUTPUT = Path(__file__).parents[2] / "reference" / "confseq_output"
CONFSEQ = json.loads((OUTPUT / "poly_stitching.json").read_text())
MIXTURE = json.loads((OUTPUT / "gamma_exponential.json").read_text())


def test_stitching_boundary_equals_confseq_on_every_grid_point():
    rows = CONFSEQ["rows"]
    ours = np.array(
        [
            sequential.stitching_boundary(
                r["v"], r["alpha"], r["v_min"], r["c"], s=r["s"], eta=r["eta"]
            )
            for r in rows
        ]
    )
    theirs = np.array([r["bound"] for r in rows])
    assert len(rows) == 576
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_mixture_boundary_equals_confseq_on_every_grid_point():
    rows = MIXTURE["rows"]
    column = {key: np.array([r[key] for r in rows]) for key in rows[0]}
    assert len(rows) == 378
    keys = sorted({(r["alpha"], r["v_opt"], r["c"], r["alpha_opt"]) for r in rows})
    for alpha, v_opt, c, alpha_opt in keys:  # each setting: all of its v at once
        these = (
            (column["alpha"] == alpha)
            & (column["v_opt"] == v_opt)
            & (column["c"] == c)
            & (column["alpha_opt"] == alpha_opt)
        )
        ours = sequential.gamma_exponential_boundary(column["v"][these], alpha, v_opt, c, alpha_opt)
        np.testing.assert_allclose(ours, column["bound"][these], rtol=1e-9)


def test_sequence_is_the_running_mean_plus_the_boundary_over_t():
    x = np.array([1.0, 0.0, -1.0, 1.0, 1.0, 0.0])
    mean, low, high = sequential.empirical_bernstein_cs(
        x, alpha=0.1, boundary="stitching", v_min=1.0
    )
    predicted = np.array([0.0, 1.0, 0.5, 0.0, 0.25, 0.4])  # the midpoint, then running means
    variance = np.cumsum((x - predicted) ** 2)
    radius = sequential.stitching_boundary(variance, 0.05, 1.0, 2.0) / np.arange(1, 7)
    np.testing.assert_allclose(mean, np.cumsum(x) / np.arange(1, 7))
    np.testing.assert_allclose(high, np.minimum(mean + radius, 1.0))
    np.testing.assert_allclose(low, np.maximum(mean - radius, -1.0))
    _, low_m, high_m = sequential.empirical_bernstein_cs(x, alpha=0.1, at=[2, 6])
    radius_m = sequential.gamma_exponential_boundary(variance[[1, 5]], 0.05, 100.0, 2.0)
    np.testing.assert_allclose(high_m, np.minimum(mean[[1, 5]] + radius_m / [2, 6], 1.0))


def test_type_one_error_under_20_looks_sequence_below_alpha_fixed_above():
    result = sequential.simulate_looks(questions=1000, looks=20, replications=2000, seed=7)
    stitched = sequential.simulate_looks(
        questions=1000, looks=20, replications=2000, seed=7, boundary="stitching"
    )
    assert stitched["type1_sequence"] <= result["type1_sequence"] <= 0.05
    # The fixed-n test holds its level at one look and loses it over 20.
    assert result["type1_fixed_final"] == pytest.approx(0.05, abs=4 * 0.005)
    assert result["type1_fixed"] > 0.05 + 4 * result["type1_fixed_se"]
    assert result["type1_sequence"] <= 0.05
    again = sequential.simulate_looks(questions=1000, looks=20, replications=2000, seed=7)
    assert again == result  # seeded


def test_sequence_covers_a_true_nonzero_mean_and_shrinks():
    rng = np.random.default_rng(3)
    # 300 paths of 1,000: the boundary's bisection costs about 20 us a point; coverage is 0.993
    # here, four standard errors above the 0.95 it must keep.
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.6, 0.3], size=(300, 1000))  # mean 0.2
    _, low, high = sequential.empirical_bernstein_cs(x, alpha=0.05)
    covered = ((low <= 0.2) & (high >= 0.2)).all(axis=1)
    assert covered.mean() >= 0.95
    width = high - low
    assert (width[:, -1] < width[:, 99]).all()
