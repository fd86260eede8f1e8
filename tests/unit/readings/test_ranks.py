"""Rank uncertainty: intervals against published values and statsmodels, the rank-uncertainty
calculator's worked example on a constructed leaderboard, plausible ranks, determinism, and the
paired reading.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from evalbars import cli
from evalbars.cli import main
from evalbars.data import blocks
from evalbars.data.scores import WideScores
from evalbars.defaults import DRAWS
from evalbars.errors import InputError
from evalbars.readings import ranks
from evalbars.readings.ranks import parse_leaderboard
from evalbars.render.figures.ranks import forest_figure, rank_overview_figure, rank_range_figure
from evalbars.render.figures.style import save_figure
from evalbars.stats.intervals import mover_difference, wilson_interval, z_for_level
from evalbars.stats.pairwise import pairwise_table

from ...helpers import last_error

DATA = Path(__file__).resolve().parents[2] / "data"
#: The rank-uncertainty calculator's worked example, on a leaderboard constructed to match it.
CALCULATOR_EXAMPLE = DATA / "calculator_example.csv"


def board_of(**columns) -> pd.DataFrame:
    """A parsed leaderboard from keyword columns (names default to s1, s2, ...)."""
    n_rows = len(next(iter(columns.values())))
    columns.setdefault("name", [f"s{i + 1}" for i in range(n_rows)])
    return ranks.parse_leaderboard(pd.DataFrame(columns))


def points(x) -> np.ndarray:
    """Proportions as percentage points rounded to one decimal, as the rank-uncertainty calculator prints them."""
    return np.round(100 * np.asarray(x, dtype=float), 1)


# --- Score intervals ---------------------------------------------------------------------------


def test_wilson_160_of_200_is_73_9_to_85_0():
    low, high = ranks.score_intervals(board_of(correct=[160], total=[200]))
    assert points([low[0], high[0]]).tolist() == [73.9, 85.0]


# Newcombe (1998a), Stat Med 17:857, Wilson examples.
WILSON_PUBLISHED = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
    (29, 29, 0.8830, 1.0000),
    (10, 10, 0.7225, 1.0000),
    (0, 10, 0.0000, 0.2775),
    (5, 10, 0.2366, 0.7634),
]


def test_score_intervals_match_newcombe_1998_wilson_examples():
    k, n, low, high = map(np.array, zip(*WILSON_PUBLISHED, strict=True))
    got_low, got_high = ranks.score_intervals(board_of(correct=k, total=n))
    np.testing.assert_allclose(got_low, low, atol=5e-5)
    np.testing.assert_allclose(got_high, high, atol=5e-5)


def test_wilson_interval_always_holds_the_observed_proportion():
    # At 0 of n, rounding used to leave the lower bound at ~1e-18, above the score itself.
    k = np.array([0, 0, 200, 7])
    n = np.array([200, 1497, 200, 10])
    low, high = wilson_interval(k, n)
    assert (low <= k / n).all() and (high >= k / n).all()
    assert low[0] == 0.0 and low[1] == 0.0 and high[2] == 1.0


def test_score_intervals_agree_with_statsmodels_wilson_on_a_grid():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 5000, size=200)
    k = rng.integers(0, n + 1)
    for level in (0.8, 0.95, 0.99):
        low, high = ranks.score_intervals(board_of(correct=k, total=n), level)
        ref_low, ref_high = proportion_confint(k, n, alpha=1 - level, method="wilson")
        np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12)
        np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12)


def test_se_rows_get_score_plus_minus_z_se_unclipped():
    board = board_of(score=[0.5, 0.99], se=[0.02, 0.01])
    low, high = ranks.score_intervals(board, 0.9)
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose(low, [0.5 - z * 0.02, 0.99 - z * 0.01])
    np.testing.assert_allclose(high, [0.5 + z * 0.02, 0.99 + z * 0.01])
    assert high[1] > 1  # a normal interval, documented as not clipped


# --- Gap intervals -----------------------------------------------------------------------------

# Newcombe (1998b), Stat Med 17:873, Table II, method 10.
NEWCOMBE_PUBLISHED = [
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (6, 7, 2, 7, 0.0582, 0.8062),
    (5, 56, 0, 29, -0.0381, 0.1926),
    (0, 10, 0, 20, -0.1611, 0.2775),
    (0, 10, 0, 10, -0.2775, 0.2775),
    (10, 10, 0, 20, 0.6791, 1.0000),
    (10, 10, 0, 10, 0.6075, 1.0000),
]


@pytest.mark.parametrize("ka,na,kb,nb,low,high", NEWCOMBE_PUBLISHED)
def test_gap_interval_matches_newcombe_1998_table_ii(ka, na, kb, nb, low, high):
    gaps = ranks.adjacent_gaps(board_of(correct=[ka, kb], total=[na, nb]))
    assert gaps["gap_low"].iloc[0] == pytest.approx(low, abs=5e-5)
    assert gaps["gap_high"].iloc[0] == pytest.approx(high, abs=5e-5)
    assert gaps["separated"].iloc[0] == (low > 0)
    assert gaps["separated"].isna().iloc[1]


def test_gap_intervals_agree_with_statsmodels_newcomb():
    rng = np.random.default_rng(4)
    n = rng.integers(5, 3000, size=(60, 2))
    k = rng.integers(0, n + 1)
    board = board_of(correct=k.ravel(), total=n.ravel())
    gaps = ranks.adjacent_gaps(board, 0.95)  # pairs (0,1), (1,2), ...; check the (2i, 2i+1) ones
    for i in range(60):
        ref = confint_proportions_2indep(
            k[i, 0], n[i, 0], k[i, 1], n[i, 1], method="newcomb", compare="diff", alpha=0.05
        )
        assert gaps["gap_low"].iloc[2 * i] == pytest.approx(ref[0], abs=1e-12)
        assert gaps["gap_high"].iloc[2 * i] == pytest.approx(ref[1], abs=1e-12)


def test_mover_with_two_wilson_intervals_gives_newcombes_published_interval():
    # The MOVER rule used for every pair, fed with Wilson bounds, reproduces Newcombe (1998,
    # Table II): 56/70 - 48/80 -> 0.0524 to 0.3339.
    ka, na, kb, nb = 56, 70, 48, 80
    la, ua = wilson_interval(ka, na)
    lb, ub = wilson_interval(kb, nb)
    low, high = mover_difference(ka / na, la, ua, kb / nb, lb, ub)
    assert (round(float(low), 4), round(float(high), 4)) == (0.0524, 0.3339)


def test_se_pair_gap_is_the_normal_difference_interval():
    gaps = ranks.adjacent_gaps(board_of(score=[0.71, 0.66], se=[0.012, 0.016]))
    half = z_for_level(0.95) * np.hypot(0.012, 0.016)
    assert gaps["gap_low"].iloc[0] == pytest.approx(0.05 - half, abs=1e-14)
    assert gaps["gap_high"].iloc[0] == pytest.approx(0.05 + half, abs=1e-14)
    assert gaps["pair_kind"].iloc[0] == "se"


def test_mixed_pair_uses_wilson_bounds_on_one_side_and_normal_on_the_other():
    frame = pd.DataFrame(
        {
            "name": ["p", "s"],
            "correct": [430, None],
            "total": [500, None],
            "score": [None, 0.80],
            "se": [None, 0.015],
        }
    )
    board = ranks.parse_leaderboard(frame)
    gaps = ranks.adjacent_gaps(board)
    z = z_for_level(0.95)
    la, ua = wilson_interval(430, 500)
    p = 0.86
    expected_low = (p - 0.80) - np.hypot(p - la, z * 0.015)
    expected_high = (p - 0.80) + np.hypot(ua - p, z * 0.015)
    assert gaps["gap_low"].iloc[0] == pytest.approx(expected_low, abs=1e-14)
    assert gaps["gap_high"].iloc[0] == pytest.approx(expected_high, abs=1e-14)
    assert gaps["pair_kind"].iloc[0] == "mixed"
    table = ranks.rank_table(board, draws=500, seed=1).table
    assert "mixes a proportion and an SE row" in table["note"].iloc[0]


def test_tiers_start_at_every_separated_pair():
    assert ranks.tiers_from_separated([False, True, True, False, pd.NA]).tolist() == [1, 1, 2, 3, 3]
    assert ranks.tiers_from_separated([pd.NA]).tolist() == [1]


# --- The calculator's worked example, on the leaderboard we constructed ------------------------------


@pytest.fixture(scope="module")
def calculator_example():
    return ranks.rank_table(ranks.read_leaderboard(CALCULATOR_EXAMPLE))


def test_calculator_example_board_is_eight_systems_on_500_items_from_62_6_to_84_2(
    calculator_example,
):
    t = calculator_example.table
    assert len(t) == 8 and (t["n"] == 500).all()
    assert t["name"].tolist() == [f"model-{c}" for c in "abcdefgh"]
    assert points(t["score"]).tolist() == [84.2, 83.0, 81.6, 78.4, 77.6, 70.8, 70.2, 62.6]


def test_seed001_intervals(calculator_example):
    t = calculator_example.table
    assert points(t[["ci_low", "ci_high"]].iloc[0]).tolist() == [80.7, 87.1]
    width = 100 * (t["ci_high"] - t["ci_low"])
    assert width.between(6, 8.5).all(), width.tolist()


def test_seed001_exactly_two_separated_adjacent_pairs(calculator_example):
    t = calculator_example.table
    assert t["separated"].tolist()[:-1] == [False, False, False, False, True, False, True]
    e, g = t.iloc[4], t.iloc[6]  # model-e over model-f, model-g over model-h
    assert points([e["gap"], e["gap_low"], e["gap_high"]]).tolist() == [6.8, 1.4, 12.2]
    assert points([g["gap"], g["gap_low"], g["gap_high"]]).tolist() == [7.6, 1.7, 13.4]
    # Separated although the two 95% bars overlap (model-e's low end is below model-f's high end).
    assert e["ci_low"] < t["ci_high"].iloc[5]


def test_seed001_top_five_are_one_tier_though_a_versus_d_is_separated(calculator_example):
    t = calculator_example.table
    assert t["tier"].tolist() == [1, 1, 1, 1, 1, 2, 2, 3]
    assert calculator_example.n_tiers == 3
    a_vs_d = ranks.adjacent_gaps(ranks.read_leaderboard(CALCULATOR_EXAMPLE).iloc[[0, 3]])
    assert points(a_vs_d["gap"].iloc[0]) == 5.8
    assert bool(a_vs_d["separated"].iloc[0])


def _exact_p_first(k, n):
    """P(system 0 has the highest Jeffreys draw): integral of f_0(x) * prod_j F_j(x)."""
    a, b = np.asarray(k) + 0.5, np.asarray(n) - np.asarray(k) + 0.5

    def integrand(x):
        return stats.beta.pdf(x, a[0], b[0]) * np.prod(stats.beta.cdf(x, a[1:], b[1:]))

    return integrate.quad(integrand, 0, 1, points=[k[0] / n[0]], limit=200)[0]


def test_seed001_leader_first_in_about_64_percent_with_rank_range_1_to_3(calculator_example):
    t = calculator_example.table
    p = t["p_first"].iloc[0]
    assert round(100 * p) == 64  # at the default seed and draw count
    exact = _exact_p_first(
        [421, 415, 408, 392, 388, 354, 351, 313], [500] * 8
    )  # independent of the sampler
    assert round(100 * exact) == 64
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / DRAWS)
    assert (t["rank_low"].iloc[0], t["rank_high"].iloc[0]) == (1, 3)
    assert calculator_example.headline == (
        "8 systems, 3 tiers; the leader (model-a) is first in 64% of plausible worlds"
    )


# --- Plausible ranks ---------------------------------------------------------------------------


def counted_ranges(ranks_by_world: np.ndarray, level: float) -> pd.DataFrame:
    """The definition itself, by full tabulation: counts[i, r - 1] of worlds giving system i rank r,
    then the smallest r whose cumulative count reaches (1 -/+ level)/2 of the worlds."""
    worlds, k = ranks_by_world.shape
    counts = np.stack([np.bincount(ranks_by_world[:, i] - 1, minlength=k) for i in range(k)])
    cumulative = counts.cumsum(axis=1)
    low = 1 + np.argmax(cumulative >= (1 - level) / 2 * worlds * (1 - 1e-12), axis=1)
    high = 1 + np.argmax(cumulative >= (1 + level) / 2 * worlds * (1 - 1e-12), axis=1)
    return pd.DataFrame({"p_first": counts[:, 0] / worlds, "rank_low": low, "rank_high": high})


def test_ties_share_the_better_rank():
    worlds = np.array([[0.5, 0.5, 0.1], [0.2, 0.9, 0.9]])  # ranks 1, 1, 3 and 3, 1, 1
    summary = ranks.rank_ranges([worlds], 2, level=0.5)
    assert summary["p_first"].tolist() == [0.5, 1.0, 0.5]
    assert summary["rank_low"].tolist() == [1, 1, 1] and summary["rank_high"].tolist() == [3, 1, 3]


def test_rank_ranges_use_inverse_cdf_quantiles():
    # 100 worlds: system 0 ranks 1 in 3, 2 in 94 and 3 in 3 -> central 95% range 1..3, 90% 2..2.
    order = [(0, 1, 2)] * 3 + [(1, 0, 2)] * 91 + [(1, 2, 0)] * 3 + [(2, 0, 1)] * 3
    worlds = np.array([[3.0 - r for r in np.argsort(o)] for o in order])
    wide = ranks.rank_ranges([worlds[:40], worlds[40:]], 100, 0.95)
    assert wide.loc[0, ["rank_low", "rank_high"]].tolist() == [1, 3]
    narrow = ranks.rank_ranges([worlds], 100, 0.90)
    assert narrow.loc[0, ["rank_low", "rank_high"]].tolist() == [2, 2]
    assert wide["p_first"].tolist() == [0.03, 0.94, 0.03]


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_streamed_rank_ranges_equal_a_full_tabulation_for_any_chunking(level):
    rng = np.random.default_rng(4)
    # 1,003 worlds of 40 systems with many ties (scores on a coarse grid).
    worlds = np.round(rng.normal(np.linspace(0.8, 0.6, 40), 0.05, size=(1003, 40)), 2)
    expected = counted_ranges(stats.rankdata(-worlds, axis=1, method="min").astype(int), level)
    for size in (1, 7, 512, 1003):
        chunks = [worlds[i : i + size] for i in range(0, len(worlds), size)]
        pd.testing.assert_frame_equal(ranks.rank_ranges(chunks, len(worlds), level), expected)


def test_rank_ranges_refuse_a_wrong_world_count():
    with pytest.raises(ValueError, match="held 2 worlds, not the 3 announced"):
        ranks.rank_ranges([np.zeros((2, 3))], 3)


def test_jeffreys_draws_reproduce_the_published_jeffreys_intervals():
    # Jeffreys intervals, i.e. Beta(k + 1/2, n - k + 1/2) quantiles (statsmodels' proportion_confint): 5/10 -> (0.2235, 0.7765); 81/263 -> (0.2545, 0.3656).
    board = board_of(correct=[5, 81], total=[10, 263])
    draws = np.vstack(list(ranks.plausible_scores(board, 200_000, np.random.default_rng(0))))
    quantiles = np.quantile(draws, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(quantiles[:, 0], [0.2235, 0.7765], atol=0.004)
    np.testing.assert_allclose(quantiles[:, 1], [0.2545, 0.3656], atol=0.002)


def test_se_rows_are_drawn_from_the_normal_law():
    board = board_of(score=[0.6], se=[0.02])
    draws = np.vstack(list(ranks.plausible_scores(board, 100_000, np.random.default_rng(1))))
    assert draws.mean() == pytest.approx(0.6, abs=4 * 0.02 / np.sqrt(1e5))
    assert draws.std() == pytest.approx(0.02, rel=0.01)


def test_same_seed_same_table_and_other_seed_within_monte_carlo_error():
    board = ranks.read_leaderboard(CALCULATOR_EXAMPLE)
    first = ranks.rank_table(board, seed=11)
    again = ranks.rank_table(board, seed=11)
    pd.testing.assert_frame_equal(first.table, again.table)
    assert ranks.report_json(first) == ranks.report_json(again)
    other = ranks.rank_table(board, seed=12)
    p1, p2 = first.table["p_first"].to_numpy(), other.table["p_first"].to_numpy()
    assert not np.array_equal(p1, p2)
    pooled = (p1 + p2) / 2
    mc_se = np.sqrt(2 * pooled * (1 - pooled) / DRAWS)  # SE of a difference of two runs
    assert (np.abs(p1 - p2) <= 4 * mc_se + 1e-12).all()
    # Everything that does not depend on the draws is identical.
    fixed = ["score", "ci_low", "ci_high", "gap", "gap_low", "gap_high", "separated", "tier"]
    pd.testing.assert_frame_equal(first.table[fixed], other.table[fixed])


def test_nominal_order_is_score_descending_with_ties_in_input_order():
    board = board_of(
        name=["low", "tie-1", "high", "tie-2"], correct=[10, 50, 90, 50], total=[100] * 4
    )
    t = ranks.rank_table(board, draws=200, seed=0).table
    assert t["name"].tolist() == ["high", "tie-1", "tie-2", "low"]
    assert t["gap"].iloc[1] == 0 and not t["separated"].iloc[1]
    assert t["position"].tolist() == [1, 2, 3, 4]


def test_single_system():
    report = ranks.rank_table(board_of(correct=[3], total=[4]), draws=100, seed=0)
    assert report.table["p_first"].tolist() == [1.0]
    assert (
        report.headline == "1 system, 1 tier; the leader (s1) is first in 100% of plausible worlds"
    )


def test_bad_settings_are_refused():
    board = board_of(correct=[3, 2], total=[4, 4])
    with pytest.raises(ValueError, match="level"):
        ranks.rank_table(board, level=95)
    with pytest.raises(ValueError, match="draws"):
        ranks.rank_table(board, draws=0)


# --- Reading leaderboards ----------------------------------------------------------------------


def test_percentages_proportions_percent_signs_and_score_n_give_the_same_table(tmp_path):
    reference = ranks.rank_table(ranks.read_leaderboard(CALCULATOR_EXAMPLE), draws=1000).table
    counts = pd.read_csv(CALCULATOR_EXAMPLE)
    variants = {
        "percent.csv": counts.assign(score=100 * counts.correct / 500, n=500)[
            ["name", "score", "n"]
        ],
        "proportion.tsv": counts.assign(score=counts.correct / 500, n=500)[["name", "score", "n"]],
        "signs.csv": counts.assign(score=[f"{100 * c / 500:.1f}%" for c in counts.correct], n=500)[
            ["name", "score", "n"]
        ],
    }
    for file, frame in variants.items():
        path = tmp_path / file
        frame.to_csv(path, index=False, sep="\t" if file.endswith(".tsv") else ",")
        table = ranks.rank_table(ranks.read_leaderboard(path), draws=1000).table
        assert (table["form"] == "proportion").all()
        assert (table["note"] == "").all(), "84.2% of 500 is 421 exactly: no fractional note"
        cols = ["name", "score", "ci_low", "ci_high", "gap_low", "gap_high", "tier", "p_first"]
        pd.testing.assert_frame_equal(table[cols], reference[cols], check_exact=False, rtol=1e-12)


def test_fractional_counts_are_kept_and_noted():
    board = board_of(score=[84.17, 70.0], n=[500, 300])
    assert board["successes"].iloc[0] == pytest.approx(420.85)
    assert "fractional count 420.85" in board["note"].iloc[0]
    assert board["note"].iloc[1] == ""
    low, high = ranks.score_intervals(board)
    ref = wilson_interval(420.85, 500)
    assert (low[0], high[0]) == (pytest.approx(ref[0], abs=1e-15), pytest.approx(ref[1], abs=1e-15))
    report = ranks.rank_table(board, draws=200, seed=0)
    assert "fractional count" in report.table["note"].iloc[0]


def test_mixed_forms_fixture():
    board = ranks.read_leaderboard(DATA / "ranks_mixed.csv")
    assert dict(zip(board["name"], board["form"], strict=True)) == {
        "alpha": "counts",
        "beta": "proportion",
        "gamma": "se",
        "delta": "counts",
    }
    report = ranks.rank_table(board, draws=1000, seed=3)
    t = report.table
    assert t["name"].tolist() == ["alpha", "beta", "gamma", "delta"]
    assert list(t.columns) == ranks.RANK_COLUMNS
    assert (
        "mixes a proportion and an SE row" in t["note"].iloc[1]
    )  # beta (proportion) -> gamma (se)
    assert "mixes a proportion and an SE row" in t["note"].iloc[2]  # gamma (se) -> delta (counts)
    assert t["note"].iloc[0] == "" and t["note"].iloc[3] == ""
    assert np.isnan(t["n"].iloc[2]) and t["n"].iloc[1] == 1000


@pytest.mark.parametrize(
    "frame,message",
    [
        (
            dict(name=["a", "b"], score=[0.8, -0.1], n=[100, 100]),
            r"row 2 \(b\): score -0.1 is outside \[0, 1\]",
        ),
        (
            dict(name=["a", "b"], score=[80, 104], n=[100, 100]),
            r"row 2 \(b\): score 104 is outside \[0, 100\]",
        ),
        (dict(name=["a", "b"], score=[0.8, 0.7], n=[100, 0]), r"row 2 \(b\): n must be > 0, got 0"),
        (
            dict(name=["a", "b"], correct=[80, 120], total=[100, 100]),
            r"row 2 \(b\): correct 120 exceeds total 100",
        ),
        (
            dict(name=["a", "b"], correct=[80, 20], total=[100, -5]),
            r"row 2 \(b\): total must be > 0",
        ),
        (
            dict(name=["a", "b"], correct=[80, None], total=[100, 100]),
            r"row 2 \(b\): missing value: total is given but correct is empty",
        ),
        (
            dict(name=["a", "b"], score=[0.8, 0.7], n=[100, None]),
            r"row 2 \(b\): missing value: score is given but neither n nor se",
        ),
        (
            dict(name=["a", "a"], correct=[80, 70], total=[100, 100]),
            r"row 2 \(a\): duplicate name, also on row 1",
        ),
        (dict(name=["a", None], correct=[80, 70], total=[100, 100]), r"row 2: missing name"),
        (dict(name=["a", "b"], score=[0.8, 0.7], se=[0.01, 0]), r"row 2 \(b\): se must be > 0"),
        (
            dict(name=["a", "b"], score=[0.8, "abc"], n=[100, 100]),
            r"row 2 \(b\): score 'abc' is not a number",
        ),
        (
            dict(name=["a"], score=[0.8], n=[100], se=[0.01]),
            r"row 1 \(a\): fills both score\+n and score\+se",
        ),
        (dict(name=["a"], score=[0.8], accuracy=[0.8]), r"unknown column\(s\) 'accuracy'"),
        (dict(name=["a"], score=[0.8]), r"do not make a known combination"),
        (dict(name=["a"], correct=[8], n=[10]), r"do not make a known combination"),
        (dict(label=["a"], correct=[8], total=[10]), r"no name column"),
    ],
)
def test_bad_rows_are_refused_naming_the_row(frame, message):
    with pytest.raises(InputError, match=message):
        ranks.parse_leaderboard(pd.DataFrame(frame), source="board.csv")


def test_read_errors_name_the_file(tmp_path):
    with pytest.raises(InputError, match="missing.csv: cannot read file"):
        ranks.read_leaderboard(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty.csv: the file is empty"):
        ranks.read_leaderboard(empty)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("name,correct,total\na,1,2\nb,1\n")
    with pytest.raises(InputError, match="row 2 has 2 fields but the header has 3"):
        ranks.read_leaderboard(ragged)
    header_only = tmp_path / "header.csv"
    header_only.write_text("name,correct,total\n")
    with pytest.raises(InputError, match="no rows"):
        ranks.read_leaderboard(header_only)


def test_delimiters_are_sniffed(tmp_path):
    for sep in (",", "\t", ";", "|"):
        path = tmp_path / "board.txt"
        path.write_text(f"Name{sep}Correct{sep}Total\nx{sep}8{sep}10\ny{sep}5{sep}10\n")
        board = ranks.read_leaderboard(path)
        assert board["name"].tolist() == ["x", "y"] and board["successes"].tolist() == [8, 5]


# --- Standard errors on another scale than their scores, or in other units -----------------------


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (
            "a,0.84,3.1\nb,0.80,2.5\n",
            "row 1 (a): se 3.1 is in points but score 0.84 is a proportion; give both on one "
            "scale (se 0.031, or score 84)",
        ),
        (
            "a,0.84,0.02\nb,0.80,0.7\n",
            "row 2 (b): se 0.7 is in points but score 0.8 is a proportion; give both on one "
            "scale (se 0.007, or score 80)",
        ),
        (
            "a,84,60\nb,80,2.5\n",
            "row 1 (a): se 60 exceeds 50 points, the largest standard error of an accuracy",
        ),
        (
            "a,0.84,51\nb,0.80,0.02\n",
            "row 1 (a): se 51 exceeds 0.5, the largest standard error of an accuracy",
        ),
    ],
)
def test_ranks_refuses_an_se_on_another_scale_than_the_score(tmp_path, capsys, rows, problem):
    board = tmp_path / "board.csv"
    board.write_text("name,score,se\n" + rows)
    before = board.read_bytes()
    assert cli.main(["ranks", str(board)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"evalbars ranks: error: {board}: {problem}\n"
    assert captured.out == "" and board.read_bytes() == before


def test_ranks_accepts_ses_on_the_scores_scale():
    board = ranks.parse_leaderboard(
        pd.DataFrame({"name": ["a", "b"], "score": ["84%", "80%"], "se": ["0.7", "1.2"]})
    )
    assert board["se"].tolist() == [0.7 / 100, 1.2 / 100]
    table = ranks.rank_table(board, draws=100, seed=1).table
    assert (table["ci_low"] > 0.75).all() and (table["ci_high"] < 0.9).all()


def test_rank_table_refuses_fewer_draws_than_the_workflow_allows():
    board = ranks.parse_leaderboard(
        pd.DataFrame({"name": ["a", "b"], "correct": [80, 70], "total": [100, 100]})
    )
    with pytest.raises(ValueError) as info:
        ranks.rank_table(board, draws=99)
    assert str(info.value) == (
        "the number of draws must be a whole number of at least 100 (the rank range and p_first "
        "are shares of the draws), got 99"
    )


def _board(rows: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO("name,score,se\n" + rows), dtype=object)


def test_a_proportions_se_beside_a_points_score_is_refused_by_the_questions_it_implies():
    # 0.012 read as points on 65.3 implies 0.653 * 0.347 / 0.00012^2 = 15.7 million questions
    with pytest.raises(InputError) as raised:
        parse_leaderboard(_board("a,65.3,0.012\nb,61.0,0.013\n"), source="board.csv")
    assert str(raised.value) == (
        "board.csv: row 1 (a): se 0.012 on a score of 65.3 points implies 15.7 million questions "
        "(an accuracy's se is sqrt(p(1-p)/n)); if se is a proportion, multiply it by 100 (se "
        "1.2) or pass --se-units proportion; if it is in points, pass --se-units points"
    )
    assert 0.653 * 0.347 / 0.00012**2 == pytest.approx(15.74e6, rel=1e-3)


@pytest.mark.parametrize(
    ("rows", "units", "se"),
    [
        # a points se of a plain accuracy: 0.5 points on 65.3 is 9,066 questions, 0.3 is 25,184
        ("a,65.3,0.5\nb,61.0,0.3\n", "auto", [0.005, 0.003]),
        # the same board as above, its units stated: a proportion...
        ("a,65.3,0.012\nb,61.0,0.013\n", "proportion", [0.012, 0.013]),
        # ...or a tiny-SE metric in points (partial credit over many samples), as stated
        ("a,65.3,0.012\nb,61.0,0.013\n", "points", [0.00012, 0.00013]),
        # tiny SEs on the proportion scale are never judged by the bound
        ("a,0.653,0.0001\nb,0.610,0.00012\n", "auto", [0.0001, 0.00012]),
        # a points se beside proportion scores, stated
        ("a,0.84,3.1\nb,0.80,2.5\n", "points", [0.031, 0.025]),
        # at 0 or 100 points an accuracy's se is 0: no bound to judge by
        ("a,100,0.001\nb,61.0,0.3\n", "auto", [0.00001, 0.003]),
    ],
)
def test_legitimate_standard_errors_are_read_in_their_units(rows, units, se):
    board = parse_leaderboard(_board(rows), source="board.csv", se_units=units)
    assert board["se"].tolist() == pytest.approx(se, rel=1e-12)


def test_the_bound_sits_at_a_million_questions():
    # 65.3 points: se = 100 * sqrt(0.653 * 0.347 / n); just under and over a million questions
    at = 100 * (0.653 * 0.347 / 1e6) ** 0.5
    parse_leaderboard(_board(f"a,65.3,{at * 1.001!r}\nb,61.0,0.3\n"))
    with pytest.raises(InputError, match=r"row 1 \(a\): se .* implies 1.0 million questions"):
        parse_leaderboard(_board(f"a,65.3,{at * 0.999!r}\nb,61.0,0.3\n"))


def test_stated_units_keep_the_largest_se_of_an_accuracy():
    with pytest.raises(InputError) as raised:
        parse_leaderboard(_board("a,65.3,0.6\nb,61.0,0.3\n"), source="b.csv", se_units="proportion")
    assert str(raised.value) == (
        "b.csv: row 1 (a): se 0.6 exceeds 0.5, the largest standard error of an accuracy"
    )


def test_ranks_takes_the_se_units_on_the_command_line(tmp_path, capsys):
    board = tmp_path / "board.csv"
    board.write_text("name,score,se\na,65.3,0.012\nb,61.0,0.013\n")
    before = board.read_bytes()
    assert main(["ranks", str(board)]) == 1
    assert last_error(capsys).startswith(
        f"evalbars ranks: error: {board}: row 1 (a): se 0.012 on a score of 65.3 points implies "
        "15.7 million questions"
    )
    assert main(["ranks", str(board), "--se-units", "proportion", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["systems"]
    assert [round(r["ci_high"] - r["ci_low"], 6) for r in rows] == [
        round(2 * 1.959963984540054 * se, 6) for se in (0.012, 0.013)
    ]
    assert board.read_bytes() == before


def test_a_control_character_in_a_leaderboard_name_is_refused(tmp_path, capsys):
    board = tmp_path / "board.csv"
    board.write_bytes(b"name,correct,total\nfake\x00strong,50,100\nweak,40,100\n")
    assert main(["ranks", str(board)]) == 1
    assert last_error(capsys) == (
        f"evalbars ranks: error: {board}: row 1: name 'fake\\x00strong' holds the control "
        "character U+0000 (at character 5); names must be printable text"
    )


def test_a_tie_at_the_top_of_ranks_is_headlined_as_a_tie(tmp_path, capsys):
    board = tmp_path / "tie.csv"
    board.write_text("name,score,se\nA,50,1\nB,50,1\nC,40,1\n")
    assert main(["ranks", str(board), "--format", "json"]) == 0
    headline = json.loads(capsys.readouterr().out)["headline"]
    assert headline.startswith("3 systems, 2 tiers; A and B tie for first (first in ")
    assert "the leader" not in headline


# --- Paired reading ----------------------------------------------------------------------------


def _correlated_items(seed=11, questions=800):
    """Four models sharing most answers (correlation 0.7-0.9), gaps of about two points."""
    rng = np.random.default_rng(seed)
    categories = np.repeat(np.array(["c1", "c2", "c3", "c4"]), questions // 4)
    easy = rng.random(questions) < 0.55
    gain = np.array([0.16, 0.10, 0.04, 0.0])  # chance to solve a question the others miss
    u = rng.random((questions, 4))
    scores = np.where(easy[:, None], u > 0.02, u < gain[None, :]).astype(float)
    return WideScores(scores, ["m0", "m1", "m2", "m3"], np.arange(questions), categories)


def test_stratified_bootstrap_keeps_every_category_size():
    wide = _correlated_items(questions=400)
    indicators = (wide.categories[:, None] == np.array(["c1", "c2", "c3", "c4"])).astype(float)
    rng = np.random.default_rng(0)
    means = np.vstack(list(ranks.bootstrap_accuracies(indicators, wide.categories, 1200, rng)))
    assert means.shape == (1200, 4)
    np.testing.assert_array_equal(means, 0.25)  # exactly 100 of 400 questions per category, always
    loose = np.vstack(list(ranks.bootstrap_accuracies(indicators, None, 1200, rng)))
    assert loose.std(axis=0).min() > 0.01


def test_bootstrap_spread_of_a_difference_matches_the_paired_standard_error():
    wide = _correlated_items()
    pair = pairwise_table(wide).set_index(["model_a", "model_b"]).loc[("m0", "m1")]
    means = np.vstack(
        list(ranks.bootstrap_accuracies(wide.scores, None, 20_000, np.random.default_rng(5)))
    )
    diff = means[:, 0] - means[:, 1]
    assert diff.mean() == pytest.approx(pair["diff"], abs=4 * pair["se_paired"] / np.sqrt(2e4))
    # SD of a bootstrap SD over 20,000 replicates is about 0.5% of it.
    assert diff.std() == pytest.approx(pair["se_paired"], rel=0.03)


def test_pairing_sharpens_the_ranking_of_correlated_models():
    wide = _correlated_items()
    table, reports = ranks.ranks_readings(wide, draws=4000, replicates=4000, seed=1)
    unpaired, paired = (
        table[table["reading"] == r].reset_index(drop=True) for r in ("unpaired", "paired")
    )
    assert unpaired["name"].tolist() == paired["name"].tolist() == ["m0", "m1", "m2", "m3"]
    # Same scores and Wilson intervals; sharper gaps, more tiers, narrower rank ranges, surer leader.
    pd.testing.assert_frame_equal(
        unpaired[["score", "ci_low", "ci_high"]], paired[["score", "ci_low", "ci_high"]]
    )
    width_u = (unpaired["gap_high"] - unpaired["gap_low"]).iloc[:-1]
    width_p = (paired["gap_high"] - paired["gap_low"]).iloc[:-1]
    assert (width_p < 0.6 * width_u).all()
    assert reports[0].n_tiers == 1 and reports[1].n_tiers >= 3
    range_u = (unpaired["rank_high"] - unpaired["rank_low"]).sum()
    range_p = (paired["rank_high"] - paired["rank_low"]).sum()
    assert range_p < range_u
    assert paired["p_first"].iloc[0] > unpaired["p_first"].iloc[0] + 0.05


def test_paired_gap_is_the_paired_z_interval():
    wide = _correlated_items()
    report = ranks.paired_rank_table(wide, replicates=200, seed=0)
    d = wide.scores[:, 0] - wide.scores[:, 1]
    se = d.std(ddof=0) / np.sqrt(len(d))  # Miller (2024) Eq. 7, population variance
    row = report.table.iloc[0]
    assert row["gap"] == pytest.approx(d.mean(), abs=1e-15)
    assert row["gap_low"] == pytest.approx(d.mean() - z_for_level(0.95) * se, abs=1e-12)
    assert row["gap_high"] == pytest.approx(d.mean() + z_for_level(0.95) * se, abs=1e-12)


def test_paired_reading_is_deterministic_and_uses_shared_questions_only():
    wide = _correlated_items(questions=400)
    scores = wide.scores.copy()
    scores[:10, 2] = np.nan  # ten questions model m2 did not answer
    holey = WideScores(scores, wide.models, wide.question_ids, wide.categories)
    a = ranks.paired_rank_table(holey, replicates=1000, seed=9)
    b = ranks.paired_rank_table(holey, replicates=1000, seed=9)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert "390 shared questions" in a.method and "10 questions not answered" in a.method


def test_unpaired_reading_of_item_data_equals_the_calculator_on_its_counts(tmp_path):
    wide = _correlated_items(questions=400)
    table, _ = ranks.ranks_readings(wide, draws=3000, replicates=500, seed=21)
    counts = pd.DataFrame(
        {"name": wide.models, "correct": wide.scores.sum(axis=0).astype(int), "total": 400}
    )
    counts.to_csv(tmp_path / "counts.csv", index=False)
    calculator = ranks.rank_table(
        ranks.read_leaderboard(tmp_path / "counts.csv"), draws=3000, seed=21
    )
    unpaired = table[table["reading"] == "unpaired"].drop(columns="reading").reset_index(drop=True)
    pd.testing.assert_frame_equal(unpaired, calculator.table)


def test_rank_table_csv_round_trip(tmp_path):
    table, _ = ranks.ranks_readings(
        _correlated_items(questions=200), draws=300, replicates=300, seed=2
    )
    table.to_csv(tmp_path / "ranks.csv", index=False)
    back = ranks.read_rank_table(tmp_path / "ranks.csv")
    pd.testing.assert_frame_equal(back, table, check_dtype=False)
    assert back["separated"].dtype == "boolean"


def test_markdown_renderings_show_both_readings():
    table, reports = ranks.ranks_readings(_correlated_items(), draws=500, replicates=500, seed=1)
    text = ranks.readings_markdown(table, reports)
    assert text.startswith("- **unpaired**: 4 systems, 1 tier;")
    header = [cell.strip() for cell in text.splitlines()[3].strip("|").split("|")]
    assert header[:3] == ["#", "model", "score %"]
    assert "tier unpaired / paired" in header and "P(first) unpaired / paired" in header
    assert "Table: Scores with 95% Wilson intervals" in text
    single = ranks.report_markdown(reports[0])
    assert single.splitlines()[0] == reports[0].headline


def test_figures_state_the_finding_and_save_deterministically(tmp_path):
    table, _ = ranks.ranks_readings(_correlated_items(), draws=500, replicates=500, seed=1)
    forest = forest_figure(table)
    assert forest._suptitle.get_text() == "4 models form 1 tier unpaired but 3 tiers paired"
    same = forest_figure(table[table["reading"] == "paired"].assign(reading="unpaired"))
    assert same._suptitle.get_text() == "4 models form 3 tiers"
    rng_fig = rank_range_figure(table)
    assert rng_fig._suptitle.get_text().startswith("m0 is first in")
    for fig in (forest, same, rng_fig):
        plt.close(fig)
    for name in ("a", "b"):
        save_figure(forest_figure(table), tmp_path / f"forest_{name}.png")
        save_figure(rank_range_figure(table), tmp_path / f"range_{name}.png")
    for stem in ("forest", "range"):
        for ext in ("png", "svg"):
            assert (tmp_path / f"{stem}_a.{ext}").read_bytes() == (
                tmp_path / f"{stem}_b.{ext}"
            ).read_bytes()
    single = rank_range_figure(
        ranks.rank_table(ranks.read_leaderboard(CALCULATOR_EXAMPLE), draws=500).table
    )
    assert single._suptitle.get_text().startswith("model-a is first in")


def test_figures_label_each_reading_when_the_orders_differ():
    # Incomplete data: "a" answers only the first 60 questions (50% right) and leads the
    # unpaired reading over "b" (36% of all 100); on the 60 questions every model answered "b"
    # scores 53%, so it leads the paired reading.
    n = 100
    i = np.arange(n)
    shared = i < 40
    a = np.where(shared, i % 4 == 0, True).astype(float)
    b = np.where(shared, i % 4 != 0, i % 10 == 0).astype(float)
    c = (i % 5 == 0).astype(float)
    a[60:] = np.nan  # "a" never saw the last 40 questions
    wide = WideScores(
        np.column_stack([a, b, c]), ["a", "b", "c"], np.arange(n), np.array(["x", "y"] * 50)
    )
    table, _ = ranks.ranks_readings(wide, draws=500, replicates=500, seed=1)
    order = {r: t.sort_values("position")["name"].tolist() for r, t in table.groupby("reading")}
    assert order["unpaired"][0] == "a" and order["paired"][0] == "b"
    forest = forest_figure(table)
    labels = [[tick.get_text() for tick in ax.get_yticklabels()] for ax in forest.axes]
    assert labels == [order["unpaired"], order["paired"]]
    title = rank_range_figure(table)._suptitle.get_text()
    assert title.startswith("unpaired: a first in") and "paired: b first in" in title


# --- Tiers that do not chain -------------------------------------------------------------------


def newcombe_separated(board: pd.DataFrame, a: int, b: int) -> bool:
    """Is system a separated from system b: Newcombe's interval by statsmodels, independently."""
    low, _ = confint_proportions_2indep(
        board["successes"][a], board["n"][a], board["successes"][b], board["n"][b], method="newcomb"
    )
    return low > 0


