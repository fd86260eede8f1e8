"""Split-half rank stability: does a system keep its rank on half of the questions?

Over B seeded random splits of the questions into two halves, stratified by category
(each category split in half), every system is ranked on each half; a system whose rank
is a property of the benchmark keeps its full-data rank on most halves. SWE-bench#623
found the Verified leader first in 0 of 50 such splits. Both halves of a split are
used, so B splits give 2B rankings.
The split-half check is the one of the SWE-bench leaderboard audit (SWE-bench issue
#623, "#1 ranking is split-dependent"); evalbars stratifies it by category and seeds it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.seeding import setting_rng

__all__ = [
    "SPLIT_BYTES",
    "half_masks",
    "half_accuracies",
    "min_ranks",
    "split_half_stability",
]

#: Bytes held per (split, question) by :func:`half_masks` and :func:`half_accuracies` at
#: their peak (keys, sort order and positions in 8 bytes each, the two halves' weights).
SPLIT_BYTES = 48


def half_masks(categories, splits: int, rng: np.random.Generator) -> np.ndarray:
    """``(splits, n)`` booleans: True for the questions in the first half of each split.

    Within every category of size :math:`n_c`, :math:`\\lfloor n_c/2 \\rfloor` questions,
    drawn uniformly without replacement, form the first half; the rest the second.
    One uniform key per (split, question), offset by the category code, sorted once
    per split: the position of a question within its category's block decides.
    """
    codes = np.unique(np.asarray(categories), return_inverse=True)[1].ravel()
    n = codes.size
    sizes = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    keys = rng.random((splits, n)) + codes[None, :]
    order = np.argsort(keys, axis=1, kind="stable")
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(n)[None, :].repeat(splits, axis=0), axis=1)
    within = position - starts[codes][None, :]
    return within < (sizes // 2)[codes][None, :]


def half_accuracies(wide: WideScores, masks: np.ndarray) -> np.ndarray:
    """``(2 * splits, K)`` mean scores on each half (first halves, then second halves).

    Each model's mean is over the questions it answered in that half: two matrix
    products of the half masks with the zero-filled scores and the answered mask.
    """
    answered = np.isfinite(wide.scores)
    filled = np.where(answered, wide.scores, 0.0)
    halves = np.concatenate([masks, ~masks]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (halves @ filled) / (halves @ answered.astype(float))


def min_ranks(scores) -> np.ndarray:
    """Rank 1 for the highest score along the last axis; ties share the better rank."""
    # Imported here: scipy.stats takes most of a second to import, and every job that imports
    # the leaderboard table (the API and the command line too) would pay it.
    from scipy.stats import rankdata  # noqa: PLC0415 - see above

    return rankdata(-np.asarray(scores, dtype=float), method="min", axis=-1).astype(int)


def split_half_stability(wide: WideScores, splits: int = 50, seed: int = 0) -> pd.DataFrame:
    """Per system: how often it keeps its full-data rank, and how often it is first.

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores.
    splits : int
        B, the number of random splits (2B halves).
    seed : int
        Seed of :func:`evalbars.seeding.setting_rng` (study ``split_half``,
        parameter B): the same seed and B give the same halves.

    Returns
    -------
    DataFrame
        ``model, rank, rank_kept_share, first_share, rank_half_low, rank_half_high``
        in the order of ``wide.models``: ``rank`` the full-data rank (ties share the
        better), ``rank_kept_share`` the share of the 2B halves on which the system has
        that rank, ``first_share`` the share on which it is first (alone or tied), and
        the lowest and highest rank it takes on any half. The shares are over the
        halves on which every system answered a question; a half where one answered
        nothing has no ranking and is left out (with one question every first half is
        empty, so only the second halves count). With no such half the shares and the
        half ranks are NaN.
    """
    rng = setting_rng(seed, "split_half", splits)
    masks = half_masks(wide.categories, splits, rng)
    halves = half_accuracies(wide, masks)
    ranked = np.isfinite(halves).all(axis=1)  # a half where some system answered nothing
    full = min_ranks(np.nanmean(wide.scores, axis=0))
    if not ranked.any():  # e.g. one question: every first half is empty
        nothing = np.full(len(wide.models), np.nan)
        return pd.DataFrame(
            {
                "model": list(wide.models),
                "rank": full,
                "rank_kept_share": nothing,
                "first_share": nothing,
                "rank_half_low": nothing,
                "rank_half_high": nothing,
            }
        )
    ranks = min_ranks(halves[ranked])
    return pd.DataFrame(
        {
            "model": list(wide.models),
            "rank": full,
            "rank_kept_share": (ranks == full[None, :]).mean(axis=0),
            "first_share": (ranks == 1).mean(axis=0),
            "rank_half_low": ranks.min(axis=0),
            "rank_half_high": ranks.max(axis=0),
        }
    )
