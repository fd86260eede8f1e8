"""Closed-form precision tables (evalbars.stats.planning.precision): half-widths and questions needed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.stats.intervals import wilson_interval
from evalbars.stats.pairwise import disagreement_rates
from evalbars.stats.planning.precision import (
    precision_table,
    precision_tables,
    questions_needed_table,
    questions_to_resolve_paired,
    questions_to_resolve_unpaired,
    wilson_halfwidth,
)


def test_wilson_160_of_200():
    low, high = wilson_interval(160, 200)
    assert (round(100 * float(low), 1), round(100 * float(high), 1)) == (73.9, 85.0)


def test_half_widths_at_80_percent():
    table = precision_table((100, 200, 1000, 5000), 0.8, 0.95)
    assert table["half_width_points"].round(1).tolist() == [7.8, 5.5, 2.5, 1.1]
    assert wilson_halfwidth(0.8, 200) * 100 == pytest.approx(table["half_width_points"][1])


def test_questions_to_resolve_unpaired_is_1_28_over_gap_squared():
    gaps = np.array([0.10, 0.05, 0.02, 0.01])
    needed = questions_to_resolve_unpaired(gaps)
    assert needed == pytest.approx([128, 512, 3200, 12800])
    assert needed == pytest.approx(1.28 / gaps**2)
    assert needed == pytest.approx([130, 500, 3200, 12800], rel=0.03)  # the seed's rounding
    table = questions_needed_table(gaps, disagreements={"half": 0.5, "tiny": 0.015})
    unpaired = table[table["design"] == "unpaired"]["questions_per_model"]
    assert unpaired.tolist() == [128, 512, 3200, 12800]  # whole questions, no float noise
    tiny = table[table["source"] == "tiny"]["questions_per_model"]
    assert tiny.isna().tolist() == [True, True, True, False]  # a gap above the disagreement rate


def test_questions_to_resolve_paired():
    gaps = np.array([0.10, 0.05, 0.02, 0.01])
    # Two independent models at 80% disagree on 2 * .8 * .2 = 32% of questions: k^2 fewer.
    assert questions_to_resolve_paired(gaps, 0.32) == pytest.approx(
        questions_to_resolve_unpaired(gaps) - 4
    )
    # Var(d) = delta - gap^2 for P(d = +-1) = (delta +- gap) / 2: N = 4 Var(d) / gap^2.
    delta, gap = 0.2, 0.05
    values, probs = (
        np.array([-1, 0, 1]),
        np.array([(delta - gap) / 2, 1 - delta, (delta + gap) / 2]),
    )
    var_d = probs @ values**2 - (probs @ values) ** 2
    assert questions_to_resolve_paired(gap, delta) == pytest.approx(4 * var_d / gap**2)
    assert np.isnan(questions_to_resolve_paired(0.3, 0.2))


def _items(scores: dict) -> pd.DataFrame:
    rows = [
        {"model": m, "question_id": q, "category": "c", "correct": v}
        for m, column in scores.items()
        for q, v in enumerate(column)
    ]
    return pd.DataFrame(rows)


def test_disagreement_rates_by_hand():
    items = _items({"x": [1, 1, 1, 0, 0], "y": [1, 0, 1, 1, 0], "z": [0, 0, 0, 0, 1]})
    table = disagreement_rates(items).set_index(["model_a", "model_b"])
    assert table.loc[("x", "y"), "disagreement"] == pytest.approx(2 / 5)
    assert table.loc[("x", "z"), "disagreement"] == pytest.approx(4 / 5)
    assert table.loc[("y", "z"), "disagreement"] == pytest.approx(4 / 5)
    assert table.loc[("x", "y"), "diff"] == pytest.approx(0.0)
    assert table.loc[("x", "z"), "diff"] == pytest.approx(2 / 5)
    needed = precision_tables(items=items).questions_needed
    assert "data: median of 3 pairs" in set(needed["source"])
    assert needed.loc[needed["source"].str.startswith("data"), "disagreement"].iloc[
        0
    ] == pytest.approx(0.8)
