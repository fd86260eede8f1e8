"""Snakemake adapter: the report's first screen (results/report/landing.html)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.readings.claims import read_claims_table
from evalbars.render import landing

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    inputs = snakemake.input
    items = pd.read_parquet(inputs.item_table, columns=["model", "question_id", "category"])
    models = pd.read_csv(inputs.models)
    checked = json.loads(Path(inputs.checked).read_text())
    claims_table = read_claims_table(inputs.claims)
    page = landing.landing_html(
        models_text=landing.models_sentence(
            models["model"].tolist(),
            questions=items["question_id"].nunique(),
            categories=items["category"].nunique(),
            samples=len(items),
        ),
        notes=checked["notes"],
        claims_table=claims_table,
        example_claim=checked["example"],
        claims_png=Path(inputs.claims_png).read_bytes() if len(claims_table) else None,
        naive_vs_blocked=pd.read_csv(inputs.naive_vs_blocked),
        pairwise=pd.read_parquet(inputs.pairwise),
        ranks=pd.read_csv(inputs.ranks),
        models_table=models,
        alpha=snakemake.params.alpha,
    )
    Path(snakemake.output.html).write_text(page)
