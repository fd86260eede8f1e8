"""Snakemake adapter: the precision figures (:func:`evalbars.jobs.figures.precision_figures`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    result = figures.precision_figures(
        pd.read_parquet(snakemake.input.precision),
        pd.read_parquet(snakemake.input.questions_needed),
        level=snakemake.params.level,
    )
    write_outputs(result, snakemake.output)
