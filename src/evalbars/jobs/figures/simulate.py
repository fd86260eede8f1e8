"""The simulate stage's jobs that draw (``workflow/rules/simulate.smk``): the figures of the
leaderboard-luck, precision, family-wise error and clustered-questions studies."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.clustered import clustered_figure
from evalbars.render.figures.fwer import methods_figure, models_figure, power_figure
from evalbars.render.figures.leaderboard import leaderboard_figures
from evalbars.render.figures.precision import halfwidth_figure, questions_needed_figure
from evalbars.render.figures.style import FigureOutput

__all__ = [
    "sim_leaderboard_figures",
    "sim_precision_figures",
    "sim_fwer_figures",
    "sim_clustered_figure",
]


@reads(table=parquet(), runs=parquet(), one_run=parquet())
def sim_leaderboard_figures(
    table: pd.DataFrame, runs: pd.DataFrame, one_run: pd.DataFrame, *, spread, level: float
) -> dict:
    """``sim_leaderboard_figures``: the five figures of the leaderboard-luck explainer, from
    the study's ``table`` and the ``runs`` and ``one_run`` of the setting the figures show."""
    figures = leaderboard_figures(table, runs, one_run, spread=spread, level=level)
    return {name: FigureOutput(figure) for name, figure in figures.items()}


@reads(precision=parquet(), questions_needed=parquet())
def sim_precision_figures(
    precision: pd.DataFrame, questions_needed: pd.DataFrame, *, level: float
) -> dict:
    """``sim_precision_figures``: half-width over N, and questions needed per gap."""
    rate = float(precision["rate"].iloc[0])
    return {
        "halfwidth": FigureOutput(halfwidth_figure(precision, level)),
        "questions_needed": FigureOutput(questions_needed_figure(questions_needed, rate)),
    }


@reads(table=parquet())
def sim_fwer_figures(table: pd.DataFrame, *, figure: dict) -> dict:
    """``sim_fwer_figures``: FWER by method, across K, and power under a true gap, at the
    configured number of models and questions (``figure``)."""
    models, questions = figure["models"], figure["questions"]
    return {
        "methods": FigureOutput(methods_figure(table, models, questions)),
        "models": FigureOutput(models_figure(table, questions)),
        "power": FigureOutput(power_figure(table, models)),
    }


@reads(table=parquet())
def sim_clustered_figure(table: pd.DataFrame, *, level: float) -> dict:
    """``sim_clustered_figure``: naive and clustered SEs against the truth, and coverage."""
    return {"sim_clustered": FigureOutput(clustered_figure(table, level))}
