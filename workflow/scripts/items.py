"""Snakemake adapter: read every prediction source into the canonical item table
(:func:`evalbars.jobs.data.items`, which checks everything before anything is written)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.jobs import data
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    archives = {
        path: p.archive_models[path.rsplit("/", 1)[-1]] for path in snakemake.input.archives
    }
    result = data.items(
        data.read_raw(archives, p.sources),
        policy=p.policy,
        seed=p.seed,
        max_unshared_share=p.max_unshared_share,
        subsample_n=p.subsample_n,
        question_set=p.question_set,
        design=True,  # the console says what the shape of the data leaves out
        labels=p.labels,
    )
    write_outputs(result, snakemake.output)
