"""Snakemake adapter: questions needed per gap and multiplicity procedure
(:func:`evalbars.jobs.claims.plan`)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import claims
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = claims.plan(
        pd.read_parquet(snakemake.input.item_table),
        claims=len(json.loads(Path(snakemake.input.checked).read_text())["claims"]),
        alpha=p.alpha,
        power=p.power,
        gaps=p.gaps,
        seed=p.seed,
    )
    write_outputs(result, snakemake.output)
