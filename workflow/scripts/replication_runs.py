"""Snakemake adapter: the seed chunks, combined in the order of one job doing every seed."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.readings import replication

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    chunks = [pd.read_parquet(path) for path in snakemake.input.chunks]
    runs = replication.combine_chunks(chunks, snakemake.params.policies)
    runs.to_csv(snakemake.output.runs, index=False)
