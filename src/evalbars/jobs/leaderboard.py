"""The leaderboard stage's job (``workflow/rules/leaderboard.smk``): what a leaderboard may print
beside its ranks, and whether the benchmark can rank at all. Its figure is drawn by
:mod:`evalbars.jobs.figures.leaderboard`."""

from __future__ import annotations

from evalbars import tables
from evalbars.data.scores import WideScores, read_wide_scores
from evalbars.jobs.inputs import reads
from evalbars.jobs.outputs import Table
from evalbars.readings.leaderboard import table as board
from evalbars.readings.leaderboard.signal_noise import signal_to_noise

__all__ = ["leaderboard_table"]


@reads(scores=read_wide_scores)
def leaderboard_table(
    scores: WideScores, *, alpha: float, level: float, power: float, splits: int, seed: int
) -> dict:
    """``leaderboard_table``: per system its letters, split-half stability and the resolution
    of the pair below it (``leaderboard``), and the benchmark's signal-to-noise
    (``benchmark_quality``)."""
    table = board.leaderboard_table(
        scores, alpha=alpha, power=power, splits=splits, seed=seed, level=level
    )
    quality = signal_to_noise(scores)
    headline = board.leaderboard_headline(table, splits)
    return {
        "leaderboard": Table(table, markdown=headline + "\n\n" + tables.to_markdown(table)),
        "benchmark_quality": Table(quality, markdown=tables.to_markdown(quality)),
    }
