"""Snakemake adapter: the leaderboard verdicts and the benchmark's signal-to-noise
(:func:`evalbars.jobs.ranks.leaderboard`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import ranks
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = ranks.leaderboard(
        read_wide_scores(snakemake.input.scores),
        alpha=p.alpha,
        level=p.level,
        power=p.power,
        splits=p.splits,
        seed=p.seed,
    )
    write_outputs(result, snakemake.output)
