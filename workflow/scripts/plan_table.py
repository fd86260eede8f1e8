"""Snakemake adapter: questions needed per gap and multiplicity procedure (results/tables/plan.*)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars import planning, tables
from evalbars.errors import script_context
from evalbars.precision import disagreement_rates
from evalbars.scores import wide_scores

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    items = pd.read_parquet(snakemake.input.item_table)
    wide = wide_scores(items)
    delta = float(disagreement_rates(items)["disagreement"].median())
    table = planning.plan_table(
        models=len(wide.models),
        gaps=[g / 100 for g in p.gaps],
        disagreement=delta,
        alpha=p.alpha,
        power=p.power,
        claims=len(json.loads(Path(snakemake.input.claims).read_text())["claims"]),
        questions=len(wide.question_ids),
        seed=p.seed,
    )
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption=f"Questions needed for a paired test to find each gap with power {p.power:g} at "
        f"alpha = {p.alpha:g}, {len(wide.models)} models, at the median disagreement rate of the "
        f"data ({delta:.3f}); detectable gap at the data's {len(wide.question_ids):,} questions.",
    )
