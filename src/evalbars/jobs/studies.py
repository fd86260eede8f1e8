"""The simulate stage's jobs (``workflow/rules/simulate.smk``): one job per row of a study's
grid, the settings combined into one table per study, and the figures.

A setting's tables go to Parquet (what the combining job reads); a study's combined table is
written as CSV for people and Parquet for its figures.
"""

from __future__ import annotations

import logging
import time

import pandas as pd

from evalbars.jobs.outputs import Frame, Table
from evalbars.render.figures.clustered import clustered_figure
from evalbars.render.figures.fwer import methods_figure, models_figure, power_figure
from evalbars.render.figures.leaderboard import leaderboard_figures as leaderboard_figure_set
from evalbars.render.figures.precision import halfwidth_figure, questions_needed_figure
from evalbars.render.figures.style import FigureOutput
from evalbars.stats.precision import precision_tables
from evalbars.studies import combine_settings
from evalbars.studies.clustered import simulate_clustered
from evalbars.studies.fwer import simulate_fwer
from evalbars.studies.leaderboard import simulate_leaderboard

__all__ = [
    "leaderboard_setting",
    "leaderboard_figures",
    "precision",
    "precision_figures",
    "fwer_setting",
    "fwer_figures",
    "clustered_setting",
    "clustered_figures",
    "combined",
]

log = logging.getLogger("evalbars")


def _timed(setting, simulate, **arguments):
    """``simulate(**arguments)``, with the setting's time in the job's log."""
    start = time.perf_counter()
    result = simulate(**arguments)
    log.info("simulated %s in %.3f s", setting, time.perf_counter() - start)
    return result


def leaderboard_setting(setting: dict, *, runs: int, true_rates, seed: int, level: float) -> dict:
    """``sim_leaderboard``: one (questions, spread) setting of the leaderboard-luck study
    (``summary``, ``runs``, ``one_run``)."""
    result = _timed(
        setting,
        simulate_leaderboard,
        questions=setting["questions"],
        spread=setting["spread"],
        runs=runs,
        seed=seed,
        base_rates=true_rates,
        level=level,
    )
    return {name: Frame(pd.DataFrame(table)) for name, table in result._asdict().items()}


def combined(name: str, settings, *, sort_by) -> dict:
    """``sim_*_table``: a study's settings in one table, sorted (independent of the order the
    settings ran in)."""
    return {name: Table(combine_settings(settings, sort_by))}


def leaderboard_figures(
    table: pd.DataFrame, runs: pd.DataFrame, one_run: pd.DataFrame, *, spread, level: float
) -> dict:
    """``sim_leaderboard_figures``: the five figures of the leaderboard-luck explainer."""
    figures = leaderboard_figure_set(table, runs, one_run, spread=spread, level=level)
    return {name: FigureOutput(figure) for name, figure in figures.items()}


def precision(settings: dict, *, level: float, items: pd.DataFrame | None) -> dict:
    """``sim_precision``: interval half-widths and questions needed (closed forms; with
    ``items``, also the real models' median disagreement)."""
    result = precision_tables(
        questions=settings["questions"],
        gaps=settings["gaps"],
        rate=settings["rate"],
        sds=settings["sds"],
        level=level,
        disagreements=settings["disagreements"],
        items=items,
    )
    return {
        "precision": Table(result.precision),
        "questions_needed": Table(result.questions_needed),
    }


def precision_figures(precision: pd.DataFrame, needed: pd.DataFrame, *, level: float) -> dict:
    """``sim_precision_figures``: half-width over N, and questions needed per gap."""
    rate = float(precision["rate"].iloc[0])
    return {
        "halfwidth": FigureOutput(halfwidth_figure(precision, level)),
        "questions_needed": FigureOutput(questions_needed_figure(needed, rate)),
    }


def fwer_setting(
    setting: dict,
    *,
    replications: int,
    alpha: float,
    mean_accuracy: float,
    concentration: float,
    seed: int,
) -> dict:
    """``sim_fwer``: one setting of the family-wise error study (``summary``)."""
    table = _timed(
        setting,
        simulate_fwer,
        **setting,
        replications=replications,
        alpha=alpha,
        mean_accuracy=mean_accuracy,
        concentration=concentration,
        seed=seed,
    )
    return {"summary": Frame(pd.DataFrame(table))}


def fwer_figures(table: pd.DataFrame, *, figure: dict) -> dict:
    """``sim_fwer_figures``: FWER by method, across K, and power under a true gap, at the
    configured number of models and questions."""
    models, questions = figure["models"], figure["questions"]
    return {
        "methods": FigureOutput(methods_figure(table, models, questions)),
        "models": FigureOutput(models_figure(table, questions)),
        "power": FigureOutput(power_figure(table, models)),
    }


def clustered_setting(
    setting: dict,
    *,
    questions: int,
    replications: int,
    mean_accuracy: float,
    level: float,
    seed: int,
) -> dict:
    """``sim_clustered``: one setting of the clustered-questions study (``summary``)."""
    table = _timed(
        setting,
        simulate_clustered,
        **setting,
        questions=questions,
        replications=replications,
        mean_accuracy=mean_accuracy,
        level=level,
        seed=seed,
    )
    return {"summary": Frame(pd.DataFrame(table))}


def clustered_figures(table: pd.DataFrame, *, level: float) -> dict:
    """``sim_clustered_figure``: naive and clustered SEs against the truth, and coverage."""
    return {"sim_clustered": FigureOutput(clustered_figure(table, level))}
