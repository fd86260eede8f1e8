"""Pairwise comparisons of models on a shared question set, and multiplicity adjustment.

Pair convention used by every table: models are ordered by accuracy (highest
first, ties by name) and each pair ``(model_a, model_b)`` has ``model_a`` earlier
in that order, so ``diff = accuracy_a - accuracy_b >= 0``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .io import WideScores

__all__ = ["accuracy_order", "model_pairs", "adjust_pvalues"]


def accuracy_order(wide: WideScores) -> list:
    """Model names sorted by mean score, highest first; ties broken by name."""
    means = np.nanmean(wide.scores, axis=0)
    return [m for _, m in sorted(zip(-means, wide.models))]


def model_pairs(models) -> pd.DataFrame:
    """All K(K-1)/2 pairs ``(model_a, model_b)`` with ``model_a`` before ``model_b`` in ``models``."""
    models = list(models)
    a, b = np.triu_indices(len(models), k=1)
    return pd.DataFrame({"model_a": np.asarray(models, dtype=object)[a], "model_b": np.asarray(models, dtype=object)[b]})


def adjust_pvalues(p, method: str) -> np.ndarray:
    """Family-wise adjusted p-values.

    Parameters
    ----------
    p : array_like
        Unadjusted p-values of one family of tests.
    method : {"bonferroni", "holm"}
        Bonferroni: :math:`\\min(1, m p_i)`. Holm's step-down: with sorted
        :math:`p_{(1)} \\le \\dots \\le p_{(m)}`,
        :math:`\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scand J Stat 6, 65-70.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], "holm").round(2).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    if method == "holm":
        order = np.argsort(p, kind="stable")
        stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
        adjusted = np.empty(m)
        adjusted[order] = stepped
        return adjusted
    raise ValueError(f"unknown adjustment {method!r}; use 'bonferroni' or 'holm'")
