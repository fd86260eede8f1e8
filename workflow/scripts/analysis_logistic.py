"""Snakemake adapter: the logistic mixed model and GEE on the 0/1 samples
(:func:`evalbars.jobs.analysis.logistic_models`). The fits only; their verdicts beside the
linear mixed model are analysis_logistic_verdicts."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    wide = read_wide_scores(snakemake.input.scores)
    result = analysis.logistic_models(wide, alpha=p.alpha, max_cells=p.max_cells)
    write_outputs(result, snakemake.output)
