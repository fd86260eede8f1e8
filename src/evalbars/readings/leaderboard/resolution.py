"""Resolution of adjacent leaderboard pairs: how many questions would the observed gap need?

For each pair of neighbours in the accuracy order, the planner's paired sample size
(:func:`evalbars.stats.planning.sample_size.questions_needed`) at the pair's observed gap and observed
disagreement rate is set against the questions the pair shares; a pair whose ratio
exceeds 1 is *unresolved*: the benchmark is too small to tell the two apart at the
configured power, whatever the point estimates say.

References
----------
.. [1] Kotawala (2026), resolution diagnostics of leaderboard pairs,
   arXiv:2605.30315 (4 of 9 top-10 adjacent MMLU-Pro pairs unresolved at alpha 0.05
   and power 0.8, 6 of 9 with subject clustering).
.. [2] Connor, R. J. (1987). Sample size for testing differences in proportions for
   the paired-sample design. Biometrics 43, 207-211.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores, accuracy_order
from evalbars.defaults import ALPHA, POWER
from evalbars.stats.cluster_robust import cr2_mean, degenerate_se
from evalbars.stats.planning.sample_size import questions_needed

__all__ = ["adjacent_resolution"]


def adjacent_resolution(
    wide: WideScores, alpha: float = ALPHA, power: float = POWER
) -> pd.DataFrame:
    """Questions needed against questions available for every adjacent pair.

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores.
    alpha, power : float
        Two-sided level of one paired test (no multiplicity adjustment: one pair at a
        time, as Kotawala 2026) and the power wanted.

    Returns
    -------
    DataFrame
        One row per adjacent pair in :func:`evalbars.data.scores.accuracy_order`:
        ``model_a, model_b, questions, gap, disagreement, se_paired, se_clustered,
        design_effect, questions_needed, questions_needed_clustered, ratio,
        cluster_df, ratio_clustered, unresolved, unresolved_clustered``.

    Notes
    -----
    With :math:`d_i = s_{ia} - s_{ib}` on the n questions both answered, gap
    :math:`g = \\bar d` and disagreement :math:`\\delta = \\overline{d^2}` (the share
    of questions on which they differ, for 0/1 scores), the paired Wald formula is
    :math:`N^* = (z_{1-\\alpha/2} + z_{1-\\beta})^2 (\\delta - g^2)/g^2`.
    Where the questions fall in two or more categories, the variance
    :math:`\\delta - g^2` is replaced by the category-clustered one and the normal quantiles
    by those of the clustered test's t reference,

    .. math::

        N^*_C = N^* \\cdot D \\cdot \\left(\\frac{t_{\\nu,1-\\alpha/2} + t_{\\nu,1-\\beta}}
        {z_{1-\\alpha/2} + z_{1-\\beta}}\\right)^2,

    with the design effect :math:`D = SE_{CR2}^2 / SE_{paired}^2` (the CR2 SE of
    :func:`evalbars.stats.cluster_robust.cr2_mean` over the paired SE of Miller 2024, Eq. 7)
    and :math:`\\nu` its Satterthwaite degrees of freedom (``cluster_df``). More questions
    in the same categories leave the number of clusters, and so :math:`\\nu`, unchanged:
    with 3 categories no number of questions makes up for the t(2) quantile, which is why
    the clustered count can be far above the paired one. ``ratio`` is :math:`N^*/n`;
    ``unresolved`` is ratio > 1 (a zero gap needs infinitely many questions).

    Where the categories' mean differences are all equal the CR2 SE is 0 up to round-off
    (:func:`evalbars.stats.cluster_robust.degenerate_se`), which is no estimate of the design
    effect: ``se_clustered`` and ``design_effect`` are then NaN and the clustered count, ratio
    and verdict are the paired ones.
    """
    order = accuracy_order(wide)
    ordered = wide.columns(order)
    x = ordered.scores
    a, b = np.arange(len(order) - 1), np.arange(1, len(order))
    both = np.isfinite(x[:, a]) & np.isfinite(x[:, b])
    d = np.where(both, x[:, a] - x[:, b], 0.0).T  # (pairs, n)
    n = both.sum(axis=0).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = d.sum(axis=1) / n
        disagreement = (d * d).sum(axis=1) / n
        se_paired = np.sqrt(np.maximum(disagreement - gap**2, 0.0) / n)
    categories = len(np.unique(ordered.categories)) >= 2
    flat = np.zeros(len(a), dtype=bool)
    if categories and len(a):
        masked = np.where(both.T, d, np.nan)
        clustered = cr2_mean(masked, ordered.categories, both.T)
        se_clustered, cluster_df = clustered.se, clustered.df
        # The categories' mean differences all equal: a clustered SE of 0 is no estimate.
        flat = degenerate_se(se_clustered, masked, both.T) & (clustered.clusters >= 2)
        se_clustered = np.where(flat, np.nan, se_clustered)
    else:
        se_clustered = cluster_df = np.full(len(a), np.nan)
    needed = questions_needed(gap=gap, disagreement=disagreement, alpha=alpha, power=power)
    normal = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    student = special.stdtrit(cluster_df, 1 - alpha / 2) + special.stdtrit(cluster_df, power)
    with np.errstate(invalid="ignore", divide="ignore"):
        design = np.where(se_paired > 0, se_clustered**2 / se_paired**2, np.nan)
        inflation = design * (student / normal) ** 2
        needed_clustered = np.where(np.isinf(needed), np.inf, needed * inflation)
        needed_clustered = np.where(flat, needed, needed_clustered)
        ratio, ratio_clustered = needed / n, needed_clustered / n
    return pd.DataFrame(
        {
            "model_a": np.asarray(order, dtype=object)[a],
            "model_b": np.asarray(order, dtype=object)[b],
            "questions": n.astype(int),
            "gap": gap,
            "disagreement": disagreement,
            "se_paired": se_paired,
            "se_clustered": se_clustered,
            "design_effect": design,
            "questions_needed": needed,
            "questions_needed_clustered": needed_clustered,
            "cluster_df": cluster_df,
            "ratio": ratio,
            "ratio_clustered": ratio_clustered,
            "unresolved": ~(ratio <= 1),
            "unresolved_clustered": ~(ratio_clustered <= 1) if categories else ~(ratio <= 1),
        }
    )
