"""Exact frequentist coverage of the usual intervals for a binomial proportion.

The coverage of an interval rule at n trials is a finite sum over the n + 1 possible counts,
so it is computed exactly (no simulation): at a fixed true accuracy by :func:`coverage_at`,
and averaged over a uniform true accuracy by :func:`average_coverage`. They reproduce the
O-CLT oracle table of Bowyer, Aitchison and Ivanova (2025) and justify
:data:`evalbars.stats.bayes.Z_UNDERCOVERS_BELOW_N`.

Interval rules (:data:`INTERVAL_METHODS`), all two-sided at ``level``:

- ``"wald"``: :math:`\\hat p \\pm z\\sqrt{\\hat p(1 - \\hat p)/n}` (the central-limit interval);
- ``"wilson"``: :func:`evalbars.stats.intervals.wilson_interval`;
- ``"clopper_pearson"``: :func:`clopper_pearson_interval`;
- ``"jeffreys"`` and ``"beta_uniform"``: :func:`evalbars.stats.bayes.beta_interval` with the
  Jeffreys and the Beta(1, 1) prior.

References
----------
.. [1] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a binomial
   proportion. Statistical Science 16, 101-133.
.. [2] Bowyer, S., Aitchison, L. and Ivanova, D. R. (2025). Position: Don't use the CLT in LLM
   evals with fewer than a few hundred datapoints. arXiv:2503.01747.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from evalbars.defaults import LEVEL
from evalbars.stats.bayes import JEFFREYS_PRIOR, UNIFORM_PRIOR, BetaInterval, beta_interval
from evalbars.stats.intervals import wilson_interval, z_for_level

__all__ = [
    "INTERVAL_METHODS",
    "clopper_pearson_interval",
    "binomial_interval",
    "coverage_at",
    "average_coverage",
]

#: Interval rules known to :func:`binomial_interval`.
INTERVAL_METHODS = ("wald", "wilson", "clopper_pearson", "jeffreys", "beta_uniform")


def clopper_pearson_interval(successes, n, level: float = LEVEL) -> BetaInterval:
    """Clopper-Pearson ("exact") interval for a binomial proportion.

    Notes
    -----
    With :math:`\\alpha = 1 - \\text{level}`: :math:`L = I^{-1}_{\\alpha/2}(k, n - k + 1)`
    (0 at k = 0) and :math:`U = I^{-1}_{1 - \\alpha/2}(k + 1, n - k)` (1 at k = n), the
    inversion of the two one-sided binomial tests.

    References
    ----------
    .. [1] Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits
       illustrated in the case of the binomial. Biometrika 26, 404-413.

    Examples
    --------
    >>> low, high = clopper_pearson_interval(19, 41)
    >>> round(float(low), 4), round(float(high), 4)
    (0.3066, 0.6258)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    tail = (1 - level) / 2
    with np.errstate(invalid="ignore"):
        # The zero shape parameter at k = 0 (or n - k = 0) is replaced by the fixed bound.
        low = special.betaincinv(k, n - k + 1, tail)
        high = special.betaincinv(k + 1, n - k, 1 - tail)
    return BetaInterval(np.where(k > 0, low, 0.0)[()], np.where(k < n, high, 1.0)[()])


