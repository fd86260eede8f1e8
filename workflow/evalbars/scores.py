"""Scores as a question-by-model matrix, the form every analysis reads.

:class:`WideScores` holds one score per (question, model), NaN where a model has
no score for a question; :func:`wide_scores` pivots the long item table
(:mod:`evalbars.items`) into it. Rows follow the canonical question order
(:func:`question_order`); :func:`accuracy_order` is the model order every table
uses (best first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["WideScores", "wide_scores", "question_order", "accuracy_order"]


@dataclass(frozen=True)
class WideScores:
    """Scores as a question-by-model matrix.

    Attributes
    ----------
    scores : ndarray, shape (n_questions, n_models)
        0/1 (or continuous) scores; NaN where a model has no score for a question.
    models : list of str
        Column labels, in the order given to :func:`wide_scores`.
    question_ids : ndarray
        Row labels, sorted by category then question id.
    categories : ndarray of str
        Category of each row.
    """

    scores: np.ndarray
    models: list
    question_ids: np.ndarray
    categories: np.ndarray

    @property
    def complete(self) -> bool:
        """True when every model has a score for every question."""
        return bool(np.isfinite(self.scores).all())

    @property
    def category_codes(self) -> np.ndarray:
        """Integer code of each row's category (codes follow sorted category names)."""
        return np.unique(self.categories, return_inverse=True)[1]


def question_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort a frame with ``category`` and ``question_id`` columns into the canonical order."""
    return frame.sort_values(["category", "question_id"], kind="stable")


def wide_scores(items: pd.DataFrame, models=None) -> WideScores:
    """Pivot the long item table into a :class:`WideScores` matrix.

    ``models`` fixes the column order (default: sorted model names).
    """
    models = list(models) if models is not None else sorted(items["model"].unique())
    unknown = set(models) - set(items["model"].unique())
    if unknown:
        raise ValueError(f"models not in the item table: {sorted(unknown)}")
    subset = items[items["model"].isin(models)]
    questions = question_order(subset[["question_id", "category"]].drop_duplicates("question_id"))
    matrix = subset.pivot(index="question_id", columns="model", values="correct")
    matrix = matrix.reindex(index=questions["question_id"].to_numpy(), columns=models)
    return WideScores(
        scores=matrix.to_numpy(dtype=float),
        models=models,
        question_ids=questions["question_id"].to_numpy(),
        categories=questions["category"].to_numpy().astype(str),
    )


def accuracy_order(wide: WideScores) -> list:
    """Model names sorted by mean score, highest first; ties broken by name."""
    means = np.nanmean(wide.scores, axis=0)
    return [m for _, m in sorted(zip(-means, wide.models, strict=True))]