def test_anchored_tiers_stop_the_chain_on_a_long_leaderboard():
    # 60 systems 1 point apart on 300 questions: no neighbour is separated, so the adjacent-gap
    # tiers chain the 90% leader to the 31% last system; anchored tiers do not.
    correct = np.round(np.linspace(0.90, 0.31, 60) * 300).astype(int)
    board = board_of(correct=correct, total=[300] * 60)
    table = ranks.rank_table(board, draws=200, seed=0).table
    assert table["tier"].max() == 1
    tiers = table["tier_anchored"].to_numpy()
    assert tiers.max() > 5 and (np.diff(tiers) >= 0).all()
    # The definition, checked pair by pair with statsmodels' Newcombe interval: every system is
    # unseparated from its tier's top, and each tier's top is separated from the previous top.
    ordered = ranks.parse_leaderboard(table.rename(columns={"n": "n"})[["name", "score", "n"]])
    tops = [int(np.flatnonzero(tiers == t)[0]) for t in range(1, tiers.max() + 1)]
    for t, top in enumerate(tops):
        for member in np.flatnonzero(tiers == t + 1):
            assert member == top or not newcombe_separated(ordered, top, member)
        if t:
            previous = tops[t - 1]
            assert newcombe_separated(ordered, previous, top)
            assert not any(
                newcombe_separated(ordered, previous, m) for m in range(previous + 1, top)
            )


