"""The ranks stage's job (``workflow/rules/ranks.smk``): rank uncertainty under both readings.
Its figures are drawn by :mod:`evalbars.jobs.figures.ranks`."""

from __future__ import annotations

from evalbars.data.scores import WideScores, read_wide_scores
from evalbars.jobs.inputs import reads
from evalbars.jobs.outputs import Table
from evalbars.readings import ranks as rank_readings

__all__ = ["ranks_table"]


@reads(scores=read_wide_scores)
def ranks_table(
    scores: WideScores, *, level: float, draws: int, replicates: int, seed: int, stratify: bool
) -> dict:
    """``ranks_table``: score intervals, gaps, tiers, P(first) and rank ranges, unpaired and
    paired (``ranks``: the tidy CSV with a column ``reading``, the Markdown side by side)."""
    table, reports = rank_readings.ranks_readings(
        scores, level=level, draws=draws, replicates=replicates, seed=seed, stratify=stratify
    )
    return {"ranks": Table(table, markdown=rank_readings.readings_markdown(table, reports))}
