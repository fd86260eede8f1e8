"""Data that leave nothing to estimate from: models that answer every question alike, one or
two questions, a paired SE of zero. Each reading says so (a note, no test, an exact bound)
rather than deciding from a zero-width interval.

The workflow run on models alike on every question: tests/workflow/test_workflow_inputs.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from evalbars.cli import main
from evalbars.data.scores import WideScores
from evalbars.readings import category_pairwise, claims, gate, ranks
from evalbars.readings.claims import evaluate_claims as _evaluate_claims
from evalbars.readings.leaderboard import letters, stability
from evalbars.readings.leaderboard import table as verdicts
from evalbars.stats import mixed
from evalbars.stats.logistic import contrasts as logistic

from ...helpers import ALIKE_WHY, alike_wide, long_table, reading_labels, wide_of


def evaluate_claims(*args, **kwargs):
    """The claims table with a reading and its adjustment in one label (tests.helpers)."""
    return reading_labels(_evaluate_claims(*args, **kwargs))


# --- Models that answer every question alike -----------------------------------------------------


def test_mixed_models_that_cannot_be_fitted_are_named_and_their_contrasts_left_empty():
    wide = alike_wide()
    assert mixed.fit_obstacle(wide, "category") is None
    assert mixed.fit_obstacle(wide, "category_question") == ALIKE_WHY
    # one model differing on one question is enough
    varied = WideScores(wide.scores.copy(), wide.models, wide.question_ids, wide.categories)
    varied.scores[5, 2] = 1 - varied.scores[5, 2]
    assert mixed.fit_obstacle(varied, "category_question") is None
    # repeated samples that differ within a cell are variation too
    epochs = WideScores(
        wide.scores,
        wide.models,
        wide.question_ids,
        wide.categories,
        samples=np.full(wide.scores.shape, 2),
        within_ss=np.eye(60, 3) / 2,
    )
    assert mixed.fit_obstacle(epochs, "category_question") is None
    empty = mixed.unfitted_contrasts(wide, "category_question")
    fitted = mixed.lmm_contrasts(mixed.fit_lmm(wide, "category"))
    assert list(empty.columns) == list(fitted.columns)
    assert empty[["model_a", "model_b"]].equals(fitted[["model_a", "model_b"]])
    assert empty.drop(columns=["model_spec", "model_a", "model_b"]).isna().all().all()


def test_the_interaction_test_without_within_question_variation_is_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = category_pairwise.interaction_test(alike_wide())
    assert np.isnan(result["f"]) and np.isnan(result["f_p"]) and np.isnan(result["lrt"])
    assert (result["f_df1"], result["f_df2"]) == (2, 116)


def test_logistic_contrasts_with_zero_se_are_no_test():
    # GEE on identical models: SE 0 and a difference of rounding noise gave z = inf, "a > b".
    result = logistic._differences(
        np.array([0.5 + 1e-16, 0.5]),
        np.eye(2),
        np.zeros((2, 2)),
        np.array([0]),
        np.array([1]),
        "gee",
        0.05,
    )
    assert np.isnan(result["gee_z"]).all() and np.isnan(result["gee_p_holm"]).all()


# --- The release gate never decides from a zero-width interval -----------------------------------


def test_the_gate_is_inconclusive_on_one_or_two_questions(tmp_path, capsys):
    one = long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]})
    assert main(["compare", str(one), "--baseline", "C", "--candidate", "A"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("**inconclusive**: the SE is 0 (the same difference on every shared")
    assert "| -100.0 | none (SE 0) |" in out
    two = long_table(tmp_path / "two.csv", {"A": [0, 0], "B": [1, 1]})
    s = gate.compare_models(wide_of(two), "B", "A").summary
    assert (s["verdict"], s["se_kind"], s["p_regression"]) == ("inconclusive", "none", 0.25)
    assert np.isnan(s["low"]) and np.isnan(s["high"])
    # Six questions all pass -> fail: exact McNemar one-sided p = 1/64 < 0.025, a regression.
    six = long_table(tmp_path / "six.csv", {"A": [0] * 6, "B": [1] * 6})
    s = gate.compare_models(wide_of(six), "B", "A").summary
    assert (s["verdict"], s["p_regression"]) == ("regression", 1 / 64)
    # Worse by more than 1 point: the exact bound of six losses of six, ((1 + 0.01) / 2)^6.
    s = gate.compare_models(wide_of(six), "B", "A", margin=0.01).summary
    assert s["verdict"] == "regression"
    assert s["p_regression"] == pytest.approx(((1 + 0.01) / 2) ** 6, rel=1e-12)
    # At a 50-point margin six losses are no longer beyond what chance gives: 0.75^6 = 0.178.
    s = gate.compare_models(wide_of(six), "B", "A", margin=0.5).summary
    assert s["verdict"] == "inconclusive"
    assert s["p_regression"] == pytest.approx(0.75**6, rel=1e-12)


def test_the_gate_bounds_models_that_agree_everywhere_by_clopper_pearson(tmp_path):
    scores = [1, 0, 1, 1, 0] * 8  # 40 questions, the two models alike on each
    same = wide_of(long_table(tmp_path / "same.csv", {"A": scores, "B": scores}))
    s = gate.compare_models(same, "A", "B", margin=0.05).summary
    bound = 1 - 0.025 ** (1 / 40)  # 0 flips of 40: one-sided 97.5% Clopper-Pearson bound
    assert (s["low"], s["high"], s["se_kind"]) == (-bound, bound, "exact")
    assert round(bound, 6) == 0.088097  # scipy.stats.beta.ppf(0.975, 1, 40)
    assert s["verdict"] == "inconclusive"
    assert s["p_noninferiority"] == pytest.approx(0.95**40, rel=1e-12)
    s = gate.compare_models(same, "A", "B", margin=0.10).summary
    assert s["verdict"] == "non-inferior"
    assert s["p_noninferiority"] == pytest.approx(0.9**40, rel=1e-12)


# --- Claims never supported by a zero SE, a leaderboard never separated on one question ----------


def test_claims_are_not_supported_by_a_zero_se(tmp_path):
    one = wide_of(long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]}))
    table = evaluate_claims(one, ["C > A"])
    verdicts = dict(zip(table["reading"], table["verdict"], strict=True))
    assert {r: verdicts[r] for r in ("naive", "paired", "mcnemar", "paired_holm")} == dict.fromkeys(
        ("naive", "paired", "mcnemar", "paired_holm"), "not supported"
    )
    assert table.set_index("reading").loc["paired", "p_adjusted"] == 1.0
    scores = [1, 0, 1, 1, 0] * 8
    same = wide_of(long_table(tmp_path / "same.csv", {"A": scores, "B": scores}))
    table = evaluate_claims(same, ["|A - B| < 1"]).set_index("reading")
    assert table.loc["paired", "verdict"] == "not supported"
    assert table.loc["paired", "p_adjusted"] == 1.0
    # Ten wins of ten: the exact rule decides, in the z readings as in McNemar's (one rule for
    # a zero SE everywhere: p = 2 * 2^-10), and no reading gives a zero-width interval.
    ten = wide_of(long_table(tmp_path / "ten.csv", {"A": [1] * 10, "B": [0] * 10}))
    table = evaluate_claims(ten, ["A > B"]).set_index("reading")
    for reading in ("mcnemar", "paired", "paired_holm"):
        assert table.loc[reading, "verdict"] == "supported"
        assert table.loc[reading, "p_adjusted"] == 2 * 0.5**10
    assert np.isnan(table.loc["paired", "ci_low_points"])


def test_the_leaderboard_does_not_separate_on_one_question(tmp_path):
    one = wide_of(long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stability.py's cast of NaN ranks warned here
        table = verdicts.leaderboard_table(one, splits=10)
        stable = stability.split_half_stability(one, splits=10)
    assert list(table["letters"]) == ["a", "a", "a"]
    # Every first half of one question is empty: only the 10 second halves rank, and C wins each.
    assert list(stable["first_share"]) == [0.0, 0.0, 1.0]
    assert list(stable["rank_half_high"]) == [2, 2, 1]
    # Two questions, every one won by C: the paired SE is 0, still one letter.
    two = wide_of(long_table(tmp_path / "two.csv", {"A": [0, 0], "C": [1, 1]}))
    assert list(letters.letters_table(two)["letters"]) == ["a", "a"]


def test_claims_on_one_question_or_identical_models_say_so_in_words(tmp_path):
    # They printed "+nan (+nan to +nan)" and "1 questions".
    one = wide_of(long_table(tmp_path / "one.csv", {"A": [1], "B": [0]}))
    table = _evaluate_claims(one, ["A > B"])
    text = claims.claims_markdown(table)
    assert "nan" not in text and "1 questions" not in text and "1 tests" not in text
    assert text.startswith("With 1 question (fewer than 332)")
    shown = claims.claims_display(table).iloc[0]
    assert (shown["questions"], shown["gap, points (CI)"]) == (
        1,
        "+100.0 (no interval: 1 question)",
    )
    assert (shown["paired"], shown["questions needed"]) == (
        "not supported (p 1.000)",
        "no number (no spread: 1 question)",
    )
    decided = table[table["verdict"] != "n/a"]
    assert set(decided["verdict"]) == {"not supported"}
    scores = [1, 0, 1, 1, 0] * 8
    same = wide_of(long_table(tmp_path / "same.csv", {"A": scores, "B": scores}))
    table = _evaluate_claims(same, ["A > B", "B > A"])
    text = claims.claims_markdown(table)
    assert "nan" not in text
    shown = claims.claims_display(table).iloc[0]
    assert shown["gap, points (CI)"] == "+0.0 (no interval: identical on every question)"
    paired = table[table["reading"].isin(["paired", "paired_holm", "mcnemar", "bayes"])]
    assert set(paired["verdict"]) == {"not supported"} and (paired["p"] == 1.0).all()
    row = table[(table["claim"] == "A > B") & (table["reading"] == "paired")].iloc[0]
    assert row["note"] == "no interval: identical on every question"
    assert np.isnan(row["ci_low_points"]) and np.isnan(row["ci_high_points"])


def test_the_same_partial_credit_gap_on_every_question_decides_no_reading_by_its_se():
    # 0.6 against 0.3 on each of 50 questions: the mixed model's SE was 1e-16, its interval
    # "+30.0 to +30.0" and its p 0. Every z reading now has no interval, and the exact bound of
    # a constant difference decides: P(d = 0.3 on every question | mean gap <= 0) <= (1/1.3)^50.
    n = 50
    wide = WideScores(np.tile([0.6, 0.3], (n, 1)), ["A", "B"], np.arange(n), np.full(n, "x"))
    stats = category_pairwise.pair_statistics(wide.scores)
    assert stats["se_paired"][0] == 0.0 and stats["se_unpaired"][0] == 0.0
    table = evaluate_claims(wide, ["A > B"]).set_index("reading")
    bound = 2 * (1 / 1.3) ** n
    for reading in ("naive", "paired", "paired_holm", "mixed_holm"):
        row = table.loc[reading]
        assert row["p"] == pytest.approx(bound, rel=1e-9), reading
        assert np.isnan(row["ci_low_points"]), reading
        assert row["note"] == "no interval: the same difference on every question", reading
    assert (table.loc[["mcnemar", "bayes"], "note"] == "not applicable (scores are not 0/1)").all()


def test_paired_ranks_do_not_separate_on_a_zero_se(tmp_path):
    # One shared question, A right and B wrong: the gap's SE is 0; the interval "100 to 100"
    # separated the two. The exact rule of every table decides instead: 1/2 for one question,
    # 2^-10 < 0.025 for ten wins of ten.
    for wins, separated in ((1, False), (10, True)):
        wide = wide_of(long_table(tmp_path / f"{wins}.csv", {"A": [1] * wins, "B": [0] * wins}))
        gaps = ranks.paired_rank_table(wide, replicates=100).table
        first = gaps.iloc[0]
        assert bool(first["separated"]) is separated
        assert first["gap"] == 1.0 and np.isnan(first["gap_low"]) and np.isnan(first["gap_high"])