def test_anchored_and_adjacent_tiers_agree_on_a_short_clear_board():
    t = ranks.rank_table(ranks.read_leaderboard(CALCULATOR_EXAMPLE), draws=500).table
    # The worked example's three adjacent-gap tiers, and anchored tiers that split no further
    # than the data allow (each tier's members unseparated from its top).
    assert t["tier"].tolist() == [1, 1, 1, 1, 1, 2, 2, 3]
    assert t["tier_anchored"].max() >= t["tier"].max()


def test_paired_anchored_tiers_use_the_paired_interval():
    wide = _correlated_items()
    report = ranks.paired_rank_table(wide, replicates=200, seed=0)
    table = report.table
    order = table["name"].tolist()
    pairs = pairwise_table(wide).set_index(["model_a", "model_b"])
    z = z_for_level(0.95)
    tiers = table["tier_anchored"].to_numpy()
    for member, tier in enumerate(tiers):
        top = int(np.flatnonzero(tiers == tier)[0])
        if member != top:
            row = pairs.loc[(order[top], order[member])]
            assert row["diff"] - z * row["se_paired"] <= 0


def test_large_leaderboards_draw_the_top_systems_and_an_overview_of_all():
    rng = np.random.default_rng(12)
    truth = np.linspace(0.8, 0.3, 60)
    scores = (rng.random((400, 60)) < truth).astype(float)
    models = [f"m{i:02d}" for i in range(60)]
    wide = WideScores(scores, models, np.arange(400), np.array(["x", "y"] * 200))
    table, _ = ranks.ranks_readings(wide, draws=300, replicates=300, seed=3)
    order = table[table["reading"] == "unpaired"].sort_values("position")["name"].tolist()
    forest = forest_figure(table, max_systems=25)
    labels = [tick.get_text() for tick in forest.axes[0].get_yticklabels()]
    assert labels == order[:25]
    assert "(top 25 of 60 shown)" in forest._suptitle.get_text()
    ranges = rank_range_figure(table, max_systems=25)
    assert [tick.get_text() for tick in ranges.axes[0].get_yticklabels()] == order[:25]
    overview = rank_overview_figure(table)
    # Every system is one dot per reading, at its score and the width of its rank range.
    widths = {
        reading: (t["rank_high"] - t["rank_low"] + 1).to_numpy()
        for reading, t in table.groupby("reading", sort=False)
    }
    axis = overview.axes[0]
    assert [line.get_label().split(" ")[0] for line in axis.lines] == ["unpaired", "paired"]
    for line in axis.lines:
        reading = line.get_label().split(" ")[0]
        assert len(line.get_xdata()) == 60
        np.testing.assert_array_equal(line.get_ydata(), widths[reading])
    medians = {r: float(np.median(w)) for r, w in widths.items()}
    title = axis.get_title(loc="left")
    assert title == (
        f"60 systems: a typical rank range spans {medians['unpaired']:g} "
        f"(unpaired) vs {medians['paired']:g} (paired)"
    )
    for fig in (forest, ranges, overview):
        plt.close(fig)


