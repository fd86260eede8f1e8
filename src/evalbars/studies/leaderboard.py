"""The unpaired leaderboard: five models as coins, and how often luck decides the order.

The study of *How to evaluate an LLM: is it better, or did it get lucky?* ("the
leaderboard-luck explainer"): five models are coins with true pass rates 82, 80,
79, 77 and 72 % (``spread = 1``); ``spread`` scales every rate's distance from
their mean (78 %), so 0 makes the five identical. Each run draws ``questions``
fresh questions per model (the unpaired setup of a public leaderboard), so each
model's count is an independent Binomial(N, p) draw (drawn directly; the
question-level detail is needed only for the one run played out).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.seeding import setting_seed_sequence, share_and_se
from evalbars.stats.intervals import wilson_interval

__all__ = [
    "LEADERBOARD_RATES",
    "DECISION_RULES",
    "leaderboard_rates",
    "LeaderboardResult",
    "simulate_leaderboard",
]

#: True pass rates of the explainer's five models at ``spread = 1``, best first.
LEADERBOARD_RATES = (0.82, 0.80, 0.79, 0.77, 0.72)

#: Decision rules for picking between the truly best (A) and second-best (B) model.
DECISION_RULES = ("higher_score_wins", "intervals_must_not_overlap")


def leaderboard_rates(spread: float, base_rates=LEADERBOARD_RATES) -> np.ndarray:
    """True pass rates at a given spread: :math:`\\bar p + s (p_k - \\bar p)`.

    ``spread = 1`` returns ``base_rates`` (sorted best first), 0 makes every model
    the mean (78 % for the seed's rates), 2 doubles every distance from the mean.
    """
    base = np.sort(np.asarray(base_rates, dtype=float))[::-1]
    rates = base.mean() + float(spread) * (base - base.mean())
    if spread < 0 or rates.min() < 0 or rates.max() > 1:
        raise ValueError(f"spread {spread!r} puts pass rates outside [0, 1]: {rates.round(3)}")
    return rates


def _model_labels(k: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(k)]


class LeaderboardResult(NamedTuple):
    """One leaderboard setting, as three tidy tables.

    Attributes
    ----------
    summary : DataFrame
        One row per decision rule (see :func:`simulate_leaderboard`).
    runs : DataFrame
        One row per run: ``run, a_minus_b_points, top_model``.
    one_run : DataFrame
        One run played out question by question: ``model, true_rate, question,
        correct, final_rank`` (one row per model and question).
    """

    summary: pd.DataFrame
    runs: pd.DataFrame
    one_run: pd.DataFrame


def simulate_leaderboard(
    questions: int,
    *,
    spread: float = 1.0,
    runs: int = 10_000,
    seed: int = 0,
    base_rates=LEADERBOARD_RATES,
    level: float = LEVEL,
) -> LeaderboardResult:
    """The unpaired leaderboard: who ranks first, and how often a rule picks wrong.

    Parameters
    ----------
    questions : int
        Questions per model per run (N); each model gets its own questions.
    spread : float
        Scale of the true rates' distances from their mean (:func:`leaderboard_rates`).
    runs : int
        Independent runs.
    seed : int
        Root seed; the runs and the one-run figure draw from the two children of
        :func:`evalbars.seeding.setting_seed_sequence` ``(seed, "leaderboard",
        questions, spread)``.
    base_rates : sequence of float
        True rates at ``spread = 1``; the best is model A, the second-best B.
    level : float
        Level of the Wilson intervals (whiskers and the non-overlap rule).

    Returns
    -------
    LeaderboardResult
        ``summary`` has one row per rule in :data:`DECISION_RULES` with ``questions,
        spread, runs, rule, top1, top1_se, mean_a_minus_b_points,
        mean_a_minus_b_se, sd_a_minus_b_points, b_above_a, b_above_a_se, tie,
        wrong, wrong_se, undecided, undecided_se, mean_whisker_points``.

    Notes
    -----
    Per run, model k's count is :math:`X_k \\sim \\mathrm{Bin}(N, p_k)`.

    - ``top1``: share of runs in which A has the highest count; ties for first are
      broken uniformly at random (a random key below 1 added to each count).
    - ``a_minus_b_points``: :math:`100 (X_A - X_B)/N`; ``b_above_a`` is the share
      with :math:`X_B > X_A` (ties excluded, reported in ``tie``).
    - HIGHER SCORE WINS picks the larger count, a fair coin on a tie; INTERVALS
      MUST NOT OVERLAP picks a model only when its Wilson interval lies wholly
      above the other's, otherwise it makes no decision. ``wrong`` is the share of
      runs that pick B, ``undecided`` the share that pick neither.
    - ``mean_whisker_points``: mean Wilson half-width, :math:`100 (U - L)/2`, over
      runs and models.
    - Every ``*_se`` is a Monte Carlo SE, :math:`\\sqrt{p(1-p)/R}` for shares and
      :math:`\\mathrm{SD}/\\sqrt R` for the mean difference.
    """
    rates = leaderboard_rates(spread, base_rates)
    k = rates.size
    runs_seq, one_run_seq = setting_seed_sequence(seed, "leaderboard", questions, spread).spawn(2)
    rng = np.random.default_rng(runs_seq)
    counts = rng.binomial(questions, rates, size=(runs, k))
    tie_keys = rng.random((runs, k))
    coin_picks_b = rng.random(runs) < 0.5

    # A key in [0, 0.5) reorders only models with equal counts: a random tie-break.
    first = np.argmax(counts + 0.5 * tie_keys, axis=1)
    top1, top1_se = share_and_se(first == 0)
    count_a, count_b = counts[:, 0], counts[:, 1]
    diff_points = 100.0 * (count_a - count_b) / questions
    b_above, b_above_se = share_and_se(count_b > count_a)
    tie = float((count_a == count_b).mean())
    low, high = wilson_interval(counts, questions, level)
    whisker = float(100.0 * ((high - low) / 2).mean())

    picks_b = {
        "higher_score_wins": (count_b > count_a) | ((count_a == count_b) & coin_picks_b),
        "intervals_must_not_overlap": low[:, 1] > high[:, 0],
    }
    undecided = {
        "higher_score_wins": np.zeros(runs, dtype=bool),
        "intervals_must_not_overlap": ~((low[:, 0] > high[:, 1]) | (low[:, 1] > high[:, 0])),
    }
    rows = []
    for rule in DECISION_RULES:
        wrong, wrong_se = share_and_se(picks_b[rule])
        undecided_share, undecided_se = share_and_se(undecided[rule])
        rows.append(
            {
                "questions": int(questions),
                "spread": float(spread),
                "runs": int(runs),
                "rule": rule,
                "top1": top1,
                "top1_se": top1_se,
                "mean_a_minus_b_points": float(diff_points.mean()),
                "mean_a_minus_b_se": float(diff_points.std(ddof=1) / np.sqrt(runs)),
                "sd_a_minus_b_points": float(diff_points.std(ddof=1)),
                "b_above_a": b_above,
                "b_above_a_se": b_above_se,
                "tie": tie,
                "wrong": wrong,
                "wrong_se": wrong_se,
                "undecided": undecided_share,
                "undecided_se": undecided_se,
                "mean_whisker_points": whisker,
            }
        )
    labels = np.asarray(_model_labels(k))
    run_table = {
        "run": np.arange(1, runs + 1),
        "a_minus_b_points": diff_points,
        "top_model": labels[first],
    }

    # The single run played out needs question-level outcomes: K x N draws, once.
    one_rng = np.random.default_rng(one_run_seq)
    outcomes = one_rng.random((k, questions)) < rates[:, None]
    final_key = outcomes.sum(axis=1) + 0.5 * one_rng.random(k)
    final_rank = np.empty(k, dtype=int)
    final_rank[np.argsort(-final_key, kind="stable")] = np.arange(1, k + 1)
    one_run = {
        "model": np.repeat(labels, questions),
        "true_rate": np.repeat(rates, questions),
        "question": np.tile(np.arange(1, questions + 1), k),
        "correct": outcomes.ravel().astype(np.int8),
        "final_rank": np.repeat(final_rank, questions),
    }
    return LeaderboardResult(pd.DataFrame(rows), pd.DataFrame(run_table), pd.DataFrame(one_run))
