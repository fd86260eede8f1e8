"""Snakemake adapter: omnibus tests (RM-ANOVA, one-way ANOVA, Friedman, Cochran's Q)."""

from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.stats import omnibus

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    table = omnibus.omnibus_table(wide)
    tables.write_table(
        table,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.tex,
        caption="Omnibus tests that all models have equal accuracy "
        "(rm_anova_gg: Greenhouse-Geisser corrected degrees of freedom).",
    )
