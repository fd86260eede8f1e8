"""Snakemake adapter: the configured claims checked against the data before the claims stage
writes anything (:func:`evalbars.jobs.claims.checked_claims`)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import claims
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    items = pd.read_parquet(
        snakemake.input.item_table, columns=["model", "question_id", "category", "correct"]
    )
    result = claims.checked_claims(
        claims.model_accuracy(items),
        items["category"].unique(),
        claims=p.claims,
        notes=p.notes,
        answered=items,
    )
    write_outputs(result, snakemake.output)
