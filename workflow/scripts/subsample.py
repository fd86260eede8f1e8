"""Snakemake adapter: draw the seeded category-stratified subsample."""

import json
import shutil
from typing import TYPE_CHECKING

import pandas as pd

import evalbars
from evalbars.data.items import write_item_table
from evalbars.data.sampling import keep_questions, stratified_subsample
from evalbars.data.scores import SCORE_COLUMNS, wide_scores, write_wide_scores
from evalbars.errors import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    # The draw needs only the score columns; the whole table is read only if questions drop out.
    scores = pd.read_parquet(snakemake.input.item_table, columns=SCORE_COLUMNS)
    drawn = stratified_subsample(scores, p.n, p.seed, p.question_set)
    if len(drawn.items) == len(scores):
        # Every question kept (subsample.n: all): the subsample is the item table, byte for byte.
        shutil.copyfile(snakemake.input.item_table, snakemake.output.item_table)
    else:
        items = pd.read_parquet(snakemake.input.item_table)
        write_item_table(keep_questions(items, drawn.questions), snakemake.output.item_table)
    drawn.questions.to_csv(snakemake.output.questions, index=False)
    wide = wide_scores(drawn.items)
    write_wide_scores(wide, snakemake.output.scores)
    drawn.allocation.to_csv(snakemake.output.allocation, index=False)
    manifest = {
        "n": snakemake.params.n,
        "seed": snakemake.params.seed,
        "question_set": snakemake.params.question_set,
        "questions": len(drawn.questions),
        "models": wide.models,  # sorted names
        "not_eligible": drawn.n_dropped,
        "evalbars_version": evalbars.__version__,
    }
    with open(snakemake.output.manifest, "w") as fh:
        json.dump(manifest, fh, indent=2)
