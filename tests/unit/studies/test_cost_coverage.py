"""The cost readings' coverage study: its truths, its seeding, and its readings in a setting
far from any boundary."""

import numpy as np
from scipy import special

from evalbars.seeding import STUDY_CODES
from evalbars.studies import cost_coverage as study


def test_the_boards_hold_the_stated_truths():
    # many questions: the board's means approach the true accuracies and mean costs
    rng = np.random.default_rng(1)
    correct, cost, clusters = study._board(rng, 200_000, 0, 0.0)
    accuracy = special.ndtr(study.MODELS["theta"].to_numpy() / np.sqrt(2.0))
    assert clusters is None
    np.testing.assert_allclose(correct.mean(axis=0), accuracy, atol=0.004)
    np.testing.assert_allclose(cost.mean(axis=0) / study.MODELS["cost"], 1.0, atol=0.01)
    # B is more accurate and cheaper than D: the true frontier is A, B, C
    assert accuracy[1] > accuracy[3] and study.MODELS["cost"][1] < study.MODELS["cost"][3]


def test_the_categories_are_equal_and_the_effects_keep_the_means():
    rng = np.random.default_rng(2)
    correct, cost, clusters = study._board(rng, 57 * 2000, 57, 0.3)
    assert np.bincount(clusters).tolist() == [2000] * 57
    accuracy = special.ndtr(study.MODELS["theta"].to_numpy() / np.sqrt(2.0 + 0.09))
    np.testing.assert_allclose(correct.mean(axis=0), accuracy, atol=0.03)


def test_the_study_is_seeded_and_reads_a_clear_setting_right():
    assert STUDY_CODES["cost_coverage"] == 43
    first = study.simulate_cost_coverage(300, replicates=30, seed=5)
    assert first == study.simulate_cost_coverage(300, replicates=30, seed=5)
    # with 300 questions the frontier {A, B, C} is far from its boundary and D far inside it
    assert first["frontier_set"] == 1.0
    assert first["questions"] == 300 and 0 <= first["accuracy_boundary"] <= 0.2
