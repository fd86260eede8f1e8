"""The jobs that draw: every figure of the workflow (``*_figure(s)`` rules) and the table jobs
whose figure is made with their table (logistic verdicts, every pair in every category, the
replication check). Only these import matplotlib, so that the other jobs start faster.
"""

from __future__ import annotations

import pandas as pd

from evalbars.data.scores import WideScores, accuracy_order
from evalbars.jobs.outputs import Table
from evalbars.readings import category_pairwise as category_tests
from evalbars.readings import logistic_verdicts, replication
from evalbars.render.figures.claims import category_heatmap, claims_figure
from evalbars.render.figures.clustered import clustered_figure
from evalbars.render.figures.fwer import methods_figure, models_figure, power_figure
from evalbars.render.figures.leaderboard import leaderboard_figures as leaderboard_figure_set
from evalbars.render.figures.logistic import logistic_verdicts_figure
from evalbars.render.figures.precision import halfwidth_figure, questions_needed_figure
from evalbars.render.figures.ranks import forest_figure, rank_overview_figure, rank_range_figure
from evalbars.render.figures.replication import replication_figure
from evalbars.render.figures.style import FigureOutput
from evalbars.render.figures.verdicts import verdicts_figure

__all__ = [
    "logistic_verdicts_table",
    "claims_figures",
    "category_pairwise",
    "ranks_figures",
    "leaderboard_figures",
    "comparison",
    "leaderboard_luck_figures",
    "precision_figures",
    "fwer_figures",
    "clustered_figures",
]


def logistic_verdicts_table(
    lmm_contrasts: pd.DataFrame,
    logistic_contrasts: pd.DataFrame,
    logistic_fits: pd.DataFrame,
    *,
    alpha: float,
) -> dict:
    """``analysis_logistic_verdicts``: each pair's verdict under the linear mixed model, the
    logistic mixed model and GEE, side by side, with its figure.

    ``lmm_contrasts`` holds the blocked specification's rows (the linear model with the
    logistic models' random effects).
    """
    # why the logistic models were not fitted, from their summary (not from the item table)
    obstacle = logistic_verdicts.not_fitted_reason(logistic_fits)
    if obstacle is None:
        verdicts = logistic_verdicts.verdict_table(lmm_contrasts, logistic_contrasts, alpha)
    else:
        verdicts = pd.DataFrame(columns=logistic_verdicts.VERDICT_COLUMNS)
    return {
        "logistic_verdicts": Table(
            verdicts,
            caption=f"Each pair's verdict (Holm, alpha = {alpha:g}) under the linear mixed "
            "model, the logistic mixed model and GEE; differences in accuracy, logistic verdicts "
            "on the log odds ratio.",
        ),
        "logistic_verdicts_figure": FigureOutput(logistic_verdicts_figure(verdicts, obstacle)),
    }


def claims_figures(table: pd.DataFrame) -> dict:
    """``claims_figure``: each claim's intervals against its threshold (``claims_figure``)."""
    return {"claims_figure": FigureOutput(claims_figure(table))}


def category_pairwise(
    wide: WideScores, *, alpha: float, max_models: int | None, max_systems: int
) -> dict:
    """``category_pairwise``: every pair in every category with Holm and Benjamini-Hochberg,
    the per-pair summary and the heatmap (``category_pairwise``, ``category_summary``,
    ``category_pairwise_figure``). On data with a single category there is nothing per
    category: the tables are empty and the figure says so."""
    result = category_tests.compare_categories(wide, alpha=alpha, max_models=max_models)
    table, summary = result.table, result.summary
    scope = (
        f"the {len(result.models)} most accurate of {len(wide.models):,} models"
        if len(result.models) < len(wide.models)
        else "every pair"
    )
    # display.max_systems limits what the heatmap draws, never the tests
    drawn = accuracy_order(wide)[:max_systems]
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


def ranks_figures(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``ranks_figures``: the forest plot (tiers shaded), rank ranges, and every system."""
    return {
        "ranks_forest": FigureOutput(forest_figure(table, level, max_systems)),
        "ranks_range": FigureOutput(rank_range_figure(table, level, max_systems)),
        "ranks_overview": FigureOutput(rank_overview_figure(table, level)),
    }


def leaderboard_figures(table: pd.DataFrame, *, level: float, max_systems: int) -> dict:
    """``leaderboard_figure``: the board with intervals and letters, and the resolution strip."""
    return {"leaderboard_verdicts": FigureOutput(verdicts_figure(table, level, max_systems))}


def comparison(runs: pd.DataFrame) -> dict:
    """``replication_table``: each reported number beside our value and its spread over the
    seeds, and the figure (``replication``, ``replication_figure``)."""
    table = replication.replication_table(runs)
    return {
        "replication": Table(
            table,
            caption=replication.replication_summary(table),
            formats={"paper_percentile": ".1f"},
        ),
        "replication_figure": FigureOutput(replication_figure(runs, table)),
    }


def leaderboard_luck_figures(
    table: pd.DataFrame, runs: pd.DataFrame, one_run: pd.DataFrame, *, spread, level: float
) -> dict:
    """``sim_leaderboard_figures``: the five figures of the leaderboard-luck explainer."""
    figures = leaderboard_figure_set(table, runs, one_run, spread=spread, level=level)
    return {name: FigureOutput(figure) for name, figure in figures.items()}


def precision_figures(precision: pd.DataFrame, needed: pd.DataFrame, *, level: float) -> dict:
    """``sim_precision_figures``: half-width over N, and questions needed per gap."""
    rate = float(precision["rate"].iloc[0])
    return {
        "halfwidth": FigureOutput(halfwidth_figure(precision, level)),
        "questions_needed": FigureOutput(questions_needed_figure(needed, rate)),
    }


def fwer_figures(table: pd.DataFrame, *, figure: dict) -> dict:
    """``sim_fwer_figures``: FWER by method, across K, and power under a true gap, at the
    configured number of models and questions."""
    models, questions = figure["models"], figure["questions"]
    return {
        "methods": FigureOutput(methods_figure(table, models, questions)),
        "models": FigureOutput(models_figure(table, questions)),
        "power": FigureOutput(power_figure(table, models)),
    }


def clustered_figures(table: pd.DataFrame, *, level: float) -> dict:
    """``sim_clustered_figure``: naive and clustered SEs against the truth, and coverage."""
    return {"sim_clustered": FigureOutput(clustered_figure(table, level))}
