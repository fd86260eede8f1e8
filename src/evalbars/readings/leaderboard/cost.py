"""Cost beside accuracy on a leaderboard: the cost per question, accuracy per dollar, and the
cost-accuracy frontier with its confidence set.

A cost per (model, question) comes from the token usage the logs record times the price table
(:func:`evalbars.data.prices.usage_costs`), or from a ``cost`` column (the ``costs`` job,
:func:`evalbars.jobs.leaderboard.costs`, writes it per model and question: the mean over a
question's samples). :func:`cost_board` lines the costs up with the score matrix: the models
with a cost (a model without any is left out, and said so), on the questions every one of them
has both a score and a cost for (paired, as every reading of the board). :func:`cost_readings`
gives ``cost.csv`` (:func:`evalbars.stats.cost.cost_table`) and ``frontier.csv``
(:func:`evalbars.stats.cost.frontier_set`). Accuracy and cost of the K models are 2K means over
the same questions; their joint covariance is clustered by category under the rule of
:func:`evalbars.readings.leaderboard.best.clustering_applies` (dimension 2K), and paired over
questions otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, LEVEL, SEED
from evalbars.readings.leaderboard.best import clustering_applies
from evalbars.stats.cost import cost_table, frontier_set

__all__ = [
    "COST_COLUMNS",
    "FRONTIER_COLUMNS",
    "CostBoard",
    "cost_board",
    "cost_readings",
    "frontier_sentence",
]

#: Columns of ``cost.csv``.
COST_COLUMNS = [
    "model",
    "questions",
    "accuracy",
    "accuracy_se",
    "accuracy_low",
    "accuracy_high",
    "mean_cost",
    "cost_se",
    "cost_low",
    "cost_high",
    "accuracy_per_dollar",
    "apd_low",
    "apd_high",
    "covariance",
]
#: Columns of ``frontier.csv``.
FRONTIER_COLUMNS = [
    "model",
    "accuracy",
    "mean_cost",
    "on_frontier",
    "in_frontier_set",
    "dominated_by",
    "critical_value",
]


@dataclass(frozen=True)
class CostBoard:
    """Scores and costs of the costed models on the questions all of them have both for.

    Attributes
    ----------
    correct, cost : ndarray, shape (n, K)
        Per-question scores and costs (dollars), no NaN.
    models : list of str
        The costed models, in the score matrix's order.
    categories : ndarray of str, shape (n,)
        Category of each question.
    notes : list of str
        What was left out, and why: models without a cost, questions without one.
    """

    correct: np.ndarray
    cost: np.ndarray
    models: list
    categories: np.ndarray
    notes: list

    @property
    def clusters(self):
        """The categories where they carry a clustered covariance of the 2K means, else None."""
        applies = clustering_applies(self.categories, 2 * len(self.models))
        return self.categories if applies else None

    @property
    def covariance_name(self) -> str:
        if self.clusters is None:
            return "paired"
        return f"paired, clustered (CR2, {np.unique(self.categories).size} categories)"


def cost_board(wide: WideScores, costs: pd.DataFrame) -> CostBoard:
    """Line the per-question costs up with the score matrix.

    Parameters
    ----------
    wide : WideScores
        The question-by-model scores.
    costs : DataFrame
        ``model, question_id, cost`` (dollars per question), as the ``costs`` job writes it.

    Returns
    -------
    CostBoard

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> wide = WideScores(np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1.]]), ["a", "b", "c"],
    ...                   np.array(["q1", "q2", "q3"]), np.array(["x"] * 3))
    >>> costs = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 2, "question_id": ["q1", "q2",
    ...                       "q3", "q1", "q2"], "cost": [0.01, 0.02, 0.01, 0.001, 0.002]})
    >>> board = cost_board(wide, costs)
    >>> board.models, board.cost.tolist(), board.notes
    (['a', 'b'], [[0.01, 0.001], [0.02, 0.002]], ['1 model has no cost and is left out of the cost readings: c.', '1 of 3 questions lack a cost of some costed model and are left out of the cost readings.'])
    """
    costs = costs.dropna(subset=["cost"])
    costed = [m for m in wide.models if m in set(costs["model"].astype(str))]
    notes = []
    left_out = [m for m in wide.models if m not in costed]
    if left_out:
        shown = ", ".join(map(str, left_out[:10])) + (
            f" and {len(left_out) - 10:,} more" if len(left_out) > 10 else ""
        )
        notes.append(
            f"{len(left_out):,} model{'s have' if len(left_out) != 1 else ' has'} no cost and "
            f"{'are' if len(left_out) != 1 else 'is'} left out of the cost readings: {shown}."
        )
    row = {str(q): i for i, q in enumerate(wide.question_ids)}
    column = {m: j for j, m in enumerate(costed)}
    matrix = np.full((len(wide.question_ids), len(costed)), np.nan)
    rows = costs["question_id"].astype(str).map(row)
    columns = costs["model"].astype(str).map(column)
    known = rows.notna() & columns.notna()
    matrix[rows[known].astype(int), columns[known].astype(int)] = costs.loc[known, "cost"].astype(
        float
    )
    scored = wide.columns(costed).scores if costed else np.empty((len(row), 0))
    complete = np.isfinite(matrix).all(axis=1) & np.isfinite(scored).all(axis=1)
    if costed:
        answered = np.isfinite(scored).all(axis=1)
        lacking = int((answered & ~complete).sum())
        if lacking:
            notes.append(
                f"{lacking:,} of {int(answered.sum()):,} questions lack a cost of some costed "
                "model and are left out of the cost readings."
            )
    return CostBoard(
        correct=np.asarray(scored[complete], dtype=float),
        cost=matrix[complete],
        models=costed,
        categories=np.asarray(wide.categories)[complete],
        notes=notes,
    )


def cost_readings(
    wide: WideScores,
    costs: pd.DataFrame,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """``cost.csv`` and ``frontier.csv``, and the notes of what was left out.

    Parameters
    ----------
    wide : WideScores
        The question-by-model scores.
    costs : DataFrame
        ``model, question_id, cost`` per question (:func:`cost_board`).
    alpha : float
        The frontier set covers the true frontier with probability at least :math:`1-\\alpha`.
    level : float
        Level of the accuracy, cost and accuracy-per-dollar intervals.
    seed : int
        Seed of the frontier's simultaneous critical value.

    Returns
    -------
    cost, frontier : DataFrame
        :data:`COST_COLUMNS` and :data:`FRONTIER_COLUMNS`, one row per costed model, most
        accurate first; empty with no costed model or fewer than two questions.
    notes : list of str
        :attr:`CostBoard.notes`.

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> rng = np.random.default_rng(0)
    >>> n = 500
    >>> wide = WideScores((rng.random((n, 3)) < [0.8, 0.6, 0.79]).astype(float), list("abc"),
    ...                   np.arange(n).astype(str), np.array(["x"] * n))
    >>> price = np.repeat([[3.0, 1.0, 0.5]], n, axis=0) + rng.normal(0, 0.1, (n, 3))
    >>> costs = pd.DataFrame({"model": np.tile(list("abc"), n),
    ...                       "question_id": np.repeat(np.arange(n).astype(str), 3),
    ...                       "cost": price.ravel() / 1000})
    >>> cost, frontier, notes = cost_readings(wide, costs)
    >>> frontier[["model", "on_frontier", "in_frontier_set", "dominated_by"]].values.tolist()
    [['c', True, True, ''], ['a', False, True, ''], ['b', False, False, 'c']]
    """
    board = cost_board(wide, costs)
    if not board.models or board.correct.shape[0] < 2:
        empty = (
            pd.DataFrame({c: [] for c in COST_COLUMNS}),
            pd.DataFrame({c: [] for c in FRONTIER_COLUMNS}),
        )
        reason = "no question has a score and a cost of every costed model"
        notes = board.notes + ([] if board.models else ["No model has a cost."])
        return (*empty, notes + ([reason] if board.models else []))
    table = cost_table(board.correct, board.cost, board.models, board.clusters, alpha=1 - level)
    table["covariance"] = board.covariance_name
    frontier = frontier_set(
        board.correct, board.cost, board.models, board.clusters, alpha=alpha, seed=seed
    )
    order = np.lexsort((table["model"].to_numpy(), -table["accuracy"].to_numpy()))
    table = table.iloc[order].reset_index(drop=True)[COST_COLUMNS]
    frontier = frontier.iloc[order].reset_index(drop=True)[FRONTIER_COLUMNS]
    return table, frontier, board.notes


def _names(names, shown: int = 8) -> str:
    names = [str(n) for n in names]
    if not names:
        return "none"
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f" and {len(names) - shown:,} more"


def frontier_sentence(frontier: pd.DataFrame, alpha: float = ALPHA) -> str:
    """The observed frontier and the set that covers the true one, in one sentence.

    Examples
    --------
    >>> frontier = pd.DataFrame({"model": list("acb"), "on_frontier": [True, True, False],
    ...                          "in_frontier_set": [True, True, False],
    ...                          "dominated_by": ["", "", "c"]})
    >>> frontier_sentence(frontier)
    'On the observed cost-accuracy frontier: a, c; the set that covers the true frontier at 95%: a, c (1 model is significantly less accurate and costlier than another: b).'
    """
    if frontier.empty:
        return ""
    observed = frontier.loc[frontier["on_frontier"].astype(bool), "model"]
    kept = frontier.loc[frontier["in_frontier_set"].astype(bool), "model"]
    out = frontier.loc[~frontier["in_frontier_set"].astype(bool), "model"]
    text = (
        f"On the observed cost-accuracy frontier: {_names(observed)}; the set that covers the "
        f"true frontier at {100 * (1 - alpha):g}%: {_names(kept)}"
    )
    if len(out):
        text += (
            f" ({len(out):,} model{'s are' if len(out) != 1 else ' is'} significantly less "
            f"accurate and costlier than another: {_names(out)})"
        )
    else:
        text += " (no model is significantly less accurate and costlier than another)"
    return text + "."
