"""Snakemake adapter: one setting of the leaderboard-luck study
(:func:`evalbars.jobs.studies.leaderboard_setting`)."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.jobs import studies
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = studies.leaderboard_setting(
        p.setting, runs=p.runs, true_rates=p.true_rates, seed=p.seed, level=p.level
    )
    write_outputs(result, snakemake.output)
