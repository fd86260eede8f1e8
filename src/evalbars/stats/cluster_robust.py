"""Cluster-robust inference on a (weighted) mean score: CR0, CR1 and CR2 with small-sample df.

A mean of per-question scores, or of per-question paired differences (candidate minus baseline
on the same questions), is the intercept of the regression ``score ~ 1``. Its cluster-robust
(sandwich) variance with G clusters of questions (categories, subtasks) comes in three flavours:

- **CR0** (Liang and Zeger 1986; Miller 2024, Eq. 4), no small-sample factor, referred to the
  normal: :func:`evalbars.stats.intervals.clustered_se`, the one home of the formula;
- **CR1** (Stata's ``vce(cluster)``, sandwich's ``vcovCL(type = "HC1")``), CR0 times
  :math:`\\frac{G}{G-1}\\frac{N-1}{N-p}`, referred to :math:`t(G-1)`;
- **CR2** (Bell and McCaffrey 2002; Pustejovsky and Tipton 2018), residuals inflated by the
  inverse square root of one minus the cluster's leverage, referred to :math:`t(\\nu)` with the
  Satterthwaite (Bell-McCaffrey) degrees of freedom, as R's clubSandwich ``coef_test(vcov =
  "CR2", test = "Satterthwaite")`` computes them for an intercept-only ``lm``.

CR0 with a normal quantile is anti-conservative with few clusters (Cameron and Miller 2015,
section VI); with equal cluster sizes CR2 and its Satterthwaite df coincide with CR1 and G - 1
exactly (see :func:`cr2_mean`), with unequal sizes CR2's df fall below G - 1.

With few clusters and strong clustering no t reference holds: when the clusters' effects are far
from normal (a candidate much better in some categories and much worse in others), CR2 with
Satterthwaite t rejected a true null 10-12% of the time at 3 categories with intra-category
correlation 0.3 (:mod:`evalbars.studies.cluster_type1`). :func:`sign_flip_mean` is the cluster
sign-flip randomization test and its inverted interval, exact whenever each cluster's sum is
symmetric about the null, whatever its distribution (Canay, Romano and Shaikh 2017); its price
is that with fewer than :math:`\\log_2(2/\\alpha)` clusters (6 at alpha 0.05, two-sided) it
cannot reject at all. :data:`SIGN_FLIP_BELOW_DF` says where a reading takes it instead of CR2.

:func:`degenerate_se` is the one rule for a standard error that cannot support a verdict: zero,
or zero up to round-off, on data that vary.

Every function takes ``scores`` of shape ``(..., n)`` (leading axes are independent stacks,
e.g. simulation replicates, sharing one clustering), ``clusters`` of shape ``(n,)`` and optional
``weights`` broadcastable to the scores (samples behind each score; 0 leaves a question out), and
returns a :class:`ClusterRobustMean`. Nothing loops in Python over questions, clusters or stacks.

References
----------
.. [1] Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
   regression with multi-stage samples. Survey Methodology 28(2), 169-181.
.. [2] Pustejovsky, J. E. and Tipton, E. (2018). Small-sample methods for cluster-robust
   variance estimation and hypothesis testing in fixed effects models. Journal of Business &
   Economic Statistics 36(4), 672-683. arXiv:1601.01981.
.. [3] Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to cluster-robust
   inference. Journal of Human Resources 50(2), 317-372.
.. [4] Imbens, G. W. and Kolesár, M. (2016). Robust standard errors in small samples: some
   practical advice. Review of Economics and Statistics 98(4), 701-712.
.. [5] Zeileis, A., Köll, S. and Graham, N. (2020). Various versatile variances: an
   object-oriented implementation of clustered covariances in R. Journal of Statistical
   Software 95(1).
.. [6] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640.
.. [7] Canay, I. A., Romano, J. P. and Shaikh, A. M. (2017). Randomization tests under an
   approximate symmetry assumption. Econometrica 85(3), 1013-1030.
.. [8] Hartigan, J. A. (1969). Using subsample values as typical values. Journal of the
   American Statistical Association 64(328), 1303-1317.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from evalbars.data.blocks import blocks
from evalbars.defaults import DRAWS, LEVEL, SEED
from evalbars.stats.intervals import clustered_se

__all__ = [
    "ClusterRobustMean",
    "ClusteringApplicability",
    "clustering_applicable",
    "cr0_mean",
    "cr1_mean",
    "cr2_mean",
    "cluster_robust_mean",
    "SIGN_FLIP_BELOW_DF",
    "SignFlipMean",
    "sign_flip_mean",
    "sign_flip_can_reject",
    "sign_flip_clusters_needed",
    "degenerate_se",
]

#: A clustered reading takes the sign-flip test (:func:`sign_flip_mean`) while CR2's Satterthwaite
#: degrees of freedom are below this (G <= 30 clusters of equal size), CR2 with t from here on.
SIGN_FLIP_BELOW_DF = 30
#: Every sign pattern is enumerated up to this many clusters (65,536 patterns); beyond, seeded draws.
ENUMERATED_CLUSTERS = 16
#: An SE whose square is at most this share of the mean square of the data per question is 0 up
#: to round-off (:func:`degenerate_se`).
ROUND_OFF = 1e-9


@dataclass(frozen=True)
class ClusterRobustMean:
    """A cluster-robust estimate of a mean, its SE and the degrees of freedom of its t reference.

    Attributes
    ----------
    method : str
        ``"CR0"`` (normal reference, ``df = inf``), ``"CR1"`` (``df = G - 1``) or ``"CR2"``
        (Satterthwaite df).
    estimate, se, df : float or ndarray
        The (weighted) mean, its standard error and the degrees of freedom, each with the
        leading shape of the scores; NaN where fewer than 2 clusters hold a question.
    clusters, questions : int or ndarray
        Clusters and questions with a positive weight (G and N).
    """

    method: str
    estimate: float | np.ndarray
    se: float | np.ndarray
    df: float | np.ndarray
    clusters: int | np.ndarray
    questions: int | np.ndarray

    def critical_value(self, level: float = LEVEL):
        """Two-sided critical value :math:`t_{\\nu}^{-1}(1/2 + \\text{level}/2)` (z when df = inf)."""
        if not 0 < level < 1:
            raise ValueError(f"confidence level must be in (0, 1), got {level!r}")
        return _same_kind(special.stdtrit(np.asarray(self.df, float), 0.5 + level / 2), self.se)

    def interval(self, level: float = LEVEL):
        """Two-sided interval ``(low, high)``: estimate :math:`\\pm` critical value :math:`\\times` SE."""
        half = self.critical_value(level) * np.asarray(self.se)
        return _same_kind(self.estimate - half, self.se), _same_kind(self.estimate + half, self.se)

    def statistic(self, null: float = 0.0):
        """The t (or z) statistic :math:`(\\hat\\mu - \\mu_0)/SE`."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return _same_kind((np.asarray(self.estimate) - null) / np.asarray(self.se), self.se)

    def p_value(self, null: float = 0.0):
        """Two-sided p of :math:`H_0: \\mu = \\mu_0`, :math:`2\\,F_{\\nu}(-|t|)`."""
        t = np.abs(np.asarray(self.statistic(null), float))
        return _same_kind(2 * special.stdtr(np.asarray(self.df, float), -t), self.se)


