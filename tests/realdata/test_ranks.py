"""Rank readings on the MMLU-Pro default subsample: pairing narrows every adjacent gap."""

from __future__ import annotations

import pytest

from evalbars.data.scores import wide_scores
from evalbars.defaults import SEED
from evalbars.readings import ranks


@pytest.mark.realdata
def test_default_subsample_pairing_narrows_every_adjacent_gap(default_subsample):
    wide = wide_scores(default_subsample.items)
    table, reports = ranks.ranks_readings(wide, draws=2000, replicates=2000, seed=SEED)
    unpaired, paired = (
        table[table["reading"] == r].reset_index(drop=True) for r in ("unpaired", "paired")
    )
    assert len(unpaired) == 6 and unpaired["n"].eq(1497).all()
    assert unpaired["name"].tolist() == paired["name"].tolist()
    width_u = (unpaired["gap_high"] - unpaired["gap_low"]).iloc[:-1]
    width_p = (paired["gap_high"] - paired["gap_low"]).iloc[:-1]
    assert (width_p < width_u).all()
    assert reports[1].n_tiers >= reports[0].n_tiers
