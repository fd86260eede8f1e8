"""Snakemake adapter: the paper's numbers against our distribution, table and figure
(:func:`evalbars.jobs.figures.comparison`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import figures
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    runs = pd.read_parquet(snakemake.input.runs)
    write_outputs(figures.comparison(runs), snakemake.output)
