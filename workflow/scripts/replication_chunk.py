"""Snakemake adapter: the paper's quantities for one chunk of the subsample seeds, every policy."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.readings import replication

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    runs = replication.replication_chunk(
        pd.read_parquet(snakemake.input.item_table),
        policies=p.policies,
        n=p.n,
        n_seeds=p.n_seeds,
        seed=p.seed,
        jobs=p.jobs,
        chunk=int(snakemake.wildcards.chunk),
        configured_seed=p.subsample_seed,
        alpha=p.alpha,
        items_policy=p.items_policy,
        policy_seed=p.policy_seed,
    )
    # Parquet, not CSV: float64 values come back bit for bit, so the combined CSV is the same.
    runs.to_parquet(snakemake.output.runs, index=False)
