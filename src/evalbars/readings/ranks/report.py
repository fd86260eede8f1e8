"""The rank report: a rank table with its headline and the settings that produced it.

Its own module, so that the readings (:mod:`.unpaired`, :mod:`.paired`, :mod:`.corrected`) and
their renderings (:mod:`.render`) both import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["RankReport"]


@dataclass(frozen=True)
class RankReport:
    """A rank table with its headline and the settings that produced it.

    Attributes
    ----------
    table : DataFrame
        :data:`evalbars.readings.ranks.unpaired.RANK_COLUMNS`, one row per system in nominal
        order.
    headline : str
        ``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.
    reading : str
        ``unpaired``, ``paired`` or ``judge-corrected``.
    level : float
    draws : int
        Plausible worlds (Jeffreys/normal draws, or bootstrap replicates).
    seed : int
    method : str
        One sentence on how the worlds were drawn and the gaps tested.
    """

    table: pd.DataFrame
    headline: str
    reading: str
    level: float
    draws: int
    seed: int
    method: str

    @property
    def n_tiers(self) -> int:
        return int(self.table["tier"].max())
