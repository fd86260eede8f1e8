"""The ranks stage's job that draws (``workflow/rules/ranks.smk``): the forest plot, rank ranges
and the overview of every system."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.ranks import forest_figure, rank_overview_figure, rank_range_figure
from evalbars.render.figures.style import FigureOutput

__all__ = ["ranks_figures"]


@reads(table=parquet())
def ranks_figures(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``ranks_figures``: the forest plot (tiers shaded), rank ranges, and every system, from
    the ranks ``table``."""
    return {
        "ranks_forest": FigureOutput(forest_figure(table, level, max_systems)),
        "ranks_range": FigureOutput(rank_range_figure(table, level, max_systems)),
        "ranks_overview": FigureOutput(rank_overview_figure(table, level)),
    }
