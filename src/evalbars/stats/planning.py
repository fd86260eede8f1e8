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
and located by simulation (:func:`holm_questions`), as no closed form exists.

Simulations
-----------
:func:`simulate_pair_power` draws the discordant counts of one pair directly
(multinomial with the three probabilities above): the exact model of the
closed forms. :func:`simulate_holm_power` runs the data-generating process of
the family-wise error study (:func:`evalbars.studies.fwer.draw_shared_scores`:
model 0 ahead of K - 1 equally good models by g, question difficulty shared,
``rho = 1``) with its concentration set so that model 0 and model 1 disagree on
the share :math:`\\delta` of questions (:func:`concentration_for_disagreement`).
Given the shared difficulty the K scores are independent Bernoulli, so a
question's 2^K score patterns have probabilities that are polynomials in the
Beta-distributed difficulty, with exact expectations from its moments
(:func:`pattern_probabilities`); a replication draws the pattern counts of n
questions as one multinomial vector, which has the same distribution as
drawing n x K scores and costs O(2^K) whatever n (a test checks it against
``draw_shared_scores``).

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
import pandas as pd
from numpy.polynomial import polynomial as P
from scipy import optimize, special

from evalbars.data.scores import wide_scores
from evalbars.errors import InputError
from evalbars.stats.pairwise import adjust_pvalues, disagreement_rates, two_sided_normal_p
from evalbars.stats.rng import setting_rng, share_and_se
from evalbars.units import points_hint

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
    "concentration_for_disagreement",
    "reachable_disagreement",
    "holm_simulation_problem",
    "pattern_probabilities",
    "simulate_holm_power",
    "holm_questions",
    "plan",
    "plan_table",
    "data_setting",
    "plan_caption",
    "check_plan_request",
    "plan_text",
]

#: Multiplicity procedures the planner knows.
PROCEDURES = ("none", "bonferroni", "holm")
#: Test statistics with a closed-form sample size.
TESTS = ("wald", "mcnemar")
#: The fwer study's default mean accuracy (config simulation.fwer.mean_accuracy).
DEFAULT_MEAN_ACCURACY = 0.6
#: Most models the pattern simulation handles (2^K patterns).
MAX_SIMULATED_MODELS = 12
#: The planner's studies in :data:`evalbars.stats.rng.STUDY_CODES` (codes 101, 102).
_PAIR_STUDY, _HOLM_STUDY = "plan_pair", "plan_holm"


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
    alpha: float = 0.05,
    power: float = 0.8,
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


def questions_needed(gap, disagreement, alpha: float = 0.05, power: float = 0.8, test="wald"):
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


def detectable_gap(questions, disagreement, alpha: float = 0.05, power: float = 0.8, test="wald"):
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
        return optimize.brentq(excess, 1e-12, delta_one, xtol=1e-14)

    return np.vectorize(solve, otypes=[float])(n, delta)


def power_paired(questions, gap, disagreement, alpha: float = 0.05, test="wald"):
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
    alpha: float = 0.05,
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
    z, p = _paired_z_from_counts(n10, n01, float(questions))
    return share_and_se((p < alpha) & (z > 0))


def _paired_z_from_counts(n10, n01, n):
    """The paired z of :func:`evalbars.stats.pairwise.pair_statistics` from discordant counts."""
    diff = (n10 - n01) / n
    se = np.sqrt(np.maximum((n10 + n01) / n - diff**2, 0.0) / n)
    return two_sided_normal_p(diff, se)


# --- The K-model process of the family-wise error study, by pattern counts ------------------------


def _beta_moments(mean: float, concentration: float, order: int) -> np.ndarray:
    """:math:`E[A^j]`, j = 0..order, of A ~ Beta(mean * kappa, (1 - mean) * kappa)."""
    a, b = mean * concentration, (1 - mean) * concentration
    j = np.arange(order)
    return np.concatenate([[1.0], np.cumprod((a + j) / (a + b + j))])


