"""Snakemake adapter of every rule: the rule's job (evalbars.jobs.registry.JOBS) run on its
named inputs, outputs and params (evalbars.jobs.run.run_job); with `jobs: per_stage`, the jobs
of a stage's rules one after another in this process (evalbars.jobs.run.run_stage)."""

from typing import TYPE_CHECKING

from evalbars.jobs.run import run_job, run_stage

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake


def plain(named) -> dict:
    """A rule's named files as plain strings (a list of files stays a list)."""
    return {
        name: [str(item) for item in value] if isinstance(value, list) else str(value)
        for name, value in named.items()
    }


if "members" in snakemake.params.keys():
    run_stage(snakemake.params.members, snakemake.log[0])
else:
    run_job(
        snakemake.rule,
        plain(snakemake.input),
        plain(snakemake.output),
        dict(snakemake.params.items()),
        snakemake.log[0],
    )
