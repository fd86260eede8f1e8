"""Snakemake adapter: the report's first screen (:func:`evalbars.jobs.report.landing`)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.jobs import report
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    inputs = snakemake.input
    result = report.landing(
        pd.read_parquet(inputs.item_table, columns=["model", "question_id", "category"]),
        models=pd.read_parquet(inputs.models),
        checked=json.loads(Path(inputs.checked).read_text()),
        claims=pd.read_parquet(inputs.claims),
        claims_png=Path(inputs.claims_png).read_bytes(),
        naive_vs_blocked=pd.read_parquet(inputs.naive_vs_blocked),
        pairwise=pd.read_parquet(inputs.pairwise),
        ranks=pd.read_parquet(inputs.ranks),
        alpha=snakemake.params.alpha,
        judge_corrected=(
            pd.read_parquet(inputs.judge_corrected) if "judge_corrected" in inputs.keys() else None
        ),
    )
    write_outputs(result, snakemake.output)
