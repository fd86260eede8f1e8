"""Snakemake adapter: draw the seeded category-stratified subsample
(:func:`evalbars.jobs.data.subsample`)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.jobs import data
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = data.subsample(
        snakemake.input.item_table, n=p.n, seed=p.seed, question_set=p.question_set
    )
    write_outputs(result, snakemake.output)
