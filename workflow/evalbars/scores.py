"""Scores as a question-by-model matrix, the form every analysis reads.

:class:`WideScores` holds one score per (question, model), NaN where a model has
no score for a question; :func:`wide_scores` pivots the long item table
(:mod:`evalbars.items`) into it. Rows follow the canonical question order
(:func:`question_order`); :func:`accuracy_order` is the model order every table
uses (best first).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

__all__ = [
    "WideScores",
    "wide_scores",
    "read_wide_scores",
    "SCORE_COLUMNS",
    "question_order",
    "accuracy_order",
]


@dataclass(frozen=True)
class WideScores:
    """Scores as a question-by-model matrix of cells, each the mean of its samples.

    A cell is one model on one question. With one sample per cell (the usual
    case) its score is that sample's; with repeated samples (epochs) it is their
    mean, and ``samples`` and ``within_ss`` keep what the mean hides.

    Attributes
    ----------
    scores : ndarray, shape (n_questions, n_models)
        Mean score of each cell (0/1 data give proportions); NaN where the model
        has no sample for the question.
    models : list of str
        Column labels, in the order given to :func:`wide_scores`.
    question_ids : ndarray
        Row labels, sorted by category then question id.
    categories : ndarray of str
        Category of each row.
    samples : ndarray of int, shape (n_questions, n_models), optional
        Samples (epochs) per cell, 0 where there are none; default one per scored cell.
    within_ss : ndarray, shape (n_questions, n_models), optional
        Sum of squared deviations of a cell's samples from the cell mean (0 for a
        single sample); default zeros.
    """

    scores: np.ndarray
    models: list
    question_ids: np.ndarray
    categories: np.ndarray
    samples: np.ndarray | None = None
    within_ss: np.ndarray | None = None

    @property
    def complete(self) -> bool:
        """True when every model has a score for every question."""
        return bool(np.isfinite(self.scores).all())

    @property
    def category_codes(self) -> np.ndarray:
        """Integer code of each row's category (codes follow sorted category names)."""
        return np.unique(self.categories, return_inverse=True)[1]

    @property
    def sample_counts(self) -> np.ndarray:
        """Samples per cell (``samples``, or 1 per scored cell when not given)."""
        if self.samples is not None:
            return np.asarray(self.samples)
        return np.isfinite(self.scores).astype(np.int64)

    @property
    def within_squares(self) -> np.ndarray:
        """``within_ss``, or zeros when not given."""
        if self.within_ss is not None:
            return np.asarray(self.within_ss, dtype=float)
        return np.zeros(self.scores.shape)

    @property
    def has_repeats(self) -> bool:
        """True when some cell holds more than one sample (epochs)."""
        return bool((self.sample_counts > 1).any())

    def rows(self, keep) -> WideScores:
        """The same matrix restricted to the rows (questions) selected by ``keep``."""
        keep = np.asarray(keep)
        return replace(
            self,
            scores=self.scores[keep],
            question_ids=self.question_ids[keep],
            categories=self.categories[keep],
            samples=None if self.samples is None else np.asarray(self.samples)[keep],
            within_ss=None if self.within_ss is None else np.asarray(self.within_ss)[keep],
        )

    def columns(self, models) -> WideScores:
        """The same matrix with its columns in the order of ``models`` (a subset allowed)."""
        if list(models) == list(self.models):
            return self  # as it is, memory layout too (sums over it keep their last digits)
        index = [self.models.index(m) for m in models]
        return replace(
            self,
            scores=self.scores[:, index],
            models=list(models),
            samples=None if self.samples is None else np.asarray(self.samples)[:, index],
            within_ss=None if self.within_ss is None else np.asarray(self.within_ss)[:, index],
        )


def question_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort a frame with ``category`` and ``question_id`` columns into the canonical order."""
    return frame.sort_values(["category", "question_id"], kind="stable")


def wide_scores(items: pd.DataFrame, models=None) -> WideScores:
    """Pivot the long item table into a :class:`WideScores` matrix of cell means.

    ``models`` fixes the column order (default: sorted model names). Rows with
    several samples of one (question, model) cell (an ``epoch`` column) are
    summarised by their count, mean and within-cell sum of squares, all by
    ``bincount`` over cell codes; with one sample per cell the scores are placed
    directly.
    """
    present = items["model"].unique()
    models = list(models) if models is not None else sorted(present)
    unknown = set(models) - set(present)
    if unknown:
        raise ValueError(f"models not in the item table: {sorted(unknown)}")
    frame = items[["model", "question_id", "category", "correct"]]
    column = _positions(models, frame["model"])
    if len(models) < len(present):
        frame, column = frame[column >= 0], column[column >= 0]
    questions = question_order(frame[["question_id", "category"]].drop_duplicates("question_id"))
    question_ids = questions["question_id"].to_numpy()
    row = _positions(question_ids, frame["question_id"])
    cell = row * len(models) + column
    shape = (len(question_ids), len(models))
    values = frame["correct"].to_numpy(dtype=float)
    counts = np.bincount(cell, minlength=shape[0] * shape[1])
    if counts.max(initial=0) <= 1:
        means = np.full(counts.size, np.nan)
        means[cell] = values
        within = np.zeros(counts.size)
    else:
        sums = np.bincount(cell, weights=values, minlength=counts.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / counts, np.nan)
        deviations = values - means[cell]
        within = np.bincount(cell, weights=deviations * deviations, minlength=counts.size)
    return WideScores(
        scores=means.reshape(shape),
        models=models,
        question_ids=question_ids,
        categories=questions["category"].to_numpy().astype(str),
        samples=counts.reshape(shape),
        within_ss=within.reshape(shape),
    )


#: The item table's columns :func:`wide_scores` reads.
SCORE_COLUMNS = ["model", "question_id", "category", "correct"]


def read_wide_scores(path, models=None) -> WideScores:
    """:func:`wide_scores` of the item table in the Parquet file ``path``, reading only its
    :data:`SCORE_COLUMNS` (a third of the file's columns)."""
    return wide_scores(pd.read_parquet(path, columns=SCORE_COLUMNS), models)


def _positions(labels, values: pd.Series) -> np.ndarray:
    """Position of each of ``values`` in ``labels`` (-1 where absent); a categorical column is
    looked up once per category."""
    index = pd.Index(labels)
    if isinstance(values.dtype, pd.CategoricalDtype):
        lookup = np.append(index.get_indexer(values.cat.categories), -1)
        return lookup[values.cat.codes.to_numpy()]
    return index.get_indexer(values)


def accuracy_order(wide: WideScores) -> list:
    """Model names sorted by mean score, highest first; ties broken by name."""
    means = np.nanmean(wide.scores, axis=0)
    return [m for _, m in sorted(zip(-means, wide.models, strict=True))]