def concentration_for_disagreement(gap: float, disagreement: float, mean_accuracy: float) -> float:
    """Concentration kappa at which model 0 (mean mu + g) and model 1 (mean mu) disagree on delta.

    At ``rho = 1`` the fwer process gives model k the success probability
    :math:`p_k(A) = c_k + (1 - c_k)A`, :math:`c_0 = g/(1-\\mu)`, :math:`c_1 = 0`,
    so :math:`\\delta = E[p_0 + p_1 - 2p_0p_1] = c + (1-c)\\mu + \\mu - 2c\\mu - 2(1-c)E[A^2]`
    with :math:`E[A^2] = \\mu(\\mu\\kappa + 1)/(\\kappa + 1)`; solved for kappa.
    Reachable rates lie strictly between g (kappa -> 0) and the rate of independent
    models (kappa -> infinity); outside, a ValueError names the range.
    """
    problem = holm_simulation_problem(gap, disagreement, mean_accuracy)
    if problem is not None:
        raise ValueError(problem)
    mu, g = float(mean_accuracy), float(gap)
    c = g / (1 - mu)
    s = (c + (1 - c) * mu + mu - 2 * c * mu - disagreement) / (2 * (1 - c))
    return (s - mu) / (mu**2 - s)


def reachable_disagreement(gap: float, mean_accuracy: float) -> tuple[float, float]:
    """``(lowest, highest)``: the open range of disagreement rates the fwer process can produce.

    At ``rho = 1`` (see :func:`concentration_for_disagreement`) the rate runs from
    the gap g (kappa -> 0, the models' scores as alike as their means allow) to
    that of independent models, :math:`c + (1-c)\\mu + \\mu - 2c\\mu - 2(1-c)\\mu^2`
    with :math:`c = g/(1-\\mu)` (kappa -> infinity). NaN for an impossible mean or gap.
    """
    mu, g = float(mean_accuracy), abs(float(gap))
    if not (0 < mu < 1 and g < 1 - mu):
        return np.nan, np.nan
    c = g / (1 - mu)
    return g, c + (1 - c) * mu + mu - 2 * c * mu - 2 * (1 - c) * mu**2


def holm_simulation_problem(gap: float, disagreement: float, mean_accuracy: float) -> str | None:
    """Why :func:`simulate_holm_power` cannot run this setting, in one sentence, or None if it can.

    The simulated models share question difficulty (positively correlated
    scores), so it cannot reach a disagreement rate at or above that of
    independent models (:func:`reachable_disagreement`), nor a gap that puts the
    leader at or above 100 %.
    """
    mu, g, rate = float(mean_accuracy), float(gap), float(disagreement)
    if not 0 < mu < 1:
        return f"the mean accuracy must lie strictly between 0 and 1, got {mu:g}"
    if not g >= 0:
        return f"the gap must be at least 0, got {g:g}"
    if g >= 1 - mu:
        return (
            f"a gap of {100 * g:g} points above a mean accuracy of {100 * mu:.1f}% would put the "
            "leader at 100% or more"
        )
    lowest, highest = reachable_disagreement(g, mu)
    if not lowest < rate < highest:
        return (
            f"a disagreement rate of {rate:.4g} is not reachable at mean accuracy {mu:.4g} and gap "
            f"{g:g}: it must lie strictly between {lowest:g} and {highest:.4g}"
            + (" (that of independent models)" if rate >= highest else "")
        )
    return None


