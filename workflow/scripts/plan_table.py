"""Snakemake adapter: questions needed per gap and multiplicity procedure (results/tables/plan.*)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.errors import script_context
from evalbars.stats import planning

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    setting = planning.data_setting(pd.read_parquet(snakemake.input.item_table))
    table = planning.plan_table(
        models=setting["models"],
        gaps=[g / 100 for g in p.gaps],
        disagreement=setting["disagreement"],
        alpha=p.alpha,
        power=p.power,
        claims=len(json.loads(Path(snakemake.input.claims).read_text())["claims"]),
        questions=setting["questions"],
        mean_accuracy=setting["mean_accuracy"],
        seed=p.seed,
    )
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption=planning.plan_caption(table, setting, p.alpha, p.power),
    )
