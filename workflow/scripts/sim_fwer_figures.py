"""Snakemake adapter: the family-wise error figures (:func:`evalbars.jobs.figures.fwer_figures`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = pd.read_parquet(snakemake.input.table)
    write_outputs(figures.fwer_figures(table, figure=snakemake.params.figure), snakemake.output)