def pattern_probabilities(
    models: int, gap: float, mean_accuracy: float, concentration: float
) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities of the 2^K score patterns of one question under the fwer process at rho = 1.

    Returns ``(patterns, probabilities)``: ``patterns`` (2^K, K) of 0/1, and
    :math:`E[\\prod_k p_k(A)^{s_k} (1 - p_k(A))^{1 - s_k}]`, each a polynomial in
    A integrated exactly with the Beta moments.
    """
    if not 2 <= models <= MAX_SIMULATED_MODELS:
        raise ValueError(f"the simulation handles 2 to {MAX_SIMULATED_MODELS} models, got {models}")
    shift = np.zeros(models)
    shift[0] = gap / (1 - mean_accuracy)
    patterns = (np.arange(2**models)[:, None] >> np.arange(models)[None, :]) & 1
    moments = _beta_moments(mean_accuracy, concentration, models)
    probabilities = np.empty(len(patterns))
    for i, pattern in enumerate(patterns):
        poly = np.array([1.0])
        for k, s in enumerate(pattern):
            success = np.array([shift[k], 1 - shift[k]])  # c + (1 - c) A
            poly = P.polymul(poly, success if s else np.array([1.0, 0.0]) - success)
        probabilities[i] = poly @ moments[: poly.size]
    probabilities = np.clip(probabilities, 0.0, None)
    return patterns, probabilities / probabilities.sum()


def simulate_holm_power(
    models: int,
    questions: int,
    gap: float,
    disagreement: float,
    *,
    alpha: float = 0.05,
    procedure: str = "holm",
    replications: int = 4000,
    mean_accuracy: float = DEFAULT_MEAN_ACCURACY,
    seed: int = 0,
) -> tuple[float, float]:
    """Monte Carlo ``(power, se)`` of finding model 0 > model 1 among all K(K-1)/2 paired tests.

    Model 0 leads the K - 1 others by ``gap``; the others are equally good; the
    pair (0, 1) disagrees on ``disagreement`` of questions. Every replication
    tests all pairs with the paired z, adjusts by ``procedure`` over them and
    counts a success when pair (0, 1) is rejected with model 0 ahead.
    """
    kappa = concentration_for_disagreement(gap, disagreement, mean_accuracy)
    patterns, probabilities = pattern_probabilities(models, gap, mean_accuracy, kappa)
    rng = setting_rng(seed, _HOLM_STUDY, models, questions, gap, disagreement, mean_accuracy)
    counts = rng.multinomial(int(questions), probabilities, size=replications).astype(float)
    a, b = np.triu_indices(models, k=1)
    wins = (patterns[:, a] & (1 - patterns[:, b])).astype(float)
    losses = (patterns[:, b] & (1 - patterns[:, a])).astype(float)
    z, p = _paired_z_from_counts(counts @ wins, counts @ losses, float(questions))
    if procedure != "none":
        p = adjust_pvalues(p, procedure)
    return share_and_se((p[:, 0] < alpha) & (z[:, 0] > 0))


def holm_questions(
    models: int,
    gap: float,
    disagreement: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    replications: int = 4000,
    mean_accuracy: float = DEFAULT_MEAN_ACCURACY,
    seed: int = 0,
) -> int:
    """Fewest questions at which Holm over all pairs finds model 0 > model 1 with ``power``
    (simulated).

    Bisection between the unadjusted and the Bonferroni closed forms
    (:func:`questions_needed`) on :func:`simulate_holm_power`, each n with its own
    seeded stream, so the answer is deterministic; its Monte Carlo error is that of
    a power estimate near ``power`` (about 0.006 at 4,000 replications).
    """
    tests = all_pairs(models)
    low = int(np.floor(float(questions_needed(gap, disagreement, alpha, power))))
    high = int(np.ceil(float(questions_needed(gap, disagreement, alpha / tests, power)))) + 1

    def enough(n):
        return (
            simulate_holm_power(
                models,
                n,
                gap,
                disagreement,
                alpha=alpha,
                procedure="holm",
                replications=replications,
                mean_accuracy=mean_accuracy,
                seed=seed,
            )[0]
            >= power
        )

    low = max(low, 2)
    while high - low > max(1, int(0.002 * high)):
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def plan(
    models: int,
    gap: float,
    disagreement: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    procedure: str = "holm",
    tests: int | None = None,
    questions: int | None = None,
    test: str = "wald",
) -> dict:
    """One planning answer: questions needed for ``gap`` (a proportion), or the gap that
    ``questions`` detect.

    ``tests`` is the size of the family (default: all K(K-1)/2 pairs). Returns a
    dict with the per-test levels and, for the lowest and highest per-test level
    (equal except under Holm), ``questions_low``/``questions_high`` (questions
    needed, rounded up) or ``gap_low``/``gap_high`` (detectable gap, proportion; None
    where no gap up to the disagreement rate is found).
    """
    tests = all_pairs(models) if tests is None else int(tests)
    lowest, highest = per_test_alpha(alpha, procedure, tests)
    result = {
        "models": int(models),
        "procedure": procedure,
        "tests": tests,
        "alpha": float(alpha),
        "power": float(power),
        "disagreement": float(disagreement),
        "alpha_per_test_low": lowest,
        "alpha_per_test_high": highest,
        "test": test,
    }
    if questions is None:
        # The strictest level needs the most questions.
        need = [questions_needed(gap, disagreement, a, power, test) for a in (highest, lowest)]
        result |= {
            "gap": float(gap),
            "questions_low": _ceil(need[0]),
            "questions_high": _ceil(need[1]),
        }
    else:
        found = [detectable_gap(questions, disagreement, a, power, test) for a in (highest, lowest)]
        # None (JSON null) where these questions find no possible gap (see detectable_gap)
        result |= {
            "questions": int(questions),
            "gap_low": None if np.isnan(found[0]) else float(found[0]),
            "gap_high": None if np.isnan(found[1]) else float(found[1]),
        }
    return result


def _ceil(value) -> float:
    value = float(value)
    return value if not np.isfinite(value) else float(np.ceil(np.round(value, 6)))


def plan_table(
    models: int,
    gaps,
    disagreement: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    claims: int = 0,
    questions: int | None = None,
    simulate: bool = True,
    replications: int = 4000,
    mean_accuracy: float = DEFAULT_MEAN_ACCURACY,
    seed: int = 0,
) -> pd.DataFrame:
    """Questions needed per gap and procedure, with the simulation check; the workflow's plan table.

    Rows: for each gap (proportion), the procedures ``none``, ``bonferroni`` and
    ``holm`` over all K(K-1)/2 pairs and, when ``claims`` > 0, ``holm`` over the
    claims. Columns: ``gap_points, procedure, family, tests, alpha_per_test_low,
    alpha_per_test_high, disagreement, questions_closed_form`` (at the strictest
    per-test level: exact for none and Bonferroni, an upper bound for Holm),
    ``questions_lower_bound`` (Holm's most lenient level), ``questions_simulated``
    (Holm over all pairs: :func:`holm_questions`), ``power_simulated``/``power_simulated_se``
    (the simulated power at ``questions_closed_form``: :func:`simulate_pair_power`
    at the per-test level for none/Bonferroni, :func:`simulate_holm_power` for Holm
    over all pairs), and, if ``questions`` is given, ``detectable_gap_points`` at that
    many questions (strictest level), the ``mean_accuracy`` of the simulated
    models and a ``note`` (empty, or why Holm's row was not simulated). The Holm
    simulations run up to :data:`MAX_SIMULATED_MODELS` models and where the
    simulated process reaches the disagreement rate at ``mean_accuracy``
    (:func:`holm_simulation_problem`: not beyond that of independent models);
    otherwise their columns are empty, the note says why and the closed forms
    (which bracket Holm) stand alone.
    """
    simulate_holm = simulate and models <= MAX_SIMULATED_MODELS
    rows = []
    families = [("none", "all pairs", all_pairs(models))]
    families += [
        ("bonferroni", "all pairs", all_pairs(models)),
        ("holm", "all pairs", all_pairs(models)),
    ]
    if claims:
        families.append(("holm", "claims", int(claims)))
    for gap in np.atleast_1d(np.asarray(gaps, dtype=float)):
        for procedure, family, tests in families:
            lowest, highest = per_test_alpha(alpha, procedure, tests)
            closed = _ceil(questions_needed(gap, disagreement, lowest, power))
            row = {
                "gap_points": 100 * float(gap),
                "procedure": procedure,
                "family": family,
                "tests": tests,
                "alpha_per_test_low": lowest,
                "alpha_per_test_high": highest,
                "disagreement": float(disagreement),
                "power": float(power),
                "questions_closed_form": closed,
                "questions_lower_bound": _ceil(questions_needed(gap, disagreement, highest, power)),
                "questions_simulated": np.nan,
                "power_simulated": np.nan,
                "power_simulated_se": np.nan,
                "mean_accuracy": float(mean_accuracy),
            }
            holm_all = procedure == "holm" and family == "all pairs"
            problem = (
                holm_simulation_problem(gap, disagreement, mean_accuracy)
                if simulate_holm and holm_all and np.isfinite(closed)
                else None
            )
            if simulate and np.isfinite(closed):
                if holm_all and (not simulate_holm or problem is not None):
                    share, se = np.nan, np.nan
                elif holm_all:
                    row["questions_simulated"] = float(
                        holm_questions(
                            models,
                            gap,
                            disagreement,
                            alpha=alpha,
                            power=power,
                            replications=replications,
                            mean_accuracy=mean_accuracy,
                            seed=seed,
                        )
                    )
                    share, se = simulate_holm_power(
                        models,
                        int(closed),
                        gap,
                        disagreement,
                        alpha=alpha,
                        procedure="holm",
                        replications=replications,
                        mean_accuracy=mean_accuracy,
                        seed=seed,
                    )
                elif procedure != "holm":
                    share, se = simulate_pair_power(
                        int(closed),
                        gap,
                        disagreement,
                        alpha=lowest,
                        replications=replications,
                        seed=seed,
                    )
                else:
                    share, se = np.nan, np.nan
                row["power_simulated"], row["power_simulated_se"] = share, se
            if questions is not None:
                row["detectable_gap_points"] = 100 * float(
                    detectable_gap(questions, disagreement, lowest, power)
                )
            row["note"] = (
                ""
                if problem is None
                else f"not simulated ({problem}); Holm lies between the closed forms"
            )
            rows.append(row)
    table = pd.DataFrame(rows)
    for column in ("questions_closed_form", "questions_lower_bound", "questions_simulated"):
        values = table[column].to_numpy(dtype=float)
        table[column] = pd.array(np.where(np.isfinite(values), values, np.nan)).astype("Int64")
    return table


def data_setting(items: pd.DataFrame) -> dict:
    """The data's planning setting: ``models``, ``questions``, ``disagreement``, ``mean_accuracy``.

    ``disagreement`` is the median over all pairs of
    :func:`evalbars.stats.pairwise.disagreement_rates` (the mean square of the
    per-question difference, what :func:`questions_needed` needs, also for
    per-question means of epochs and partial credit); ``mean_accuracy`` the mean
    of the models' mean scores (models without a score left out). NaN where no
    pair shares a question.
    """
    wide = wide_scores(items)
    answered = np.isfinite(wide.scores)
    counts = answered.sum(axis=0)
    sums = np.where(answered, wide.scores, 0.0).sum(axis=0)
    means = sums[counts > 0] / counts[counts > 0]
    rates = disagreement_rates(items)["disagreement"].dropna()
    return {
        "models": len(wide.models),
        "questions": len(wide.question_ids),
        "disagreement": float(rates.median()) if rates.size else np.nan,
        "mean_accuracy": float(means.mean()) if means.size else np.nan,
    }


def plan_caption(table: pd.DataFrame, setting: dict, alpha: float, power: float) -> str:
    """The caption of the workflow's plan table (:func:`plan_table` on :func:`data_setting`)."""
    caption = (
        f"Questions needed for a paired test to find each gap with power {power:g} at "
        f"alpha = {alpha:g}, {setting['models']} models, at the median disagreement rate of the "
        f"data ({setting['disagreement']:.3f}); detectable gap at the data's "
        f"{setting['questions']:,} questions. Holm over all pairs is simulated with models at the "
        f"data's mean accuracy ({100 * setting['mean_accuracy']:.1f}%)."
    )
    skipped = table.loc[table["note"] != "", "gap_points"]
    if skipped.size:
        caption += (
            f" Not simulated for {', '.join(f'{g:g}' for g in skipped)} points (see the note): the "
            "closed forms bracket Holm there."
        )
    return caption


def check_plan_request(
    models: int,
    gap_points: float | None,
    questions: int | None,
    disagreement: float,
    small_gap: bool = False,
) -> None:
    """Refuse an ``evalbars plan`` question that cannot be answered, in one line naming the option.

    ``gap_points`` is in accuracy points. Refused (:class:`~evalbars.errors.InputError`):
    both or neither of a gap and a question count; fewer than 2 models; a gap not
    above 0 or above the disagreement rate (no gap can exceed it); and a gap below
    1 point unless ``small_gap``: ``--gap 0.02`` is almost always a proportion meant
    as 2 points, and would plan for a 0.02-point gap (tens of millions of questions).

    Examples
    --------
    >>> check_plan_request(6, 0.02, None, 0.25)
    Traceback (most recent call last):
    ...
    evalbars.errors.InputError: --gap 0.02: is 0.02 points; did you mean 2 points? (the gap is in accuracy points; add --small-gap to plan for a gap under 1 point)
    >>> check_plan_request(6, 0.02, None, 0.25, small_gap=True) is None
    True
    """
    if (gap_points is None) == (questions is None):
        raise InputError("--gap, --questions", "give exactly one of --gap (points) or --questions")
    if models < 2:
        raise InputError(f"--models {models}", "a comparison needs at least 2 models")
    if gap_points is None:
        return
    if not 0 < gap_points / 100 <= disagreement:
        raise InputError(
            f"--gap {gap_points:g}",
            f"must be above 0 and at most the disagreement rate ({100 * disagreement:g} points)",
        )
    hint = points_hint(gap_points)
    if hint and not small_gap:
        raise InputError(
            f"--gap {gap_points:g}",
            f"is {gap_points:g} points; {hint} (the gap is in accuracy points; add --small-gap "
            "to plan for a gap under 1 point)",
        )


def plan_text(result: dict, simulated: int | None = None) -> str:
    """One paragraph answering a :func:`plan` question (``evalbars plan``)."""
    family = (
        "no multiplicity adjustment"
        if result["procedure"] == "none"
        else f"{result['procedure'].capitalize()} over {result['tests']:,} tests"
    )
    setting = (
        f"{result['models']:,} models, {family}, alpha {result['alpha']:g}, power "
        f"{result['power']:g}, disagreement rate {result['disagreement']:g} ({result['test']} test)"
    )
    if "gap" in result:
        low, high = result["questions_low"], result["questions_high"]
        gap = f"a gap of {100 * result['gap']:g} points"
        if not np.isfinite(high):
            return f"{setting}: {gap} cannot be found (it must be above 0 and below the rate).\n"
        if low == high:
            answer = f"{gap} needs {int(high):,} shared questions"
        else:
            answer = (
                f"{gap} needs between {int(low):,} (unadjusted level) and {int(high):,} "
                "(Bonferroni level) shared questions"
            )
        if simulated is not None:
            answer += f"; simulated under Holm: {int(simulated):,}"
        return f"{setting}: {answer}.\n"
    questions = f"{result['questions']:,} shared questions"
    if result["gap_low"] is None:
        needed = [
            int(
                _ceil(
                    questions_needed(
                        result["disagreement"],
                        result["disagreement"],
                        a,
                        result["power"],
                        result["test"],
                    )
                )
            )
            for a in (result["alpha_per_test_high"], result["alpha_per_test_low"])
        ]
        least = (
            f"{needed[0]:,}"
            if needed[0] == needed[1]
            else f"{needed[0]:,} (unadjusted level) to {needed[1]:,} (Bonferroni level)"
        )
        return (
            f"{setting}: {questions} find no gap with power {result['power']:g}: no gap can "
            f"exceed the disagreement rate ({100 * result['disagreement']:g} points), and even "
            f"that largest gap needs {least} shared questions.\n"
        )
    low = 100 * result["gap_low"]
    if result["gap_high"] is None:
        found = (
            f"{low:.2f} points at the unadjusted level, and no possible gap at the Bonferroni level"
        )
    else:
        high = 100 * result["gap_high"]
        found = f"{high:.2f} points" if np.isclose(low, high) else f"{low:.2f} to {high:.2f} points"
    return f"{setting}: {questions} find a gap of {found}.\n"
