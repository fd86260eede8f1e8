"""How many questions a claim needs: sample sizes, detectable gaps and their simulation check.

For two models compared on the same n questions, the per-question difference
:math:`d_i \\in \\{-1, 0, 1\\}` is nonzero on the share :math:`\\delta` of
questions where they disagree, and with a true gap g,
:math:`P(d = \\pm 1) = (\\delta \\pm g)/2`, so :math:`\\mathrm{Var}(d) = \\delta - g^2`.
The paired z-test of evalbars (:func:`evalbars.stats.pairwise.pairwise_table`, the Wald
form) then needs

.. math:: n = \\frac{(z_{1-\\alpha'/2} + z_{1-\\beta})^2 (\\delta - g^2)}{g^2}

questions for power :math:`1 - \\beta` at two-sided per-test level
:math:`\\alpha'` (:func:`questions_needed`, ``test="wald"``), and the smallest gap
it detects with n questions is :math:`g = z\\sqrt{\\delta/(n + z^2)}`,
:math:`z = z_{1-\\alpha'/2} + z_{1-\\beta}` (:func:`detectable_gap`). McNemar's
test puts the null variance :math:`\\delta` under the critical value instead
(Connor 1987): :math:`n = (z_{1-\\alpha'/2}\\sqrt\\delta + z_{1-\\beta}\\sqrt{\\delta - g^2})^2/g^2`
(``test="mcnemar"``).

The per-test level :math:`\\alpha'` depends on the multiplicity procedure over
m tests (:func:`per_test_alpha`): none, :math:`\\alpha`; Bonferroni,
:math:`\\alpha/m`; Holm, somewhere between (its first step is Bonferroni's, its
last is unadjusted), so Holm's requirement is bracketed by the two closed forms
and located by simulation (:func:`evalbars.stats.planning.holm.holm_questions`), as no closed
form exists.

Simulations
-----------
:func:`simulate_pair_power` draws the discordant counts of one pair directly
(multinomial with the three probabilities above): the exact model of the
closed forms.
The K-model simulation of Holm's requirement is :mod:`evalbars.stats.planning.holm`; the
planner's answers and tables are :mod:`evalbars.readings.planner`.

References
----------
.. [1] Connor, R. J. (1987). Sample size for testing differences in proportions
   for the paired-sample design. Biometrics 43, 207-211.
.. [2] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 4.
.. [3] Holm, S. (1979). A simple sequentially rejective multiple test
   procedure. Scand J Stat 6, 65-70.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from evalbars.defaults import ALPHA, POWER
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.pairwise import two_sided_normal_p

__all__ = [
    "PROCEDURES",
    "TESTS",
    "all_pairs",
    "per_test_alpha",
    "questions_for_effect",
    "questions_needed",
    "detectable_gap",
    "power_paired",
    "simulate_pair_power",
    "paired_z_from_counts",
]

#: Multiplicity procedures the planner knows.
PROCEDURES = ("none", "bonferroni", "holm")
#: Test statistics with a closed-form sample size.
TESTS = ("wald", "mcnemar")
#: The planner's pair simulation in :data:`evalbars.seeding.STUDY_CODES` (code 101).
_PAIR_STUDY = "plan_pair"


def all_pairs(models: int) -> int:
    """K(K-1)/2, the number of pairwise comparisons of K models."""
    return int(models) * (int(models) - 1) // 2


def per_test_alpha(alpha: float, procedure: str, tests: int) -> tuple[float, float]:
    """``(lowest, highest)`` two-sided level one test of ``tests`` gets under ``procedure``.

    none: :math:`(\\alpha, \\alpha)`; bonferroni: :math:`(\\alpha/m, \\alpha/m)`;
    holm: :math:`(\\alpha/m, \\alpha)` (the first, most significant test is
    judged at :math:`\\alpha/m`, the last at :math:`\\alpha`).
    """
    if procedure not in PROCEDURES:
        raise ValueError(f"procedure must be one of {PROCEDURES}, got {procedure!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    m = max(int(tests), 1)
    if procedure == "none":
        return alpha, alpha
    if procedure == "bonferroni":
        return alpha / m, alpha / m
    return alpha / m, alpha


def _z(alpha, power, sides=2):
    return special.ndtri(1 - np.asarray(alpha, dtype=float) / sides), special.ndtri(
        np.asarray(power, dtype=float)
    )


def questions_for_effect(
    effect,
    variance,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    sides: int = 2,
    null_variance=None,
    z=None,
):
    """Paired differences a z-test needs to find a true mean difference ``effect`` from its null.

    The one home of the paired sample-size formula (:func:`questions_needed`, the precision
    tables and the claims' ``questions_needed`` all call it):

    .. math:: n = \\frac{(z_{1-\\alpha/s}\\,\\sigma_0 + z_{1-\\beta}\\,\\sigma)^2}{\\epsilon^2},

    with :math:`\\epsilon` the distance of the true mean difference from the null boundary
    (``effect``), :math:`\\sigma^2` the variance of one paired difference under the alternative
    (``variance``; :math:`\\delta - g^2` for 0/1 scores with disagreement rate
    :math:`\\delta` and gap g) and :math:`\\sigma_0^2` the variance the test puts under its
    critical value (``null_variance``; default :math:`\\sigma^2`, the Wald z, where the
    formula is :math:`(z_{1-\\alpha/s} + z_{1-\\beta})^2\\sigma^2/\\epsilon^2`; McNemar's test
    puts :math:`\\delta` there, Connor [1]_). The hypotheses of Chow, Shao and Wang [2]_
    (section 3.1, one-sample means; paired differences are one sample) differ only in
    :math:`\\epsilon`:

    - superiority or equality, true gap g: :math:`\\epsilon = |g|`;
    - non-inferiority with margin m (:math:`H_0: g \\le -m`): :math:`\\epsilon = g + m`;
    - equivalence with margin m (two one-sided tests, :math:`H_1: |g| < m`):
      :math:`\\epsilon = m - |g|`, and at g = 0 both one-sided tests must reject, so
      :math:`z_{1-\\beta/2}` replaces :math:`z_{1-\\beta}` (pass
      ``power = 1 - (1 - power) / 2``).

    Parameters
    ----------
    effect, variance : array_like
        :math:`\\epsilon` and :math:`\\sigma^2`, broadcast together (proportions for scores).
    alpha : float, optional
        Level: two-sided (``sides=2``, each tail at ``alpha/2``: the doubled one-sided p of
        evalbars' verdicts) or one-sided (``sides=1``).
    power : float, optional
        :math:`1 - \\beta`.
    sides : {2, 1}, optional
    null_variance : array_like, optional
        :math:`\\sigma_0^2`; default ``variance``.
    z : float, optional
        The multiplier :math:`z_{1-\\alpha/s} + z_{1-\\beta}` itself (then ``alpha``, ``power``
        and ``sides`` are unused): the questions for ``effect`` to span ``z`` standard errors.

    Returns
    -------
    ndarray
        Not rounded; infinite where ``effect`` is 0.

    References
    ----------
    .. [1] Connor, R. J. (1987). Sample size for testing differences in proportions for the
       paired-sample design. Biometrics 43, 207-211.
    .. [2] Chow, S.-C., Shao, J. and Wang, H. (2008). Sample Size Calculations in Clinical
       Research, 2nd ed. Chapman & Hall/CRC, sections 3.1 and 6.4.

    Examples
    --------
    Chow, Shao and Wang's example 3.1.4, non-inferiority: sigma = 1, true difference 0.5,
    margin 0.5, one-sided alpha 0.05, power 0.8 gives 6.2, so 7.

    >>> float(questions_for_effect(0.5 + 0.5, 1.0, alpha=0.05, sides=1)).__round__(2)
    6.18
    """
    if sides not in (1, 2):
        raise ValueError(f"sides must be 1 or 2, got {sides!r}")
    effect = np.asarray(effect, dtype=float)
    variance = np.asarray(variance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if null_variance is None:
            if z is None:
                z_a, z_b = _z(alpha, power, sides)
                z = z_a + z_b
            return z**2 * variance / effect**2
        if z is not None:
            raise ValueError("give z or null_variance, not both")
        z_a, z_b = _z(alpha, power, sides)
        return (z_a * np.sqrt(null_variance) + z_b * np.sqrt(variance)) ** 2 / effect**2


def questions_needed(gap, disagreement, alpha: float = ALPHA, power: float = POWER, test="wald"):
    """Shared questions for a paired two-sided test at ``alpha`` to find ``gap`` with ``power``.

    ``gap`` and ``disagreement`` are proportions (0.02 = 2 points) and broadcast.
    :func:`questions_for_effect` with effect :math:`|g|`, variance :math:`\\delta - g^2` and,
    for ``test="mcnemar"``, null variance :math:`\\delta` (see the module docstring).
    Not rounded; infinite for a zero gap, NaN where the gap exceeds the disagreement rate
    (impossible).
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    g = np.abs(np.asarray(gap, dtype=float))
    delta = np.asarray(disagreement, dtype=float)
    var = np.maximum(delta - g**2, 0.0)
    null = None if test == "wald" else delta
    n = questions_for_effect(g, var, alpha=alpha, power=power, null_variance=null)
    n = np.where(g == 0, np.inf, n)
    return np.where(g > delta, np.nan, n)


def detectable_gap(
    questions, disagreement, alpha: float = ALPHA, power: float = POWER, test="wald"
):
    """Smallest gap (proportion) found with ``power`` by a paired test on ``questions`` questions.

    Wald: :math:`g = z\\sqrt{\\delta/(n + z^2)}`, :math:`z = z_{1-\\alpha/2} + z_{1-\\beta}`
    (the inverse of :func:`questions_needed`); McNemar (Connor): solved numerically.
    NaN where that gap would exceed the disagreement rate, which bounds every gap
    (:math:`|g| \\le \\delta`): so few questions find no possible gap with that power.
    """
    n = np.asarray(questions, dtype=float)
    delta = np.asarray(disagreement, dtype=float)
    z_a, z_b = _z(alpha, power)
    if test == "wald":
        gap = (z_a + z_b) * np.sqrt(delta / (n + (z_a + z_b) ** 2))
        # No gap exceeds the disagreement rate: beyond it, no possible gap is found.
        return np.where(gap <= delta, gap, np.nan)
    if test != "mcnemar":
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")

    def solve(n_one, delta_one):
        def excess(g):
            return questions_needed(g, delta_one, alpha, power, "mcnemar") - n_one

        if excess(delta_one) > 0:
            return np.nan
        # imported here: scipy.optimize is a tenth of a second of start-up, and most jobs that
        # import this module (through PPI, the ranks and analysis tables) never solve for a gap
        from scipy import optimize  # noqa: PLC0415

        return optimize.brentq(excess, 1e-12, delta_one, xtol=1e-14)

    return np.vectorize(solve, otypes=[float])(n, delta)


def power_paired(questions, gap, disagreement, alpha: float = ALPHA, test="wald"):
    """Power of the two-sided paired test (both tails) at ``questions`` (normal theory)."""
    n = np.asarray(questions, dtype=float)
    g = np.abs(np.asarray(gap, dtype=float))
    delta = np.asarray(disagreement, dtype=float)
    z_a = special.ndtri(1 - alpha / 2)
    sd = np.sqrt(np.maximum(delta - g**2, 1e-300))
    null_sd = sd if test == "wald" else np.sqrt(delta)
    shift = g * np.sqrt(n)
    return special.ndtr((shift - z_a * null_sd) / sd) + special.ndtr((-shift - z_a * null_sd) / sd)


def simulate_pair_power(
    questions: int,
    gap: float,
    disagreement: float,
    *,
    alpha: float = ALPHA,
    replications: int = 20_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Monte Carlo ``(power, se)`` of the paired z-test, drawing (n10, n01, rest) as a multinomial.

    The exact model behind :func:`questions_needed` (``test="wald"``): each question
    is a win for model a with probability :math:`(\\delta + g)/2`, a loss with
    :math:`(\\delta - g)/2`, a tie otherwise. A replication rejects when the
    two-sided p of :func:`evalbars.stats.pairwise.two_sided_normal_p` is below ``alpha``
    and a is ahead.
    """
    if not 0 <= abs(gap) <= disagreement <= 1:
        raise ValueError(f"need |gap| <= disagreement <= 1, got {gap!r}, {disagreement!r}")
    # +gap and -gap share a stream (the sign only swaps wins and losses)
    rng = setting_rng(seed, _PAIR_STUDY, questions, abs(gap), disagreement)
    win, loss = (disagreement + gap) / 2, (disagreement - gap) / 2
    counts = rng.multinomial(int(questions), [win, loss, 1 - win - loss], size=replications)
    n10, n01 = counts[:, 0].astype(float), counts[:, 1].astype(float)
    z, p = paired_z_from_counts(n10, n01, float(questions))
    return share_and_se((p < alpha) & (z > 0))


def paired_z_from_counts(n10, n01, n):
    """The paired z of :func:`evalbars.stats.pairwise.pair_statistics` from discordant counts."""
    diff = (n10 - n01) / n
    se = np.sqrt(np.maximum((n10 + n01) / n - diff**2, 0.0) / n)
    return two_sided_normal_p(diff, se)
