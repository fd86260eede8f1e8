"""The leaderboard stage's job that draws (``workflow/rules/leaderboard.smk``): the board with
intervals and letters, and the resolution strip."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.style import FigureOutput
from evalbars.render.figures.verdicts import verdicts_figure

__all__ = ["leaderboard_figure"]


@reads(table=parquet())
def leaderboard_figure(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``leaderboard_figure``: the board with intervals and letters, and the resolution strip
    (``leaderboard_verdicts``), from the leaderboard ``table``."""
    return {"leaderboard_verdicts": FigureOutput(verdicts_figure(table, level, max_systems))}
