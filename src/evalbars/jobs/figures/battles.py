"""The battles stage's job that draws (``workflow/rules/battles.smk``): the ratings with their
intervals and tiers, and per-battle against clustered intervals of every pair."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.battles import battle_ratings_figure, per_battle_vs_clustered_figure
from evalbars.render.figures.style import FigureOutput

__all__ = ["battles_figures"]


@reads(leaderboard=parquet(), naive_vs_blocked=parquet())
def battles_figures(
    leaderboard: pd.DataFrame, naive_vs_blocked: pd.DataFrame, *, level: float, max_systems: int
) -> dict:
    """``battles_figures``: the ratings with intervals and tiers (``battles_ratings``) and
    per-battle against clustered intervals (``battles_intervals``)."""
    return {
        "battles_ratings": FigureOutput(battle_ratings_figure(leaderboard, level, max_systems)),
        "battles_intervals": FigureOutput(
            per_battle_vs_clustered_figure(naive_vs_blocked, level, max_systems)
        ),
    }