@dataclass(frozen=True)
class ClusteringApplicability:
    """Whether cluster-robust inference can be used: ``applicable``, ``clusters`` and ``reason``."""

    applicable: bool
    clusters: int
    reason: str


def clustering_applicable(clusters, weights=None) -> ClusteringApplicability:
    """Whether a cluster-robust SE of a mean is estimable on these clusters, and what it costs.

    Parameters
    ----------
    clusters : array_like, shape (n,)
        Cluster label of each question.
    weights : array_like, shape (n,), optional
        Samples behind each question; clusters whose questions all have weight 0 do not count.

    Returns
    -------
    ClusteringApplicability
        ``applicable`` is True with 2 or more clusters.

    Notes
    -----
    With one cluster the weighted residuals sum to zero inside it, so CR0 is identically 0 and
    CR2's adjustment matrix :math:`I - H_{11}` is singular (clubSandwich stops): not estimable.
    With two clusters the two weighted residual sums are equal and opposite, so the CR0/CR1
    variance has a single degree of freedom: CR1 refers to :math:`t(1)`, whose 97.5% quantile is
    12.71, and with equal weights CR2's Satterthwaite df is exactly 1 whatever the two cluster
    sizes (:math:`\\nu = 1/[\\sum_j f_j^2 + (\\sum_j q_j)^2 - \\sum_j q_j^2]` with
    :math:`q_j = f_j^2/(1-f_j)` is 1 when :math:`f_2 = 1 - f_1`). The interval is valid but
    about 6.5 times as wide as a z interval with the same SE.
    """
    labels = np.asarray(clusters)
    if weights is not None:
        labels = labels[np.broadcast_to(np.asarray(weights, float), labels.shape) > 0]
    count = int(np.unique(labels).size)
    if count == 0:
        return ClusteringApplicability(False, 0, "no question has a positive weight")
    if count == 1:
        reason = (
            "one cluster: the residuals sum to zero within it, so the cluster-robust variance "
            "is identically 0 (CR0) or undefined (CR2); not estimable"
        )
        return ClusteringApplicability(False, 1, reason)
    if count == 2:
        reason = (
            "two clusters: estimable, but the two cluster sums of residuals are equal and "
            "opposite, so the variance has one degree of freedom (t(1), 97.5% quantile 12.71): "
            "valid, and about 6.5 times as wide as a z interval of the same SE"
        )
        return ClusteringApplicability(True, 2, reason)
    return ClusteringApplicability(True, count, f"{count} clusters: CR1 df = {count - 1}")


