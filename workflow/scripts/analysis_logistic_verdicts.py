"""Snakemake adapter: each pair's verdict under the linear mixed model, the logistic mixed model
and GEE, side by side (:func:`evalbars.jobs.figures.logistic_verdicts_table`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs
from evalbars.readings.logistic_verdicts import LMM_COLUMNS, LOGISTIC_COLUMNS
from evalbars.stats.mixed.common import BLOCKED_SPECS

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    inputs = snakemake.input
    # only the columns the table reads, of the linear model with the logistic models' random
    # effects: the contrast tables hold K(K-1)/2 rows per fit
    lmm = pd.read_parquet(
        inputs.lmm_contrasts,
        columns=list(LMM_COLUMNS),
        filters=[("model_spec", "in", list(BLOCKED_SPECS))],
    )
    contrasts = pd.read_parquet(
        inputs.logistic_contrasts, columns=["method", "model_a", "model_b", *LOGISTIC_COLUMNS]
    )
    fits = pd.read_parquet(inputs.logistic_fits)
    result = figures.logistic_verdicts_table(lmm, contrasts, fits, alpha=snakemake.params.alpha)
    write_outputs(result, snakemake.output)
