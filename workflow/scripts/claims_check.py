"""Snakemake adapter: the claims to test, checked against the analysed models and categories
before the claims stage writes anything (results/claims/claims.json)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.readings.claim_parsing import check_claims

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    items = pd.read_parquet(snakemake.input.item_table, columns=["model", "category", "correct"])
    check_claims(p.claims, sorted(items["model"].unique()), sorted(items["category"].unique()))
    # A claim in the analysed models' own names, for the report to offer when none is given.
    leaders = items.groupby("model", observed=True)["correct"].mean().sort_values(ascending=False)
    example = f"{leaders.index[0]} > {leaders.index[1]}" if len(leaders) > 1 else None
    document = {"claims": list(p.claims), "notes": list(p.notes), "example": example}
    Path(snakemake.output.claims).write_text(json.dumps(document, indent=2) + "\n")
