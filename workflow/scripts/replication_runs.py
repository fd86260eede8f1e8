"""Snakemake adapter: the seed chunks in one table (:func:`evalbars.jobs.replication.seeds`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import replication
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    chunks = (pd.read_parquet(path) for path in snakemake.input.chunks)
    write_outputs(replication.seeds(chunks, policies=snakemake.params.policies), snakemake.output)
