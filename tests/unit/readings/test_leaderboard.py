"""Leaderboard verdicts: split-half stability, adjacent-pair resolution, signal-to-noise."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars import cli
from evalbars.data.scores import wide_scores
from evalbars.readings.leaderboard import resolution, signal_noise, stability
from evalbars.readings.leaderboard import table as verdicts
from evalbars.render.figures.verdicts import verdicts_figure
from evalbars.seeding import setting_rng
from evalbars.stats import pairwise
from evalbars.stats.cluster_robust import cr2_mean

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


def test_stability_matches_ranking_each_half_directly(real_wide):
    table = stability.split_half_stability(real_wide, splits=20, seed=5)
    rng = setting_rng(5, "split_half", 20)
    masks = stability.half_masks(real_wide.categories, 20, rng)
    full = stability.min_ranks(real_wide.scores.mean(axis=0))
    kept = np.zeros(len(real_wide.models))
    for half in [*masks, *~masks]:  # the slow way, one half at a time
        kept += stability.min_ranks(real_wide.scores[half].mean(axis=0)) == full
    np.testing.assert_allclose(table["rank_kept_share"], kept / 40)
    assert list(table["rank"]) == list(full)
    assert table["first_share"].sum() >= 1  # at least one system first on every half


def test_resolution_is_the_planners_formula_on_pairwise_counts(real_wide):
    table = resolution.adjacent_resolution(real_wide, alpha=0.05, power=0.8)
    pairs = pairwise.pairwise_table(real_wide).set_index(["model_a", "model_b"])
    z = special.ndtri(0.975) + special.ndtri(0.8)
    for row in table.itertuples():
        p = pairs.loc[(row.model_a, row.model_b)]
        delta = (p.n10 + p.n01) / p.n
        assert row.disagreement == pytest.approx(delta, rel=1e-12)
        assert row.questions_needed == pytest.approx(
            z**2 * (delta - p["diff"] ** 2) / p["diff"] ** 2
        )
        assert row.se_paired == pytest.approx(p.se_paired, rel=1e-12)
    assert len(table) == 5 and (table["questions"] == 1497).all()
    # Clustered: N* times the design effect, the SE the clustered SE of the differences.
    first = table.iloc[0]
    columns = [real_wide.models.index(m) for m in (first.model_a, first.model_b)]
    d = real_wide.scores[:, columns[0]] - real_wide.scores[:, columns[1]]
    robust = cr2_mean(d, real_wide.categories)
    assert first.se_clustered == pytest.approx(float(robust.se), rel=1e-12)
    assert first.cluster_df == pytest.approx(float(robust.df), rel=1e-12)
    # N* times the design effect and the t(df)-over-normal quantile inflation.
    student = special.stdtrit(first.cluster_df, 0.975) + special.stdtrit(first.cluster_df, 0.8)
    assert first.questions_needed_clustered == pytest.approx(
        first.questions_needed * first.se_clustered**2 / first.se_paired**2 * (student / z) ** 2
    )
    np.testing.assert_array_equal(table["unresolved"], table["ratio"] > 1)


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


def test_leaderboard_table_and_command(real_wide, default_subsample, tmp_path, capsys):
    table = verdicts.leaderboard_table(real_wide, splits=10, seed=1)
    assert list(table.columns) == verdicts.LEADERBOARD_COLUMNS
    assert list(table["letters"]) == ["a", "ab", "abc", "bc", "c", "c"]
    assert table["next_model"].iloc[:-1].tolist() == table["model"].iloc[1:].tolist()
    path = tmp_path / "items.parquet"  # the item table as the workflow writes it
    default_subsample.items.to_parquet(path, index=False)
    status = cli.main(
        ["leaderboard", str(path), "--format", "csv", "--splits", "10", "--seed", "1"]
    )
    out, err = capsys.readouterr()
    assert status == 0 and err.startswith("6 systems in 3 letter group(s)")
    printed = pd.read_csv(io.StringIO(out))
    np.testing.assert_allclose(printed["rank_kept_share"], table["rank_kept_share"])
    assert cli.main(["leaderboard", str(path)]) == 0
    header = capsys.readouterr().out.splitlines()[2]
    assert header.split("|")[6].strip() == "letters"
    one = tmp_path / "one.csv"
    rows = {"model": "m", "question_id": [1, 2], "category": "x", "correct": [1, 0]}
    pd.DataFrame(rows).to_csv(one, index=False)
    assert cli.main(["leaderboard", str(one)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ranks 2 or more models, but the data hold 1" in err


def test_figure_draws_the_top_systems_and_counts_those_left_out(real_wide):
    table = verdicts.leaderboard_table(real_wide, splits=5, seed=1)
    fig = verdicts_figure(table, 0.95, max_systems=4)
    board, strip = fig.axes
    assert [t.get_text() for t in board.get_yticklabels()] == list(table["model"].iloc[:4])
    assert "(top 4 shown, 2 left out)" in fig._suptitle.get_text()
    assert "5 of 5 adjacent gaps are unresolved" in fig._suptitle.get_text()
    letters_drawn = [t.get_text() for t in board.texts]
    assert letters_drawn == list(table["letters"].iloc[:4])
    assert len(strip.patches) == 3  # the pairs between drawn systems


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
