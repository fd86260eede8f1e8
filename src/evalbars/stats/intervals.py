"""Confidence intervals for proportions and their differences.

All functions are vectorised over numpy arrays and accept fractional counts
(a published score times its item count need not be a whole number; the
closed forms are evaluated at the fractional proportion).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from evalbars.defaults import LEVEL

__all__ = ["z_for_level", "wilson_interval", "mover_difference", "clustered_se"]


def z_for_level(level: float) -> float:
    """Two-sided standard-normal critical value, e.g. 1.959964 for ``level=0.95``.

    :math:`\\Phi^{-1}(1/2 + \\text{level}/2)` by :meth:`statistics.NormalDist.inv_cdf`,
    Wichura's algorithm AS 241 (the one R's ``qnorm`` uses, accurate to about 1e-16).
    """
    if not 0 < level < 1:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_interval(successes, n, level: float = LEVEL):
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    successes, n : array_like
        Number of successes and trials (may be fractional, ``0 <= successes <= n``, ``n > 0``).
    level : float
        Confidence level.

    Returns
    -------
    low, high : ndarray
        Interval bounds, always inside [0, 1].

    Notes
    -----
    With :math:`p = k/n` and :math:`z = \\Phi^{-1}(1 - \\alpha/2)`,

    .. math::

        \\text{centre} = \\frac{p + z^2/(2n)}{1 + z^2/n}, \\qquad
        \\text{half} = \\frac{z\\sqrt{p(1-p)/n + z^2/(4n^2)}}{1 + z^2/n}.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and
       statistical inference. JASA 22(158), 209-212.
    .. [2] Newcombe, R. G. (1998). Two-sided confidence intervals for the single
       proportion. Stat Med 17, 857-872 (method 3).

    Examples
    --------
    >>> low, high = wilson_interval(160, 200)
    >>> round(float(low), 3), round(float(high), 3)
    (0.739, 0.85)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    z = z_for_level(level)
    p = k / n
    denom = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denom
    # Clip so the interval always holds p: at k = 0 rounding leaves the lower bound ~1e-18.
    return np.clip(centre - half, 0.0, p), np.clip(centre + half, p, 1.0)


def mover_difference(est_a, low_a, high_a, est_b, low_b, high_b):
    """MOVER interval for ``est_a - est_b`` from the two single-estimate intervals.

    Notes
    -----
    With :math:`d = \\hat a - \\hat b` (Zou and Donner 2008, "method of variance
    estimates recovery"),

    .. math::

        L = d - \\sqrt{(\\hat a - l_a)^2 + (u_b - \\hat b)^2}, \\qquad
        U = d + \\sqrt{(u_a - \\hat a)^2 + (\\hat b - l_b)^2}.

    With two Wilson intervals it is Newcombe's hybrid score interval for a
    difference of independent proportions (Newcombe 1998, method 10); with two
    symmetric normal intervals it is :math:`d \\pm z\\sqrt{se_a^2 + se_b^2}`.

    References
    ----------
    .. [1] Zou, G. Y. and Donner, A. (2008). Construction of confidence limits
       about effect measures: a general approach. Stat Med 27, 1693-1702.
    .. [2] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Stat Med 17,
       873-890 (method 10).

    Examples
    --------
    Newcombe's (1998) Table II example 56/70 - 48/80, with Wilson bounds:

    >>> low_a, high_a = wilson_interval(56, 70)
    >>> low_b, high_b = wilson_interval(48, 80)
    >>> low, high = mover_difference(56 / 70, low_a, high_a, 48 / 80, low_b, high_b)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0524, 0.3339)
    """
    d = est_a - est_b
    low = d - np.sqrt((est_a - low_a) ** 2 + (high_b - est_b) ** 2)
    high = d + np.sqrt((high_a - est_a) ** 2 + (est_b - low_b) ** 2)
    return low, high


def clustered_se(scores, clusters, weights=None):
    """Miller's clustered standard error of a mean score, without a small-sample factor.

    Parameters
    ----------
    scores : array_like, shape (..., n)
        Question scores (0/1 or continuous) of one model; leading axes are
        independent stacks (e.g. simulation replicates, or models) sharing one
        clustering. NaN where ``weights`` is 0.
    clusters : array_like, shape (n,)
        Cluster label of each question (any hashable labels; they need not be
        contiguous or sorted).
    weights : array_like, shape (..., n), optional
        Samples behind each score (each score the mean of its samples); 0 leaves
        a question out. Default: one sample per score.

    Returns
    -------
    float or ndarray
        The standard error of the (sample-weighted) mean :math:`\\bar s`, with the
        leading shape of ``scores``.

    Notes
    -----
    Miller (2024, Eq. 4), with :math:`w_i` samples of mean :math:`s_i` behind
    question i, :math:`W = \\sum_i w_i` and :math:`\\bar s = \\sum_i w_i s_i / W` the
    mean over all samples:

    .. math::

        SE_{C} = \\frac{1}{W}\\sqrt{\\sum_c \\Big(\\sum_{i \\in c} w_i (s_i - \\bar s)\\Big)^2}.

    This is the cluster-robust (CR0) variance of a mean, with **no** C/(C-1)
    factor (the "CR1" convention of inspect_ai multiplies the variance by it).
    With one sample per question and one question per cluster it reduces to the
    naive SE with the population variance (``ddof=0``); with the question itself
    as the cluster it is the SE that treats a question's repeated samples as one
    cluster. On the toy scores ``[1, 1, 0, 0, 1, 0]`` with clusters ``a, a, b, b,
    c, c`` it gives :math:`\\sqrt2/6 = 0.23570`, against a naive (``ddof=1``) SE of
    0.22361. With a single cluster it is not estimable (NaN).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to
       language model evaluations. arXiv:2411.00640, Eq. 4.

    Examples
    --------
    >>> round(float(clustered_se([1, 1, 0, 0, 1, 0], list("aabbcc"))), 5)
    0.2357
    """
    s = np.asarray(scores, dtype=float)
    w = (
        np.ones(s.shape)
        if weights is None
        else np.broadcast_to(np.asarray(weights, float), s.shape)
    )
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.shape[0] != s.shape[-1]:
        raise ValueError(f"clusters must have shape ({s.shape[-1]},), got {labels.shape}")
    s = np.where(w > 0, s, 0.0)
    codes = np.unique(labels, return_inverse=True)[1].ravel()
    total = w.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w * s).sum(axis=-1, keepdims=True) / total
    stack = (w * (s - mean)).reshape(-1, s.shape[-1])
    used = (w > 0).reshape(-1, s.shape[-1])
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    if n_clusters == codes.size:
        # Every question its own cluster: the cluster sums are the terms themselves (laid out
        # row by row, as bincount's, so that the sums below round the same way).
        cluster_sums, occupied = np.ascontiguousarray(stack), used
    else:
        # One bincount over all stacks: offset each stack's cluster codes so they do not collide.
        offsets = (np.arange(stack.shape[0]) * n_clusters)[:, None]
        flat = (codes[None, :] + offsets).ravel()
        size = stack.shape[0] * n_clusters
        cluster_sums = np.bincount(flat, weights=stack.ravel(), minlength=size)
        cluster_sums = cluster_sums.reshape(stack.shape[0], n_clusters)
        occupied = np.bincount(flat, weights=used.ravel(), minlength=size)
        occupied = occupied.reshape(cluster_sums.shape)
    se = np.sqrt((cluster_sums**2).sum(axis=-1)) / total.reshape(-1)
    # One cluster's deviations sum to zero: the formula says 0, but the SE is not estimable.
    se = np.where((occupied > 0).sum(axis=-1) < 2, np.nan, se)
    return float(se[0]) if s.ndim == 1 else se.reshape(s.shape[:-1])
