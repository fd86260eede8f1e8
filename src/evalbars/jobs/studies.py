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
from evalbars.stats.planning.precision import precision_tables
from evalbars.studies import combine_settings
from evalbars.studies.clustered import simulate_clustered
from evalbars.studies.fwer import simulate_fwer
from evalbars.studies.leaderboard import simulate_leaderboard

__all__ = [
    "leaderboard_setting",
    "precision",
    "fwer_setting",
    "clustered_setting",
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
