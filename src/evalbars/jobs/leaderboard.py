"""The leaderboard stage's job (``workflow/rules/leaderboard.smk``): what a leaderboard may print
beside its ranks, whether the benchmark can rank at all, and the best model, honestly (the top
score corrected for selection, the confidence sets for the best and the top k). Its figures are
drawn by :mod:`evalbars.jobs.figures.leaderboard`."""

from __future__ import annotations

import logging

import pandas as pd

from evalbars.data.prices import per_question_costs, usage_costs
from evalbars.data.readers import SourceOptions
from evalbars.data.readers.usage import read_usage
from evalbars.data.scores import WideScores, read_wide_scores
from evalbars.errors import ConfigError
from evalbars.jobs.inputs import parquet, reads
from evalbars.jobs.outputs import Frame, Table
from evalbars.readings.leaderboard import table as board
from evalbars.readings.leaderboard.best import best_sets, winner_readings, winner_sentence
from evalbars.readings.leaderboard.cost import cost_readings, frontier_sentence
from evalbars.readings.leaderboard.signal_noise import signal_to_noise
from evalbars.render import tables

__all__ = ["leaderboard_table", "best_model", "costs", "cost_table"]

log = logging.getLogger("evalbars")


@reads(scores=read_wide_scores)
def leaderboard_table(
    scores: WideScores,
    *,
    alpha: float,
    level: float,
    power: float,
    splits: int,
    seed: int,
    top_k: int,
) -> dict:
    """``leaderboard_table``: per system its letters, split-half stability, the resolution of
    the pair below it and its place in the confidence sets for the best and the top ``top_k``
    (``leaderboard``), the benchmark's signal-to-noise (``benchmark_quality``), and the top
    system's score naive and corrected for being the top (``winner``,
    :func:`evalbars.readings.leaderboard.best.winner_readings`)."""
    table = board.leaderboard_table(
        scores, alpha=alpha, power=power, splits=splits, seed=seed, level=level, top_k=top_k
    )
    quality = signal_to_noise(scores)
    winner = best_model(scores, level=level, seed=seed)["winner"]
    headline = board.leaderboard_headline(table, splits, alpha)
    said = winner_sentence(winner.frame, level)
    headline += f" {said}" if said else ""
    return {
        "leaderboard": Table(table, markdown=headline + "\n\n" + tables.to_markdown(table)),
        "benchmark_quality": Table(quality, markdown=tables.to_markdown(quality)),
        "winner": winner,
    }


def best_model(
    scores: WideScores,
    *,
    level: float,
    seed: int,
    alpha: float | None = None,
    top_k: int | None = None,
) -> dict:
    """The best model, honestly: the top system's score under every reading (``winner``,
    :func:`evalbars.readings.leaderboard.best.winner_readings`, the rows of ``winner.csv``)
    and, given ``alpha`` and ``top_k``, the confidence sets for the best and the top k
    (``best_set``, :func:`evalbars.readings.leaderboard.best.best_sets`, the columns of
    ``leaderboard.csv``). :func:`leaderboard_table` and :mod:`evalbars.api` take them from
    here."""
    winner = winner_readings(scores, level=level, seed=seed)
    said = winner_sentence(winner, level)
    result = {
        "winner": Table(
            winner,
            markdown=(said or "No reading of the top score (fewer than two shared questions).")
            + "\n\n"
            + tables.to_markdown(winner),
        )
    }
    if alpha is not None and top_k is not None:
        sets = best_sets(scores, alpha=alpha, top_k=top_k, seed=seed)
        result["best_set"] = Table(sets, markdown=tables.to_markdown(sets))
    return result


@reads(item_table=parquet(columns=["model", "question_id", "epoch"]))
def costs(item_table: pd.DataFrame, *, sources: list, prices: dict | None) -> dict:
    """``costs``: the cost of every (model, question) of the analysed item table ``item_table``
    (``data/costs.parquet``).

    The token usage of every predictions entry ``sources`` (:func:`evalbars.data.readers.usage.read_usage`,
    with the entry's reader options), times the price table ``prices``, or the cost a log or a
    table's ``cost`` column records (:func:`evalbars.data.prices.usage_costs`; no price is ever
    guessed). Per model and question: the mean over its samples of ``cost``,
    ``input_tokens`` and ``output_tokens``, and ``samples``; only the questions of the item
    table (the subsample's).
    """
    usage = [
        read_usage(source["path"], SourceOptions.from_entry(source), required=False)
        for source in sources
    ]
    usage = pd.concat(usage, ignore_index=True) if usage else pd.DataFrame()
    if usage.empty:
        raise ConfigError(
            "`prices` are given, but none of the predictions records token usage or a cost "
            "(evalbars reads tokens from Inspect logs, HELM runs, and tables with input_tokens "
            "and output_tokens or cost columns); remove `prices` or add predictions that record "
            "usage"
        )
    priced = usage_costs(usage, prices or {})
    return {"costs": Frame(per_question_costs(priced, item_table))}


@reads(scores=read_wide_scores, costs=parquet(columns=["model", "question_id", "cost"]))
def cost_table(
    scores: WideScores, costs: pd.DataFrame, *, alpha: float, level: float, seed: int
) -> dict:
    """``cost_table``: per costed model its accuracy, mean cost per question and accuracy per
    dollar with their intervals (``cost``), and the cost-accuracy frontier with the set that
    covers the true frontier at ``1 - alpha`` (``frontier``), on the questions every costed
    model has a score and a cost for (:func:`evalbars.readings.leaderboard.cost.cost_readings`).
    What was left out is a warning."""
    table, frontier, notes = cost_readings(scores, costs, alpha=alpha, level=level, seed=seed)
    for note in notes:
        log.warning("%s", note)
    said = frontier_sentence(frontier, alpha)
    intro = " ".join([*notes, said]).strip()
    return {
        "cost": Table(
            table, markdown=(intro + "\n\n" if intro else "") + tables.to_markdown(table)
        ),
        "frontier": Table(
            frontier, markdown=(said + "\n\n" if said else "") + tables.to_markdown(frontier)
        ),
    }
