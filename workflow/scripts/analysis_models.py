"""Snakemake adapter: per-model accuracy table (the paper's Table 1, extended)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.accuracy import accuracy_table
from evalbars.errors import script_context
from evalbars.scores import wide_scores

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = wide_scores(pd.read_parquet(snakemake.input.item_table))
    table = accuracy_table(wide, snakemake.params.level)
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption=f"Per-model accuracy, naive and category-clustered SE, "
        f"{snakemake.params.level:.0%} Wilson interval.",
    )
