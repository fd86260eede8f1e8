"""Snakemake adapter: concatenate per-setting simulation tables into one sorted table."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.studies import combine_settings

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    frames = [pd.read_csv(path) for path in snakemake.input.settings]
    table = combine_settings(frames, snakemake.params.sort_by)
    table.to_csv(snakemake.output.table, index=False)
