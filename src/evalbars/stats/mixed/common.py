"""What both fitting paths share: the specifications, the cells of the data and their checks.

A *cell* is one model on one question. :class:`Cells` holds, for the cells
that entered a fit, their means, sample counts and the pooled within-cell sum of
squares: everything the REML likelihood needs (see :mod:`evalbars.stats.mixed`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores

#: Specifications fitted on any data with two or more categories, one sample per cell or more.
MODEL_SPECS = ("category", "category_question")
#: Specifications that need repeated samples per cell (epochs) to be identifiable.
EPOCH_SPECS = ("category_question_model",)
#: The same without the category level, for data with no categories or a single one (where
#: a category variance cannot be estimated): ``(1|question)``, and with epochs
#: ``(1|question) + (1|question:model)``.
QUESTION_SPECS = ("question",)
QUESTION_EPOCH_SPECS = ("question_model",)
#: Variance components of each specification, in table order (residual last).
COMPONENTS = {
    "category": ("category", "residual"),
    "category_question": ("category", "question", "residual"),
    "category_question_model": ("category", "question", "question_model", "residual"),
    "question": ("question", "residual"),
    "question_model": ("question", "question_model", "residual"),
}
#: lme4 formula of each specification.
FORMULAS = {
    "category": "correct ~ 0 + model + (1|category)",
    "category_question": "correct ~ 0 + model + (1|category) + (1|category:question)",
    "category_question_model": (
        "correct ~ 0 + model + (1|category) + (1|category:question) + (1|category:question:model)"
    ),
    "question": "correct ~ 0 + model + (1|question)",
    "question_model": "correct ~ 0 + model + (1|question) + (1|question:model)",
}
#: The specification whose contrasts are the blocked reading of a pair (claims, naive vs
#: blocked, the logistic verdicts): the paper's nested model, or the question-only model.
BLOCKED_SPECS = ("category_question", "question")
LOG_2PI = np.log(2.0 * np.pi)
#: Two deviances closer than this are a tie; a tie goes to the boundary fit.
DEVIANCE_TIE = 1e-9


@dataclass(frozen=True)
class Cells:
    """The cells of a score matrix that enter a fit (questions without any score dropped).

    Attributes
    ----------
    means : ndarray, shape (n_questions, K)
        Cell means :math:`\\bar y_{qm}`, NaN where model m has no sample of question q.
    counts : ndarray of int, shape (n_questions, K)
        Samples per cell :math:`n_{qm}`, 0 where there are none.
    within : ndarray, shape (n_questions,)
        Within-cell sum of squares of each question,
        :math:`\\sum_m \\sum_i (y_{qmi} - \\bar y_{qm})^2`.
    codes : ndarray of int, shape (n_questions,)
        Category of each question, coded 0 .. n_categories - 1.
    n_categories : int
    """

    means: np.ndarray
    counts: np.ndarray
    within: np.ndarray
    codes: np.ndarray
    n_categories: int

    @property
    def ss_cells(self) -> float:
        """Pooled within-cell sum of squares, :math:`SS_{cell}`."""
        return float(self.within.sum())

    @property
    def observed(self) -> np.ndarray:
        return self.counts > 0

    @property
    def n_obs(self) -> int:
        """Observations (samples), lme4's ``nobs``."""
        return int(self.counts.sum())

    @property
    def df_cells(self) -> int:
        """Degrees of freedom of the within-cell stratum, :math:`\\sum_{qm} (n_{qm} - 1)`."""
        return int(self.counts.sum() - np.count_nonzero(self.counts))

    @property
    def complete(self) -> bool:
        """Every model scored on every question."""
        return bool(self.counts.min(initial=1) > 0)

    @property
    def balanced(self) -> bool:
        """Complete, with the same number of samples in every cell (the exact path's data)."""
        return self.complete and (
            self.counts.size == 0 or bool(self.counts.max() == self.counts.min())
        )


def prepare(wide: WideScores, model_spec: str, cells: Cells | None = None) -> Cells:
    """The cells of ``wide`` that enter a fit of ``model_spec``, after every input check.

    The score matrix is used as it is (no copy) when every question has a score, and the
    sample counts are ``wide.samples`` themselves when they are 0 exactly where a score is
    missing (as :func:`evalbars.data.scores.wide_scores` makes them); the within-cell sums of
    squares are summed per question in blocks of rows. ``cells``: what an earlier call gave for
    the same ``wide`` (another specification), whose checks are then all that is run.
    """
    if model_spec not in COMPONENTS:
        raise ValueError(f"model_spec must be one of {tuple(COMPONENTS)}, got {model_spec!r}")
    cells = _cells(wide) if cells is None else cells
    codes, counts, within = cells.codes, cells.counts, cells.within
    if cells.n_categories < 2 and "category" in COMPONENTS[model_spec]:
        raise ValueError(
            "a (1|category) random effect needs at least two categories; "
            f"the data have {cells.n_categories} (fit the question-only model instead)"
        )
    if (
        "category" in COMPONENTS[model_spec]
        and model_spec != "category"
        and np.bincount(codes).max() < 2
    ):
        raise ValueError(
            "the question variance cannot be told apart from the category variance when "
            "every category has a single question"
        )
    if "question_model" in COMPONENTS[model_spec] and not counts.max(initial=0) > 1:
        raise ValueError(
            "the question-by-model variance cannot be told apart from the residual variance "
            "without repeated samples (epochs) of some (question, model) cell"
        )
    if "question_model" in COMPONENTS[model_spec] and within.sum() <= 0:
        raise ValueError(
            "no within-cell variation: every sample of each (question, model) cell scores "
            "alike, so the residual variance is zero and the question-by-model model undefined"
        )
    return cells


def _cells(wide: WideScores) -> Cells:
    """:func:`prepare`'s cells and the checks that do not depend on the specification."""
    means = np.asarray(wide.scores, dtype=float)
    if means.ndim != 2 or means.shape[1] < 2:
        raise ValueError("the mixed models compare at least two models (two score columns)")
    finite = np.isfinite(means)
    given = np.asarray(wide.sample_counts)
    if (finite & (given < 1)).any():
        raise ValueError("a scored cell has no samples: samples must be >= 1 where scores are")
    counts = given if not (~finite & (given != 0)).any() else np.where(finite, given, 0)
    counts = counts.astype(np.int64, copy=False)
    keep = (counts > 0).any(axis=1)
    if not keep.all():
        means, counts = means[keep], counts[keep]
    within = np.zeros(len(means))
    if wide.within_ss is not None:
        squares = np.asarray(wide.within_ss, dtype=float)
        squares = squares if keep.all() else squares[keep]
        for rows in blocks(*counts.shape):
            within[rows] = np.where(counts[rows] > 0, squares[rows], 0.0).sum(axis=1)
    names, codes = np.unique(np.asarray(wide.categories)[keep], return_inverse=True)
    empty_models = [m for m, seen in zip(wide.models, counts.any(axis=0), strict=True) if not seen]
    if empty_models:
        raise ValueError(f"models without any score: {empty_models}")
    return Cells(means, counts, within, codes, int(names.size))


def prefer_boundary(candidates):
    """The ``(estimate, deviance)`` pair of smallest deviance; among near-ties, the one with
    most components exactly zero (an estimate is an array of ratios or a dict of variances)."""
    smallest = min(dev for _, dev in candidates)
    ties = [c for c in candidates if c[1] <= smallest + DEVIANCE_TIE]

    def zeros(estimate):
        values = estimate.values() if isinstance(estimate, dict) else estimate
        return sum(float(x) == 0.0 for x in values)

    return max(ties, key=lambda c: zeros(c[0]))