def test_bootstrap_numbers_do_not_depend_on_the_chunk_size():
    # The same seed gives the same replicates whether they are multiplied 1,024, 300 or 7 at a
    # time (count matrices drawn DRAW_CHUNK rows at a time within a chunk), in float32 for 0/1
    # scores or float64 otherwise.
    wide = _correlated_items(questions=400)
    for scores in (wide.scores, wide.scores * 0.5):
        runs = [
            np.vstack(
                list(
                    ranks.bootstrap_accuracies(
                        scores, wide.categories, 1100, np.random.default_rng(3), chunk=chunk
                    )
                )
            )
            for chunk in (1024, 300, 7)
        ]
        for run in runs[1:]:
            np.testing.assert_array_equal(run, runs[0])
        assert runs[0].shape == (1100, 4)


def _integers_counts(rng, starts, ends, replicates):
    """The bootstrap counts as numpy draws them: ``Generator.integers`` then ``bincount``."""
    n = starts.size
    picks = rng.integers(starts, ends, size=(replicates, n)) + np.arange(replicates)[:, None] * n
    return np.bincount(picks.ravel(), minlength=replicates * n).reshape(replicates, n)


@pytest.mark.parametrize(
    ("sizes", "replicates", "spare"),
    [
        ([3, 1, 5, 1, 1, 7], 37, False),  # strata of one question draw nothing
        ([1], 5, True),
        ([2, 2, 2], 1000, True),
        ([859] * 13 + [865], 30, False),  # the size of MMLU-Pro at K = 1,000
        ([5, 9], 70_000, False),  # many blocks of rows
    ],
)
def test_bulk_bootstrap_counts_are_numpys_draws(sizes, replicates, spare):
    # The counts drawn in bulk are those of Generator.integers, and the generator is left in
    # the same state (a half-used 64-bit word included: `spare` starts with one).
    sizes = np.array(sizes)
    ends = np.cumsum(sizes).repeat(sizes)
    starts = ends - sizes.repeat(sizes)
    numpy_rng, bulk_rng = np.random.default_rng(11), np.random.default_rng(11)
    if spare:
        numpy_rng.integers(0, 3), bulk_rng.integers(0, 3)
    expected = _integers_counts(numpy_rng, starts, ends, replicates)
    counts = np.empty(expected.shape, dtype=np.float32)
    ranks.paired._bootstrap_counts(bulk_rng, starts, ends, counts)
    np.testing.assert_array_equal(counts, expected)
    assert bulk_rng.bit_generator.state["has_uint32"] == numpy_rng.bit_generator.state["has_uint32"]
    assert bulk_rng.integers(0, 2**40, 8).tolist() == numpy_rng.integers(0, 2**40, 8).tolist()


