"""Snakemake adapter: the replication table (paper value vs our distribution) and its figure."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import replication, report
from evalbars.plotting import save_figure
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    runs = pd.read_csv(snakemake.input.runs)
    table = replication.replication_table(runs)
    out = snakemake.output
    report.write_table(
        table,
        out.csv,
        out.md,
        out.tex,
        caption=replication.replication_summary(table),
        formats={"paper_percentile": ".1f"},
    )
    save_figure(replication.replication_figure(runs, table), out.png, out.svg)
