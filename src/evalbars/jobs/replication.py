"""The replication stage's jobs (``workflow/rules/replication.smk``): the paper's reported
numbers against our distribution over subsample seeds. The table beside its figure is drawn by
:mod:`evalbars.jobs.figures.replication`."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, parquet_files, reads
from evalbars.jobs.outputs import Frame, Table
from evalbars.readings import replication

__all__ = ["replication_chunk", "replication_runs"]


@reads(item_table=parquet())
def replication_chunk(item_table: pd.DataFrame, *, chunk: int, **settings) -> dict:
    """``replication_chunk``: every reported quantity for each missing-prediction policy, on
    one chunk of the seed list (``runs``; Parquet, so that float64 values come back bit for
    bit and the combined CSV is the same for any number of chunks). ``settings`` are
    :func:`evalbars.readings.replication.replication_chunk`'s."""
    return {"runs": Frame(replication.replication_chunk(item_table, chunk=chunk, **settings))}


@reads(chunks=parquet_files)
def replication_runs(chunks: list, *, policies) -> dict:
    """``replication_runs``: the chunks in one table, policy by policy, the configured seed
    first (``replication_seeds``)."""
    return {"replication_seeds": Table(replication.combine_chunks(list(chunks), policies))}
