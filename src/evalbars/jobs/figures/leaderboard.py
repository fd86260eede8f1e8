"""The leaderboard stage's jobs that draw (``workflow/rules/leaderboard.smk``): the board with
intervals and letters, the resolution strip and the confidence set for the best; the
cost-accuracy frontier."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.best import best_set_figure
from evalbars.render.figures.cost import frontier_figure
from evalbars.render.figures.style import FigureOutput
from evalbars.render.figures.verdicts import verdicts_figure

__all__ = ["leaderboard_figure", "cost_figure"]


@reads(table=parquet())
def leaderboard_figure(
    table: pd.DataFrame, *, level: float, alpha: float, max_systems: int
) -> dict:
    """``leaderboard_figure``: the board with intervals and letters, and the resolution strip
    (``leaderboard_verdicts``); the MCB intervals with the confidence set for the best
    (``best_set``), from the leaderboard ``table``."""
    return {
        "leaderboard_verdicts": FigureOutput(verdicts_figure(table, level, max_systems)),
        "best_set": FigureOutput(best_set_figure(table, alpha, max_systems)),
    }


@reads(cost=parquet(), frontier=parquet())
def cost_figure(
    cost: pd.DataFrame, frontier: pd.DataFrame, *, alpha: float, max_systems: int
) -> dict:
    """``cost_figure``: the cost-accuracy frontier with both intervals (``cost_frontier``)."""
    return {"cost_frontier": FigureOutput(frontier_figure(cost, frontier, alpha, max_systems))}
