"""Miller's planner for repeated samples, against numbers worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.stats.planning.samples import (
    mean_variance,
    optimal_samples,
    plan_samples,
    sampling_plan_table,
    variance_reduction,
)


def test_the_variance_of_a_mean_is_millers_plus_the_run_term():
    assert mean_variance(0.05, 0.15, 200, 3) == pytest.approx(0.0005, rel=1e-15)
    # 0.04/100 + 0.0009/3 + 0.2/(100*2*3) = 0.0004 + 0.0003 + 0.000333...
    assert mean_variance(0.04, 0.2, 100, 2, var_run=0.0009, runs=3) == pytest.approx(
        0.0004 + 0.0003 + 0.2 / 600, rel=1e-15
    )


def test_variance_reduction_is_find_k():
    np.testing.assert_allclose(
        variance_reduction(1.0, 2.0, [1, 2, 3, 4, 5]), [0, 1 / 3, 4 / 9, 1 / 2, 8 / 15]
    )


def test_the_cost_optimal_number_of_samples():
    assert optimal_samples(0.05, 0.2, cost_question=9) == pytest.approx(6.0)
    assert optimal_samples(0.2, 0.05) == 1.0  # never fewer than one
    assert optimal_samples(0.0, 0.1) == np.inf


def test_a_fixed_small_benchmark_needs_questions_not_samples():
    plan = plan_samples(0.1, 0.12, 0.04, 30, 4)
    assert float(plan.se) == pytest.approx(np.sqrt(0.13 / 30))
    assert float(plan.questions_needed) == 82.0  # 0.13 / 0.0016 = 81.25
    assert float(plan.samples_needed) == np.inf  # the floor sqrt(0.1/30) = 0.0577 > 0.04
    assert float(plan.floor_with_samples) == pytest.approx(np.sqrt(0.1 / 30))
    assert str(plan.advice) == "questions"


def test_samples_win_when_a_question_costs_more_than_its_answers():
    # sigma2_q/n = 2e-5; K = (0.2/500) / (1e-4 - 2e-5) = 5; n = 0.21 / 1e-4 = 2,100.
    plan = plan_samples(0.01, 0.2, 0.01, 500, 1)
    assert (float(plan.samples_needed), float(plan.questions_needed)) == (5.0, 2100.0)
    np.testing.assert_allclose(plan.extra_answers[:2], [1600.0, 2000.0])
    assert str(plan.advice) == "questions"
    costly = plan_samples(0.01, 0.2, 0.01, 500, 1, cost_question=1.0)
    assert costly.extra_answers[0] == 3200.0
    assert str(costly.advice) == "samples"


def test_a_large_run_shift_needs_runs():
    # Questions and samples cannot beat sigma2_r / R = 4e-4 > 2.25e-4; runs:
    # (4e-4 + 0.15/1000) / (2.25e-4 - 0.05/1000) = 3.14, so 4.
    plan = plan_samples(0.05, 0.15, 0.015, 1000, 1, var_run=0.0004, runs=1)
    assert float(plan.questions_needed) == np.inf
    assert float(plan.samples_needed) == np.inf
    assert float(plan.runs_needed) == 4.0
    assert str(plan.advice) == "runs"


def test_a_met_target_is_reached_and_inputs_broadcast():
    plan = plan_samples(0.05, 0.15, [0.05, 0.001], 400, 2)
    assert plan.advice.tolist() == ["reached", "questions"]
    assert plan.se.shape == (2,)


def test_the_table_reads_a_run_variance_table():
    components = pd.DataFrame(
        {
            "model": ["a", "b"],
            "questions": [30, 500],
            "runs": [2, 1],
            "samples": [240, 500],
            "var_question": [0.1, 0.01],
            "var_run": [0.0, np.nan],
            "var_within": [0.12, 0.2],
        }
    )
    table = sampling_plan_table(components, 0.01)
    assert table["samples_per_question"].tolist() == [4.0, 1.0]
    assert table.loc[1, "samples_needed"] == 5.0
    # 30 questions, 4 samples, 2 runs: (0.1 + 0.12/8) / 1e-4 = 1,150 questions.
    assert table.loc[0, "questions_needed"] == 1150.0
