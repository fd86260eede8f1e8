"""The winner's curse: inference on the score of the model that came out on top.

The top score of a leaderboard is the maximum of noisy estimates, so it is biased upward and its
naive interval under-covers (the winner's curse). With the vector of model scores
:math:`X \\sim N(\\mu, \\Sigma)` (``scores`` and their joint covariance ``cov``, which for models
scored on the same questions is the paired covariance of :func:`mean_covariance`, clustered by
category where there are categories) and the winner :math:`\\hat\\theta = \\arg\\max_j X_j`, this
module gives four readings of :math:`\\mu_{\\hat\\theta}`:

- **naive**: :math:`X_{\\hat\\theta} \\pm z_{1-\\alpha/2}\\,\\sigma_{\\hat\\theta}`, valid only
  for a model chosen before seeing the data;
- **conditional** (:func:`winner_conditional`): conditional on the selection event and on
  :math:`Z = X - \\Sigma_{\\cdot\\theta}\\Sigma_{\\theta\\theta}^{-1}X_\\theta` (independent of
  :math:`X_\\theta`), :math:`X_\\theta` is normal with mean :math:`\\mu_\\theta` truncated to
  :math:`[\\mathcal L(Z), \\mathcal U(Z)]` (the polyhedral lemma; Lee, Sun, Sun and Taylor 2016),
  with :math:`c_j = \\Sigma_{j\\theta}/\\Sigma_{\\theta\\theta}` and
  :math:`\\mathcal L = \\max_{j: c_j<1} Z_j/(1-c_j)`, :math:`\\mathcal U = \\min_{j: c_j>1}
  Z_j/(1-c_j)`. Inverting the truncated-normal CDF :math:`F_{TN}(X_\\theta;\\mu)` gives the
  median-unbiased estimate (:math:`F = 1/2`) and the equal-tailed interval
  (:math:`F = 1 - \\alpha/2` and :math:`\\alpha/2`); valid conditionally, long when the margin of
  victory is small;
- **hybrid** (:func:`winner_hybrid`, Andrews, Kitagawa and McCloskey 2024): conditions as well on
  :math:`\\mu_\\theta` lying in the level :math:`1-\\beta` projection interval
  :math:`X_\\theta \\pm c_\\beta\\,\\sigma_\\theta`, with :math:`c_\\beta` the simultaneous
  critical value of :math:`\\max_j |X_j-\\mu_j|/\\sigma_j` (:func:`simultaneous_critical_value`).
  The truncation for a hypothesised :math:`\\mu` becomes
  :math:`[\\max(\\mathcal L, \\mu - c_\\beta\\sigma_\\theta), \\min(\\mathcal U, \\mu +
  c_\\beta\\sigma_\\theta)]`, the conditional level :math:`(\\alpha-\\beta)/(1-\\beta)`, and the
  interval, always inside the projection interval, covers :math:`\\mu_{\\hat\\theta}` with
  probability at least :math:`1-\\alpha` unconditionally; :math:`\\beta = \\alpha/10` as AKM
  recommend. The hybrid estimate solves :math:`F = 1/2` under the hybrid truncation;
- **zoom** (:func:`winner_zoom`, locally simultaneous inference of Zrnic and Fithian): a share
  :math:`\\nu` of the error buys simultaneous intervals for every model; the plausible winners
  are the models whose upper limit reaches the largest lower limit; the remaining
  :math:`\\alpha - \\nu` buys a simultaneous interval over the plausible winners only, which is
  the winner's interval (the estimate stays the observed score).

The hybrid interval is the corrected reading; the zoom interval is reported beside it (it is
shorter when one model stands out). Choosing whichever of the two is shorter after seeing both
is not itself a valid procedure, so evalbars never does: it shows both.

Every function takes leading batch axes (independent boards sharing one covariance, as the
coverage study draws them) and solves its equations by vectorised bisection: nothing loops in
Python over models or replicates.

References
----------
.. [1] Andrews, I., Kitagawa, T. and McCloskey, A. (2024). Inference on winners. Quarterly
   Journal of Economics 139(1), 305-358.
.. [2] Lee, J. D., Sun, D. L., Sun, Y. and Taylor, J. E. (2016). Exact post-selection inference,
   with application to the lasso. Annals of Statistics 44(3), 907-927.
.. [3] Zrnic, T. and Fithian, W. (2024). Locally simultaneous inference. Annals of Statistics
   52(3), 1227-1253. arXiv:2212.09009.
.. [5] Naiman, D. Q. and Priebe, C. E. (2001). Computing scan statistic p values using
   importance sampling, with applications to genetics and medical image analysis. Journal of
   Computational and Graphical Statistics 10(2), 296-328.
.. [6] Shi, J., Siegmund, D. and Yakir, B. (2007). Importance sampling for estimating p values
   in linkage analysis. Journal of the American Statistical Association 102(479), 929-937.
.. [4] Hothorn, T., Bretz, F. and Westfall, P. (2008). Simultaneous inference in general
   parametric models. Biometrical Journal 50(3), 346-363 (the critical value of the largest absolute t).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from evalbars.data import blocks as blocks_module
from evalbars.defaults import ALPHA, SEED

__all__ = [
    "WINNER_METHODS",
    "WinnerReading",
    "mean_covariance",
    "mean_variance",
    "simultaneous_critical_value",
    "simultaneous_critical_values",
    "selection_truncation",
    "truncated_normal_cdf",
    "winner_naive",
    "winner_conditional",
    "winner_hybrid",
    "winner_zoom",
    "winner_table",
]

#: The readings of the winner's score, in the order tables show them.
WINNER_METHODS = ("naive", "conditional", "hybrid", "zoom")

#: Importance-sampling draws of a simultaneous critical value (:func:`simultaneous_critical_value`).
CRITICAL_DRAWS = 20_000
#: Above this many models the critical value is Bonferroni's (conservative, valid): a
#: K-dimensional draw per replicate would cost more than the whole rest of the reading.
MONTE_CARLO_MAX_DIMENSION = 400
#: Bisection steps: the bracket shrinks by 2**-80, below double precision for any bracket.
_BISECTION_STEPS = 80


@dataclass(frozen=True)
class WinnerReading:
    """One reading of the winner's true score.

    Attributes
    ----------
    method : str
        One of :data:`WINNER_METHODS`.
    winner : int or ndarray
        Index of the winner among the scores (per board).
    observed, se : float or ndarray
        The winner's observed score and its standard error.
    estimate : float or ndarray
        The point estimate (median-unbiased for conditional and hybrid; the observed score for
        naive and zoom). NaN where the reading is undefined (an exact tie for first place, or a
        zero standard error).
    low, high : float or ndarray
        The interval.
    plausible : int or ndarray
        Zoom only: how many models are plausible winners (0 for the other readings).
    """

    method: str
    winner: int | np.ndarray
    observed: float | np.ndarray
    se: float | np.ndarray
    estimate: float | np.ndarray
    low: float | np.ndarray
    high: float | np.ndarray
    plausible: int | np.ndarray = 0


def mean_covariance(scores, clusters=None) -> np.ndarray:
    """Covariance of the models' mean scores on shared questions, paired (and clustered).

    Parameters
    ----------
    scores : array_like, shape (..., n, K)
        Per-question scores of K models on the same n questions (no NaN); leading axes are
        independent stacks (a simulation's replicates).
    clusters : array_like, shape (n,), optional
        Category of each question; with two or more categories the covariance is the CR2
        cluster-robust one.

    Returns
    -------
    ndarray, shape (..., K, K)
        :math:`\\hat\\Sigma`. Its diagonal gives each model's SE squared; its off-diagonal
        carries the pairing, so that :math:`\\Sigma_{aa} + \\Sigma_{bb} - 2\\Sigma_{ab}` is the
        squared paired SE of the gap between a and b.

    Notes
    -----
    Without clusters, with :math:`e_i = s_i - \\bar s` (a K-vector per question),
    :math:`\\hat\\Sigma = n^{-2}\\sum_i e_i e_i^\\top`: the population covariance over n, so
    that the gap's SE is the ``se_paired`` of :func:`evalbars.stats.pairwise.pairwise_table`
    (Miller 2024, Eq. 7). With G clusters of sizes :math:`n_g` and residual sums
    :math:`u_g = \\sum_{i \\in g} e_i`, the CR2 covariance of an intercept-only regression
    (Bell and McCaffrey 2002) is :math:`\\hat\\Sigma = n^{-2}\\sum_g u_g u_g^\\top /
    (1 - n_g/n)`; it equals :func:`evalbars.stats.cluster_robust.cr2_mean`'s squared SE on the
    diagonal and for every difference of two columns.

    Examples
    --------
    >>> import numpy as np
    >>> scores = np.array([[1, 1], [1, 0], [0, 0], [1, 1.]])
    >>> mean_covariance(scores).round(5)
    array([[0.04688, 0.03125],
           [0.03125, 0.0625 ]])
    """
    scores = np.asarray(scores)
    unclustered = clusters is None or np.unique(clusters).size < 2
    if scores.ndim == 2 and unclustered and scores.size > blocks_module.BLOCK_CELLS:
        return _blockwise_covariance(scores)
    scaled = _scaled_residual_sums(scores, clusters)
    return np.swapaxes(scaled, -1, -2) @ scaled / scores.shape[-2] ** 2


def _blockwise_covariance(scores: np.ndarray) -> np.ndarray:
    """:math:`(X^\\top X - n\\bar x \\bar x^\\top)/n^2` a block of questions at a time: no float
    copy of a large board (756 MB at 4,500 models x 21,000 questions)."""
    n, k = scores.shape
    total, cross = np.zeros(k), np.zeros((k, k))
    for rows in blocks_module.blocks(n, k):
        part = np.asarray(scores[rows], dtype=float)
        total += part.sum(axis=0)
        cross += part.T @ part
    mean = total / n
    return (cross - n * np.outer(mean, mean)) / n**2


def mean_variance(scores, clusters=None) -> np.ndarray:
    """The diagonal of :func:`mean_covariance` (each column mean's variance), without the
    K x K product.

    Parameters
    ----------
    scores : array_like, shape (n, K)
        Per-question values (no NaN).
    clusters : array_like, shape (n,), optional
        Category of each question.

    Returns
    -------
    ndarray, shape (K,)
    """
    scaled = _scaled_residual_sums(scores, clusters)
    return np.einsum("...gk,...gk->...k", scaled, scaled) / np.asarray(scores).shape[-2] ** 2


def _scaled_residual_sums(scores, clusters) -> np.ndarray:
    """The rows whose outer products sum to :math:`n^2\\hat\\Sigma`: the residuals themselves
    without clusters, else each cluster's residual sum over :math:`\\sqrt{1 - n_g/n}` (CR2)."""
    scores = np.asarray(scores, dtype=float)
    n = scores.shape[-2]
    residuals = scores - scores.mean(axis=-2, keepdims=True)
    if clusters is None or np.unique(clusters).size < 2:
        return residuals
    codes, sizes = np.unique(clusters, return_inverse=True, return_counts=True)[1:]
    if residuals.ndim == 2:
        sums = np.zeros((sizes.size, scores.shape[-1]))
        np.add.at(sums, codes, residuals)
    else:  # stacks of boards (a simulation's replicates): one product with the cluster indicator
        indicator = (codes[None, :] == np.arange(sizes.size)[:, None]).astype(float)
        sums = indicator @ residuals
    return sums / np.sqrt(1.0 - sizes / n)[:, None]


def _correlation(cov: np.ndarray):
    """Standard deviations and the correlation matrix of the models with a positive variance."""
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    keep = sd > 0
    return sd, keep, cov[np.ix_(keep, keep)] / np.outer(sd[keep], sd[keep])


def _symmetric_root(corr: np.ndarray) -> np.ndarray:
    """The symmetric square root of correlation matrices: unique, where the eigenvectors of a
    repeated eigenvalue (equicorrelation) differ between CPUs, so the draws are the same."""
    values, vectors = np.linalg.eigh((corr + np.swapaxes(corr, -1, -2)) / 2)
    scaled = vectors * np.sqrt(np.clip(values, 0.0, None))[..., None, :]
    return scaled @ np.swapaxes(vectors, -1, -2)


def simultaneous_critical_value(
    cov, tail: float, *, one_sided: bool = False, seed: int = SEED
) -> float:
    """The critical value c with :math:`P(\\max_j |X_j - \\mu_j|/\\sigma_j > c) = ` ``tail``.

    Parameters
    ----------
    cov : array_like, shape (K, K)
        Covariance of the estimates; components with zero variance are left out.
    tail : float
        The simultaneous error rate (e.g. :math:`\\beta` of the hybrid interval).
    one_sided : bool
        Use :math:`\\max_j (X_j - \\mu_j)/\\sigma_j` instead of the absolute values.
    seed : int
        Seed of the importance-sampling draws.

    Returns
    -------
    float
        c; the normal quantile with one component, 0 with none.

    Notes
    -----
    The exceedance probability of the maximum is the probability of a union of K events
    :math:`A_j = \\{|Z_j| > c\\}` (:math:`Z` standardised), estimated by importance sampling
    from the mixture of the events (Naiman and Priebe 2001; Shi, Siegmund and Yakir 2007): draw
    j uniformly, :math:`Z_j` from its tail beyond c, the other components from their normal law
    given :math:`Z_j`; then :math:`P(\\cup_j A_j) = \\sum_j P(A_j)\\, E[1/N]` with N the number
    of events that occur. As :math:`1/N \\in [1/K, 1]` the estimate is accurate at any tail (six
    components of correlation 0.5, a 5% tail: its SD over 60 seeds was 0.25% of the tail with
    :data:`CRITICAL_DRAWS` draws), unlike a plain quantile of simulated maxima. The same draws
    serve every c (common random numbers), so c is found by Brent's method on a smooth
    function. Above :data:`MONTE_CARLO_MAX_DIMENSION` components c is Bonferroni's
    :math:`z_{1-\\text{tail}/(2K)}`, which is conservative (never below the exact value), so
    intervals built on it keep their level.
    """
    cov = np.asarray(cov, dtype=float)
    _, _, corr = _correlation(cov)
    dimension = corr.shape[0]
    sides = 1 if one_sided else 2
    if dimension == 0:
        return 0.0
    single = float(special.ndtri(1 - tail / sides))
    bonferroni = float(special.ndtri(1 - tail / (sides * dimension)))
    if dimension == 1 or dimension > MONTE_CARLO_MAX_DIMENSION:
        return bonferroni
    root = _symmetric_root(corr)
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((CRITICAL_DRAWS, dimension)) @ root
    chosen = rng.integers(dimension, size=CRITICAL_DRAWS)
    depth = rng.random(CRITICAL_DRAWS)
    sign = 1.0 if one_sided else np.where(rng.random(CRITICAL_DRAWS) < 0.5, -1.0, 1.0)
    rows = np.arange(CRITICAL_DRAWS)
    # Z given Z_j = t: Z - R[:, j] Z_j + R[:, j] t (regression on the chosen component).
    loading = corr[:, chosen].T
    residual = base - loading * base[rows, chosen][:, None]

    def union_probability(c):
        beyond = special.ndtr(-c)
        value = sign * -special.ndtri(depth * beyond)  # Z_j from its tail beyond c
        draws = residual + loading * value[:, None]
        events = (draws if one_sided else np.abs(draws)) > c
        count = np.maximum(events.sum(axis=1), 1)  # Z_j's own event, whatever the round-off
        return dimension * sides * beyond * np.mean(1.0 / count)

    if union_probability(bonferroni) >= tail:  # round-off: the bound itself
        return bonferroni
    return float(
        optimize.brentq(lambda c: union_probability(c) - tail, single, bonferroni, xtol=1e-10)
    )


def simultaneous_critical_values(
    covs, tail: float, *, one_sided: bool = False, seed: int = SEED, draws: int = 2_000
) -> np.ndarray:
    """:func:`simultaneous_critical_value` of many covariances at once (one per board).

    Parameters
    ----------
    covs : array_like, shape (R, K, K)
        One covariance per board (every component with a positive variance).
    tail, one_sided, seed
        As for :func:`simultaneous_critical_value` (the draws are shared by every board).
    draws : int
        Importance-sampling draws per board.

    Returns
    -------
    ndarray, shape (R,)
        The critical values, by the same importance sampling, solved by vectorised bisection
        between the single-component and the Bonferroni value; Bonferroni's above
        :data:`MONTE_CARLO_MAX_DIMENSION` components.

    Examples
    --------
    >>> import numpy as np
    >>> covs = np.stack([np.eye(3), 0.5 + 0.5 * np.eye(3)])
    >>> simultaneous_critical_values(covs, 0.05, draws=20_000).round(2)
    array([2.39, 2.35])
    """
    covs = np.asarray(covs, dtype=float)
    boards, dimension = covs.shape[0], covs.shape[-1]
    sides = 1 if one_sided else 2
    single = float(special.ndtri(1 - tail / sides))
    bonferroni = float(special.ndtri(1 - tail / (sides * dimension)))
    if dimension == 1 or dimension > MONTE_CARLO_MAX_DIMENSION:
        return np.full(boards, bonferroni)
    sd = np.sqrt(np.einsum("rkk->rk", covs))
    corr = covs / (sd[:, :, None] * sd[:, None, :])
    root = _symmetric_root(corr)
    rng = np.random.default_rng(seed)
    base = np.einsum("dk,rjk->rdj", rng.standard_normal((draws, dimension)), root)
    chosen = rng.integers(dimension, size=draws)
    depth = rng.random(draws)
    sign = 1.0 if one_sided else np.where(rng.random(draws) < 0.5, -1.0, 1.0)
    loading = np.swapaxes(corr[:, :, chosen], 1, 2)  # (R, D, K): corr[r, :, chosen[d]]
    residual = base - loading * base[:, np.arange(draws), chosen][..., None]

    def union_probability(c):
        beyond = special.ndtr(-c)[:, None]
        value = sign * -special.ndtri(depth * beyond)
        shifted = residual + loading * value[..., None]
        events = (shifted if one_sided else np.abs(shifted)) > c[:, None, None]
        count = np.maximum(events.sum(axis=-1), 1)
        return dimension * sides * beyond[:, 0] * np.mean(1.0 / count, axis=1)

    low, high = np.full(boards, single), np.full(boards, bonferroni)
    for _ in range(40):  # a fixed number of halvings of [single, Bonferroni], each vectorised
        middle = 0.5 * (low + high)
        above = union_probability(middle) > tail
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return 0.5 * (low + high)


def selection_truncation(scores, cov, winner, above=None):
    """The truncation interval of the winner's score given that it won (the polyhedral lemma).

    Parameters
    ----------
    scores : array_like, shape (..., K)
        Observed scores (leading axes: independent boards).
    cov : array_like, shape (K, K)
        Their covariance.
    winner : int or array_like of int, shape (...)
        The winner of each board.
    above : array_like of bool, shape (..., K), optional
        The models ranked above the selected one, for a model selected by its rank r (the
        ``top k: A`` claims): the event is then that it lies below these r - 1 and above the
        rest, again a polyhedron in X. Default none: the winner (rank 1).

    Returns
    -------
    lower, upper : ndarray, shape (...)
        :math:`\\mathcal L(Z)` and :math:`\\mathcal U(Z)` of the module docstring; the winner's
        score lies in between (to round-off) on every board where it won. With ``above``, a
        model j above contributes :math:`Z_j/(1-c_j)` to the upper bound where
        :math:`c_j < 1` and to the lower one where :math:`c_j > 1`.
    """
    scores = np.asarray(scores, dtype=float)
    cov = np.asarray(cov, dtype=float)
    winner = np.asarray(winner)
    variance = _pick(cov, winner)[0]
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero SE: no reading (NaN)
        slope_of = _pick(cov, winner)[1] / variance[..., None]  # c_j, shape (..., K)
    observed = np.take_along_axis(scores, winner[..., None], axis=-1)
    rest = scores - slope_of * observed  # Z
    slope = 1.0 - slope_of
    others = np.arange(scores.shape[-1]) != winner[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = rest / slope
    # c_j = 1 (a model whose score moves one for one with the winner's) constrains nothing.
    rising = others & (slope > 1e-12)
    falling = others & (slope < -1e-12)
    if above is not None:  # X_theta <= X_j for a model above: the bound's side flips
        above = np.asarray(above, dtype=bool)
        rising, falling = (
            (rising & ~above) | (falling & above),
            (falling & ~above) | (rising & above),
        )
    lower = np.where(rising, bound, -np.inf).max(axis=-1)
    upper = np.where(falling, bound, np.inf).min(axis=-1)
    return lower, upper


def _log_normal_mass(a, b):
    """:math:`\\log(\\Phi(b) - \\Phi(a))` for :math:`a \\le b`, accurate in both tails."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    upper_side = a > 0  # both in the upper tail: use the survival function by symmetry
    low = np.where(upper_side, -b, a)
    high = np.where(upper_side, -a, b)
    log_high, log_low = special.log_ndtr(high), special.log_ndtr(low)
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_high + np.log1p(-np.exp(log_low - log_high))


def truncated_normal_cdf(x, mean, sd, lower, upper):
    """CDF at ``x`` of :math:`N(\\text{mean}, \\text{sd}^2)` truncated to [lower, upper].

    Computed as :math:`\\exp\\{\\log[\\Phi(u)-\\Phi(a)] - \\log[\\Phi(b)-\\Phi(a)]\\}` with
    standardised :math:`a, u, b` (:func:`scipy.special.log_ndtr`), so it stays accurate when
    the truncation interval lies far in a tail; 0 below the interval, 1 above it. Every
    argument broadcasts.
    """
    a = (np.asarray(lower, float) - mean) / sd
    b = (np.asarray(upper, float) - mean) / sd
    u = np.clip((np.asarray(x, float) - mean) / sd, a, b)
    with np.errstate(invalid="ignore"):
        value = np.exp(_log_normal_mass(a, u) - _log_normal_mass(a, b))
    return np.clip(np.nan_to_num(value, nan=0.0), 0.0, 1.0)


def _bisect_decreasing(function, target, low, high):
    """Where a decreasing ``function`` of the mean crosses ``target``, by vectorised bisection
    on [low, high]; -inf where it is below the target already at ``low``, +inf where it is
    above it still at ``high``, NaN where the function is undefined at the ends."""
    low, high = np.broadcast_arrays(np.asarray(low, float), np.asarray(high, float))
    low, high = low.copy(), high.copy()
    at_low, at_high = function(low), function(high)
    for _ in range(_BISECTION_STEPS):  # a fixed number of halvings, each vectorised
        middle = 0.5 * (low + high)
        above = function(middle) > target
        low = np.where(above, middle, low)
        high = np.where(above, high, middle)
    root = 0.5 * (low + high)
    root = np.where(at_low < target, -np.inf, root)
    root = np.where(at_high > target, np.inf, root)
    return np.where(np.isfinite(at_low) & np.isfinite(at_high), root, np.nan)


def _pick(cov: np.ndarray, winner):
    """The winner's variance and its column of covariances, shapes (...) and (..., K): of one
    covariance (K, K) shared by every board, or of each board's own (..., K, K)."""
    winner = np.asarray(winner)
    if cov.ndim == 2:
        return cov[winner, winner], cov[:, winner].T
    column = np.take_along_axis(cov, winner[..., None, None], axis=-1)[..., 0]
    return np.take_along_axis(column, winner[..., None], axis=-1)[..., 0], column


def _winner_and_se(scores, cov, winner):
    scores = np.asarray(scores, dtype=float)
    cov = np.asarray(cov, dtype=float)
    winner = np.argmax(scores, axis=-1) if winner is None else np.asarray(winner)
    observed = np.take_along_axis(scores, winner[..., None], axis=-1)[..., 0]
    se = np.sqrt(np.clip(_pick(cov, winner)[0], 0.0, None))
    return scores, cov, winner, observed, se


def _scalar(value):
    """A 0-d array as a Python scalar; arrays unchanged."""
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _reading(method, winner, observed, se, estimate, low, high, plausible=0) -> WinnerReading:
    """A :class:`WinnerReading`, undefined (NaN) where the winner's SE is zero."""
    undefined = ~(se > 0)
    estimate, low, high = (_scalar(np.where(undefined, np.nan, v)) for v in (estimate, low, high))
    fields = (_scalar(winner), _scalar(observed), _scalar(se), estimate, low, high, plausible)
    return WinnerReading(method, *fields)


def winner_naive(scores, cov, winner=None, alpha: float = ALPHA) -> WinnerReading:
    """The naive reading: the winner's score and its Wald interval, as if chosen in advance.

    Parameters
    ----------
    scores : array_like, shape (..., K)
        Observed scores.
    cov : array_like, shape (K, K)
        Their covariance (:func:`mean_covariance`).
    winner : int or array_like, optional
        The winner; default the highest score.
    alpha : float
        Error rate of the interval.

    Returns
    -------
    WinnerReading
        ``method = "naive"``.

    Examples
    --------
    >>> import numpy as np
    >>> r = winner_naive([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2)
    >>> round(r.low, 4), round(r.high, 4)
    (0.7608, 0.8392)
    """
    scores, cov, winner, observed, se = _winner_and_se(scores, cov, winner)
    half = special.ndtri(1 - alpha / 2) * se
    return _reading("naive", winner, observed, se, observed, observed - half, observed + half)


def winner_conditional(scores, cov, winner=None, alpha: float = ALPHA, above=None) -> WinnerReading:
    """The conditional reading: median-unbiased estimate and equal-tailed interval given the win.

    Parameters
    ----------
    scores : array_like, shape (..., K)
        Observed scores.
    cov : array_like, shape (K, K)
        Their covariance.
    winner : int or array_like, optional
        The winner; default the highest score.
    alpha : float
        Error rate of the interval.
    above : array_like of bool, optional
        For a model selected by its rank: the models ranked above it
        (:func:`selection_truncation`).

    Returns
    -------
    WinnerReading
        ``method = "conditional"``; the estimate solves :math:`F_{TN}(X_\\theta; \\mu) = 1/2`
        and the interval :math:`F_{TN} = 1-\\alpha/2` (low) and :math:`\\alpha/2` (high), with
        the truncation of :func:`selection_truncation`. At an exact tie for first place the
        observed score sits on the truncation boundary and the bounds run off to infinity.

    Examples
    --------
    >>> import numpy as np
    >>> r = winner_conditional([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2)
    >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
    (0.7937, 0.7213, 0.8387)
    """
    scores, cov, winner, observed, se = _winner_and_se(scores, cov, winner)
    lower, upper = selection_truncation(scores, cov, winner, above)
    safe = np.where(se > 0, se, 1.0)
    inside = np.clip(observed, lower + 1e-9 * safe, upper - 1e-9 * safe)

    def cdf(mean):
        return truncated_normal_cdf(inside, mean, safe, lower, upper)

    span = 60 * safe
    solve = lambda q: _bisect_decreasing(cdf, q, inside - span, inside + span)  # noqa: E731
    return _reading(
        "conditional", winner, observed, se, solve(0.5), solve(1 - alpha / 2), solve(alpha / 2)
    )


def winner_hybrid(
    scores,
    cov,
    winner=None,
    alpha: float = ALPHA,
    beta: float | None = None,
    seed: int = SEED,
    above=None,
) -> WinnerReading:
    """The hybrid reading of Andrews, Kitagawa and McCloskey (2024).

    Parameters
    ----------
    scores : array_like, shape (..., K)
        Observed scores.
    cov : array_like, shape (K, K) or (..., K, K)
        Their covariance (:func:`mean_covariance`), shared by every board or each board's own.
    winner : int or array_like, optional
        The winner; default the highest score.
    alpha : float
        Error rate of the interval.
    beta : float, optional
        Error rate spent on the projection interval; default :math:`\\alpha/10`.
    seed : int
        Seed of the critical value's Monte Carlo draws (many models only).
    above : array_like of bool, optional
        For a model selected by its rank: the models ranked above it
        (:func:`selection_truncation`); the projection interval is the same.

    Returns
    -------
    WinnerReading
        ``method = "hybrid"``: the estimate solves :math:`F^H(X_\\theta;\\mu) = 1/2`, the
        interval :math:`F^H = 1 - a/2` and :math:`a/2` with :math:`a = (\\alpha-\\beta)/(1-\\beta)`,
        searched inside the projection interval :math:`X_\\theta \\pm c_\\beta\\sigma_\\theta`.

    Examples
    --------
    The worked example of honestboard 0.6.1 (scores 0.80, 0.78, 0.75, 0.70, SE 0.02,
    independent), which prints 0.79376 (0.7388, 0.8395): its :math:`c_\\beta` is the quantile of
    20,000 plain draws, 3.2045, where the exact value is 3.2267 (:math:`(2\\Phi(c)-1)^4 =
    0.995`), which moves the lower bound by 4e-4.

    >>> import numpy as np
    >>> r = winner_hybrid([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2)
    >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
    (0.7938, 0.7384, 0.8395)
    """
    beta = alpha / 10 if beta is None else beta
    if not 0 < beta < alpha:
        raise ValueError(f"beta must lie in (0, alpha = {alpha}), got {beta!r}")
    scores, cov, winner, observed, se = _winner_and_se(scores, cov, winner)
    lower, upper = selection_truncation(scores, cov, winner, above)
    if cov.ndim == 2:
        c = simultaneous_critical_value(cov, beta, seed=seed)
    else:  # each board its own (estimated) covariance
        c = simultaneous_critical_values(cov, beta, seed=seed)
    safe = np.where(se > 0, se, 1.0)
    inside = np.clip(observed, lower + 1e-9 * safe, upper - 1e-9 * safe)
    level = (alpha - beta) / (1 - beta)

    def cdf(mean):
        low = np.maximum(lower, mean - c * safe)
        high = np.minimum(upper, mean + c * safe)
        return np.where(high > low, truncated_normal_cdf(inside, mean, safe, low, high), np.nan)

    # Inside the projection interval, strictly: at its ends the hybrid truncation is empty.
    edge = (c - 1e-9) * safe
    solve = lambda q: _bisect_decreasing(cdf, q, inside - edge, inside + edge)  # noqa: E731
    return _reading(
        "hybrid", winner, observed, se, solve(0.5), solve(1 - level / 2), solve(level / 2)
    )


def winner_zoom(
    scores, cov, winner=None, alpha: float = ALPHA, nu: float | None = None, seed: int = SEED
) -> WinnerReading:
    """The zoom reading: locally simultaneous inference (Zrnic and Fithian).

    Parameters
    ----------
    scores : array_like, shape (K,)
        Observed scores of one board.
    cov : array_like, shape (K, K)
        Their covariance.
    winner : int, optional
        The winner; default the highest score.
    alpha : float
        Error rate of the interval.
    nu : float, optional
        Error rate spent on finding the plausible winners; default :math:`\\alpha/10`.
    seed : int
        Seed of the critical values' Monte Carlo draws (many models only).

    Returns
    -------
    WinnerReading
        ``method = "zoom"``: the observed score :math:`\\pm c_2\\sigma_\\theta`, with
        :math:`c_1` simultaneous at :math:`\\nu` over all models, the plausible winners
        :math:`P = \\{j: X_j + c_1\\sigma_j \\ge \\max_k (X_k - c_1\\sigma_k)\\}` and
        :math:`c_2` simultaneous at :math:`\\alpha - \\nu` over :math:`P`; ``plausible`` is
        :math:`|P|`.

    Examples
    --------
    >>> import numpy as np
    >>> r = winner_zoom([0.80, 0.78, 0.75, 0.70], np.eye(4) * 0.02**2)
    >>> round(r.low, 4), round(r.high, 4), r.plausible
    (0.7494, 0.8506, 4)
    """
    nu = alpha / 10 if nu is None else nu
    if not 0 < nu < alpha:
        raise ValueError(f"nu must lie in (0, alpha = {alpha}), got {nu!r}")
    scores, cov, winner, observed, se = _winner_and_se(scores, cov, winner)
    if scores.ndim != 1:
        raise ValueError("winner_zoom takes one board at a time (its plausible set varies)")
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    c1 = simultaneous_critical_value(cov, nu, seed=seed)
    plausible = scores + c1 * sd >= (scores - c1 * sd).max() - 1e-12
    c2 = simultaneous_critical_value(cov[np.ix_(plausible, plausible)], alpha - nu, seed=seed + 1)
    half = c2 * se
    return _reading(
        "zoom",
        winner,
        observed,
        se,
        observed,
        observed - half,
        observed + half,
        plausible=int(plausible.sum()),
    )


def winner_table(
    scores,
    models,
    clusters=None,
    *,
    alpha: float = ALPHA,
    winner=None,
    seed: int = SEED,
    cov=None,
) -> pd.DataFrame:
    """The winner's score under every reading, from per-question scores on shared questions.

    Parameters
    ----------
    scores : array_like, shape (n, K)
        Per-question scores of K models on the same n questions (no NaN).
    models : sequence of str
        The K model names.
    clusters : array_like, shape (n,), optional
        Category of each question (clustered covariance, :func:`mean_covariance`).
    alpha : float
        Error rate of the intervals.
    winner : str, optional
        The model to read (a ``best: A`` claim's A); default the top model. Its conditional
        and hybrid readings need it to be the top model (they condition on its win).
    seed : int
        Seed of the critical values' draws (many models only).
    cov : array_like, shape (K, K), optional
        The scores' covariance, when already computed (else :func:`mean_covariance`).

    Returns
    -------
    DataFrame
        One row per reading (:data:`WINNER_METHODS`): ``model, method, observed, se, estimate,
        ci_low, ci_high, width, plausible_winners, models, questions``; the zoom row's
        ``plausible_winners`` counts the models its interval is simultaneous over.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> scores = (rng.random((400, 3)) < [0.70, 0.69, 0.60]).astype(float)
    >>> table = winner_table(scores, ["a", "b", "c"])
    >>> table[["method", "estimate", "ci_low", "ci_high"]].round(3)
            method  estimate  ci_low  ci_high
    0        naive     0.705   0.660     0.75
    1  conditional     0.704   0.646     0.75
    2       hybrid     0.704   0.647     0.75
    3         zoom     0.705   0.650     0.76
    """
    scores = np.asarray(scores)
    models = list(models)
    cov = mean_covariance(scores, clusters) if cov is None else np.asarray(cov, dtype=float)
    means = scores.mean(axis=0, dtype=float)
    top = int(np.argmax(means)) if winner is None else models.index(winner)
    if means[top] < means.max():
        raise ValueError(
            f"{models[top]} is not the top model (its score {means[top]:.4g} is below "
            f"{means.max():.4g}); the conditional readings of a winner need the winner"
        )
    readings = [
        winner_naive(means, cov, top, alpha),
        winner_conditional(means, cov, top, alpha),
        winner_hybrid(means, cov, top, alpha, seed=seed),
        winner_zoom(means, cov, top, alpha, seed=seed),
    ]
    table = pd.DataFrame(
        {
            "model": models[top],
            "method": [r.method for r in readings],
            "observed": [r.observed for r in readings],
            "se": [r.se for r in readings],
            "estimate": [r.estimate for r in readings],
            "ci_low": [r.low for r in readings],
            "ci_high": [r.high for r in readings],
            "plausible_winners": [r.plausible for r in readings],
        }
    )
    table["width"] = table["ci_high"] - table["ci_low"]
    table["models"] = len(models)
    table["questions"] = scores.shape[0]
    return table
