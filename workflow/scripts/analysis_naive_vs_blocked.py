"""Snakemake adapter: naive versus blocked standard errors, F tests and significance counts
(:func:`evalbars.jobs.analysis.naive_vs_blocked`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs
from evalbars.readings.naive_vs_blocked import LOGISTIC_COLUMNS, MIXED_COLUMNS, PAIRWISE_COLUMNS

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    inputs = snakemake.input
    # Only the columns the summary reads: the pair tables hold K(K-1)/2 rows per fit.
    result = analysis.naive_vs_blocked(
        pd.read_parquet(inputs.pairwise, columns=list(PAIRWISE_COLUMNS)),
        pd.read_parquet(inputs.omnibus),
        pd.read_parquet(inputs.contrasts, columns=list(MIXED_COLUMNS)),
        pd.read_parquet(inputs.logistic, columns=list(LOGISTIC_COLUMNS)),
        alpha=snakemake.params.alpha,
    )
    write_outputs(result, snakemake.output)