@pytest.mark.parametrize("bit_generator", [np.random.PCG64, np.random.PCG64DXSM])
@pytest.mark.parametrize("spare", [False, True])
def test_bulk_bounded_draws_redraw_as_numpy_does(spare, bit_generator):
    # Bounds just above 2**31 reject almost half the words (2**32 mod b is about b): every
    # redraw must take the next word and shift every later draw, as Generator.integers does.
    bounds = np.tile(np.array([2**31 + 1, 2**32, 3, 2**31 + 5, 2**32 - 1], np.uint64), 2000)
    numpy_rng = np.random.Generator(bit_generator(7))
    bulk_rng = np.random.Generator(bit_generator(7))
    if spare:
        numpy_rng.integers(0, 3), bulk_rng.integers(0, 3)
    expected = numpy_rng.integers(0, bounds)
    words = ranks.paired._Words(bulk_rng.bit_generator)
    drawn = ranks.paired._bounded_draws(words, bounds, (2**32 - bounds) % bounds)
    words.close()
    np.testing.assert_array_equal(drawn, expected)
    assert bulk_rng.random() == numpy_rng.random()


@pytest.mark.parametrize("block_cells", [None, 64])
def test_one_sample_leaderboard_is_the_accuracy_table_s(monkeypatch, block_cells):
    # With one sample per cell the counts are summed directly; given the same cells as
    # explicit sample counts, accuracy_table computes them: the two boards are identical,
    # partial credit and unanswered questions included, in one block or many.
    if block_cells is not None:
        monkeypatch.setattr(blocks, "BLOCK_CELLS", block_cells)
    rng = np.random.default_rng(4)
    scores = np.round(rng.random((300, 7)) * 4) / 4 * 0.9 + rng.random((300, 7)) * 1e-3
    scores[rng.random(scores.shape) < 0.1] = np.nan
    scores[:, 3] = scores[:, 5]  # a tie, ordered by name
    wide = WideScores(
        scores,
        [f"m{i}" for i in (3, 1, 4, 0, 5, 9, 2)],
        np.arange(300),
        np.repeat(["a", "b", "c"], 100),
    )
    counted = dataclasses.replace(wide, samples=np.isfinite(scores).astype(int))
    direct = ranks.leaderboard_from_wide(wide)
    pd.testing.assert_frame_equal(direct, ranks.leaderboard_from_wide(counted), check_exact=True)
    binary = dataclasses.replace(wide, scores=np.where(np.isnan(scores), np.nan, scores > 0.5))
    pd.testing.assert_frame_equal(
        ranks.leaderboard_from_wide(binary),
        ranks.leaderboard_from_wide(dataclasses.replace(counted, scores=binary.scores)),
        check_exact=True,
    )
