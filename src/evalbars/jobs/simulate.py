"""The simulate stage's jobs (``workflow/rules/simulate.smk``): one job per row of a study's
grid, and the settings combined into one table per study. The figures are drawn by
:mod:`evalbars.jobs.figures.simulate`.

A setting's tables go to Parquet (what the combining job reads); a study's combined table is
written as CSV for people and Parquet for its figures. A setting is the row of the grid the
rule's ``setting`` param gives (its wildcards, a Snakemake ``Paramspace`` instance).
"""

from __future__ import annotations

import logging
import time

import pandas as pd

from evalbars.jobs.inputs import parquet, parquet_files, reads
from evalbars.jobs.outputs import Frame, Table
from evalbars.stats.planning.precision import precision_tables
from evalbars.studies import combine_settings
from evalbars.studies.clustered import simulate_clustered
from evalbars.studies.fwer import simulate_fwer
from evalbars.studies.leaderboard import simulate_leaderboard

__all__ = [
    "sim_leaderboard",
    "sim_leaderboard_table",
    "sim_precision",
    "sim_fwer",
    "sim_fwer_table",
    "sim_clustered",
    "sim_clustered_table",
]

log = logging.getLogger("evalbars")


def _timed(setting, simulate, **arguments):
    """``simulate(**arguments)``, with the setting's time in the job's log."""
    start = time.perf_counter()
    result = simulate(**arguments)
    log.info("simulated %s in %.3f s", setting, time.perf_counter() - start)
    return result


def sim_leaderboard(*, setting: dict, runs: int, true_rates, seed: int, level: float) -> dict:
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


@reads(settings=parquet_files)
def sim_leaderboard_table(settings: list, *, sort_by) -> dict:
    """``sim_leaderboard_table``: the leaderboard-luck settings in one table (``leaderboard``),
    sorted by ``sort_by`` (independent of the order the settings ran in)."""
    return {"leaderboard": Table(combine_settings(settings, sort_by))}


@reads(item_table=parquet())
def sim_precision(item_table: pd.DataFrame | None = None, *, precision: dict, level: float) -> dict:
    """``sim_precision``: interval half-widths and questions needed (closed forms) over the
    config's ``precision`` settings; with the subsample's ``item_table``
    (``simulation.precision.from_data``), also the real models' median disagreement."""
    result = precision_tables(
        questions=precision["questions"],
        gaps=precision["gaps"],
        rate=precision["rate"],
        sds=precision["sds"],
        level=level,
        disagreements=precision["disagreements"],
        items=item_table,
    )
    return {
        "precision": Table(result.precision),
        "questions_needed": Table(result.questions_needed),
    }


def sim_fwer(
    *,
    setting: dict,
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


@reads(settings=parquet_files)
def sim_fwer_table(settings: list, *, sort_by) -> dict:
    """``sim_fwer_table``: the family-wise error settings in one table (``fwer``), sorted by
    ``sort_by``."""
    return {"fwer": Table(combine_settings(settings, sort_by))}


def sim_clustered(
    *,
    setting: dict,
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


@reads(settings=parquet_files)
def sim_clustered_table(settings: list, *, sort_by) -> dict:
    """``sim_clustered_table``: the clustered-questions settings in one table (``clustered``),
    sorted by ``sort_by``."""
    return {"clustered": Table(combine_settings(settings, sort_by))}
