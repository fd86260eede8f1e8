"""Snakemake adapter: unpaired, paired and McNemar tests of every pair (the paper's Table 3)."""

from typing import TYPE_CHECKING

from evalbars import pairwise, tables
from evalbars.errors import script_context
from evalbars.scores import read_wide_scores

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    table = pairwise.pairwise_table(wide, snakemake.params.alpha)
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        parquet_path=snakemake.output.parquet,
        shown_path=snakemake.output.shown,
        caption=f"All pairwise comparisons; Bonferroni and Holm adjust the paired p-values; "
        f"significant at alpha = {snakemake.params.alpha:g}.",
    )