def cr0_mean(scores, clusters, weights=None) -> ClusterRobustMean:
    """CR0 (Miller's clustered SE, no small-sample factor) with a normal reference.

    Parameters
    ----------
    scores : array_like, shape (..., n)
        Per-question scores or paired differences; leading axes are independent stacks.
    clusters : array_like, shape (n,)
        Cluster label of each question.
    weights : array_like, broadcastable to ``scores``, optional
        Samples behind each score (0 leaves a question out). Default: 1 per question.

    Returns
    -------
    ClusterRobustMean
        ``method = "CR0"``, ``df = inf``.

    Notes
    -----
    :math:`\\hat\\mu = \\sum_i w_i s_i / W`, :math:`e_i = s_i - \\hat\\mu`,
    :math:`V_{CR0} = W^{-2}\\sum_j (\\sum_{i \\in j} w_i e_i)^2`, as computed by
    :func:`evalbars.stats.intervals.clustered_se` (Miller 2024, Eq. 4). It equals clubSandwich's
    ``vcovCR(type = "CR0")`` and sandwich's ``vcovCL(type = "HC0", cadjust = FALSE)``.
    """
    data = _Prepared(scores, clusters, weights)
    se = np.asarray(clustered_se(scores, clusters, weights), float)
    df = np.where(data.clusters >= 2, np.inf, np.nan)
    return data.result("CR0", se, df)


def cr1_mean(scores, clusters, weights=None) -> ClusterRobustMean:
    """CR1 (Stata's small-sample factors) with a :math:`t(G-1)` reference.

    Parameters
    ----------
    scores, clusters, weights
        As in :func:`cr0_mean`.

    Returns
    -------
    ClusterRobustMean
        ``method = "CR1"``, ``df = G - 1``.

    Notes
    -----
    .. math::

        V_{CR1} = \\frac{G}{G-1}\\,\\frac{N-1}{N-p}\\,V_{CR0}, \\qquad p = 1,

    so for a mean :math:`V_{CR1} = \\frac{G}{G-1} V_{CR0}`, with G the clusters and N the
    questions of positive weight. This is Stata's ``regress, vce(cluster)`` and the
    inspect_ai convention, sandwich's ``vcovCL(type = "HC1")`` and clubSandwich's ``"CR1S"``
    (``"CR1"`` there has the G/(G-1) factor only, the same for p = 1). The reference
    :math:`t(G-1)` is Stata's (Cameron and Miller 2015, section VI).
    """
    data = _Prepared(scores, clusters, weights)
    g, n = data.clusters.astype(float), data.questions.astype(float)
    parameters = 1
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = g / (g - 1) * (n - 1) / (n - parameters)
    se0 = np.asarray(clustered_se(scores, clusters, weights), float)
    valid = g >= 2
    se = np.where(valid, se0 * np.sqrt(np.where(valid, factor, 1.0)), np.nan)
    return data.result("CR1", se, np.where(valid, g - 1, np.nan))


