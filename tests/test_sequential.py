"""Anytime-valid confidence sequences: confseq's boundary, coverage under 20 looks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalbars import sequential

CONFSEQ = json.loads(
    (Path(__file__).parent / "reference" / "confseq_output" / "poly_stitching.json").read_text()
)


def test_stitching_boundary_equals_confseq_on_every_grid_point():
    rows = CONFSEQ["rows"]
    ours = np.array(
        [
            sequential.stitching_boundary(r["v"], r["alpha"], r["v_min"], r["c"], r["s"], r["eta"])
            for r in rows
        ]
    )
    theirs = np.array([r["bound"] for r in rows])
    assert len(rows) == 576
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_sequence_is_the_running_mean_plus_the_boundary_over_t():
    x = np.array([1.0, 0.0, -1.0, 1.0, 1.0, 0.0])
    mean, low, high = sequential.empirical_bernstein_cs(x, 0.1, v_min=1.0)
    predicted = np.array([0.0, 1.0, 0.5, 0.0, 0.25, 0.4])  # the midpoint, then running means
    variance = np.cumsum((x - predicted) ** 2)
    radius = sequential.stitching_boundary(variance, 0.05, 1.0, 2.0) / np.arange(1, 7)
    np.testing.assert_allclose(mean, np.cumsum(x) / np.arange(1, 7))
    np.testing.assert_allclose(high, np.minimum(mean + radius, 1.0))
    np.testing.assert_allclose(low, np.maximum(mean - radius, -1.0))


def test_type_one_error_under_20_looks_sequence_below_alpha_fixed_above():
    result = sequential.simulate_looks(questions=1000, looks=20, replications=2000, seed=7)
    # The fixed-n test holds its level at one look and loses it over 20.
    assert result["type1_fixed_final"] == pytest.approx(0.05, abs=4 * 0.005)
    assert result["type1_fixed"] > 0.05 + 4 * result["type1_fixed_se"]
    assert result["type1_sequence"] <= 0.05
    again = sequential.simulate_looks(questions=1000, looks=20, replications=2000, seed=7)
    assert again == result  # seeded


def test_sequence_covers_a_true_nonzero_mean_and_shrinks():
    rng = np.random.default_rng(3)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.6, 0.3], size=(500, 2000))  # mean 0.2
    _, low, high = sequential.empirical_bernstein_cs(x, 0.05)
    covered = ((low <= 0.2) & (high >= 0.2)).all(axis=1)
    assert covered.mean() >= 0.95
    width = high - low
    assert (width[:, -1] < width[:, 99]).all()
