"""The ranks and leaderboard stages' jobs (``workflow/rules/ranks.smk``, ``leaderboard.smk``):
rank uncertainty under both readings, and the leaderboard verdicts, with their figures."""

from __future__ import annotations

from evalbars import tables
from evalbars.data.scores import WideScores
from evalbars.jobs.outputs import Table
from evalbars.readings import ranks as rank_readings
from evalbars.readings.leaderboard import table as board
from evalbars.readings.leaderboard.signal_noise import signal_to_noise

__all__ = ["ranks_table", "leaderboard"]


def ranks_table(
    wide: WideScores, *, level: float, draws: int, replicates: int, seed: int, stratify: bool
) -> dict:
    """``ranks_table``: score intervals, gaps, tiers, P(first) and rank ranges, unpaired and
    paired (``ranks``: the tidy CSV with a column ``reading``, the Markdown side by side)."""
    table, reports = rank_readings.ranks_readings(
        wide, level=level, draws=draws, replicates=replicates, seed=seed, stratify=stratify
    )
    return {"ranks": Table(table, markdown=rank_readings.readings_markdown(table, reports))}


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
