"""The statistics a claim is tested on: every ordered pair of models on a set of questions (all
of them, or one category's), as K x K matrices, for every reading of
:mod:`evalbars.readings.claims.verdicts`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalbars.data.scores import WideScores
from evalbars.readings.judge_corrected import corrected_readings
from evalbars.readings.ranks.paired import bootstrap_accuracies
from evalbars.readings.ranks.unpaired import min_ranks
from evalbars.stats.fits import contrast_se
from evalbars.stats.mixed import blocked_spec, fit_lmm
from evalbars.stats.pairwise import ZERO_SE, exact_readings_reasons, pair_statistics

# --- Statistics of one scope (all questions, or one category) ------------------------------------


@dataclass
class _Scope:
    """Pair statistics of every ordered pair (a, b) on a set of questions, as K x K matrices."""

    category: str | None
    wide: WideScores
    questions: int
    diff: np.ndarray
    se_unpaired: np.ndarray
    se_paired: np.ndarray
    wins: np.ndarray  # wins[a, b]: questions a scored higher than b
    n: np.ndarray
    mixed_diff: np.ndarray | None
    mixed_se: np.ndarray | None
    mixed_note: str
    # exact_reasons[a, b]: why the exact readings do not apply to the pair ("" where they do:
    # one 0/1 sample per cell, the 2x2 table is then the data)
    exact_reasons: np.ndarray | None = None
    seed: int = 0  # of the Bayesian reading's draws (set by evaluate_claims)
    ranks: np.ndarray | None = None
    # PPI++ of every pair's differences where the scores are a judge's with human labels
    corrected_diff: np.ndarray | None = None
    corrected_se: np.ndarray | None = None
    corrected_labels: int = 0  # labelled questions: the n of the exact rule at a zero SE
    corrected_estimate: np.ndarray | None = None  # PPI++ point estimates (diff: interval centres)
    corrected_note: str = ""  # why the judge-corrected reading decides nothing, if it does not
    costs: object = None  # per-question costs (model, question_id, cost) for the cost claims


def _square(values, k, antisymmetric=False):
    a, b = np.triu_indices(k, k=1)
    out = np.zeros((k, k))
    out[a, b] = values
    out[b, a] = -values if antisymmetric else values
    return out


def _mixed(wide: WideScores, category: str | None):
    """Mixed-model contrasts (estimate, se matrices) on a scope, or (None, None, reason)."""
    k = len(wide.models)
    try:
        # the nested model, or on one category's questions the question-only one
        fit = fit_lmm(wide, blocked_spec(wide) if category is None else "question")
    except (
        ValueError,
        RuntimeError,
    ) as exc:  # RuntimeError: REML has no minimum (e.g. 0/1 columns)
        return None, None, f"mixed model not fitted: {exc}"
    a, b = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
    diff = fit.params[a] - fit.params[b]
    with np.errstate(invalid="ignore"):
        se = contrast_se(fit, a, b)
    # A vanishing residual variance leaves round-off, not precision (stats.pairwise.ZERO_SE)
    return diff, np.where(se <= ZERO_SE, 0.0, se), ""


def _scope(wide: WideScores, category: str | None) -> _Scope:
    if category is not None:
        wide = wide.rows(wide.categories == category)  # repeated samples (epochs) kept
    k = len(wide.models)
    stats = pair_statistics(wide.scores)
    answered = np.isfinite(wide.scores).any(axis=1)
    mixed_diff, mixed_se, note = _mixed(wide, category)
    wins = _square(stats["n10"], k)
    a, b = np.triu_indices(k, k=1)
    wins[b, a] = stats["n01"]
    reasons = np.full((k, k), "", dtype=object)
    reasons[a, b] = reasons[b, a] = exact_readings_reasons(wide, a, b)
    corrected = corrected_readings(wide)
    # the small-sample centres and SEs test; too few labels: the reading decides nothing
    decides = corrected is not None and corrected.decides
    corrected_diff, corrected_se = corrected.pair_matrices() if decides else (None, None)
    note = corrected.note if corrected else "no labelled question every model answered"
    return _Scope(
        category=category,
        wide=wide,
        questions=int(answered.sum()),
        diff=_square(stats["diff"], k, antisymmetric=True),
        se_unpaired=_square(stats["se_unpaired"], k),
        se_paired=_square(stats["se_paired"], k),
        wins=wins,
        n=_square(stats["n"], k),
        mixed_diff=mixed_diff,
        mixed_se=mixed_se,
        mixed_note=note,
        exact_reasons=reasons,
        corrected_diff=corrected_diff,
        corrected_se=corrected_se,
        corrected_labels=corrected.labels if corrected else 0,
        corrected_estimate=corrected.pair_matrices(interval=False)[0] if decides else None,
        corrected_note=note if wide.has_labels and not decides else "",
    )


def _bootstrap_ranks(scope: _Scope, replicates: int, seed: int) -> np.ndarray | None:
    """Each model's rank (ties share the better) in every replicate of a stratified paired
    bootstrap of the scope's shared questions: an int array (replicates x K)."""
    if scope.ranks is None:
        complete = np.isfinite(scope.wide.scores).all(axis=1)
        if complete.sum() < 2:
            return None
        strata = scope.wide.categories[complete] if scope.category is None else None
        rng = np.random.default_rng(seed)
        chunks = bootstrap_accuracies(scope.wide.scores[complete], strata, replicates, rng)
        scope.ranks = np.vstack([min_ranks(chunk) for chunk in chunks])
    return scope.ranks
