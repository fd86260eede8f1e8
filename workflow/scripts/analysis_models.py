"""Snakemake adapter: per-model accuracy (the paper's Table 1, extended) and what epochs buy."""

from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.stats.accuracy import accuracy_table, sampling_variance_table

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    level, out = snakemake.params.level, snakemake.output
    accuracy = accuracy_table(wide, level)
    tables.write_table(
        accuracy,
        out.csv,
        out.md,
        out.tex,
        caption=f"Per-model accuracy over all samples, naive, question-clustered and "
        f"category-clustered SE, {level:.0%} Wilson interval at the effective sample size.",
    )
    tables.write_table(
        sampling_variance_table(wide, accuracy),
        out.sampling_csv,
        out.sampling_md,
        caption="Score variance between and within questions, and the SE at one epoch, the "
        "observed epochs and twice as many (empty where no question has two samples).",
    )
