"""Planning: closed forms against a published sample size (Connor 1987) and against simulation
within Monte Carlo error; the pattern simulation against the FWER study's own draws."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalbars import cli
from evalbars.readings import planner
from evalbars.stats import holm_power, planning
from evalbars.stats.pairwise import adjust_pvalues, paired_z_tests
from evalbars.stats.rng import STUDY_CODES
from evalbars.studies.fwer import draw_shared_scores


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
