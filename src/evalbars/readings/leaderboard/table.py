"""Leaderboard verdicts: one row per system with its letters, stability and resolution.

:func:`leaderboard_table` joins, in accuracy order (best first), each system's score and
Wilson interval (:func:`evalbars.stats.accuracy.accuracy_table`), its compact letters
(:func:`evalbars.readings.leaderboard.letters.letters_table`: Holm over all pairs), its split-half stability
(:func:`evalbars.readings.leaderboard.stability.split_half_stability`) and the resolution of the pair it forms
with the next system down (:func:`evalbars.readings.leaderboard.resolution.adjacent_resolution`),
and whether it is in the confidence sets for the best and for the top k
(:func:`evalbars.readings.leaderboard.best.best_sets`).
:func:`leaderboard_headline` says in one sentence what a maintainer may print.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, LEVEL, POWER, TOP_K
from evalbars.readings.judge_corrected import judge_vs_corrected
from evalbars.readings.leaderboard.best import BEST_SET_COLUMNS, best_set_sentence, best_sets
from evalbars.readings.leaderboard.letters import (
    compact_letters,
    letter_sets,
    letter_strings,
    letters_table,
    separated_matrix,
)
from evalbars.readings.leaderboard.resolution import adjacent_resolution
from evalbars.readings.leaderboard.stability import split_half_stability
from evalbars.stats.accuracy import accuracy_table

__all__ = [
    "LEADERBOARD_COLUMNS",
    "CORRECTED_LEADERBOARD_COLUMNS",
    "leaderboard_table",
    "leaderboard_headline",
]

#: Columns of leaderboard.csv.
LEADERBOARD_COLUMNS = [
    "position",
    "model",
    "questions",
    "accuracy",
    "ci_low",
    "ci_high",
    "letters",
    "rank",
    "rank_kept_share",
    "first_share",
    "rank_half_low",
    "rank_half_high",
    "next_model",
    "gap_to_next",
    "disagreement_next",
    "questions_needed",
    "questions_needed_clustered",
    "resolution_ratio",
    "resolution_ratio_clustered",
    "unresolved",
    *BEST_SET_COLUMNS,
]
#: Columns added where the scores are a judge's with human labels: the PPI++ accuracy, its
#: interval and the letters of the judge-corrected pairs (Holm over all pairs).
CORRECTED_LEADERBOARD_COLUMNS = [
    "corrected_accuracy",
    "corrected_low",
    "corrected_high",
    "letters_corrected",
]


def leaderboard_table(
    wide: WideScores,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    splits: int = 50,
    seed: int = 0,
    level: float = LEVEL,
    top_k: int = TOP_K,
) -> pd.DataFrame:
    """One row per system, best first: :data:`LEADERBOARD_COLUMNS` (and
    :data:`CORRECTED_LEADERBOARD_COLUMNS` on judge scores with human labels).

    ``position`` is the row number (1 = highest accuracy, ties by name); ``rank`` the
    full-data rank with ties sharing the better. The ``*_next`` and resolution columns
    describe the pair (this system, the next one down) and are empty on the last row;
    ``unresolved`` (a nullable ``boolean``) is true when either ratio exceeds 1: the paired
    one, or the category-clustered one where the questions fall in two or more categories. A
    cluster-robust variance from few clusters is itself noisy and can fall well below the
    paired variance by chance [1]_, so clustering may only add to what a pair needs.
    ``in_best_set``, ``mcb_low``, ``mcb_high``, ``top_k`` and ``in_top_k_set`` are the
    confidence sets for the best (at ``alpha``) and the top ``top_k``, on the questions every
    system answered (:func:`evalbars.readings.leaderboard.best.best_sets`).

    References
    ----------
    .. [1] A. C. Cameron and D. L. Miller, "A Practitioner's Guide to Cluster-Robust
       Inference", Journal of Human Resources 50(2), 317-372, 2015.
    """
    board = accuracy_table(wide, level)[["model", "n", "accuracy", "ci_low", "ci_high"]]
    board = board.rename(columns={"n": "questions"})
    order = list(board["model"])
    board = board.merge(letters_table(wide, alpha)[["model", "letters"]], on="model", how="left")
    board["letters"] = board["letters"].fillna("a")  # one system: one letter
    board = board.merge(split_half_stability(wide, splits, seed), on="model", how="left")
    pairs = adjacent_resolution(wide, alpha, power)
    either = (
        (pairs["unresolved"] | pairs["unresolved_clustered"]).to_numpy()
        if len(pairs)
        else np.array([], dtype=bool)
    )
    pairs = pd.DataFrame(
        {
            "model": pairs["model_a"],
            "next_model": pairs["model_b"],
            "gap_to_next": pairs["gap"],
            "disagreement_next": pairs["disagreement"],
            "questions_needed": pairs["questions_needed"],
            "questions_needed_clustered": pairs["questions_needed_clustered"],
            "resolution_ratio": pairs["ratio"],
            "resolution_ratio_clustered": pairs["ratio_clustered"],
            "unresolved": either,
        }
    )
    board = board.merge(pairs, on="model", how="left")
    # True/False, and missing on the last row: nullable, so that the column keeps its type
    # through Parquet (an object column would hold NaN here and None once read back).
    board["unresolved"] = board["unresolved"].astype("boolean")
    board = board.merge(best_sets(wide, alpha=alpha, top_k=top_k, seed=seed), on="model")
    board["position"] = np.arange(1, len(order) + 1)
    corrected = _corrected_columns(wide, order, alpha, level)
    if corrected is None:
        return board[LEADERBOARD_COLUMNS]
    return board.merge(corrected, on="model", how="left")[
        LEADERBOARD_COLUMNS + CORRECTED_LEADERBOARD_COLUMNS
    ]


def _corrected_columns(wide: WideScores, order: list, alpha: float, level: float):
    """The judge-corrected accuracy, interval and letters of every system, or None."""
    table = judge_vs_corrected(wide, level=level, alpha=alpha, adjust="holm")
    corrected = table[table["reading"] == "judge-corrected"]
    if corrected.empty:
        return None
    models = corrected[corrected["scope"] == "model"]
    pairs = corrected[corrected["scope"] == "pair"]
    separated = separated_matrix(
        order, pairs["model_a"], pairs["model_b"], pairs["p_adjusted"] < alpha
    )
    letters = pd.DataFrame(
        {"model": order, "letters_corrected": letter_strings(compact_letters(separated))}
    )
    values = models.rename(
        columns={
            "model_a": "model",
            "estimate": "corrected_accuracy",
            "ci_low": "corrected_low",
            "ci_high": "corrected_high",
        }
    )[["model", "corrected_accuracy", "corrected_low", "corrected_high"]]
    return values.merge(letters, on="model")


def _and(names) -> str:
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def leaderboard_headline(table: pd.DataFrame, splits: int, alpha: float = ALPHA) -> str:
    """One sentence: letters, the leader's stability, the unresolved adjacent pairs and the
    confidence sets for the best and the top k (:func:`evalbars.readings.leaderboard.best.best_set_sentence`).

    Systems tied on accuracy at the top are named together ("A, B and C tie for first"),
    with the smallest share of split halves on which one of them is first (alone or tied),
    rather than crowning the first of them by name order.
    """
    sets = letter_sets(table["letters"])
    letters = len(set().union(*sets))
    tied = sum(bool(s & sets[0]) for s in sets)
    leader = table.iloc[0]
    unresolved = table["unresolved"].dropna().astype(bool)
    top = list(table.loc[table["accuracy"] == leader["accuracy"], "model"])
    if not np.isfinite(leader["first_share"]):
        first = "No split half ranks every system (a half holds no question of one)."
    elif len(top) > 1:  # a tie: "A is first on 100%" would crown one of equals
        least = table.loc[table["model"].isin(top), "first_share"].min()
        first = (
            f"{_and(top)} tie for first; each is first (alone or tied) on at least "
            f"{100 * least:.0f}% of {2 * splits} split halves."
        )
    else:
        first = (
            f"{leader['model']} is first on {100 * leader['first_share']:.0f}% of "
            f"{2 * splits} split halves."
        )
    corrected = ""
    if "letters_corrected" in table.columns:
        groups = len(set().union(*letter_sets(table["letters_corrected"])))
        best = table.loc[table["corrected_accuracy"].idxmax(), "model"]
        corrected = (
            f" Corrected for the judge with human labels (PPI++): {groups} letter group(s), "
            f"{best} highest."
        )
    best_text = best_set_sentence(table, alpha) if "in_best_set" in table.columns else ""
    return (
        f"{len(table)} systems in {letters} letter group(s) (Holm over all pairs); "
        f"{tied - 1} other(s) share a letter with the leader. {first} "
        f"{int(unresolved.sum())} of {len(unresolved)} adjacent pairs are unresolved "
        "(the observed gap needs more questions than the benchmark has)."
        + (f" {best_text}" if best_text else "")
        + corrected
    )
