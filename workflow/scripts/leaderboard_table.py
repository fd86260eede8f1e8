"""Snakemake adapter: leaderboard verdicts and benchmark signal-to-noise
(results/tables/leaderboard.*, benchmark_quality.*)."""

from pathlib import Path
from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.readings.leaderboard import table as verdicts
from evalbars.readings.leaderboard.signal_noise import signal_to_noise

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p, out = snakemake.params, snakemake.output
    wide = read_wide_scores(snakemake.input.scores)
    board = verdicts.leaderboard_table(
        wide, alpha=p.alpha, power=p.power, splits=p.splits, seed=p.seed, level=p.level
    )
    quality = signal_to_noise(wide)
    board.to_csv(out.csv, index=False)
    quality.to_csv(out.quality_csv, index=False)
    headline = verdicts.leaderboard_headline(board, p.splits)
    Path(out.md).write_text(headline + "\n\n" + tables.to_markdown(board))
    Path(out.quality_md).write_text(tables.to_markdown(quality))
