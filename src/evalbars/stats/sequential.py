"""Anytime-valid confidence sequences for a paired mean difference, and their simulation check.

A confidence sequence (CS) is a sequence of intervals that hold the true mean at every
sample size at once, with probability at least 1 - alpha: a release gate may look after
every new batch of questions, and stop whenever it likes, without inflating its error
rate. A fixed-n interval recomputed at each look does not have this property
(:func:`simulate_looks` measures both).

:func:`empirical_bernstein_cs` is the empirical-Bernstein CS of Howard, Ramdas,
McAuliffe and Sekhon (2021), Theorem 4, for observations in a known range [a, b] (a
paired score difference lies in [-1, 1]), with their gamma-exponential mixture boundary
(Proposition 9, :func:`gamma_exponential_boundary`) or their polynomial stitching
boundary (Theorem 1, :func:`stitching_boundary`). Both equal the ``confseq`` package's
(by the paper's authors) on committed reference values.

References
----------
.. [1] Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform,
   nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49(2),
   1055-1080. arXiv:1810.08240.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from evalbars.defaults import ALPHA
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.pairwise import two_sided_normal_p

__all__ = [
    "DEFAULT_V_MIN",
    "DEFAULT_V_OPT",
    "BOUNDARIES",
    "stitching_boundary",
    "gamma_exponential_boundary",
    "empirical_bernstein_cs",
    "simulate_looks",
]

#: Intrinsic time from which the stitched boundary is tight (below it, its value at this
#: time is used): about 30 questions at a 30% disagreement rate.
DEFAULT_V_MIN = 10.0
#: Intrinsic time at which the gamma-exponential mixture boundary is tightest: about 330
#: questions at a 30% disagreement rate. Fixed in advance, as the sequence's validity needs.
DEFAULT_V_OPT = 100.0
#: Uniform boundaries :func:`empirical_bernstein_cs` can use.
BOUNDARIES = ("mixture", "stitching")


def stitching_boundary(
    v, alpha: float, v_min: float, c: float, *, s: float = 1.4, eta: float = 2.0
):
    """Polynomial stitching uniform boundary (Howard et al. 2021, Theorem 1, Eq. 10).

    For a process :math:`S_t` that is sub-gamma with variance process :math:`V_t` and
    scale c, :math:`P(\\exists t: S_t \\ge \\mathcal S_\\alpha(V_t \\vee m)) \\le \\alpha`, with

    .. math::

        \\mathcal S_\\alpha(v) = \\sqrt{k_1^2 v \\ell(v) + k_2^2 c^2 \\ell(v)^2} + c k_2 \\ell(v),
        \\quad \\ell(v) = s \\log\\log\\frac{\\eta v}{m}
                          + \\log\\frac{\\zeta(s)}{\\alpha \\log^s \\eta},

    :math:`k_1 = (\\eta^{1/4} + \\eta^{-1/4})/\\sqrt2`, :math:`k_2 = (\\sqrt\\eta + 1)/2`,
    m = ``v_min``, :math:`\\zeta` the Riemann zeta function; s > 1 and eta > 1 tune it
    (the paper's defaults 1.4 and 2). Evaluated at :math:`\\max(v, m)`.
    """
    v = np.maximum(np.asarray(v, dtype=float), v_min)
    k1 = (eta**0.25 + eta**-0.25) / np.sqrt(2.0)
    k2 = (np.sqrt(eta) + 1) / 2
    ell = s * np.log(np.log(eta * v / v_min)) + np.log(special.zeta(s) / (alpha * np.log(eta) ** s))
    return np.sqrt(k1**2 * v * ell + (k2 * c * ell) ** 2) + c * k2 * ell


def _best_rho(v_opt: float, alpha: float) -> float:
    """Mixture precision that makes the one-sided normal-mixture boundary tightest at v_opt.

    :math:`\\rho = v / (2\\log(1/(2\\alpha)) + \\log(1 + 2\\log(1/(2\\alpha))))`
    (Howard et al. 2021, section 3.2; the one-sided optimum is the two-sided one at 2 alpha).
    """
    ell = np.log(1 / (2 * alpha))
    return v_opt / (2 * ell + np.log(1 + 2 * ell))


def _log_gamma_exponential(s, v, rho: float, c: float):
    """Log of the gamma-exponential mixture supermartingale at (S_t, V_t) = (s, v)."""
    a, b, a0 = (v + rho) / c**2, (c * s + v + rho) / c**2, rho / c**2
    lead = a0 * np.log(a0) - special.gammaln(a0) - np.log(special.gammainc(a0, a0))
    return (
        lead
        + (c * s + v) / c**2
        - a * np.log(b)
        + np.log(special.gammainc(a, b))
        + special.gammaln(a)
    )


def gamma_exponential_boundary(
    v, alpha: float, v_opt: float, c: float, alpha_opt: float | None = None
):
    """Gamma-exponential mixture uniform boundary (Howard et al. 2021, Proposition 9).

    For a sub-exponential process with variance process :math:`V_t` and scale c > 0,
    mixing :math:`\\exp(\\lambda S_t - \\psi_E(\\lambda) V_t)` over :math:`\\lambda` with
    the conjugate (gamma) density gives the supermartingale

    .. math::

        m(s, v) = \\frac{a_0^{a_0} e^{-a_0}}{\\Gamma(a_0) P(a_0, a_0)}\\,
                  e^{b} b^{-a}\\, \\Gamma(a) P(a, b),
        \\quad a = \\frac{v + \\rho}{c^2},\\ b = \\frac{cs + v + \\rho}{c^2},\\
        a_0 = \\frac{\\rho}{c^2},

    with P the regularised lower incomplete gamma function; the boundary is the s
    solving :math:`\\log m(s, v) = \\log(1/\\alpha)`, found by bisection for all v at
    once. :math:`\\rho` is :func:`_best_rho` at ``v_opt`` and ``alpha_opt`` (default
    ``alpha``), so the boundary is tightest near :math:`V_t` = ``v_opt``.
    """
    v = np.asarray(v, dtype=float)
    rho = _best_rho(v_opt, alpha if alpha_opt is None else alpha_opt)
    target = np.log(1 / alpha)
    low = np.zeros(v.shape)
    high = np.sqrt(2 * (v + rho) * (target + 1)) + c * target + 1.0
    for _ in range(64):  # widen until the bracket holds the root
        short = _log_gamma_exponential(high, v, rho, c) < target
        if not short.any():
            break
        high = np.where(short, 2 * high, high)
    for _ in range(80):
        middle = (low + high) / 2
        above = _log_gamma_exponential(middle, v, rho, c) >= target
        low, high = np.where(above, low, middle), np.where(above, middle, high)
    return high


def empirical_bernstein_cs(
    x,
    *,
    alpha: float = ALPHA,
    lower: float = -1.0,
    upper: float = 1.0,
    boundary: str = "mixture",
    v_opt: float = DEFAULT_V_OPT,
    v_min: float = DEFAULT_V_MIN,
    at=None,
):
    """Two-sided empirical-Bernstein confidence sequence for the mean, at every sample size.

    Parameters
    ----------
    x : array_like, shape (..., t)
        Observations in ``[lower, upper]`` in the order they arrive (last axis);
        leading axes are independent sequences (e.g. simulation replicates).
    alpha : float
        The sequence covers the mean at all sample sizes at once with probability
        at least 1 - alpha.
    lower, upper : float
        Known range of each observation.
    boundary : {"mixture", "stitching"}
        :func:`gamma_exponential_boundary` tuned at ``v_opt`` (default; about a
        quarter narrower near it) or :func:`stitching_boundary` from ``v_min``.
    at : array_like of int, optional
        Sample sizes (1-based) at which to return the sequence; default every one.

    Returns
    -------
    mean, low, high : ndarray, shape (..., t) or (..., len(at))
        Running mean and the sequence's bounds after 1, 2, ..., t observations (or
        after the ``at`` observations).

    Notes
    -----
    Howard et al. (2021), Theorem 4: with :math:`\\hat x_{i-1}` any predictable
    estimate in [a, b] (here the running mean of the first i - 1 observations, the
    midpoint of [a, b] before the first), :math:`S_t = \\sum_{i \\le t} (x_i - \\mu)` is
    sub-exponential (hence sub-gamma) with variance process
    :math:`V_t = \\sum_{i \\le t} (x_i - \\hat x_{i-1})^2` and scale c = b - a, and so is
    :math:`-S_t`. With the stitching boundary :math:`u` at level alpha / 2 on each side,

    .. math:: \\bar x_t \\pm u(V_t \\vee m) / t

    is a (1 - alpha) confidence sequence, clipped to [a, b].
    """
    if boundary not in BOUNDARIES:
        raise ValueError(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")
    x = np.asarray(x, dtype=float)
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    sums = np.cumsum(x, axis=-1)
    mean = sums / t
    first = np.full(x.shape[:-1] + (1,), (lower + upper) / 2)
    predicted = np.concatenate([first, mean[..., :-1]], axis=-1)
    variance = np.cumsum((x - predicted) ** 2, axis=-1)
    if at is not None:
        index = np.asarray(at, dtype=int) - 1
        t, mean, variance = t[index], mean[..., index], variance[..., index]
    c = upper - lower
    if boundary == "mixture":
        radius = gamma_exponential_boundary(variance, alpha / 2, v_opt, c) / t
    else:
        radius = stitching_boundary(variance, alpha / 2, v_min, c) / t
    return mean, np.maximum(mean - radius, lower), np.minimum(mean + radius, upper)


def simulate_looks(
    *,
    questions: int = 2000,
    looks: int = 20,
    disagreement: float = 0.3,
    alpha: float = ALPHA,
    replications: int = 4000,
    seed: int = 0,
    boundary: str = "mixture",
) -> dict:
    """Type-I error of a gate that looks ``looks`` times as questions arrive, by simulation.

    Under the null of no difference, each question's paired difference is +1 or -1
    with probability ``disagreement / 2`` each, 0 otherwise. After every
    ``questions / looks`` questions the gate checks (a) the fixed-n paired z-test at
    two-sided level alpha (:func:`evalbars.stats.pairwise.two_sided_normal_p`) and (b)
    whether the confidence sequence of :func:`empirical_bernstein_cs` excludes 0. A
    replication errs when any look rejects. All replications are drawn at once from
    :func:`evalbars.seeding.setting_rng` (study ``sequential``).

    Returns
    -------
    dict
        ``questions, looks, disagreement, alpha, replications, type1_fixed,
        type1_fixed_se, type1_sequence, type1_sequence_se, type1_fixed_final`` (the
        fixed test at the last look only, the level it is built for).
    """
    rng = setting_rng(seed, "sequential", questions, looks, disagreement, alpha, replications)
    u = rng.random((replications, questions))
    d = (u < disagreement / 2).astype(float) - (u > 1 - disagreement / 2)
    at = np.linspace(questions / looks, questions, looks).round().astype(int) - 1
    _, low, high = empirical_bernstein_cs(d, alpha=alpha, boundary=boundary, at=at + 1)
    n = (at + 1).astype(float)
    sums, squares = np.cumsum(d, axis=-1)[:, at], np.cumsum(d * d, axis=-1)[:, at]
    se = np.sqrt(np.maximum(squares / n - (sums / n) ** 2, 0.0) / n)
    _, p = two_sided_normal_p(sums / n, se)
    fixed = p < alpha
    sequence = (low > 0) | (high < 0)
    result = {
        "questions": questions,
        "looks": looks,
        "disagreement": disagreement,
        "alpha": alpha,
        "replications": replications,
        "boundary": boundary,
    }
    for name, flags in (
        ("fixed", fixed.any(axis=1)),
        ("sequence", sequence.any(axis=1)),
        ("fixed_final", fixed[:, -1]),
    ):
        result[f"type1_{name}"], result[f"type1_{name}_se"] = share_and_se(flags)
    return result
