"""The judge-corrected rank reading: tiers and plausible ranks from PPI++ estimates.

Where the scores are a judge's and some questions carry human labels
(:mod:`evalbars.readings.judge_corrected`), each model's score is its PPI++ mean with a normal
interval, each adjacent gap the PPI++ mean of the pair's per-question differences, and the
plausible worlds are draws of all models' estimates at once from the normal with their joint
covariance (:func:`evalbars.stats.ppi.ppi_covariance`), so the question difficulty the models
share cancels from their differences as in the paired reading.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import DRAWS, LEVEL, SEED
from evalbars.readings.judge_corrected import (
    CorrectedReadings,
    clip_interval,
    corrected_readings,
)
from evalbars.readings.ranks.defaults import DRAW_CHUNK
from evalbars.readings.ranks.render import headline
from evalbars.readings.ranks.report import RankReport
from evalbars.readings.ranks.unpaired import (
    _assemble,
    _check_settings,
    anchored_tiers,
    rank_ranges,
)
from evalbars.stats.intervals import z_for_level
from evalbars.stats.pairwise import zero_se_one_sided_p

__all__ = ["corrected_worlds", "corrected_rank_table"]


def corrected_worlds(
    corrected: CorrectedReadings,
    columns,
    draws: int,
    rng: np.random.Generator,
    chunk: int = DRAW_CHUNK,
):
    """Yield chunks of plausible true scores, shape (worlds, models in ``columns`` order).

    Each world is one draw of :math:`N(\\hat\\theta, \\hat\\Sigma)`: the PPI++ estimates and
    their plug-in covariance. The weights :math:`\\hat\\lambda` are each model's own, so a
    world's difference of two models has the variance of the per-model weights, not that of
    the pair's own tuned weight (which the gap intervals use): close to it when the models'
    weights are close, and never below the human-only one asymptotically.
    """
    mean = corrected.per_model.estimate[columns]
    covariance = corrected.covariance[np.ix_(columns, columns)]
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        yield rng.multivariate_normal(mean, covariance, size=size, method="eigh")


def corrected_rank_table(
    wide: WideScores,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = SEED,
) -> RankReport | None:
    """Rank uncertainty of judge-corrected scores, or None without human labels.

    Parameters
    ----------
    wide : WideScores
        Judge scores with human labels (:attr:`evalbars.data.scores.WideScores.human`).
    level : float
        Level of the intervals and rank ranges.
    draws : int
        Plausible worlds (:func:`corrected_worlds`).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    RankReport or None
        Reading ``judge-corrected``; rows by corrected estimate, highest first. ``form`` is
        ``se`` (the small-sample interval of :mod:`evalbars.stats.ppi`, cut to [0, 1]), ``n``
        the questions every model answered. Gaps: the PPI++ interval of the adjacent pair's
        differences (cut to [-1, 1]); tiers and anchored tiers as in
        :func:`evalbars.readings.ranks.rank_table`. With fewer than
        :data:`evalbars.stats.ppi.MIN_LABELS` labels no gap is separated (one tier) and every
        row's ``note`` says so; None with fewer than 2 labels (no estimate).
    """
    _check_settings(level, draws)
    corrected = corrected_readings(wide)
    if corrected is None or corrected.labels < 2:
        return None
    order = corrected.order()
    columns = pd.Index(corrected.models).get_indexer(order)
    z = z_for_level(level)
    estimate = corrected.per_model.estimate[columns]
    centre, se = (v[columns] for v in corrected.per_model.interval_estimate_and_se("ppi++"))
    diff, spread = corrected.pair_matrices()
    diff, spread = diff[np.ix_(columns, columns)], spread[np.ix_(columns, columns)]
    above, below = np.arange(len(order) - 1), np.arange(1, len(order))
    gap = np.append(diff[above, below], np.nan)
    gap_se = np.append(spread[above, below], np.nan)
    # A zero SE (the same difference on every labelled question): no interval, and the exact
    # rule of every table decides (stats.pairwise.zero_se_one_sided_p on the labels).
    exact = zero_se_one_sided_p(gap, corrected.labels) < (1 - level) / 2
    decided = np.where(gap_se > 0, gap - z * gap_se > 0, exact) & corrected.decides
    separated = pd.array(decided, dtype="boolean")
    separated[len(order) - 1] = pd.NA
    half = np.where(gap_se > 0, z * gap_se, np.nan)
    gap_low, gap_high = clip_interval(gap - half, gap + half, "pair")
    gaps = pd.DataFrame(
        {
            "gap": gap,
            "gap_low": gap_low,
            "gap_high": gap_high,
            "separated": separated,
            "pair_kind": np.where(np.isnan(gap), "", "judge-corrected"),
        }
    )
    board = pd.DataFrame(
        {
            "name": order,
            "form": "se",
            "n": float(corrected.questions),
            "score": estimate,
            "ci_low": clip_interval(centre - z * se, centre + z * se)[0],
            "ci_high": clip_interval(centre - z * se, centre + z * se)[1],
            "note": corrected.note,
        }
    )

    def separated_from(top):
        below, se_below = diff[top, top + 1 :], spread[top, top + 1 :]
        exact = zero_se_one_sided_p(below, corrected.labels) < (1 - level) / 2
        return np.where(se_below > 0, below - z * se_below > 0, exact) & corrected.decides

    rng = np.random.default_rng(seed)
    summary = rank_ranges(corrected_worlds(corrected, columns, int(draws), rng), int(draws), level)
    table = _assemble(board, gaps, summary, anchored_tiers(separated_from, len(order)))
    method = (
        f"Judge-corrected: PPI++ with {corrected.labels:,} human labels of "
        f"{corrected.questions:,} questions; normal intervals with two pseudo-labels, cut to "
        f"what a score can be, PPI++ gap intervals of the pairs' differences, {int(draws):,} "
        f"draws of the estimates' joint normal (seed {seed})."
        + (f" {corrected.note[0].upper()}{corrected.note[1:]}." if corrected.note else "")
    )
    return RankReport(table, headline(table), "judge-corrected", level, int(draws), seed, method)
