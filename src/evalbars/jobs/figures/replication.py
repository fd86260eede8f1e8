"""The replication stage's job that draws (``workflow/rules/replication.smk``): the paper's
numbers against our distribution, table and figure."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.jobs.outputs import Table
from evalbars.readings import replication
from evalbars.render.figures.replication import replication_figure
from evalbars.render.figures.style import FigureOutput

__all__ = ["replication_table"]


@reads(runs=parquet())
def replication_table(runs: pd.DataFrame) -> dict:
    """``replication_table``: each reported number beside our value and its spread over the
    seeds of ``runs`` (``replication_runs``' table), and the figure (``replication``,
    ``replication_figure``)."""
    table = replication.replication_table(runs)
    return {
        "replication": Table(
            table,
            caption=replication.replication_summary(table),
            formats={"paper_percentile": ".1f"},
        ),
        "replication_figure": FigureOutput(replication_figure(runs, table)),
    }
