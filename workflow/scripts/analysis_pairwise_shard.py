"""Snakemake adapter: the unadjusted tests of one block of pairs
(:func:`evalbars.jobs.analysis.pairwise_shard`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import analysis

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    shard, shards = int(snakemake.wildcards.shard), int(snakemake.wildcards.shards)
    tests = analysis.pairwise_shard(
        read_wide_scores(snakemake.input.scores), shard=shard, shards=shards
    )
    tests.to_parquet(snakemake.output.tests, index=False)
