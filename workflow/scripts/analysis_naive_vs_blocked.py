"""Snakemake adapter: naive versus blocked standard errors, F tests and significance counts."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.errors import script_context
from evalbars.readings.naive_vs_blocked import (
    LOGISTIC_COLUMNS,
    MIXED_COLUMNS,
    PAIRWISE_COLUMNS,
    naive_vs_blocked,
    naive_vs_blocked_display,
)

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha = snakemake.params.alpha
    # Only the columns the summary reads: the pair tables hold K(K-1)/2 rows per fit.
    table = naive_vs_blocked(
        pd.read_parquet(snakemake.input.pairwise, columns=list(PAIRWISE_COLUMNS)),
        pd.read_csv(snakemake.input.omnibus),
        pd.read_parquet(snakemake.input.contrasts, columns=list(MIXED_COLUMNS)),
        alpha,
        pd.read_parquet(snakemake.input.logistic, columns=list(LOGISTIC_COLUMNS)),
    )
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption="Naive versus blocked analyses of the same data; ratios are relative to the naive row.",
        display=naive_vs_blocked_display(table, alpha),
        align_right=["Value", "vs naive"],
    )
