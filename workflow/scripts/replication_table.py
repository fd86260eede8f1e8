"""Snakemake adapter: the replication table (paper value vs our distribution) and its figure."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.errors import script_context
from evalbars.readings import replication
from evalbars.render.figures.replication import replication_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    runs = pd.read_csv(snakemake.input.runs)
    table = replication.replication_table(runs)
    out = snakemake.output
    tables.write_table(
        table,
        out.csv,
        out.md,
        out.tex,
        caption=replication.replication_summary(table),
        formats={"paper_percentile": ".1f"},
    )
    save_figure(replication_figure(runs, table), out.png, out.svg)
