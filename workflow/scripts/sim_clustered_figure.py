"""Snakemake adapter: SE ratio and coverage figure for the clustered-questions settings."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import simulate
from evalbars.plotting import save_figure
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    fig = simulate.clustered_figure(pd.read_csv(snakemake.input.table), snakemake.params.level)
    save_figure(fig, snakemake.output.png, snakemake.output.svg)
