"""Both readings of the item data in one tidy table, and that table read back from CSV.

:func:`ranks_readings` is what the workflow writes to ``results/tables/ranks.csv``: the
unpaired calculator (:mod:`.unpaired`) on each model's counts and the paired bootstrap
(:mod:`.paired`), one after the other in a column ``reading``; :func:`read_rank_table` reads it
back with its column types.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import DRAWS, LEVEL, SEED
from evalbars.readings.ranks.board_file import leaderboard_from_wide
from evalbars.readings.ranks.corrected import corrected_rank_table
from evalbars.readings.ranks.paired import paired_rank_table
from evalbars.readings.ranks.report import RankReport
from evalbars.readings.ranks.unpaired import RANK_COLUMNS, rank_table

__all__ = ["ranks_readings", "read_rank_table"]


def ranks_readings(
    wide: WideScores,
    *,
    level: float = LEVEL,
    draws: int = DRAWS,
    replicates: int = DRAWS,
    seed: int = SEED,
    stratify: bool = True,
) -> tuple[pd.DataFrame, list[RankReport]]:
    """Unpaired and paired readings of the same item data, in one tidy table.

    The unpaired reading is :func:`rank_table` on each model's counts
    (:func:`leaderboard_from_wide`, so running ``evalbars ranks`` on those counts
    with the same seed gives the same numbers); the paired reading is
    :func:`paired_rank_table`. Both use ``seed``.

    Returns
    -------
    table : DataFrame
        ``reading`` (``unpaired``, ``paired``, and ``judge-corrected`` where the scores are a
        judge's with human labels: :func:`corrected_rank_table`) followed by
        :data:`RANK_COLUMNS`; the paired reading is left out when fewer than two questions
        were answered by every model.
    reports : list of RankReport
        The readings, for headlines and method sentences.
    """
    board = leaderboard_from_wide(wide)
    reports = [rank_table(board, level, draws, seed)]
    # The paired reading needs questions every model answered (with question_set: all there
    # may be none); without two of them only the unpaired reading is given.
    if np.isfinite(wide.scores).all(axis=1).sum() >= 2:
        reports.append(paired_rank_table(wide, level, replicates, seed, stratify, board=board))
    # On judge scores with human labels, the PPI++ reading beside them.
    corrected = corrected_rank_table(wide, level, draws, seed) if wide.has_labels else None
    if corrected is not None:
        reports.append(corrected)
    table = pd.concat([r.table.assign(reading=r.reading) for r in reports], ignore_index=True)[
        ["reading"] + RANK_COLUMNS
    ]
    return table, reports


def read_rank_table(path) -> pd.DataFrame:
    """Read a rank table CSV (one or both readings) back with its column types.

    ``separated`` becomes a nullable boolean (missing on each reading's last row),
    ``name`` and ``note`` stay strings (a model called ``NA`` is not a missing value).
    """
    table = pd.read_csv(path, keep_default_na=False, na_values={c: [""] for c in _NUMERIC_COLUMNS})
    table["separated"] = (
        table["separated"].map({"True": True, "False": False, "": pd.NA}).astype("boolean")
    )
    return table


_NUMERIC_COLUMNS = ["n", "score", "ci_low", "ci_high", "gap", "gap_low", "gap_high", "p_first"]
