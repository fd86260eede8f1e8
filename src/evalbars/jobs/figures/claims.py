"""The claims stage's jobs that draw (``workflow/rules/claims.smk``): each claim's intervals
against its threshold, and every pair in every category with its heatmap."""

from __future__ import annotations

import pandas as pd

from evalbars.data.scores import WideScores, accuracy_order, read_wide_scores
from evalbars.jobs.inputs import parquet, reads
from evalbars.jobs.outputs import Table
from evalbars.readings import category_pairwise as category_tests
from evalbars.render.figures.claims import category_heatmap
from evalbars.render.figures.claims import claims_figure as draw_claims
from evalbars.render.figures.style import FigureOutput

__all__ = ["claims_figure", "category_pairwise"]


@reads(table=parquet())
def claims_figure(table: pd.DataFrame) -> dict:
    """``claims_figure``: each claim's intervals against its threshold (``claims_figure``), from
    the claims ``table``."""
    return {"claims_figure": FigureOutput(draw_claims(table))}


@reads(scores=read_wide_scores)
def category_pairwise(
    scores: WideScores, *, alpha: float, max_models: int | None, max_systems: int
) -> dict:
    """``category_pairwise``: every pair in every category with Holm and Benjamini-Hochberg,
    the per-pair summary and the heatmap (``category_pairwise``, ``category_summary``,
    ``category_pairwise_figure``). ``max_models`` limits the family of tests (default every
    model), ``max_systems`` only what the heatmap draws. On data with a single category there
    is nothing per category: the tables are empty and the figure says so."""
    result = category_tests.compare_categories(scores, alpha=alpha, max_models=max_models)
    table, summary = result.table, result.summary
    scope = (
        f"the {len(result.models)} most accurate of {len(scores.models):,} models"
        if len(result.models) < len(scores.models)
        else "every pair"
    )
    # display.max_systems limits what the heatmap draws, never the tests
    drawn = accuracy_order(scores)[:max_systems]
    return {
        "category_pairwise": Table(
            table,
            caption=f"Pairs in every category ({scope}); Holm and Benjamini-Hochberg adjust the "
            f"exact McNemar p over all {len(table)} category x pair tests; alpha = {alpha:g}.",
        ),
        "category_summary": Table(
            summary,
            caption="Per pair: naive category wins and how many survive each correction; "
            "homogeneity of the gap across categories.",
        ),
        "category_pairwise_figure": FigureOutput(
            category_heatmap(category_tests.pairs_among(table, drawn))
        ),
    }