def binomial_interval(successes, n, method: str, level: float = LEVEL) -> BetaInterval:
    """The interval of one of :data:`INTERVAL_METHODS` at ``successes`` of ``n``.

    The Wald bounds are not clipped to [0, 1] (clipping changes no coverage of a theta in
    (0, 1)); at k = 0 and k = n the Wald interval is the single point k/n.

    Examples
    --------
    >>> [round(float(b), 4) for b in binomial_interval(9, 10, "wald")]
    [0.7141, 1.0859]
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(n, dtype=float)
    if method == "wald":
        p = k / n
        half = z_for_level(level) * np.sqrt(p * (1 - p) / n)
        return BetaInterval(p - half, p + half)
    if method == "wilson":
        return BetaInterval(*wilson_interval(k, n, level))
    if method == "clopper_pearson":
        return clopper_pearson_interval(k, n, level)
    if method == "jeffreys":
        return beta_interval(k, n, level, JEFFREYS_PRIOR)
    if method == "beta_uniform":
        return beta_interval(k, n, level, UNIFORM_PRIOR)
    raise ValueError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")


def _all_counts(n: int, method: str, level: float):
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a whole number of at least 1, got {n!r}")
    counts = np.arange(int(n) + 1, dtype=float)
    return counts, binomial_interval(counts, int(n), method, level)


def coverage_at(theta, n: int, method: str, level: float = LEVEL):
    """Exact coverage of an interval rule at true accuracy ``theta`` (array_like) and n trials.

    Notes
    -----
    :math:`C(\\theta) = \\sum_{k=0}^{n} \\mathbf 1[L_k \\le \\theta \\le U_k]
    \\binom{n}{k}\\theta^k(1-\\theta)^{n-k}`, the binomial probability of the counts whose
    interval holds theta.

    Examples
    --------
    The Wald interval at n = 10 and theta = 0.9 (Bowyer et al.'s O-CLT table: 0.6497):

    >>> round(float(coverage_at(0.9, 10, "wald")), 4)
    0.6497
    """
    # Imported here: scipy.stats takes a second to import, and the commands that import this
    # module (through the effect sizes) need only its Clopper-Pearson interval.
    from scipy import stats  # noqa: PLC0415 - see above

    counts, (low, high) = _all_counts(n, method, level)
    theta = np.asarray(theta, dtype=float)[..., None]
    covered = (low <= theta) & (theta <= high)
    return (covered * stats.binom.pmf(counts, int(n), theta)).sum(axis=-1)[()]


def average_coverage(n: int, method: str, level: float = LEVEL) -> float:
    """Exact coverage of an interval rule at n trials, averaged over theta ~ U(0, 1).

    Notes
    -----
    Exchanging the sum over k with the integral over theta, and writing the binomial
    probability as a Beta density, :math:`\\binom{n}{k}\\theta^k(1-\\theta)^{n-k} =
    \\mathrm{Beta}(\\theta; k + 1, n - k + 1)/(n + 1)` (because :math:`B(k + 1, n - k + 1) =
    k!\\,(n-k)!/(n+1)!`),

    .. math::

        \\bar C = \\int_0^1 C(\\theta)\\,d\\theta
          = \\frac{1}{n + 1}\\sum_{k=0}^{n}
            \\big[I_{U_k}(k + 1, n - k + 1) - I_{L_k}(k + 1, n - k + 1)\\big],

    with the bounds clipped to [0, 1]. In particular each count has marginal probability
    :math:`\\int_0^1 \\binom{n}{k}\\theta^k(1-\\theta)^{n-k}\\,d\\theta = 1/(n + 1)`: under a
    uniform theta the count is uniform on 0..n, and :math:`\\bar C` is the average over the
    counts of the posterior probability Beta(k + 1, n - k + 1) puts on each interval.

    **Identity.** The Beta(1, 1) interval (``"beta_uniform"``) averages exactly ``level``:
    its bounds are the :math:`\\alpha/2` and :math:`1 - \\alpha/2` quantiles of that very
    posterior, :math:`L_k = I^{-1}_{\\alpha/2}(k + 1, n - k + 1)` and
    :math:`U_k = I^{-1}_{1-\\alpha/2}(k + 1, n - k + 1)`, so every bracket equals
    :math:`1 - \\alpha` and :math:`\\bar C = (n + 1)(1 - \\alpha)/(n + 1) = 1 - \\alpha` for
    every n. (It is the calibration of a credible interval under its own prior; in floating
    point it holds to about 1e-14.)

    Examples
    --------
    >>> round(average_coverage(10, "wald"), 4), round(average_coverage(10, "beta_uniform"), 12)
    (0.7693, 0.95)
    """
    counts, (low, high) = _all_counts(n, method, level)
    a, b = counts + 1, int(n) - counts + 1
    mass = special.betainc(a, b, np.clip(high, 0, 1)) - special.betainc(a, b, np.clip(low, 0, 1))
    return float(mass.sum() / (int(n) + 1))