def cr2_mean(scores, clusters, weights=None) -> ClusterRobustMean:
    """CR2 (Bell-McCaffrey) with Satterthwaite degrees of freedom, as clubSandwich for ``lm``.

    Parameters
    ----------
    scores, clusters, weights
        As in :func:`cr0_mean`; with weights the fit is ``lm(score ~ 1, weights = w)``.

    Returns
    -------
    ClusterRobustMean
        ``method = "CR2"``, ``df`` the Satterthwaite (Bell-McCaffrey) degrees of freedom.

    Notes
    -----
    For ``lm(score ~ 1, weights = w)`` clubSandwich works under the target variance
    :math:`\\Theta = I` (``inverse_var = FALSE``: the weights are not taken as inverse
    variances). With :math:`H = 1 w^\\top / W` and :math:`Q = \\sum_i w_i^2 / W^2`, cluster j's
    adjustment is :math:`A_j = G_j^{-1/2}` with

    .. math::

        G_j = [(I - H)(I - H)^\\top]_{jj} = I - (1 w_j^\\top + w_j 1^\\top)/W + Q\\,1 1^\\top,

    and :math:`V_{CR2} = W^{-2}\\sum_j (w_j^\\top A_j e_j)^2` (Pustejovsky and Tipton 2018, the
    CR2 estimator). :math:`G_j` is the identity plus a rank-2 term in :math:`\\mathrm{span}(1, w_j)`, so
    :math:`A_j` is the identity plus :math:`B_j (K_j^{-1/2} - I) B_j^\\top` with :math:`B_j` an
    orthonormal basis of that span and the 2x2 matrix

    .. math::

        K_j = \\begin{pmatrix} 1 + Q n_j - 2 W_j/W & -\\sqrt{n_j}\\,r_j/W \\\\
        -\\sqrt{n_j}\\,r_j/W & 1 \\end{pmatrix}, \\qquad
        r_j^2 = \\sum_{i \\in j}(w_i - \\bar w_j)^2,

    whose inverse square root has the closed form :math:`\\mathrm{adj}(K + \\delta I)/(\\tau
    \\delta)`, :math:`\\delta = \\sqrt{\\det K}`, :math:`\\tau = \\sqrt{\\mathrm{tr} K +
    2\\delta}` (Levinger 1980, "The square root of a 2x2 matrix"). Every term is a cluster sum.

    The degrees of freedom (Bell and McCaffrey 2002; Pustejovsky and Tipton 2018, the
    Satterthwaite approximation for one constraint), with :math:`g_j = A_j w_j`, :math:`V_{CR2} W^2 = \\sum_j (u_j^\\top y)^2`,
    :math:`u_j = (I - H)^\\top g_j` (:math:`g_j` in cluster j's rows, 0 elsewhere), and :math:`P_{jk} = u_j^\\top \\Theta u_k = \\delta_{jk}
    s_j - (a_j b_k + b_j a_k)/W + Q a_j a_k` with :math:`a_j = 1^\\top g_j`,
    :math:`b_j = w_j^\\top g_j`, :math:`s_j = g_j^\\top g_j`, so that

    .. math::

        \\nu = \\frac{(\\mathrm{tr}\\,P)^2}{\\sum_{j,k} P_{jk}^2}.

    With equal weights :math:`V_{CR2} = N^{-2}\\sum_j S_j^2/(1 - n_j/N)` (:math:`S_j` the cluster
    sum of residuals) and, with :math:`f_j = n_j/N` and :math:`q_j = f_j^2/(1-f_j)`,
    :math:`\\nu = 1/[\\sum_j f_j^2 + (\\sum_j q_j)^2 - \\sum_j q_j^2]`. With equal cluster sizes
    both reduce to CR1 and :math:`\\nu = G - 1` exactly; with one question per cluster
    :math:`V_{CR2}` is the HC2 variance of the mean. Not defined with fewer than 2 clusters.

    Examples
    --------
    Three clusters of two questions (equal sizes: CR2 is CR1, :math:`\\sqrt{2}/6 \\cdot
    \\sqrt{3/2}`, on 2 df); a seventh question makes the sizes unequal and the df fall:

    >>> result = cr2_mean([1, 1, 0, 0, 1, 0], list("aabbcc"))
    >>> round(result.se, 5), round(result.df, 6)
    (0.28868, 2.0)
    >>> [round(bound, 4) for bound in result.interval(0.95)]
    [-0.7421, 1.7421]
    >>> round(cr2_mean([1, 1, 0, 0, 1, 0, 1], list("aabbccc")).df, 4)
    1.9231
    """
    data = _Prepared(scores, clusters, weights)
    w, used = data.weights, data.used
    count = data.sums(used)  # n_j, from the weights' own leading shape
    weight_sum = data.sums(w)  # W_j
    total = weight_sum.sum(axis=-1, keepdims=True)  # W
    with np.errstate(divide="ignore", invalid="ignore"):  # W = 0: no question, NaN below
        concentration = data.sums(w * w).sum(axis=-1, keepdims=True) / total**2  # Q
        cluster_mean_weight = np.where(count > 0, weight_sum / count, 0.0)
        # Spread of the weights about their cluster mean, summed directly (not as sum w^2 -
        # W_j^2/n_j) so constant weights give exactly 0 and the 1-D case exactly.
        spread = np.where(used, w - np.take(cluster_mean_weight, data.codes, axis=-1), 0.0)
        spread_norm = np.sqrt(data.sums(spread * spread))
        root_count = np.sqrt(count)
        k11 = 1 + concentration * count - 2 * weight_sum / total
        k12 = -root_count * spread_norm / total
        m11, m12, m22 = _inverse_sqrt_minus_identity(k11, k12)
        # Coordinates of w_j and e_j in the orthonormal basis (1/sqrt(n_j), spread/|spread|).
        pw1 = np.where(count > 0, weight_sum / root_count, 0.0)
        pw2 = spread_norm
        residual = np.where(used, data.scores - data.estimate[..., None], 0.0)
        pe1 = np.where(count > 0, data.sums(residual) / root_count, 0.0)
        pe2 = np.where(spread_norm > 0, data.sums(spread * residual) / spread_norm, 0.0)
    component = (
        data.sums(w * residual) + pw1 * (m11 * pe1 + m12 * pe2) + pw2 * (m12 * pe1 + m22 * pe2)
    )
    variance = (component**2).sum(axis=-1) / total[..., 0] ** 2
    # g_j = A_j w_j = w_j + B_j M_j (pw1, pw2): its sums with 1, w_j and itself.
    mw1, mw2 = m11 * pw1 + m12 * pw2, m12 * pw1 + m22 * pw2
    sum_g = weight_sum + root_count * mw1
    weighted_sum_g = data.sums(w * w) + pw1 * mw1 + pw2 * mw2
    square_g = data.sums(w * w) + 2 * (pw1 * mw1 + pw2 * mw2) + mw1**2 + mw2**2
    q, total1 = concentration[..., 0], total[..., 0]
    saa, sab, sbb = (
        (sum_g**2).sum(-1),
        (sum_g * weighted_sum_g).sum(-1),
        (weighted_sum_g**2).sum(-1),
    )
    trace = square_g.sum(-1) - 2 * sab / total1 + q * saa
    low_rank_diagonal = -2 * sum_g * weighted_sum_g / total1[..., None] + q[..., None] * sum_g**2
    # ||L||_F^2 = tr((C F'F)^2) for L = F C F', F = [a, b], C = [[Q, -1/W], [-1/W, 0]].
    cg11, cg12 = q * saa - sab / total1, q * sab - sbb / total1
    cg21, cg22 = -saa / total1, -sab / total1
    low_rank_square = cg11**2 + 2 * cg12 * cg21 + cg22**2
    frobenius = (square_g**2).sum(-1) + 2 * (square_g * low_rank_diagonal).sum(-1) + low_rank_square
    with np.errstate(divide="ignore", invalid="ignore"):
        df = trace**2 / frobenius
    valid = data.clusters >= 2
    df = np.where(valid, np.broadcast_to(df, data.clusters.shape), np.nan)
    return data.result("CR2", np.where(valid, np.sqrt(variance), np.nan), df)


