"""Snakemake adapter: the replication check on one chunk of subsample seeds
(:func:`evalbars.jobs.replication.chunk`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import replication
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = replication.chunk(
        pd.read_parquet(snakemake.input.item_table),
        chunk=int(snakemake.wildcards.chunk),
        policies=p.policies,
        n=p.n,
        n_seeds=p.n_seeds,
        seed=p.seed,
        jobs=p.jobs,
        configured_seed=p.subsample_seed,
        alpha=p.alpha,
        items_policy=p.items_policy,
        policy_seed=p.policy_seed,
    )
    write_outputs(result, snakemake.output)
