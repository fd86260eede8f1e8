"""Pairwise disagreement rates on the MMLU-Pro default subsample, against the item table
directly."""

from __future__ import annotations

import pytest

from evalbars.stats.pairwise import disagreement_rates


@pytest.mark.realdata
def test_disagreement_rates_on_the_default_subsample(default_subsample):
    items = default_subsample.items
    table = disagreement_rates(items)
    assert len(table) == 15
    wide = items.pivot(index="question_id", columns="model", values="correct")
    for row in table.itertuples():
        direct = (wide[row.model_a] != wide[row.model_b]).mean()
        assert row.disagreement == pytest.approx(direct)
        assert row.diff >= 0
        assert row.questions == 1497
