"""Snakemake adapter: one block of pairs of the pairwise table, without the family-wide columns."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.stats import pairwise

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    block = pairwise.pair_range(
        len(wide.models), int(snakemake.wildcards.shard), int(snakemake.wildcards.shards)
    )
    pairwise.pair_tests(wide, block).to_parquet(snakemake.output.tests, index=False)
