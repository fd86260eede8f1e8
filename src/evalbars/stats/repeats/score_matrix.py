"""The question-by-model matrix of the item score a run chooses (``score:``, ``--score``).

Every reading reads one number per (question, model) cell
(:class:`evalbars.data.scores.WideScores`). By default (``mean``) it is the mean of the cell's
samples over every run, as :func:`evalbars.data.scores.wide_scores` pivots it. With
``pass@k``, ``pass^k`` or ``maj@k`` (:func:`evalbars.stats.repeats.pass_at_k.parse_item_score`)
it is that item score of the cell's samples, pooled over the model's runs
(:func:`~evalbars.stats.repeats.pass_at_k.sample_counts`,
:func:`~evalbars.stats.repeats.pass_at_k.item_scores`): unbiased whatever the number of
samples n of the cell, provided :math:`n \\ge k`. A cell with fewer than k samples has no
unbiased estimate; it is left out (NaN), and :func:`score_matrix` names those cells. Such a
matrix holds one number per cell (``samples`` None) and carries the score's name
(``WideScores.score``), so that the readings defined on one 0/1 sample per cell say they do
not apply (:func:`evalbars.stats.pairwise.exact_readings_reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores, wide_scores
from evalbars.stats.repeats.pass_at_k import (
    item_scores,
    parse_item_score,
    sample_counts,
    short_questions,
)

__all__ = ["ChosenScores", "score_label", "score_matrix"]


def score_label(score: str, k: int = 1) -> str:
    """How a score is written: ``mean``, ``pass@5``, ``pass^3``, ``maj@5``.

    Examples
    --------
    >>> score_label("pass@k", 5), score_label("majority@k", 3), score_label("mean")
    ('pass@5', 'maj@3', 'mean')
    """
    prefixes = {"pass@k": "pass@", "pass^k": "pass^", "majority@k": "maj@"}
    return "mean" if score == "mean" else f"{prefixes[score]}{int(k)}"


@dataclass(frozen=True)
class ChosenScores:
    """The score matrix of the chosen item score, and the cells it leaves out.

    Attributes
    ----------
    wide : WideScores
        The matrix (``wide.score`` the score's label).
    short : DataFrame
        ``model, question_id, samples, correct, missing``: the cells with fewer than k samples
        (left out, NaN in ``wide``); empty for ``mean``.
    k : int
        The budget (1 for ``mean``).
    """

    wide: WideScores
    short: pd.DataFrame
    k: int

    def short_message(self) -> str:
        """One sentence naming the left-out cells and counting them, or ``""`` when none is.

        Examples
        --------
        >>> rows = pd.DataFrame({"model": ["A"] * 3 + ["B"] * 2, "question_id": list("aab") +
        ...     list("ab"), "category": "x", "correct": [1, 0, 1, 0, 1]})
        >>> score_matrix(rows, "pass@2").short_message()
        "pass@2 needs 2 samples of a question; 3 cells have fewer and are left out: A on 'b' (1 sample), B on 'a' (1 sample), B on 'b' (1 sample)"
        """
        if self.short.empty:
            return ""
        shown = [
            f"{row.model} on {row.question_id!r} ({row.samples} sample{'s' * (row.samples != 1)})"
            for row in self.short.head(3).itertuples()
        ]
        more = f" and {len(self.short) - 3} more" if len(self.short) > 3 else ""
        return (
            f"{self.wide.score} needs {self.k} samples of a question; {len(self.short)} cells "
            f"have fewer and are left out: {', '.join(shown)}{more}"
        )


def score_matrix(items: pd.DataFrame, score: str = "mean", models=None) -> ChosenScores:
    """The question-by-model matrix of ``score``, from an item table of samples.

    Parameters
    ----------
    items : DataFrame
        One row per sample: ``model, question_id, category, correct`` (any ``run`` and
        ``epoch`` columns: every sample of a cell, over every run, is pooled).
    score : str
        ``mean`` (default), ``pass@K``, ``pass^K`` or ``maj@K``
        (:func:`~evalbars.stats.repeats.pass_at_k.parse_item_score`).
    models : sequence of str, optional
        Column order (default sorted names), as :func:`evalbars.data.scores.wide_scores`.

    Returns
    -------
    ChosenScores

    Raises
    ------
    ValueError
        An unknown score; a score over k samples of scores that are not 0/1; or k larger
        than any cell's samples (nothing would be left).

    Notes
    -----
    For ``mean`` this is :func:`evalbars.data.scores.wide_scores` itself (the same matrix,
    byte for byte, with its sample counts). Otherwise each cell holds
    :math:`h_k(n, c)` of its n samples of which c are right, NaN where :math:`n < k`;
    a question no model has k samples of is not a row.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "question_id": list("aabb") * 2,
    ...     "category": "x", "correct": [1, 0, 0, 0, 1, 1, 0, 1]})
    >>> chosen = score_matrix(rows, "pass@2")
    >>> chosen.wide.score, chosen.wide.scores.tolist()
    ('pass@2', [[1.0, 1.0], [0.0, 1.0]])
    """
    name, k = parse_item_score(score)
    if name == "mean":
        empty = pd.DataFrame(columns=["model", "question_id", "samples", "correct", "missing"])
        return ChosenScores(wide_scores(items, models), empty, 1)
    label = score_label(name, k)
    columns = ["model", "question_id", "category", "correct"]
    frame = items[columns].assign(model=items["model"].astype(str))
    try:
        counts = sample_counts(frame)
    except ValueError as error:
        raise ValueError(f"{label}: {error}") from None
    most = int(counts["samples"].max()) if len(counts) else 0
    if most < k:
        raise ValueError(
            f"{label} needs {k} samples of a question; the data hold at most {most} (read "
            "every run and sample, or choose a smaller k)"
        )
    scored = item_scores(counts, name, k).table
    short = short_questions(counts, k)
    kept = scored[scored["samples"] >= k]
    cells = kept.assign(correct=kept["score"])[columns]
    order = models if models is not None else sorted(counts["model"].unique())
    wide = wide_scores(cells, [m for m in order if m in set(cells["model"])])
    if len(wide.models) < len(order):  # a model with no cell of k samples: an empty column
        wide = _with_empty_columns(wide, list(order))
    wide = WideScores(
        scores=wide.scores,
        models=wide.models,
        question_ids=wide.question_ids,
        categories=wide.categories,
        score=label,
    )
    short = short[["model", "question_id", "samples", "correct", "missing"]].reset_index(drop=True)
    return ChosenScores(wide, short, int(k))


def _with_empty_columns(wide: WideScores, models: list) -> WideScores:
    """``wide`` with a column of NaN for each of ``models`` it lacks, in ``models`` order."""
    scores = np.full((wide.scores.shape[0], len(models)), np.nan)
    for position, model in enumerate(models):
        if model in wide.models:
            scores[:, position] = wide.scores[:, wide.models.index(model)]
    return WideScores(scores, models, wide.question_ids, wide.categories)
