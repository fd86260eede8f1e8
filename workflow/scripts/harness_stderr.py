"""Snakemake adapter: the audit of the standard errors the harnesses published
(:func:`evalbars.jobs.data.harness_stderr`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import data
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    items = pd.read_parquet(snakemake.input.item_table)
    write_outputs(data.harness_stderr(items, snakemake.params.sources), snakemake.output)
