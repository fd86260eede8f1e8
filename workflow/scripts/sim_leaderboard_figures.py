"""Snakemake adapter: the five leaderboard figures (a)-(e), PNG and SVG."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.render.figures.leaderboard import leaderboard_figures
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    figures = leaderboard_figures(
        pd.read_csv(snakemake.input.table),
        pd.read_csv(snakemake.input.runs),
        pd.read_csv(snakemake.input.one_run),
        spread=snakemake.params.spread,
        level=snakemake.params.level,
    )
    for name, fig in figures.items():
        save_figure(fig, snakemake.output[f"{name}_png"], snakemake.output[f"{name}_svg"])
