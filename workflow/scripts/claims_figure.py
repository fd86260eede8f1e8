"""Snakemake adapter: each claim's intervals against its threshold
(:func:`evalbars.jobs.figures.claims_figures`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = pd.read_parquet(snakemake.input.table)
    write_outputs(figures.claims_figures(table), snakemake.output)
