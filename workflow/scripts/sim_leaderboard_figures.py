"""Snakemake adapter: the leaderboard-luck figures
(:func:`evalbars.jobs.figures.leaderboard_luck_figures`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    inputs, p = snakemake.input, snakemake.params
    result = figures.leaderboard_luck_figures(
        pd.read_parquet(inputs.table),
        pd.read_parquet(inputs.runs),
        pd.read_parquet(inputs.one_run),
        spread=p.spread,
        level=p.level,
    )
    write_outputs(result, snakemake.output)