def cluster_robust_mean(scores, clusters, weights=None, method: str = "CR2") -> ClusterRobustMean:
    """:func:`cr0_mean`, :func:`cr1_mean` or :func:`cr2_mean` by name (``"CR0"``, ``"CR1"``, ``"CR2"``)."""
    functions = {"CR0": cr0_mean, "CR1": cr1_mean, "CR2": cr2_mean}
    if method not in functions:
        raise ValueError(f"method must be one of {sorted(functions)}, got {method!r}")
    return functions[method](scores, clusters, weights)


@dataclass(frozen=True)
class SignFlipMean:
    """The cluster sign-flip randomization test of a (weighted) mean, and its interval.

    Attributes
    ----------
    estimate : float or ndarray
        The (weighted) mean, with the leading shape of the scores.
    nulls : float or ndarray
        The null values tested.
    p_greater, p_less : float or ndarray
        One-sided p of :math:`H_1: \\mu > \\mu_0` and of :math:`H_1: \\mu < \\mu_0` for each null
        :math:`\\mu_0`: shape the leading shape followed by the shape of ``nulls``.
    low, high : float or ndarray
        The two-sided interval at ``level``: the nulls that neither one-sided test rejects at
        (1 - level)/2. ``-inf`` and ``inf`` where the test cannot reject at that level (too few
        clusters: :func:`sign_flip_can_reject`).
    level : float
        Confidence level of the interval.
    clusters : int or ndarray
        Clusters with a positive weight (G).
    patterns : int
        Sign patterns the p-values count: every one of the :math:`2^G` (``enumerated``), or the
        identity and ``patterns - 1`` seeded draws.
    enumerated : bool
        Whether every sign pattern was counted (an exact, seed-free test).
    """

    estimate: float | np.ndarray
    nulls: float | np.ndarray
    p_greater: float | np.ndarray
    p_less: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    level: float
    clusters: int | np.ndarray
    patterns: int
    enumerated: bool

    def p_value(self):
        """Two-sided p of :math:`H_0: \\mu = \\mu_0`, :math:`\\min(1, 2\\min(p_>, p_<))`."""
        both = np.minimum(1.0, 2 * np.minimum(self.p_greater, self.p_less))
        return float(both) if np.ndim(both) == 0 else both


def _sign_patterns(clusters: int, draws: int, seed: int) -> tuple[np.ndarray, bool]:
    """``(patterns, enumerated)``: rows of 0/1 (1 = the cluster's sign is flipped), the identity
    first; every one of the :math:`2^G` up to :data:`ENUMERATED_CLUSTERS` clusters, else the
    identity and ``draws - 1`` seeded uniform draws."""
    if clusters <= ENUMERATED_CLUSTERS:
        bits = (np.arange(2**clusters)[:, None] >> np.arange(clusters)) & 1
        return bits.astype(float), True
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, 2, size=(max(int(draws), 1) - 1, clusters))
    return np.vstack([np.zeros((1, clusters)), drawn]).astype(float), False


