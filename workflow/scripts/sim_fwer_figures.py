"""Snakemake adapter: FWER by method, FWER across K and power figures, PNG and SVG."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import simulate
from evalbars.plotting import save_figure
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    shown = snakemake.params.figure
    figures = simulate.fwer_figures(
        pd.read_csv(snakemake.input.table), shown["models"], shown["questions"]
    )
    for name, fig in figures.items():
        save_figure(fig, snakemake.output[f"{name}_png"], snakemake.output[f"{name}_svg"])
