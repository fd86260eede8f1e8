"""Snakemake adapter: naive versus blocked standard errors, F tests and significance counts."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import report
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha = snakemake.params.alpha
    tables = {name: pd.read_csv(path) for name, path in snakemake.input.items()}
    table = report.naive_vs_blocked(
        tables["pairwise"], tables["omnibus"], tables["contrasts"], alpha
    )
    report.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption="Naive versus blocked analyses of the same data; ratios are relative to the naive row.",
        display=report.naive_vs_blocked_display(table, alpha),
        align_right=["Value", "vs naive"],
    )