def sign_flip_can_reject(clusters: int, alpha: float, draws: int = DRAWS) -> bool:
    """Whether the sign-flip test of G ``clusters`` can reject at all in a two-sided test at
    ``alpha``: its smallest one-sided p, :math:`2^{-G}` (or 1/``draws`` beyond
    :data:`ENUMERATED_CLUSTERS`), is at most alpha/2.

    Examples
    --------
    >>> [sign_flip_can_reject(g, 0.05) for g in (3, 5, 6)]
    [False, False, True]
    """
    patterns = 2**clusters if clusters <= ENUMERATED_CLUSTERS else int(draws)
    return bool(np.floor(alpha / 2 * patterns) >= 1)


def sign_flip_clusters_needed(alpha: float) -> int:
    """The fewest clusters with which the enumerated sign-flip test can reject two-sided at
    ``alpha``: the smallest G with :math:`2^{-G} \\le \\alpha/2`.

    Examples
    --------
    >>> sign_flip_clusters_needed(0.05), sign_flip_clusters_needed(0.01)
    (6, 8)
    """
    return int(np.ceil(np.log2(2 / alpha) - 1e-12))


def sign_flip_mean(
    scores,
    clusters,
    weights=None,
    *,
    nulls=0.0,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = SEED,
) -> SignFlipMean:
    """The cluster sign-flip randomization test of a mean and the interval that inverts it.

    Parameters
    ----------
    scores : array_like, shape (..., n)
        Per-question scores or paired differences; leading axes are independent stacks.
    clusters : array_like, shape (n,)
        Cluster label of each question.
    weights : array_like, broadcastable to ``scores``, optional
        Samples behind each score (0 leaves a question out). Default: 1 per question.
    nulls : float or array_like
        Null values :math:`\\mu_0` whose one-sided p are wanted.
    level : float
        Confidence level of the interval.
    draws : int
        Sign patterns counted beyond :data:`ENUMERATED_CLUSTERS` clusters (the identity and
        ``draws - 1`` seeded draws); up to there all :math:`2^G` are.
    seed : int
        Seed of the drawn patterns (the same patterns for every stack).

    Returns
    -------
    SignFlipMean

    Notes
    -----
    With :math:`U_j(\\mu_0) = \\sum_{i \\in j} w_i (s_i - \\mu_0)` the cluster sums about the null
    and :math:`T = \\sum_j U_j`, the test compares T with :math:`T^*(\\varepsilon) = \\sum_j
    \\varepsilon_j U_j` over sign patterns :math:`\\varepsilon \\in \\{-1, 1\\}^G`. When every
    :math:`U_j` is symmetric about 0 under :math:`H_0` and the clusters are independent, all
    patterns are equally likely and

    .. math::

        p_> = \\frac{\\#\\{\\varepsilon: T^*(\\varepsilon) \\ge T\\}}{P}, \\qquad
        p_< = \\frac{\\#\\{\\varepsilon: T^*(\\varepsilon) \\le T\\}}{P}

    are exact p-values, whatever the clusters' distributions (Fisher's randomization argument;
    Canay, Romano and Shaikh 2017, who show it stays valid asymptotically when the symmetry holds
    in the limit, as for means of many questions per cluster). P counts the patterns: all
    :math:`2^G`, or the identity and P - 1 uniform draws (still exact). Flipping the clusters of a
    set A changes T by :math:`-2\\sum_{j \\in A} U_j`, so :math:`T^* \\ge T` exactly when the
    pooled mean of A, :math:`m_A = \\sum_{i \\in A} w_i s_i / \\sum_{i \\in A} w_i`, is at most
    :math:`\\mu_0` (the empty set always counts). :math:`p_>` is thus the share of subset means
    at most :math:`\\mu_0`, increasing in it, and the interval is closed-form (Hartigan 1969):
    with :math:`k = \\lfloor P(1 - \\text{level})/2 \\rfloor`, low is the (k + 1)-th smallest of
    the P subset means (the empty set's taken as :math:`-\\infty`) and high the (k + 1)-th
    largest. The interval lies within the range of the clusters' means; with k = 0 (fewer than
    :math:`\\log_2(2/(1 - \\text{level}))` clusters) there is none: the test cannot reject.

    The statistic is not studentized: no variance is estimated, so none can be degenerate.
    Nothing loops over patterns, questions or stacks in Python; stacks go in blocks of
    :data:`evalbars.data.blocks.BLOCK_CELLS` subset sums.

    Examples
    --------
    Six clusters, every one above the null of 0: the most extreme of 64 patterns, one-sided
    p = 1/64. With k = 1 the 95% interval runs from the smallest to the largest subset mean,
    here the smallest and largest cluster means:

    >>> result = sign_flip_mean([0.1, 0.3, 0.2, 0.4, 0.1, 0.2], list("abcdef"))
    >>> result.p_greater, result.patterns
    (0.015625, 64)
    >>> round(result.low, 4), round(result.high, 4)
    (0.1, 0.4)
    >>> sign_flip_mean([0.1, 0.3, 0.2], list("abc")).low  # three clusters cannot reject
    -inf
    """
    data = _Prepared(scores, clusters, weights)
    sums = data.sums(data.weights * data.scores)
    totals = data.sums(data.weights)
    patterns, enumerated = _sign_patterns(data.n_clusters, draws, seed)
    count = patterns.shape[0]
    null_values = np.asarray(nulls, dtype=float)
    lead = sums.shape[:-1]
    flat_sums = sums.reshape(-1, data.n_clusters)
    # Weights shared by every stack (the usual case) give one row of subset weights for all.
    shared = totals.ndim == 1
    flat_totals = totals if shared else np.broadcast_to(totals, sums.shape).reshape(flat_sums.shape)
    rows = flat_sums.shape[0]
    flat_nulls = null_values.reshape(-1)
    magnitude = np.abs(np.where(data.used, data.scores, 0.0)).max(-1, initial=0.0)
    flat_magnitude = np.broadcast_to(magnitude, lead).reshape(-1)
    greater = np.empty((rows, flat_nulls.size))
    less = np.empty((rows, flat_nulls.size))
    low, high = np.empty(rows), np.empty(rows)
    k = int(np.floor(count * (1 - level) / 2 + 1e-12))
    transposed = patterns.T
    for block in blocks(rows, count * max(1, flat_nulls.size)):
        subset_totals = flat_totals @ transposed if shared else flat_totals[block] @ transposed
        nonempty = subset_totals > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            means = (flat_sums[block] @ transposed) / subset_totals  # pooled mean of each set A
        # A subset mean equal to the null up to round-off is a tie, and ties count as extreme.
        tie = 1e3 * np.finfo(float).eps * (flat_magnitude[block, None] + np.abs(flat_nulls))
        lower = np.where(nonempty, means, -np.inf)
        greater[block] = (lower[:, None, :] <= (flat_nulls + tie)[..., None]).sum(-1) / count
        lower.partition(k, axis=-1)
        low[block] = lower[:, k]
        upper = np.where(nonempty, means, np.inf)
        less[block] = (upper[:, None, :] >= (flat_nulls - tie)[..., None]).sum(-1) / count
        upper.partition(count - 1 - k, axis=-1)
        high[block] = upper[:, count - 1 - k]
    shape = lead + null_values.shape

    def shaped(values, target):
        values = values.reshape(target)
        return float(values) if values.ndim == 0 else values

    return SignFlipMean(
        estimate=shaped(np.asarray(data.estimate, float), lead),
        nulls=float(null_values) if null_values.ndim == 0 else null_values,
        p_greater=shaped(greater, shape),
        p_less=shaped(less, shape),
        low=shaped(low, lead),
        high=shaped(high, lead),
        level=float(level),
        clusters=int(data.clusters) if data.clusters.ndim == 0 else np.array(data.clusters),
        patterns=int(count),
        enumerated=enumerated,
    )


