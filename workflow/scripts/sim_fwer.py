"""Snakemake adapter: one setting of the family-wise error study
(:func:`evalbars.jobs.studies.fwer_setting`)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.jobs import studies
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = studies.fwer_setting(
        p.setting,
        replications=p.replications,
        alpha=p.alpha,
        mean_accuracy=p.mean_accuracy,
        concentration=p.concentration,
        seed=p.seed,
    )
    write_outputs(result, snakemake.output)
