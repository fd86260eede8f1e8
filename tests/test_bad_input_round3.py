"""Bad input and faults, round 3 (issue 19): the non-reader cases, each with its exact line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars import planning
from evalbars.precision import disagreement_rates


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


# --- 1. The plan table on the harness examples' data ---------------------------------------------


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
    setting = planning.data_setting(items)
    assert setting == {
        "models": 3,
        "questions": 4,
        "disagreement": 0.3125,  # median of x-y 2/4, x-z (.25 + 1)/4, y-z (.25 + 1)/4
        "mean_accuracy": (0.75 + 0.25 + 0.375) / 3,
    }


def test_plan_table_falls_back_to_the_closed_forms_where_the_simulation_cannot_reach_the_rate():
    # The lm-eval example: 3 models disagreeing more often than independent models would
    # (0.564 > 0.493 at mean accuracy 5/9) stopped the plan table with a ValueError.
    table = planning.plan_table(3, [0.01, 0.05], 22 / 39, mean_accuracy=5 / 9, replications=500)
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
    caption = planning.plan_caption(
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
    table = planning.plan_table(3, [0.12], 0.3, mean_accuracy=0.9, replications=500)
    holm = table.set_index("procedure").loc["holm"]
    assert holm["note"].startswith(
        "not simulated (a gap of 12 points above a mean accuracy of 90.0%"
    )
    reachable = planning.plan_table(3, [0.05], 0.3, mean_accuracy=0.5, replications=500)
    holm = reachable.set_index("procedure").loc["holm"]
    assert holm["note"] == "" and holm["mean_accuracy"] == 0.5
    assert holm["questions_lower_bound"] <= holm["questions_simulated"]
    assert holm["questions_simulated"] <= holm["questions_closed_form"] + 1