def degenerate_se(se, scores, weights=None):
    """Whether a standard error of the mean of ``scores`` cannot support a verdict.

    Parameters
    ----------
    se : float or array_like
        The SE (paired, clustered: any estimate of the SE of the mean), with the leading shape
        of ``scores``.
    scores : array_like, shape (..., n)
        The values whose mean it is the SE of (NaN leaves a question out).
    weights : array_like, broadcastable to ``scores``, optional
        Samples behind each score (0 leaves a question out).

    Returns
    -------
    bool or ndarray of bool
        True where the SE is NaN, 0, or 0 up to round-off:
        :math:`SE^2 \\le \\epsilon\\,\\overline{s^2}/n` with :math:`\\epsilon` = :data:`ROUND_OFF`,
        :math:`\\overline{s^2}` the (weighted) mean square of the n scores.

    Notes
    -----
    An SE estimated from G cluster sums, or from n equal differences, can be 0 by chance: the
    categories' mean differences all equal, or one difference on every question. A zero-width
    interval would then claim any precision whatever the flips behind it. A variance computed
    as a difference of moments, :math:`\\overline{s^2} - \\bar s^2`, is 0 only up to a few units
    of round-off in :math:`\\overline{s^2}` (the SE of a constant 1/3 comes out near 1e-17, not
    0); the smallest real SE of n scores is far above the bound (one question in n that differs
    by 1 gives :math:`SE^2 \\approx \\overline{s^2}/n`). Every reading that decides from an SE asks
    this function first and, where it says True, decides another way (the release gate:
    :mod:`evalbars.readings.gate`).

    Examples
    --------
    >>> bool(degenerate_se(1.4e-17, [1 / 3] * 300)), bool(degenerate_se(0.0, [0.0] * 5))
    (True, True)
    >>> bool(degenerate_se(0.0577, [1, 0, -1, 0, 1, 0]))
    False
    """
    s = np.asarray(scores, dtype=float)
    s, w = np.broadcast_arrays(s, 1.0 if weights is None else np.asarray(weights, float))
    used = np.isfinite(s) & (w > 0)
    w = np.where(used, w, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_square = (w * np.where(used, s, 0.0) ** 2).sum(-1) / w.sum(-1)
        bound = ROUND_OFF * mean_square / used.sum(-1)
    value = np.asarray(se, dtype=float)
    degenerate = ~(value > 0) | (value**2 <= bound)
    return bool(degenerate) if degenerate.ndim == 0 else degenerate


class _Prepared:
    """Scores, weights and cluster codes checked once; cluster sums by ``np.add.reduceat``."""

    def __init__(self, scores, clusters, weights):
        s = np.asarray(scores, dtype=float)
        if s.ndim == 0:
            raise ValueError("scores must have at least one axis (questions)")
        labels = np.asarray(clusters)
        if labels.ndim != 1 or labels.shape[0] != s.shape[-1]:
            raise ValueError(f"clusters must have shape ({s.shape[-1]},), got {labels.shape}")
        # Without weights keep them 1-D: the weight-only terms of CR2 are then computed once.
        w = np.ones(s.shape[-1]) if weights is None else np.asarray(weights, dtype=float)
        np.broadcast_shapes(w.shape, s.shape)
        self.codes = np.unique(labels, return_inverse=True)[1].ravel()
        self.n_clusters = int(self.codes.max()) + 1 if self.codes.size else 0
        self.order = np.argsort(self.codes, kind="stable")
        self.sorted = bool(np.all(self.order == np.arange(self.codes.size)))
        self.starts = np.searchsorted(self.codes[self.order], np.arange(self.n_clusters))
        self.used = w > 0
        self.weights = np.where(self.used, w, 0.0)
        self.scores = np.where(self.used, s, 0.0)
        self.one_dimensional = s.ndim == 1
        lead = s.shape[:-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            self.estimate = (self.weights * self.scores).sum(-1) / self.weights.sum(-1)
        self.estimate = np.broadcast_to(self.estimate, lead)
        occupied = self.sums(self.used.astype(float)) > 0
        self.clusters = np.broadcast_to(occupied.sum(-1), lead)
        self.questions = np.broadcast_to(self.used.sum(-1), lead)

    def sums(self, values):
        """Sum of ``values`` (..., n) within each cluster: shape (..., G)."""
        values = np.asarray(values, dtype=float)
        if values.shape[-1] == 0:
            return np.zeros((*values.shape[:-1], 0))
        ordered = values if self.sorted else np.take(values, self.order, axis=-1)
        return np.add.reduceat(ordered, self.starts, axis=-1)

    def result(self, method, se, df):
        shape = self.estimate.shape
        values = [self.estimate, np.broadcast_to(se, shape), np.broadcast_to(df, shape)]
        counts = [self.clusters, self.questions]
        if self.one_dimensional:
            return ClusterRobustMean(method, *(float(v) for v in values), *(int(c) for c in counts))
        return ClusterRobustMean(
            method, *(np.array(v) for v in values), *(np.array(c) for c in counts)
        )


def _inverse_sqrt_minus_identity(k11, k12):
    """Entries ``m11, m12, m22`` of :math:`K^{-1/2} - I` for the SPD matrix [[k11, k12], [k12, 1]].

    :math:`K^{-1/2} = \\mathrm{adj}(K + \\delta I)/(\\tau\\delta)` with :math:`\\delta =
    \\sqrt{\\det K}`, :math:`\\tau = \\sqrt{\\mathrm{tr}K + 2\\delta}`.
    """
    delta = np.sqrt(k11 - k12**2)
    scale = np.sqrt(k11 + 1 + 2 * delta) * delta
    return (1 + delta) / scale - 1, -k12 / scale, (k11 + delta) / scale - 1


def _same_kind(value, like):
    """``value`` as a float when ``like`` is a Python float (a 1-D input), else an ndarray."""
    return float(value) if isinstance(like, float) else np.asarray(value)
