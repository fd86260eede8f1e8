"""Holm's requirement by simulation: the family-wise error study's K-model process, by pattern
counts.

:func:`simulate_holm_power` runs the data-generating process of
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
.. [1] Holm, S. (1979). A simple sequentially rejective multiple test
   procedure. Scand J Stat 6, 65-70.
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import polynomial as P

from evalbars.defaults import ALPHA, POWER
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.pairwise import adjust_pvalues
from evalbars.stats.planning.sample_size import (
    all_pairs,
    paired_z_from_counts,
    questions_needed,
)

__all__ = [
    "DEFAULT_MEAN_ACCURACY",
    "MAX_SIMULATED_MODELS",
    "concentration_for_disagreement",
    "reachable_disagreement",
    "holm_simulation_problem",
    "pattern_probabilities",
    "simulate_holm_power",
    "holm_questions",
]

#: The fwer study's default mean accuracy (config simulation.fwer.mean_accuracy).
DEFAULT_MEAN_ACCURACY = 0.6
#: Most models the pattern simulation handles (2^K patterns).
MAX_SIMULATED_MODELS = 12
#: The planner's K-model simulation in :data:`evalbars.seeding.STUDY_CODES` (code 102).
_HOLM_STUDY = "plan_holm"


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
    alpha: float = ALPHA,
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
    z, p = paired_z_from_counts(counts @ wins, counts @ losses, float(questions))
    if procedure != "none":
        p = adjust_pvalues(p, procedure)
    return share_and_se((p[:, 0] < alpha) & (z[:, 0] > 0))


def holm_questions(
    models: int,
    gap: float,
    disagreement: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
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
