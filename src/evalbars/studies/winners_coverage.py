"""Coverage of the winner's readings and of the confidence set for the best, by simulation.

Boards of K models are drawn as :math:`X \\sim N(\\mu, \\Sigma)` with the exchangeable
covariance of paired scores, :math:`\\Sigma = \\sigma^2[(1-\\rho)I + \\rho\\,11^\\top]` (models
scored on the same questions are positively correlated: :math:`\\rho` is the correlation of two
models' accuracies, about 0.5 on MMLU-Pro's paired data), and true scores spaced
``spacing`` SEs apart below the top, :math:`\\mu_j = 0.7 - \\text{spacing}\\cdot\\sigma\\, j`
(spacing 0: every model tied, the worst case for the winner's curse; 0.5: near ties; 2: a spread
board). For each board the study records whether each reading's interval of the winner
(:func:`evalbars.stats.best.winners.winner_naive`, ``_conditional``, ``_hybrid``, ``_zoom``) covers
the winner's true score :math:`\\mu_{\\hat\\theta}`, the bias of its estimate, and, where the
best is unique, whether the MCB set (:func:`evalbars.stats.best.sets.best_set`) holds it.

The covariance is the one the readings are given (known), as in the coverage studies of Andrews,
Kitagawa and McCloskey (2024, section 5): what is checked is the selection correction, not the
estimation of :math:`\\Sigma` from questions, whose error is of order :math:`1/\\sqrt n`.

:func:`simulate_estimated_covariance` checks that estimation too: it draws item-level 0/1
scores (n questions in G equal categories; model k answers question q of category g when
:math:`\\theta_k + u_{gk} - b_q + \\varepsilon_{qk} > 0`, with a question difficulty
:math:`b_q \\sim N(0, 1)` shared by every model, which makes the scores paired, a model x
category effect :math:`u_{gk} \\sim N(0, \\tau^2)`, which clusters them, and
:math:`\\varepsilon_{qk} \\sim N(0, 1)`), estimates :math:`\\Sigma` from each board's questions as
the readings do (:func:`evalbars.stats.best.winners.mean_covariance`, paired, or clustered by
category with CR2), and records the coverage of the naive and the hybrid interval of the winner
and of the MCB set. The true scores are
:math:`\\mu_k = \\Phi(\\theta_k/\\sqrt{2 + \\tau^2})`: the mean over questions and over categories
drawn anew (with :math:`\\tau > 0` the inference is about the benchmark's population of
categories, which only the clustered covariance accounts for; with :math:`\\tau = 0` the two
targets coincide). Every
reading is vectorised over the replicates; under the exchangeable covariance the zoom interval's
second critical value and MCB's :math:`d_i` depend on the board only through the size of the
plausible set (and not at all, respectively), so each is computed once per size.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.defaults import ALPHA
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.best.sets import difference_covariance, pair_standard_errors
from evalbars.stats.best.winners import (
    mean_covariance,
    simultaneous_critical_value,
    simultaneous_critical_values,
    winner_conditional,
    winner_hybrid,
    winner_naive,
)

__all__ = [
    "WINNER_SETTINGS",
    "ESTIMATED_SETTINGS",
    "exchangeable_covariance",
    "simulate_winner_coverage",
    "winner_coverage_table",
    "simulate_estimated_covariance",
    "estimated_covariance_coverage_table",
]

#: The settings of :func:`estimated_covariance_coverage_table`: models, categories, the
#: model x category SD :math:`\\tau`, the covariance the readings estimate.
ESTIMATED_SETTINGS = [
    (models, categories, tau, covariance)
    for models in (5, 20)
    for categories, tau in ((14, 0.0), (14, 0.15), (57, 0.15))
    for covariance in ("paired", "clustered")
]

#: The settings of the benchmark's ``--winner-coverage``: models, spacing (SEs), correlation.
WINNER_SETTINGS = [
    (models, spacing, correlation)
    for models in (5, 20, 100)
    for spacing in (0.0, 0.5, 2.0)
    for correlation in (0.0, 0.5)
]


def exchangeable_covariance(models: int, se: float, correlation: float) -> np.ndarray:
    """:math:`\\sigma^2[(1-\\rho)I + \\rho\\,11^\\top]`."""
    return se**2 * ((1 - correlation) * np.eye(models) + correlation)


def _zoom_covers(scores, cov, truth, winner, alpha, nu, seed):
    """Whether each board's zoom interval covers its winner's true score (vectorised: the second
    critical value depends only on the plausible set's size under an exchangeable covariance)."""
    sd = np.sqrt(np.diag(cov))
    c1 = simultaneous_critical_value(cov, nu, seed=seed)
    lower = (scores - c1 * sd).max(axis=1, keepdims=True)
    size = (scores + c1 * sd >= lower - 1e-12).sum(axis=1)
    c2 = np.zeros(cov.shape[0] + 1)
    for count in np.unique(size):  # one critical value per plausible-set size
        c2[count] = simultaneous_critical_value(cov[:count, :count], alpha - nu, seed=seed + 1)
    observed = np.take_along_axis(scores, winner[:, None], axis=1)[:, 0]
    half = c2[size] * sd[winner]
    return np.abs(observed - truth[winner]) <= half, size


def _mcb_holds_best(scores, cov, best, alpha, seed):
    """Whether each board's MCB set holds the (unique) true best."""
    critical = simultaneous_critical_value(
        difference_covariance(cov, best), alpha, one_sided=True, seed=seed
    )
    se = pair_standard_errors(cov)[best]
    gaps = scores[:, [best]] - scores + critical * se
    gaps[:, best] = np.inf
    return gaps.min(axis=1) > 0


def simulate_winner_coverage(
    models: int,
    spacing: float,
    correlation: float,
    replicates: int = 4000,
    *,
    se: float = 0.01,
    alpha: float = ALPHA,
    seed: int = 0,
) -> dict:
    """Coverage of every winner reading, and of the MCB set, in one setting.

    Parameters
    ----------
    models : int
        Models on the board (K).
    spacing : float
        Gap between consecutive true scores, in SEs (0: all tied).
    correlation : float
        Correlation of two models' scores (:math:`\\rho`).
    replicates : int
        Boards drawn.
    se : float
        Each model's SE (:math:`\\sigma`).
    alpha : float
        Error rate of the intervals and the set.
    seed : int
        Study seed (:func:`evalbars.seeding.setting_rng`, study ``winners_coverage``).

    Returns
    -------
    dict
        ``models, spacing, correlation, replicates`` and, per reading (naive, conditional,
        hybrid, zoom), ``<reading>_coverage`` and ``<reading>_median_bias`` (the median of the
        estimate minus the winner's true score, in SEs: the conditional and hybrid estimates
        are median-unbiased, and the conditional one is infinite on some boards); ``best_set_coverage`` (NaN when the best is not unique)
        and ``coverage_mc_se``.
    """
    rng = setting_rng(seed, "winners_coverage", models, spacing, correlation, replicates)
    cov = exchangeable_covariance(models, se, correlation)
    truth = 0.7 - spacing * se * np.arange(models)
    scores = rng.multivariate_normal(truth, cov, size=replicates, method="cholesky")
    winner = scores.argmax(axis=1)
    target = truth[winner]
    row = {
        "models": models,
        "spacing": spacing,
        "correlation": correlation,
        "replicates": replicates,
    }
    readings = {
        "naive": winner_naive(scores, cov, winner, alpha),
        "conditional": winner_conditional(scores, cov, winner, alpha),
        "hybrid": winner_hybrid(scores, cov, winner, alpha),
    }
    for name, reading in readings.items():
        covered = (reading.low <= target) & (target <= reading.high)
        row[f"{name}_coverage"] = share_and_se(covered)[0]
        row[f"{name}_median_bias"] = float(np.nanmedian(reading.estimate - target) / se)
    zoom_covered, _ = _zoom_covers(scores, cov, truth, winner, alpha, alpha / 10, seed)
    row["zoom_coverage"] = share_and_se(zoom_covered)[0]
    row["zoom_median_bias"] = float(np.median(scores[np.arange(replicates), winner] - target) / se)
    row["best_set_coverage"] = (
        share_and_se(_mcb_holds_best(scores, cov, 0, alpha, seed))[0] if spacing > 0 else np.nan
    )
    row["coverage_mc_se"] = float(np.sqrt(0.95 * 0.05 / replicates))
    return row


def winner_coverage_table(replicates: int = 4000, settings=None, seed: int = 0) -> pd.DataFrame:
    """:func:`simulate_winner_coverage` over ``settings`` (default :data:`WINNER_SETTINGS`),
    one row each."""
    return pd.DataFrame(
        [
            simulate_winner_coverage(m, s, r, replicates, seed=seed)
            for m, s, r in (settings or WINNER_SETTINGS)
        ]
    )


#: Boards drawn at once by :func:`simulate_estimated_covariance` (each holds n x K scores).
_BOARDS_PER_BLOCK = 100


def _estimated_block(rng, boards, questions, categories, tau, theta, clustered, alpha, seed):
    """Coverage indicators of one block of item-level boards (see the module docstring)."""
    per = questions // categories
    models = theta.size
    difficulty = rng.standard_normal((boards, questions, 1))
    effect = np.repeat(tau * rng.standard_normal((boards, categories, models)), per, axis=1)
    noise = rng.standard_normal((boards, questions, models))
    scores = (theta + effect - difficulty + noise > 0).astype(float)
    clusters = np.repeat(np.arange(categories), per) if clustered else None
    cov = mean_covariance(scores, clusters)
    means = scores.mean(axis=1)
    truth = special.ndtr(theta / np.sqrt(2.0 + tau**2))
    winner = means.argmax(axis=1)
    target = truth[winner]
    covered = {}
    for name, reading in (
        ("naive", winner_naive(means, cov, winner, alpha)),
        ("hybrid", winner_hybrid(means, cov, winner, alpha, seed=seed)),
    ):
        covered[name] = (reading.low <= target) & (target <= reading.high)
    # MCB: the true best (model 0, when the scores are spaced) kept, at its own d estimated
    others = np.arange(models) != 0
    column = cov[:, others, 0]
    differences = (
        cov[:, others][:, :, others] - column[:, :, None] - column[:, None, :] + cov[:, :1, :1]
    )
    critical = simultaneous_critical_values(differences, alpha, one_sided=True, seed=seed)
    se = np.sqrt(np.clip(cov[:, 0, 0][:, None] + cov[:, others, others] - 2 * column, 0, None))
    gaps = means[:, :1] - means[:, others] + critical[:, None] * se
    covered["best_set"] = gaps.min(axis=1) > 0
    return covered


def simulate_estimated_covariance(
    models: int,
    categories: int,
    tau: float,
    covariance: str,
    replicates: int = 1000,
    *,
    questions: int = 1400,
    spacing: float = 0.0,
    alpha: float = ALPHA,
    seed: int = 0,
) -> dict:
    """Coverage of the winner's readings and of the MCB set with the covariance estimated from
    item-level scores (see the module docstring).

    Parameters
    ----------
    models : int
        Models on the board (K).
    categories : int
        Categories G (equal sizes: ``questions`` is rounded down to a multiple of G).
    tau : float
        SD of the model x category effect (latent scale; 0: no clustering).
    covariance : {"paired", "clustered"}
        The covariance the readings estimate: paired over questions, or clustered by category
        (CR2).
    replicates : int
        Boards drawn.
    questions : int
        Questions per board.
    spacing : float
        Gap between consecutive latent abilities (0: every model tied, the worst case for the
        winner's curse; the MCB set needs a unique best, so its coverage is recorded at
        ``spacing > 0`` only).
    alpha : float
        Error rate of the intervals and the set.
    seed : int
        Study seed (:func:`evalbars.seeding.setting_rng`, study ``winners_estimated``).

    Returns
    -------
    dict
        ``models, categories, tau, covariance, questions, replicates, spacing``, the coverage
        of ``naive``, ``hybrid`` and ``best_set`` (NaN when tied), and ``coverage_mc_se``.

    Examples
    --------
    Twenty tied models, 100 boards of 280 questions (too few for a level; the benchmark's
    settings are :data:`ESTIMATED_SETTINGS`):

    >>> row = simulate_estimated_covariance(20, 14, 0.0, "paired", 100, questions=280)
    >>> row["naive_coverage"], row["hybrid_coverage"]
    (0.62, 0.85)
    """
    if covariance not in ("paired", "clustered"):
        raise ValueError(f"covariance must be 'paired' or 'clustered', got {covariance!r}")
    clustered = covariance == "clustered"
    rng = setting_rng(
        seed, "winners_estimated", models, categories, tau, clustered, replicates, spacing
    )
    questions = questions // categories * categories
    theta = 0.5 - spacing * np.arange(models)
    blocks = [
        _estimated_block(
            rng,
            min(_BOARDS_PER_BLOCK, replicates - start),
            questions,
            categories,
            tau,
            theta,
            clustered,
            alpha,
            seed,
        )
        for start in range(0, replicates, _BOARDS_PER_BLOCK)
    ]
    covered = {name: np.concatenate([b[name] for b in blocks]) for name in blocks[0]}
    return {
        "models": models,
        "categories": categories,
        "tau": tau,
        "covariance": covariance,
        "questions": questions,
        "replicates": replicates,
        "spacing": spacing,
        "naive_coverage": share_and_se(covered["naive"])[0],
        "hybrid_coverage": share_and_se(covered["hybrid"])[0],
        "best_set_coverage": share_and_se(covered["best_set"])[0] if spacing > 0 else np.nan,
        "coverage_mc_se": float(np.sqrt(0.95 * 0.05 / replicates)),
    }


def estimated_covariance_coverage_table(
    replicates: int = 1000, settings=None, seed: int = 0, spacings=(0.0, 0.02)
) -> pd.DataFrame:
    """:func:`simulate_estimated_covariance` over ``settings`` (default
    :data:`ESTIMATED_SETTINGS`) and ``spacings`` (tied, for the winner; spaced, for the MCB
    set), one row each."""
    return pd.DataFrame(
        [
            simulate_estimated_covariance(m, g, t, c, replicates, spacing=spacing, seed=seed)
            for m, g, t, c in (settings or ESTIMATED_SETTINGS)
            for spacing in spacings
        ]
    )
