"""Snakemake adapter: the board with intervals and letters, and the resolution strip
(:func:`evalbars.jobs.figures.leaderboard_figures`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    table = pd.read_parquet(snakemake.input.table)
    write_outputs(
        figures.leaderboard_figures(table, level=p.level, max_systems=p.max_systems),
        snakemake.output,
    )
