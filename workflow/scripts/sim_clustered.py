"""Snakemake adapter: one setting of the clustered-questions study
(:func:`evalbars.jobs.studies.clustered_setting`)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.jobs import studies
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = studies.clustered_setting(
        p.setting,
        questions=p.questions,
        replications=p.replications,
        mean_accuracy=p.mean_accuracy,
        level=p.level,
        seed=p.seed,
    )
    write_outputs(result, snakemake.output)
