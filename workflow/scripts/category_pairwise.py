"""Snakemake adapter: every pair in every category, corrections, homogeneity, heatmap."""

from typing import TYPE_CHECKING

from evalbars import category_pairwise, tables
from evalbars.errors import script_context
from evalbars.figures.claims import category_heatmap
from evalbars.figures.style import save_figure
from evalbars.scores import accuracy_order, read_wide_scores

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    out, alpha = snakemake.output, snakemake.params.alpha
    everyone = read_wide_scores(snakemake.input.item_table)
    # A thousand models make half a million pairs in every category: compare the top ones.
    top = set(accuracy_order(everyone)[: snakemake.params.max_systems])
    # in the item table's model order, so the sums (and their last digits) do not depend on it
    wide = everyone.columns([model for model in everyone.models if model in top])
    scope = (
        f"the {len(top)} most accurate of {len(everyone.models):,} models"
        if len(top) < len(everyone.models)
        else "every pair"
    )
    table = category_pairwise.category_pairwise_table(wide, alpha)
    summary = category_pairwise.category_summary(table, wide)
    tables.write_table(
        table,
        out.csv,
        out.md,
        out.tex,
        parquet_path=out.parquet,
        shown_path=out.shown,
        caption=f"Pairs in every category ({scope}); Holm and Benjamini-Hochberg adjust the "
        f"exact McNemar p over all {len(table)} category x pair tests; alpha = {alpha:g}.",
    )
    tables.write_table(
        summary,
        out.summary_csv,
        out.summary_md,
        out.summary_tex,
        caption="Per pair: naive category wins and how many survive each correction; "
        "homogeneity of the gap across categories.",
    )
    save_figure(category_heatmap(table), out.png, out.svg)
