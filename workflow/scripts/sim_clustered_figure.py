"""Snakemake adapter: SE ratio and coverage figure for the clustered-questions settings."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.render.figures.clustered import clustered_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    fig = clustered_figure(pd.read_csv(snakemake.input.table), snakemake.params.level)
    save_figure(fig, snakemake.output.png, snakemake.output.svg)
