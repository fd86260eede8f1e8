"""Planning: closed forms against a published sample size (Connor 1987) and against simulation
within Monte Carlo error; the pattern simulation against the FWER study's own draws."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars import cli
from evalbars.cli import main
from evalbars.errors import InputError
from evalbars.readings import planner
from evalbars.seeding import STUDY_CODES
from evalbars.stats.pairwise import adjust_pvalues, disagreement_rates, paired_z_tests
from evalbars.stats.planning import holm as holm_power
from evalbars.stats.planning import sample_size as planning
from evalbars.studies.fwer import draw_shared_scores

from ...helpers import last_error


def test_connor_mcnemar_sample_size_matches_the_published_example():
    # Connor (1987), Biometrics 43:207-211, p. 209, as worked in the open-powersamplesize
    # calculator "Compare Paired Proportions: McNemar's Z-test, 2-Sided Equality"
    # (zarathucorp.github.io/open-powersamplesize): p01 = 0.45, p10 = 0.05, alpha = 0.05,
    # power = 0.80 -> n = 23 pairs.
    n = planning.questions_needed(0.45 - 0.05, 0.45 + 0.05, alpha=0.05, power=0.8, test="mcnemar")
    assert float(n) == pytest.approx(22.0113, abs=1e-4)
    assert int(np.ceil(n)) == 23
    # The Wald form (the paired z evalbars runs) needs fewer: the null variance is smaller.
    assert planning.questions_needed(0.4, 0.5, 0.05, 0.8) < n


def test_sample_size_matches_chow_shao_and_wang_worked_examples():
    # Chow, Shao and Wang, Sample Size Calculations in Clinical Research (2003; 2nd ed. 2008),
    # example 3.1.4 (one-sample means; a paired difference is one sample) and example 6.4.3
    # (McNemar), with the numbers as the CRAN package TrialSize documents them for the book.
    # Equality: sigma = 1, true difference 0.5, two-sided alpha 0.05, power 0.8 -> 31.4, 32.
    n = planning.questions_for_effect(0.5, 1.0, alpha=0.05, power=0.8)
    assert float(n) == pytest.approx(31.3955, abs=1e-4) and np.ceil(n) == 32
    # Non-inferiority: margin 0.5, true difference 0.5, one-sided alpha 0.05 -> 6.2, 7.
    n = planning.questions_for_effect(0.5 + 0.5, 1.0, alpha=0.05, power=0.8, sides=1)
    assert float(n) == pytest.approx(6.1826, abs=1e-4) and np.ceil(n) == 7
    # Equivalence (two one-sided tests): sigma = 0.1, margin 0.05, true difference 0 (so
    # z_{1 - beta/2}), one-sided alpha 0.05 -> 34.3, 35.
    n = planning.questions_for_effect(0.05 - 0.0, 0.1**2, alpha=0.05, power=0.9, sides=1)
    assert float(n) == pytest.approx(34.2554, abs=1e-4) and np.ceil(n) == 35
    # McNemar, example 6.4.3: p10 = 0.5, p01 = 0.2 (psi = 0.4, pi_D = 0.7) -> 58.6, 59.
    n = planning.questions_needed(0.5 - 0.2, 0.5 + 0.2, alpha=0.05, power=0.8, test="mcnemar")
    assert float(n) == pytest.approx(58.632, abs=1e-3) and np.ceil(n) == 59
    # the closed forms of the module: Wald and McNemar are the one formula
    n = planning.questions_for_effect(0.3, 0.7 - 0.09, null_variance=0.7)
    assert float(n) == float(planning.questions_needed(0.3, 0.7, test="mcnemar"))
    with pytest.raises(ValueError, match="sides"):
        planning.questions_for_effect(0.1, 0.2, sides=3)


def test_planner_streams_are_registered_settings():
    # the planner's simulations draw from seeding.setting_rng with their codes 101 and 102
    assert STUDY_CODES["plan_pair"] == 101 and STUDY_CODES["plan_holm"] == 102
    assert len(set(STUDY_CODES.values())) == len(STUDY_CODES)
    entropy = [5, 101, 400_000_000, 50_000, 300_000]
    rng = np.random.default_rng(np.random.SeedSequence(entropy))
    win, loss = (0.3 + 0.05) / 2, (0.3 - 0.05) / 2
    counts = rng.multinomial(400, [win, loss, 1 - win - loss], size=1000)
    z, p = paired_z_tests_from_counts(counts[:, 0], counts[:, 1], 400)
    expected = ((p < 0.05) & (z > 0)).mean()
    assert planning.simulate_pair_power(400, 0.05, 0.3, replications=1000, seed=5)[0] == expected
    assert planning.simulate_pair_power(400, -0.05, 0.3, replications=1000, seed=5)[0] == 0.0


def paired_z_tests_from_counts(n10, n01, n):
    diff = (n10 - n01) / n
    se = np.sqrt(np.maximum((n10 + n01) / n - diff**2, 0.0) / n)
    z = diff / se
    return z, 2 * stats.norm.sf(np.abs(z))


def test_detectable_gap_inverts_questions_needed():
    for test in planning.TESTS:
        n = planning.questions_needed(0.03, 0.3, 0.01, 0.9, test)
        assert planning.detectable_gap(n, 0.3, 0.01, 0.9, test) == pytest.approx(0.03, rel=1e-8)
    assert np.isnan(planning.questions_needed(0.5, 0.3))
    assert np.isinf(planning.questions_needed(0.0, 0.3))


@pytest.mark.parametrize(
    ("gap", "delta", "alpha"), [(0.05, 0.3, 0.05), (0.02, 0.25, 0.05 / 15), (0.1, 0.4, 0.01)]
)
def test_closed_form_power_matches_simulation(gap, delta, alpha):
    n = int(np.ceil(planning.questions_needed(gap, delta, alpha, 0.8)))
    share, se = planning.simulate_pair_power(
        n, gap, delta, alpha=alpha, replications=20_000, seed=5
    )
    assert abs(share - float(planning.power_paired(n, gap, delta, alpha))) < 4 * se
    assert abs(share - 0.8) < 4 * se + 0.005  # n is rounded up


def test_pattern_probabilities_give_the_requested_rates():
    kappa = holm_power.concentration_for_disagreement(0.05, 0.3, 0.6)
    patterns, prob = holm_power.pattern_probabilities(5, 0.05, 0.6, kappa)
    assert prob.sum() == pytest.approx(1.0)
    means = prob @ patterns
    np.testing.assert_allclose(means, [0.65, 0.6, 0.6, 0.6, 0.6], atol=1e-12)
    disagree = prob @ (patterns[:, 0] != patterns[:, 1])
    assert disagree == pytest.approx(0.3, abs=1e-12)
    with pytest.raises(ValueError, match="not reachable"):
        holm_power.concentration_for_disagreement(0.05, 0.9, 0.6)


def test_pattern_simulation_matches_the_fwer_studys_draws():
    """Holm power from pattern counts equals Holm power from draw_shared_scores (rho = 1)."""
    models, n, gap, delta, alpha = 4, 300, 0.08, 0.3, 0.05
    share, se = holm_power.simulate_holm_power(
        models, n, gap, delta, alpha=alpha, replications=4000
    )
    kappa = holm_power.concentration_for_disagreement(gap, delta, 0.6)
    rng = np.random.default_rng(11)
    scores = draw_shared_scores(
        rng, 2000, n, models, 1.0, gap=gap, mean_accuracy=0.6, concentration=kappa
    ).astype(float)
    z, p = paired_z_tests(scores)
    found = (adjust_pvalues(p, "holm")[:, 0] < alpha) & (z[:, 0] > 0)
    direct = found.mean()
    assert abs(share - direct) < 4 * np.hypot(se, np.sqrt(direct * (1 - direct) / 2000))


def test_holm_lies_between_its_bounds_and_bonferroni_matches_its_closed_form():
    models, gap, delta = 5, 0.05, 0.3
    tests = planning.all_pairs(models)
    low = planning.questions_needed(gap, delta, 0.05, 0.8)
    high = planning.questions_needed(gap, delta, 0.05 / tests, 0.8)
    holm = holm_power.holm_questions(models, gap, delta, replications=3000)
    assert low < holm <= np.ceil(high) + 1
    n = int(np.ceil(high))
    share, se = holm_power.simulate_holm_power(
        models, n, gap, delta, alpha=0.05, procedure="bonferroni", replications=6000
    )
    assert abs(share - float(planning.power_paired(n, gap, delta, 0.05 / tests))) < 4 * se


def test_plan_answers_both_questions_and_the_table_checks_itself():
    result = planner.plan(6, 0.02, 0.25, procedure="bonferroni")
    z = stats.norm.ppf(1 - 0.05 / 30) + stats.norm.ppf(0.8)
    assert result["questions_high"] == np.ceil(z**2 * (0.25 - 0.02**2) / 0.02**2)
    assert result["questions_low"] == result["questions_high"]
    reverse = planner.plan(6, None, 0.25, procedure="holm", questions=1497)
    assert reverse["gap_low"] < reverse["gap_high"]
    assert "1,497 shared questions find a gap of" in planner.plan_text(reverse)
    table = planner.plan_table(4, [0.05], 0.3, claims=2, questions=1000, replications=2000)
    assert list(table["procedure"]) == ["none", "bonferroni", "holm", "holm"]
    checked = table[table["power_simulated"].notna()]
    assert (abs(checked["power_simulated"] - 0.8) < 4 * checked["power_simulated_se"] + 0.04).all()
    holm = table.iloc[2]
    assert (
        holm["questions_lower_bound"]
        <= holm["questions_simulated"]
        <= holm["questions_closed_form"] + 1
    )


def test_cli_plan_forward_reverse_and_errors(capsys):
    assert cli.main(["plan", "--models", "6", "--gap", "2", "--disagreement", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "a gap of 2 points needs between 4,898 (unadjusted level) and 8,901" in out
    assert (
        cli.main(
            [
                "plan",
                "--models",
                "6",
                "--questions",
                "1497",
                "--disagreement",
                "0.25",
                "--procedure",
                "none",
                "--format",
                "json",
            ]
        )
        == 0
    )
    assert json_gap(capsys.readouterr().out) == pytest.approx(0.0361, abs=1e-4)
    assert cli.main(["plan", "--models", "6", "--gap", "40", "--disagreement", "0.25"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--gap 40: must be above 0 and at most" in err


def json_gap(text):
    document = json.loads(text)
    return document["gap_low"]


def test_plan_table_beyond_the_simulated_sizes_gives_the_closed_forms():
    many = planner.plan_table(200, [0.05], 0.3, replications=500)
    few = planner.plan_table(4, [0.05], 0.3, replications=500)
    holm = many.set_index("procedure").loc["holm"]
    assert pd.isna(holm["questions_simulated"]) and np.isnan(holm["power_simulated"])
    assert holm["tests"] == 200 * 199 // 2
    # The pair-power check does not depend on the number of models: same rows as at 4 models.
    for procedure in ("none",):
        assert many.set_index("procedure").loc[procedure, "power_simulated"] == pytest.approx(
            few.set_index("procedure").loc[procedure, "power_simulated"]
        )


# --- The plan table on the data's own disagreement rate and mean accuracy ------------------------


def _items(scores: dict) -> pd.DataFrame:
    """An item table from ``{model: [score per question, or a list of epoch scores]}``."""
    rows = []
    for model, column in scores.items():
        for q, value in enumerate(column):
            for epoch, v in enumerate(np.atleast_1d(value)):
                rows.append(
                    {
                        "model": model,
                        "question_id": f"q{q}",
                        "epoch": epoch,
                        "category": "c",
                        "correct": float(v),
                    }
                )
    return pd.DataFrame(rows)


def test_disagreement_is_the_mean_square_difference_for_epochs_and_partial_credit():
    # Per-question means of 2 epochs: x = (1, .5, 0, 1), y = (1, 1, .5, 0): squares 0, .25, .25, 1.
    items = _items({"x": [[1, 1], [1, 0], [0, 0], [1, 1]], "y": [[1, 1], [1, 1], [1, 0], [0, 0]]})
    (rate,) = disagreement_rates(items)["disagreement"]
    assert rate == 1.5 / 4  # the share of questions where the scores differ would be 3/4
    partial = _items({"x": [0.2, 0.9, 0.5], "y": [0.2, 0.4, 1.0]})
    (rate,) = disagreement_rates(partial)["disagreement"]
    assert rate == pytest.approx((0.25 + 0.25) / 3, abs=1e-15)
    # 0/1 scores: exactly the discordant share (the same float as n_discordant / n).
    binary = _items({"x": [1, 1, 1, 0, 0, 1, 0], "y": [1, 0, 1, 1, 0, 0, 0]})
    (rate,) = disagreement_rates(binary)["disagreement"]
    assert rate == 3 / 7


def test_data_setting_takes_the_datas_mean_accuracy():
    items = _items({"x": [1, 1, 1, 0], "y": [1, 0, 0, 0], "z": [[1, 0], [1, 1], [0, 0], [0, 0]]})
    setting = planner.data_setting(items)
    assert setting == {
        "models": 3,
        "questions": 4,
        "disagreement": 0.3125,  # median of x-y 2/4, x-z (.25 + 1)/4, y-z (.25 + 1)/4
        "mean_accuracy": (0.75 + 0.25 + 0.375) / 3,
    }


def test_plan_table_falls_back_to_the_closed_forms_where_the_simulation_cannot_reach_the_rate():
    # The lm-eval example: 3 models disagreeing more often than independent models would
    # (0.564 > 0.493 at mean accuracy 5/9) stopped the plan table with a ValueError.
    table = planner.plan_table(3, [0.01, 0.05], 22 / 39, mean_accuracy=5 / 9, replications=500)
    holm = table[(table["procedure"] == "holm")].set_index("gap_points")
    assert holm["questions_simulated"].isna().all() and holm["power_simulated"].isna().all()
    assert holm.loc[1.0, "note"] == (
        "not simulated (a disagreement rate of 0.5641 is not reachable at mean accuracy 0.5556 "
        "and gap 0.01: it must lie strictly between 0.01 and 0.4927 (that of independent "
        "models)); Holm lies between the closed forms"
    )
    # The closed forms stand: Bonferroni's bound is the exact formula at alpha / 3.
    z = planning.special.ndtri(1 - 0.05 / 6) + planning.special.ndtri(0.8)
    expected = np.ceil(z**2 * (22 / 39 - 0.01**2) / 0.01**2)
    assert holm.loc[1.0, "questions_closed_form"] == expected
    assert (table.loc[table["procedure"] != "holm", "note"] == "").all()
    assert table["power_simulated"].notna().sum() == 4  # none and Bonferroni, both gaps
    caption = planner.plan_caption(
        table,
        {"models": 3, "questions": 39, "disagreement": 22 / 39, "mean_accuracy": 5 / 9},
        0.05,
        0.8,
    )
    assert caption.endswith(
        "Holm over all pairs is simulated with models at the data's mean accuracy (55.6%). Not "
        "simulated for 1, 5 points (see the note): the closed forms bracket Holm there."
    )


def test_plan_table_simulates_at_the_datas_mean_accuracy():
    # At mean accuracy 0.9 a gap of 12 points would put the leader above 100%.
    table = planner.plan_table(3, [0.12], 0.3, mean_accuracy=0.9, replications=500)
    holm = table.set_index("procedure").loc["holm"]
    assert holm["note"].startswith(
        "not simulated (a gap of 12 points above a mean accuracy of 90.0%"
    )
    reachable = planner.plan_table(3, [0.05], 0.3, mean_accuracy=0.5, replications=500)
    holm = reachable.set_index("procedure").loc["holm"]
    assert holm["note"] == "" and holm["mean_accuracy"] == 0.5
    assert holm["questions_lower_bound"] <= holm["questions_simulated"]
    assert holm["questions_simulated"] <= holm["questions_closed_form"] + 1


# --- Gaps beyond the disagreement rate, gaps given as proportions --------------------------------


def test_too_few_questions_find_no_gap_rather_than_one_above_the_disagreement_rate(capsys):
    # 10 questions at a 25% disagreement rate "found" a gap of 33-36 points, above the rate.
    gaps = planning.detectable_gap([10, 24, 1497], 0.25, 0.05, 0.8)
    assert np.isnan(gaps[0]) and gaps[1] == pytest.approx(0.2483, abs=1e-4) and gaps[2] < 0.04
    assert cli.main(["plan", "--models", "6", "--questions", "10", "--disagreement", "0.25"]) == 0
    assert capsys.readouterr().out == (
        "6 models, Holm over 15 tests, alpha 0.05, power 0.8, disagreement rate 0.25 (wald test): "
        "10 shared questions find no gap with power 0.8: no gap can exceed the disagreement rate "
        "(25 points), and even that largest gap needs 24 (unadjusted level) to 43 (Bonferroni "
        "level) shared questions.\n"
    )
    args = ["plan", "--models", "6", "--questions", "10", "--disagreement", "0.25"]
    assert cli.main([*args, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["gap_low"] is None and document["gap_high"] is None
    # the largest gap itself: the closed form at gap = rate, z^2 (1 - rate) / rate
    z = planning.special.ndtri(1 - 0.05 / 2) + planning.special.ndtri(0.8)
    assert np.ceil(z**2 * 0.75 / 0.25) == 24
    table = planner.plan_table(6, [0.05], 0.25, questions=10, simulate=False)
    assert table["detectable_gap_points"].isna().all()


@pytest.mark.parametrize(
    ("arguments", "where", "problem"),
    [
        (
            (6, 0.02, None, 0.25),
            "--gap 0.02",
            "is 0.02 points; did you mean 2 points? (the gap is in accuracy points; add "
            "--small-gap to plan for a gap under 1 point)",
        ),
        (
            (6, 40, None, 0.25),
            "--gap 40",
            "must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            (6, 0, None, 0.25),
            "--gap 0",
            "must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            (6, 2, 100, 0.25),
            "--gap, --questions",
            "give exactly one of --gap (points) or --questions",
        ),
        ((1, 2, None, 0.25), "--models 1", "a comparison needs at least 2 models"),
    ],
)
def test_plan_requests_that_cannot_be_meant_are_refused_in_one_line(arguments, where, problem):
    with pytest.raises(InputError) as info:
        planner.check_plan_request(*arguments)
    assert str(info.value) == f"{where}: {problem}"


def test_a_gap_under_one_point_is_planned_when_asked_for():
    assert planner.check_plan_request(6, 0.5, None, 0.25, small_gap=True) is None
    assert planner.check_plan_request(6, 2, None, 0.25) is None
    assert planner.check_plan_request(6, None, 1497, 0.25) is None


# --- `evalbars plan`: exit codes, hints, thousands separators ------------------------------------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--models", "1", "--gap", "2"], "--models 1: a comparison needs at least 2 models"),
        (
            ["--models", "6", "--gap", "0"],
            "--gap 0: must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            ["--models", "6", "--gap", "nan"],
            "--gap nan: must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            ["--models", "6", "--gap", "2", "--questions", "9"],
            "--gap, --questions: give exactly one of --gap (points) or --questions",
        ),
    ],
)
def test_plan_refuses_what_it_cannot_plan_for_with_the_argument_error_status(argv, line, capsys):
    assert main(["plan", *argv, "--disagreement", "0.25"]) == 2
    assert last_error(capsys) == f"evalbars plan: error: {line} (see evalbars plan --help)"


def test_plan_hints_name_the_disagreement_and_the_plan_help(capsys):
    for argv, line in (
        (
            ["--disagreement", "1.5"],
            "argument --disagreement: 1.5 is not between 0 and 1 (e.g. 0.25)",
        ),
        (
            ["--disagreement", "0.25", "--simulate", "--seed", "3"],
            "unrecognized arguments: --seed 3",
        ),
    ):
        with pytest.raises(SystemExit) as raised:
            main(["plan", "--models", "6", "--gap", "2", *argv])
        assert raised.value.code == 2
        assert last_error(capsys) == f"evalbars plan: error: {line} (see evalbars plan --help)"


def test_plan_prints_large_counts_with_thousands_separators(capsys):
    assert main(["plan", "--models", "100000", "--gap", "2", "--disagreement", "0.25"]) == 0
    assert capsys.readouterr().out.startswith("100,000 models, Holm over 4,999,950,000 tests,")
