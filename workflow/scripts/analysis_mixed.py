"""Snakemake adapter: the mixed models' variance components and contrasts (the paper's Tables
2 and 4; :func:`evalbars.jobs.analysis.mixed_models`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    # The matrix is passed on, not kept here: the job lets it go before the contrasts (at
    # 4,500 models it holds 94.5 M cells).
    result = analysis.mixed_models(
        read_wide_scores(snakemake.input.scores), method=p.method, alpha=p.alpha
    )
    write_outputs(result, snakemake.output)
