"""Snakemake adapter: each claim's intervals against its threshold (results/figures/claims.*)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.readings.claims import read_claims_table
from evalbars.render.figures.claims import claims_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = read_claims_table(snakemake.input.table)
    save_figure(claims_figure(table), snakemake.output.png, snakemake.output.svg)
