"""Snakemake adapter: every pair in every category, corrections, homogeneity, heatmap."""

from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import accuracy_order, read_wide_scores
from evalbars.errors import script_context
from evalbars.readings import category_pairwise
from evalbars.render.figures.claims import category_heatmap
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    out, alpha = snakemake.output, snakemake.params.alpha
    everyone = read_wide_scores(snakemake.input.scores)
    # the family of tests: analysis.category_pairwise_models (default every model)
    result = category_pairwise.compare_categories(
        everyone, alpha=alpha, max_models=snakemake.params.max_models
    )
    table, summary = result.table, result.summary
    scope = (
        f"the {len(result.models)} most accurate of {len(everyone.models):,} models"
        if len(result.models) < len(everyone.models)
        else "every pair"
    )
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
    # display.max_systems limits what the heatmap draws, never the tests
    drawn = accuracy_order(everyone)[: snakemake.params.max_systems]
    save_figure(category_heatmap(category_pairwise.pairs_among(table, drawn)), out.png, out.svg)
