"""Snakemake adapter: unpaired, paired and McNemar tests of every pair (the paper's Table 3),
computed here or gathered from the shards of `analysis.shards`."""

from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.stats import pairwise

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    if snakemake.input.shards:
        tests = pairwise.gather_pair_tests(snakemake.input.shards)
    else:
        tests = pairwise.pair_tests(read_wide_scores(snakemake.input.scores))
    table = pairwise.adjusted_pair_table(tests, snakemake.params.alpha)
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
