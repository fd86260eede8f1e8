"""Snakemake adapter: forest, rank-range and overview plots of both readings (results/figures/ranks_*)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.readings.ranks import read_rank_table
from evalbars.render.figures.ranks import forest_figure, rank_overview_figure, rank_range_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = read_rank_table(snakemake.input.table)
    out, level, top = snakemake.output, snakemake.params.level, snakemake.params.max_systems
    save_figure(forest_figure(table, level, top), out.forest_png, out.forest_svg)
    save_figure(rank_range_figure(table, level, top), out.range_png, out.range_svg)
    save_figure(rank_overview_figure(table, level), out.overview_png, out.overview_svg)
