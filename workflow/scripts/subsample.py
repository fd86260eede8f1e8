"""Snakemake adapter: draw the seeded category-stratified subsample."""

import json
from typing import TYPE_CHECKING

import pandas as pd

import evalbars
from evalbars.errors import script_context
from evalbars.sampling import stratified_subsample

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    items = pd.read_parquet(snakemake.input.item_table)
    p = snakemake.params
    drawn = stratified_subsample(items, p.n, p.seed, p.question_set)
    drawn.questions.to_csv(snakemake.output.questions, index=False)
    drawn.items.to_parquet(snakemake.output.item_table, index=False)
    drawn.allocation.to_csv(snakemake.output.allocation, index=False)
    manifest = {
        "n": snakemake.params.n,
        "seed": snakemake.params.seed,
        "question_set": snakemake.params.question_set,
        "questions": len(drawn.questions),
        "models": sorted(drawn.items["model"].unique()),
        "not_eligible": drawn.n_dropped,
        "evalbars_version": evalbars.__version__,
    }
    with open(snakemake.output.manifest, "w") as fh:
        json.dump(manifest, fh, indent=2)
