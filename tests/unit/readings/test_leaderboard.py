"""Leaderboard verdicts: split-half stability, adjacent-pair resolution, signal-to-noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.scores import wide_scores
from evalbars.readings.leaderboard import resolution, signal_noise, stability
from evalbars.readings.leaderboard import table as verdicts

from ...helpers import long_table, wide_of

DATA = Path(__file__).resolve().parents[2] / "data"


def test_halves_take_half_of_every_category_and_are_seeded():
    categories = np.repeat(["a", "b", "c"], [7, 10, 1])
    masks = stability.half_masks(categories, 200, np.random.default_rng(1))
    per = {c: masks[:, categories == c].sum(axis=1) for c in "abc"}
    assert (per["a"] == 3).all() and (per["b"] == 5).all() and (per["c"] == 0).all()
    # Every question of a category is equally likely to be drawn (about half the time).
    assert np.abs(masks[:, categories == "b"].mean(axis=0) - 0.5).max() < 0.12
    again = stability.half_masks(categories, 200, np.random.default_rng(1))
    assert np.array_equal(masks, again)


def test_snr_by_hand_and_leave_one_out_is_the_benchmark_without_the_category():
    rows = pd.DataFrame(
        {
            "model": np.repeat(["m1", "m2"], 6),
            "question_id": np.tile([f"q{i}" for i in range(6)], 2),
            "category": np.tile(["x", "x", "x", "y", "y", "y"], 2),
            "correct": [1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1],
        }
    )
    wide = wide_scores(rows)
    table = signal_noise.signal_to_noise(wide).set_index("scope")
    # m1 = 4/6, m2 = 2/6: signal 1/3; SEs sqrt(p(1-p)/6), both sqrt(2/9/6).
    se = np.sqrt((2 / 9) / 6)
    assert table.loc["all", "signal"] == pytest.approx(1 / 3)
    assert table.loc["all", "snr_sampling"] == pytest.approx((1 / 3) / se)
    # Category x: m1 3/3 (SE 0), m2 1/3 (SE sqrt(2/9/3)): noise is their mean.
    assert table.loc["x", "noise_sampling"] == pytest.approx(np.sqrt(2 / 27) / 2)
    # Without x, the benchmark is category y alone.
    assert table.loc["x", "snr_without"] == pytest.approx(table.loc["y", "snr"])
    assert table.loc["y", "snr_without"] == pytest.approx(table.loc["x", "snr"])
    assert table.loc["x", "lowers_snr"] == (table.loc["y", "snr"] > table.loc["all", "snr"])
    assert np.isnan(table.loc["all", "noise_runs"])


def test_run_noise_from_epochs_is_the_sd_of_one_runs_score():
    items = pd.read_csv(DATA / "synthetic_epochs_balanced.csv")
    wide = wide_scores(items)
    table = signal_noise.signal_to_noise(wide)
    # Var(one run's mean) = sum over questions of the within-question sample variance / n^2.
    cell = items.groupby(["model", "question_id"])["correct"].var(ddof=1)
    per_model = np.sqrt(cell.groupby("model").sum()) / items["question_id"].nunique()
    assert table["noise_runs"].iloc[0] == pytest.approx(per_model.mean())
    assert table["snr"].iloc[0] == table["snr_runs"].iloc[0]


def test_a_three_way_tie_at_the_top_is_headlined_as_a_tie(tmp_path):
    tie = wide_of(long_table(tmp_path / "tie.csv", {m: [1, 0, 1, 0] for m in "ABC"}))
    table = verdicts.leaderboard_table(tie, splits=5)
    headline = verdicts.leaderboard_headline(table, 5)
    assert "A, B and C tie for first; each is first (alone or tied) on at least 100% of 10" in (
        headline
    )
    assert "A is first" not in headline


def test_a_clustered_spread_of_zero_reads_the_pair_unclustered():
    # Three categories whose mean differences are all +0.04: the CR2 SE is 1e-17, a design
    # effect of 0 that made the clustered count 0 questions. The paired count stands instead.
    pattern = np.r_[np.ones(10), np.zeros(6), np.ones(50), np.zeros(34)]
    other = np.r_[np.zeros(10), np.ones(6), np.ones(50), np.zeros(34)]
    rows = pd.DataFrame(
        {
            "model": np.repeat(["a", "b"], 300),
            "question_id": np.tile(np.arange(300), 2),
            "category": np.tile(np.repeat(list("xyz"), 100), 2),
            "correct": np.r_[np.tile(pattern, 3), np.tile(other, 3)],
        }
    )
    row = resolution.adjacent_resolution(wide_scores(rows)).iloc[0]
    assert np.isnan(row.se_clustered) and np.isnan(row.design_effect)
    assert row.questions_needed_clustered == row.questions_needed > 0
    assert row.unresolved_clustered == row.unresolved
