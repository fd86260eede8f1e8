"""Snakemake adapter: judge-only, human-only and judge-corrected readings side by side
(:func:`evalbars.jobs.analysis.judge_corrected`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    result = analysis.judge_corrected(
        read_wide_scores(snakemake.input.scores),
        level=snakemake.params.level,
        alpha=snakemake.params.alpha,
    )
    write_outputs(result, snakemake.output)
