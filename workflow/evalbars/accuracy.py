"""Per-model accuracy with its uncertainty: the paper's Table 1, extended.

One row per model: accuracy, the naive (CLT) standard error, the Wilson score
interval and the category-clustered standard error, each over the questions the
model answered.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .intervals import clustered_se, wilson_interval
from .scores import WideScores, accuracy_order

__all__ = ["accuracy_table"]


def accuracy_table(wide: WideScores, level: float = 0.95) -> pd.DataFrame:
    """Per-model accuracy with naive, Wilson and category-clustered uncertainty (Table 1).

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores (0/1); NaN entries (no score) are left out of
        that model's counts.
    level : float
        Confidence level of the Wilson interval.

    Returns
    -------
    DataFrame
        ``model, n, correct, accuracy, se_naive, ci_low, ci_high, se_clustered``,
        one row per model, sorted by :func:`accuracy_order` (best first).

    Notes
    -----
    ``se_naive`` is the CLT standard error with the population variance
    (``ddof=0``): :math:`\\sqrt{\\hat p(1-\\hat p)/n}`, the Bernoulli SE of Miller
    (2024, Eq. 1-2). ``ci_low, ci_high`` is the Wilson score interval
    (:func:`evalbars.intervals.wilson_interval`). ``se_clustered`` is Miller's
    clustered SE (2024, Eq. 4) with the question's category as the cluster,
    :math:`\\sqrt{\\sum_c (\\sum_{i \\in c} (s_i - \\bar s))^2}/n`, without the
    small-sample factor C/(C-1) (:func:`evalbars.intervals.clustered_se`).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
    """
    answered = np.isfinite(wide.scores)
    n = answered.sum(axis=0)
    correct = np.where(answered, wide.scores, 0.0).sum(axis=0)
    accuracy = correct / n
    low, high = wilson_interval(correct, n, level)
    if answered.all():
        se_clustered = clustered_se(wide.scores.T, wide.categories)
    else:  # each model over its own answered questions (a loop over the K models only)
        se_clustered = np.array(
            [
                clustered_se(wide.scores[answered[:, k], k], wide.categories[answered[:, k]])
                for k in range(len(wide.models))
            ],
            dtype=float,
        )
    table = pd.DataFrame(
        {
            "model": wide.models,
            "n": n.astype(int),
            "correct": correct,
            "accuracy": accuracy,
            "se_naive": np.sqrt(accuracy * (1 - accuracy) / n),
            "ci_low": low,
            "ci_high": high,
            "se_clustered": se_clustered,
        }
    )
    if np.all(correct == np.round(correct)):
        table["correct"] = correct.astype(int)
    order = accuracy_order(wide)
    return table.set_index("model").loc[order].reset_index()
