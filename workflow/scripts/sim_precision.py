"""Snakemake adapter: interval half-widths and questions needed
(:func:`evalbars.jobs.studies.precision`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import studies
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = snakemake.input.get("item_table")
    items = pd.read_parquet(table) if table else None
    result = studies.precision(
        snakemake.params.precision, level=snakemake.params.level, items=items
    )
    write_outputs(result, snakemake.output)
