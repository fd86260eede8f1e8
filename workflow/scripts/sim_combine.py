"""Snakemake adapter: a study's settings in one table (:func:`evalbars.jobs.studies.combined`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import studies
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    settings = [pd.read_parquet(path) for path in snakemake.input.settings]
    write_outputs(studies.combined(p.study, settings, sort_by=p.sort_by), snakemake.output)
