"""Snakemake adapter: both readings of rank uncertainty in one table
(:func:`evalbars.jobs.ranks.ranks_table`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import ranks
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = ranks.ranks_table(
        read_wide_scores(snakemake.input.scores),
        level=p.level,
        draws=p.draws,
        replicates=p.replicates,
        seed=p.seed,
        stratify=p.stratify,
    )
    write_outputs(result, snakemake.output)
