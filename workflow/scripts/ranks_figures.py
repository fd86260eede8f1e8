"""Snakemake adapter: forest plot and rank-range plot of both readings (results/figures/ranks_*)."""

from typing import TYPE_CHECKING

from evalbars import ranks
from evalbars.plotting import save_figure
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = ranks.read_rank_table(snakemake.input.table)
    out, level = snakemake.output, snakemake.params.level
    save_figure(ranks.forest_figure(table, level), out.forest_png, out.forest_svg)
    save_figure(ranks.rank_range_figure(table, level), out.range_png, out.range_svg)
