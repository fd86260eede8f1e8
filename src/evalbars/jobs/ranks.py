"""The ranks and leaderboard stages' jobs (``workflow/rules/ranks.smk``, ``leaderboard.smk``):
rank uncertainty under both readings, and the leaderboard verdicts, with their figures."""

from __future__ import annotations

import pandas as pd

from evalbars import tables
from evalbars.data.scores import WideScores
from evalbars.jobs.outputs import Table
from evalbars.readings import ranks as rank_readings
from evalbars.readings.leaderboard import table as board
from evalbars.readings.leaderboard.signal_noise import signal_to_noise
from evalbars.render.figures.ranks import forest_figure, rank_overview_figure, rank_range_figure
from evalbars.render.figures.style import FigureOutput
from evalbars.render.figures.verdicts import verdicts_figure

__all__ = ["ranks_table", "ranks_figures", "leaderboard", "leaderboard_figures"]


def ranks_table(
    wide: WideScores, *, level: float, draws: int, replicates: int, seed: int, stratify: bool
) -> dict:
    """``ranks_table``: score intervals, gaps, tiers, P(first) and rank ranges, unpaired and
    paired (``ranks``: the tidy CSV with a column ``reading``, the Markdown side by side)."""
    table, reports = rank_readings.ranks_readings(
        wide, level=level, draws=draws, replicates=replicates, seed=seed, stratify=stratify
    )
    return {"ranks": Table(table, markdown=rank_readings.readings_markdown(table, reports))}


def ranks_figures(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``ranks_figures``: the forest plot (tiers shaded), rank ranges, and every system."""
    return {
        "ranks_forest": FigureOutput(forest_figure(table, level, max_systems)),
        "ranks_range": FigureOutput(rank_range_figure(table, level, max_systems)),
        "ranks_overview": FigureOutput(rank_overview_figure(table, level)),
    }


def leaderboard(
    wide: WideScores, *, alpha: float, level: float, power: float, splits: int, seed: int
) -> dict:
    """``leaderboard_table``: per system its letters, split-half stability and the resolution
    of the pair below it (``leaderboard``), and the benchmark's signal-to-noise
    (``benchmark_quality``)."""
    table = board.leaderboard_table(
        wide, alpha=alpha, power=power, splits=splits, seed=seed, level=level
    )
    quality = signal_to_noise(wide)
    headline = board.leaderboard_headline(table, splits)
    return {
        "leaderboard": Table(table, markdown=headline + "\n\n" + tables.to_markdown(table)),
        "benchmark_quality": Table(quality, markdown=tables.to_markdown(quality)),
    }


def leaderboard_figures(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``leaderboard_figure``: the board with intervals and letters, and the resolution strip."""
    return {"leaderboard_verdicts": FigureOutput(verdicts_figure(table, level, max_systems))}
