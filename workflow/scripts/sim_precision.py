"""Snakemake adapter: interval half-widths and questions needed per gap (closed forms)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.stats.precision import precision_tables

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params.precision
    items = (
        pd.read_parquet(snakemake.input.item_table) if snakemake.input.get("item_table") else None
    )
    tables = precision_tables(
        questions=p["questions"],
        gaps=p["gaps"],
        rate=p["rate"],
        sds=p["sds"],
        level=snakemake.params.level,
        disagreements=p["disagreements"],
        items=items,
    )
    tables.precision.to_csv(snakemake.output.precision, index=False)
    tables.questions_needed.to_csv(snakemake.output.questions_needed, index=False)
