"""Confidence sets for the best model and for the top k, from paired scores.

**The best** (:func:`best_set`): Hsu's constrained multiple comparisons with the best (MCB).
For model i, with the paired SE :math:`s_{ij}` of :math:`X_i - X_j` (from the joint covariance
:math:`\\Sigma` of the scores, :func:`evalbars.stats.best.winners.mean_covariance`) and the one-sided
simultaneous critical value :math:`d_i` of the K - 1 statistics
:math:`[(X_j - X_i) - (\\mu_j - \\mu_i)]/s_{ij}`, :math:`j \\ne i` (a Dunnett-type value: the
differences share :math:`X_i`, and their correlation follows from :math:`\\Sigma`),

.. math::

    i \\in \\hat B \\iff \\min_{j \\ne i}\\,(X_i - X_j + d_i s_{ij}) > 0 .

The set holds the true best with probability at least :math:`1-\\alpha`: the true best
:math:`i^*` is left out only if some :math:`X_j - X_{i^*} > d_{i^*} s_{i^* j}`, and as
:math:`\\mu_j \\le \\mu_{i^*}` that has probability at most :math:`\\alpha` by the choice of
:math:`d_{i^*}` (Hsu 1984; 1996, chapter 4). A ``best: A`` claim is supported only when the set
is {A}.

**The top k** (:func:`top_k_set`): with one critical value c, simultaneous over every ordered
pair, one-sided (the largest absolute t over pairs), model i is left out when at least k models are
significantly better than it: :math:`\\#\\{j: X_j - X_i > c\\,s_{ij}\\} \\ge k`. A true top-k
model has at most k - 1 truly better models, so leaving it out needs a false statement, and all
statements hold together with probability :math:`1-\\alpha`; so the set holds every true top-k
model at once with that probability (Mogstad, Romano, Shaikh and Wilhelm 2024, the
:math:`\\tau`-best set). With k = 1 it is a valid, more conservative alternative to MCB.

**Hsu's constrained MCB intervals** of :math:`\\mu_i - \\max_{j \\ne i}\\mu_j`, simultaneous
at :math:`1-\\alpha` with the set (Hsu 1996, section 4.1.1, with a critical value per model):

.. math::

    D_i^+ = \\big(\\min_{j \\ne i}(X_i - X_j + d_i s_{ij})\\big)^+, \\qquad
    D_i^- = \\begin{cases} 0 & \\hat B = \\{i\\} \\\\
    -\\big(\\min_{j \\in \\hat B,\\, j \\ne i}(X_i - X_j - d_j s_{ij})\\big)^- & \\text{else.}
    \\end{cases}

On the event that the true best :math:`i^*` satisfies every statement of its own :math:`d_{i^*}`
(probability at least :math:`1-\\alpha`), :math:`i^* \\in \\hat B`, :math:`\\mu_{i^*} - \\max_{j
\\ne i^*}\\mu_j \\in [0, D_{i^*}^+]`, and for every other i, :math:`\\mu_i - \\max_{j\\ne i}\\mu_j
= \\mu_i - \\mu_{i^*} \\in [X_i - X_{i^*} - d_{i^*}s_{ii^*}, 0]`, which the intervals contain. A
model is in the set exactly when its upper limit is above 0, and a model of the set has lower
limit 0 exactly when the set is that model alone (another member j has :math:`X_j - X_i + d_j
s_{ij} > 0`): a ``best: A`` claim is supported exactly when A's interval is :math:`[0, D_A^+]`.

Models whose exclusion is already decided at a conservative (Bonferroni) critical value need no
exact one: :func:`best_set` computes :math:`d_i` exactly only for the models that value leaves
in, since :math:`d_i` never exceeds it.

References
----------
.. [1] Hsu, J. C. (1984). Constrained simultaneous confidence intervals for multiple
   comparisons with the best. Annals of Statistics 12(3), 1136-1144.
.. [2] Hsu, J. C. (1996). Multiple Comparisons: Theory and Methods. Chapman & Hall, ch. 4.
.. [3] Mogstad, M., Romano, J. P., Shaikh, A. M. and Wilhelm, D. (2024). Inference for ranks
   with applications to mobility across neighbourhoods and academic achievement across
   countries. Review of Economic Studies 91(1), 476-518.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA, SEED
from evalbars.stats.best.winners import simultaneous_critical_value

__all__ = ["difference_covariance", "pair_standard_errors", "best_set", "top_k_set"]


def pair_standard_errors(cov) -> np.ndarray:
    """Paired SE of every gap: :math:`s_{ij} = \\sqrt{\\Sigma_{ii} + \\Sigma_{jj} - 2\\Sigma_{ij}}`.

    Parameters
    ----------
    cov : array_like, shape (K, K)
        Joint covariance of the K scores.

    Returns
    -------
    ndarray, shape (K, K)
        Symmetric, 0 on the diagonal (round-off below zero clipped).
    """
    cov = np.asarray(cov, dtype=float)
    diagonal = np.diag(cov)
    return np.sqrt(np.clip(diagonal[:, None] + diagonal[None, :] - 2 * cov, 0.0, None))


def difference_covariance(cov, model: int) -> np.ndarray:
    """Covariance of :math:`X_j - X_i` over :math:`j \\ne i` (``i = model``).

    :math:`\\operatorname{Cov}(X_j - X_i, X_k - X_i) = \\Sigma_{jk} - \\Sigma_{ji} -
    \\Sigma_{ik} + \\Sigma_{ii}`; shape (K - 1, K - 1), the other models in their order.
    """
    cov = np.asarray(cov, dtype=float)
    others = np.arange(cov.shape[0]) != model
    column = cov[others, model]
    return cov[np.ix_(others, others)] - column[:, None] - column[None, :] + cov[model, model]


def _as_table(models, scores, in_set, critical, margin, k, method, low=None, high=None):
    table = pd.DataFrame(
        {
            "model": list(models),
            "score": np.asarray(scores, float),
            "in_set": np.asarray(in_set, bool),
            "critical_value": np.asarray(critical, float),
            "margin": np.asarray(margin, float),
            "k": k,
            "method": method,
        }
    )
    if low is not None:
        table["mcb_low"], table["mcb_high"] = np.asarray(low, float), np.asarray(high, float)
    return table


def best_set(scores, cov, models=None, alpha: float = ALPHA, seed: int = SEED) -> pd.DataFrame:
    """The confidence set for the best model (Hsu's constrained MCB).

    Parameters
    ----------
    scores : array_like, shape (K,)
        Observed scores.
    cov : array_like, shape (K, K)
        Their joint (paired) covariance.
    models : sequence of str, optional
        Names; default ``0 .. K-1``.
    alpha : float
        The set holds the best with probability at least :math:`1-\\alpha`.
    seed : int
        Seed of the critical values' Monte Carlo draws (many models only).

    Returns
    -------
    DataFrame
        One row per model, in the given order: ``model, score, in_set, critical_value`` (the
        :math:`d_i` used: exact for the models a Bonferroni value leaves in, that value for the
        others), ``margin`` (:math:`\\min_{j\\ne i}(X_i - X_j + d_i s_{ij})`: the set holds
        the models with a positive margin), ``k`` (1), ``method`` ("MCB") and ``mcb_low``,
        ``mcb_high`` (Hsu's constrained interval :math:`[D_i^-, D_i^+]` of
        :math:`\\mu_i - \\max_{j \\ne i}\\mu_j`, see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> table = best_set([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2, list("abcd"))
    >>> table.loc[table["in_set"], "model"].tolist()
    ['a', 'b', 'c']
    >>> table[["mcb_low", "mcb_high"]].round(4).values.tolist()
    [[-0.0383, 0.0783], [-0.0783, 0.0383], [-0.1083, 0.0083], [-0.1583, 0.0]]
    """
    scores = np.asarray(scores, dtype=float)
    cov = np.asarray(cov, dtype=float)
    size = scores.size
    models = list(range(size)) if models is None else list(models)
    if size == 1:
        return _as_table(models, scores, [True], [np.nan], [np.inf], 1, "MCB", [0.0], [np.inf])
    se = pair_standard_errors(cov)
    bonferroni = float(special.ndtri(1 - alpha / (size - 1)))
    gaps = scores[:, None] - scores[None, :]  # X_i - X_j

    def margins(critical):
        value = gaps + critical[:, None] * se
        np.fill_diagonal(value, np.inf)
        return value.min(axis=1)

    critical = np.full(size, bonferroni)
    undecided = np.flatnonzero(margins(critical) > 0)
    for model in undecided:  # the few models left in by Bonferroni, each its own d_i
        critical[model] = simultaneous_critical_value(
            difference_covariance(cov, model), alpha, one_sided=True, seed=seed
        )
    margin = margins(critical)
    in_set = margin > 0
    # D_i^-: the smallest X_i - X_j - d_j s_ij over the other members j of the set.
    lows = gaps - critical[None, :] * se
    lows = np.where(in_set[None, :], lows, np.inf)
    np.fill_diagonal(lows, np.inf)
    low = np.minimum(lows.min(axis=1), 0.0)  # 0 where the set is {i} (nothing to compare)
    return _as_table(
        models, scores, in_set, critical, margin, 1, "MCB", low, np.maximum(margin, 0.0)
    )


def _pair_critical_value(cov, alpha: float, seed: int) -> float:
    """One-sided critical value simultaneous over every ordered pair of models (the largest
    absolute t of all paired gaps), by the differences' joint covariance; Bonferroni's over the
    :math:`K(K-1)/2` two-sided statements above 30 models."""
    size = cov.shape[0]
    pairs = np.column_stack(np.triu_indices(size, k=1))
    if size > 30:
        return float(special.ndtri(1 - alpha / (2 * len(pairs))))
    contrast = np.zeros((len(pairs), size))
    contrast[np.arange(len(pairs)), pairs[:, 0]] = 1.0
    contrast[np.arange(len(pairs)), pairs[:, 1]] = -1.0
    return simultaneous_critical_value(contrast @ cov @ contrast.T, alpha, seed=seed)


def top_k_set(
    scores, cov, k: int, models=None, alpha: float = ALPHA, seed: int = SEED
) -> pd.DataFrame:
    """The confidence set for the top k models.

    Parameters
    ----------
    scores : array_like, shape (K,)
        Observed scores.
    cov : array_like, shape (K, K)
        Their joint (paired) covariance.
    k : int
        How many top models the set is for (1 <= k <= K).
    models : sequence of str, optional
        Names; default ``0 .. K-1``.
    alpha : float
        The set holds every true top-k model with probability at least :math:`1-\\alpha`.
    seed : int
        Seed of the critical value's draws.

    Returns
    -------
    DataFrame
        One row per model: ``model, score, in_set, critical_value`` (the pairwise c),
        ``margin`` (k minus the number of models significantly better: the set holds the
        models with a positive margin), ``k`` and ``method`` ("simultaneous pairs").

    Examples
    --------
    >>> import numpy as np
    >>> table = top_k_set([0.80, 0.78, 0.75, 0.60], np.eye(4) * 0.02**2, 2, list("abcd"))
    >>> table.loc[table["in_set"], "model"].tolist()
    ['a', 'b', 'c']
    """
    scores = np.asarray(scores, dtype=float)
    cov = np.asarray(cov, dtype=float)
    size = scores.size
    if not 1 <= k <= size:
        raise ValueError(f"k must lie in 1..{size}, got {k!r}")
    models = list(range(size)) if models is None else list(models)
    if size == 1:
        return _as_table(models, scores, [True], [np.nan], [1], k, "simultaneous pairs")
    critical = _pair_critical_value(cov, alpha, seed)
    se = pair_standard_errors(cov)
    better = scores[None, :] - scores[:, None] > critical * se  # [i, j]: j beats i
    np.fill_diagonal(better, False)
    margin = k - better.sum(axis=1)
    return _as_table(
        models, scores, margin > 0, np.full(size, critical), margin, k, "simultaneous pairs"
    )
