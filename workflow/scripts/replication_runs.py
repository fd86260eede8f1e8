"""Snakemake adapter: the paper's quantities for every policy and subsample seed."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import replication
from evalbars.errors import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    runs = replication.replication_runs(
        pd.read_parquet(snakemake.input.item_table),
        policies=p.policies,
        n=p.n,
        seeds=replication.subsample_seeds(p.n_seeds, p.seed),
        configured_seed=p.subsample_seed,
        alpha=p.alpha,
        items_policy=p.items_policy,
        policy_seed=p.policy_seed,
    )
    runs.to_csv(snakemake.output.runs, index=False)
