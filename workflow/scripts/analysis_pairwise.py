"""Snakemake adapter: every pair's tests, adjusted over the whole family
(:func:`evalbars.jobs.analysis.pairwise_tests`); with analysis.shards > 1 the shards'
tests are gathered, else every pair is computed here."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores, stored_labels
from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs
from evalbars.stats import pairwise

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    # The matrix is read when the pairs are computed here, or when it has human labels.
    wide = None
    if not snakemake.input.shards or stored_labels(snakemake.input.scores):
        wide = read_wide_scores(snakemake.input.scores)
    if snakemake.input.shards:
        tests = pairwise.gather_pair_tests(snakemake.input.shards)
    else:
        tests = pairwise.pair_tests(wide)
    result = analysis.pairwise_tests(tests, alpha=snakemake.params.alpha, wide=wide)
    write_outputs(result, snakemake.output)
