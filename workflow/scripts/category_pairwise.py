"""Snakemake adapter: every pair in every category, corrections and homogeneity, heatmap
(:func:`evalbars.jobs.figures.category_pairwise`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = figures.category_pairwise(
        read_wide_scores(snakemake.input.scores),
        alpha=p.alpha,
        max_models=p.max_models,  # the family of tests (default every model)
        max_systems=p.max_systems,  # what the heatmap draws, never the tests
    )
    write_outputs(result, snakemake.output)
