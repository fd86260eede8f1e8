"""The unpaired rank-uncertainty calculator: score intervals, separated neighbours, tiers, ranks.

Every system is an independent estimate (the rank-uncertainty calculator's
reading): Wilson intervals (or score ± z·se), Newcombe/MOVER intervals for the
gaps between neighbours, tiers, and plausible ranks from Jeffreys posterior draws.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evalbars.defaults import DRAWS, LEVEL, MIN_DRAWS, SEED
from evalbars.readings.ranks.defaults import DRAW_CHUNK
from evalbars.readings.ranks.render import headline
from evalbars.readings.ranks.report import RankReport
from evalbars.stats.bayes import JEFFREYS_PRIOR, beta_posterior_parameters
from evalbars.stats.intervals import mover_difference, wilson_interval, z_for_level

__all__ = [
    "RANK_COLUMNS",
    "score_intervals",
    "adjacent_gaps",
    "tiers_from_separated",
    "min_ranks",
    "rank_ranges",
    "summarise_ranks",
    "anchored_tiers",
    "plausible_scores",
    "rank_table",
]

#: Columns of every rank table, in order.
RANK_COLUMNS = [
    "position",
    "name",
    "form",
    "n",
    "score",
    "ci_low",
    "ci_high",
    "gap",
    "gap_low",
    "gap_high",
    "separated",
    "tier",
    "tier_anchored",
    "p_first",
    "rank_low",
    "rank_high",
    "note",
]


def _nominal_order(board: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by score, highest first; ties keep their input order."""
    order = np.argsort(-board["score"].to_numpy(dtype=float), kind="stable")
    return board.iloc[order].reset_index(drop=True)


def score_intervals(board: pd.DataFrame, level: float = LEVEL):
    """Each row's score interval.

    Counts and proportion rows: the Wilson score interval at ``successes`` of
    ``n`` (:func:`evalbars.stats.intervals.wilson_interval`; fractional counts are
    evaluated at the fractional proportion). SE rows: :math:`\\hat s \\pm z\\,se`
    with :math:`z = \\Phi^{-1}((1 + level)/2)`, not clipped to [0, 1].

    Returns
    -------
    low, high : ndarray

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and
       statistical inference. JASA 22, 209-212.
    .. [2] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation
       for a binomial proportion. Statistical Science 16, 101-133.
    """
    is_se = (board["form"] == "se").to_numpy()
    score = board["score"].to_numpy(dtype=float)
    se = board["se"].to_numpy(dtype=float)
    k = np.where(is_se, 0.0, board["successes"].to_numpy(dtype=float))
    n = np.where(is_se, 1.0, board["n"].to_numpy(dtype=float))
    wilson_low, wilson_high = wilson_interval(k, n, level)
    z = z_for_level(level)
    return (
        np.where(is_se, score - z * se, wilson_low),
        np.where(is_se, score + z * se, wilson_high),
    )


def adjacent_gaps(board: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """Gap between each system and the next one in the given order, with its interval.

    Parameters
    ----------
    board : DataFrame
        Rows in nominal order (:func:`parse_leaderboard` layout).
    level : float
        Confidence level.

    Returns
    -------
    DataFrame
        ``gap, gap_low, gap_high, separated, pair_kind`` (one row per system; the
        last row's values are missing). ``pair_kind`` is ``proportions``, ``se``
        or ``mixed``.

    Notes
    -----
    - Two count/proportion rows: Newcombe's hybrid score interval (method 10), i.e.
      :func:`evalbars.stats.intervals.mover_difference` with Wilson bounds:
      :math:`L = d - \\sqrt{(p_a - l_a)^2 + (u_b - p_b)^2}`,
      :math:`U = d + \\sqrt{(u_a - p_a)^2 + (p_b - l_b)^2}` with Wilson bounds.
    - Two SE rows: the normal difference interval
      :math:`d \\pm z\\sqrt{se_a^2 + se_b^2}`.
    - A proportion next to an SE row (our decision): the same MOVER formula
      (Zou and Donner 2008), of which both rules above are special cases, fed with
      the proportion's Wilson bounds and the SE row's normal bounds. It keeps the
      Wilson interval's asymmetry near 0 and 1 on the proportion's side and
      reduces to the normal difference where the proportion's interval is
      symmetric. The row's note says the pair is mixed.

    ``separated`` is True when the interval excludes zero. Two 95% intervals can
    overlap while the difference is separated (non-overlap is roughly a 99%
    test; Schenker and Gentleman 2001).

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Stat Med 17, 873-890.
    .. [2] Zou, G. Y. and Donner, A. (2008). Construction of confidence limits
       about effect measures: a general approach. Stat Med 27, 1693-1702.
    .. [3] Schenker, N. and Gentleman, J. F. (2001). On judging the significance of
       differences by examining the overlap between confidence intervals. The
       American Statistician 55, 182-186.
    """
    score = board["score"].to_numpy(dtype=float)
    k = len(score)
    gap = np.full(k, np.nan)
    gap_low = np.full(k, np.nan)
    gap_high = np.full(k, np.nan)
    kind = np.full(k, "", dtype=object)
    if k > 1:
        low, high = score_intervals(board, level)
        is_se = (board["form"] == "se").to_numpy()
        a, b = np.arange(k - 1), np.arange(1, k)
        # One formula for every pair: the score intervals are Wilson for proportions and
        # normal for SE rows, so MOVER gives Newcombe, the normal difference, or the mix.
        gap_low[:-1], gap_high[:-1] = mover_difference(
            score[a], low[a], high[a], score[b], low[b], high[b]
        )
        both_proportions = ~is_se[a] & ~is_se[b]
        gap[:-1] = score[a] - score[b]
        kind[:-1] = np.where(
            both_proportions, "proportions", np.where(is_se[a] & is_se[b], "se", "mixed")
        )
    separated = pd.array(np.where(np.isnan(gap_low), False, gap_low > 0), dtype="boolean")
    separated[np.isnan(gap)] = pd.NA
    return pd.DataFrame(
        {
            "gap": gap,
            "gap_low": gap_low,
            "gap_high": gap_high,
            "separated": separated,
            "pair_kind": kind,
        }
    )


def tiers_from_separated(separated) -> np.ndarray:
    """Tier of each system: 1 + the number of separated adjacent pairs above it.

    ``separated[i]`` says whether system i is separated from system i + 1 (the
    last entry is ignored).

    Examples
    --------
    >>> tiers_from_separated([False, False, True, False, True, None]).tolist()
    [1, 1, 1, 2, 2, 3]
    """
    flags = np.array([bool(s) if s is not None and s is not pd.NA else False for s in separated])
    tiers = np.ones(len(flags), dtype=int)
    if len(flags) > 1:
        tiers[1:] += np.cumsum(flags[:-1])
    return tiers


# --- Plausible ranks -----------------------------------------------------------------------------


def min_ranks(samples: np.ndarray) -> np.ndarray:
    """Rank of each column within each row, 1 = highest; ties share the better (smaller) rank.

    What ``scipy.stats.rankdata(-samples, axis=1, method="min")`` returns, from one
    argsort per row: after sorting, a tie group's rank is the position of its
    first member (without ties, every position is a rank).
    """
    samples = np.ascontiguousarray(samples)
    worlds, systems = samples.shape
    # Sorted positions as flat indices into the matrix: one gather and one scatter.
    flat = np.argsort(-samples, axis=1)
    flat += np.arange(worlds)[:, None] * systems
    flat = flat.ravel()
    ordered = samples.ravel()[flat].reshape(worlds, systems)
    tied = ordered[:, 1:] == ordered[:, :-1]
    group_rank = np.broadcast_to(np.arange(1, systems + 1, dtype=np.int32), samples.shape)
    if tied.any():
        starts = np.ones(samples.shape, dtype=bool)
        starts[:, 1:] = ~tied
        group_rank = np.maximum.accumulate(np.where(starts, group_rank, 0), axis=1)
    ranks = np.empty(samples.size, dtype=np.int32)
    ranks[flat] = group_rank.ravel()
    return ranks.reshape(samples.shape)


def _quantile_positions(worlds: int, level: float) -> tuple[int, int]:
    """1-based order statistics ``(k_low, k_high)`` of a rank's central ``level`` range.

    With :math:`t_- = (1 - level)/2 \\cdot W` and :math:`t_+ = (1 + level)/2 \\cdot W`
    over W worlds, the smallest rank r with :math:`F(r) \\ge t` is the
    :math:`\\lceil t \\rceil`-th smallest rank (inverse-CDF quantile); the factor
    1 - 1e-12 keeps a product such as 0.025 * 10,000 from rounding up past 250.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    lower = math.ceil((1 - level) / 2 * worlds * (1 - 1e-12))
    upper = math.ceil((1 + level) / 2 * worlds * (1 - 1e-12))
    return max(1, lower), min(worlds, max(1, upper))


def rank_ranges(sample_chunks, worlds: int, level: float = LEVEL) -> pd.DataFrame:
    r"""P(first) and the central rank range of every system, streamed over plausible worlds.

    Parameters
    ----------
    sample_chunks : iterable of ndarray, each (worlds in the chunk, systems)
        Plausible scores; every row is one world (:func:`plausible_scores`, or the
        paired bootstrap's replicates).
    worlds : int
        Total rows over all chunks.
    level : float
        Central coverage of the rank range.

    Returns
    -------
    DataFrame
        ``p_first, rank_low, rank_high``, one row per system.

    Notes
    -----
    Each world is ranked with ties sharing the better rank (several systems can
    be first). ``rank_low`` is the smallest rank r with :math:`F(r) \ge (1 -
    level)/2` and ``rank_high`` the smallest with :math:`F(r) \ge (1 + level)/2`,
    F the system's rank distribution over the worlds, so at least ``level`` of the
    worlds put the system inside ``[rank_low, rank_high]``. These are order
    statistics of each system's ranks (:func:`_quantile_positions`), so only the
    :math:`k_-` smallest and the :math:`W - k_+ + 1` largest ranks seen so far are
    kept: memory is O(systems × (:data:`RANK_BATCH` + (1 - level) × worlds)), never
    systems², and the result equals a full tabulation of the ranks exactly.
    """
    return summarise_ranks((min_ranks(chunk) for chunk in sample_chunks), worlds, level)


#: Worlds whose ranks are gathered before the kept order statistics are updated: each update
#: re-partitions what is kept, so rarer, larger updates cost less (the numbers do not change).
RANK_BATCH = 1024


def summarise_ranks(rank_chunks, worlds: int, level: float = LEVEL) -> pd.DataFrame:
    """:func:`rank_ranges` from ranks already computed (chunks of :func:`min_ranks`)."""
    k_low, k_high = _quantile_positions(int(worlds), level)
    keep_high = int(worlds) - k_high + 1
    smallest = largest = first = None
    pending, seen = [], 0

    def update():
        # Kept ranks as (systems, worlds) rows, so that every partition runs along memory.
        nonlocal smallest, largest
        batch = np.vstack(pending).T
        pending.clear()
        pool = np.hstack([smallest, batch])
        if pool.shape[1] > k_low:
            pool.partition(k_low - 1, axis=1)
            pool = pool[:, :k_low]
        smallest = pool
        pool = np.hstack([largest, batch])
        if pool.shape[1] > keep_high:
            pool.partition(pool.shape[1] - keep_high, axis=1)
            pool = pool[:, -keep_high:]
        largest = pool

    for ranks in rank_chunks:
        seen += len(ranks)
        if first is None:
            smallest = np.empty((ranks.shape[1], 0), dtype=np.int32)
            largest = np.empty((ranks.shape[1], 0), dtype=np.int32)
            first = np.zeros(ranks.shape[1], dtype=np.int64)
        first += (ranks == 1).sum(axis=0)
        pending.append(ranks)
        if sum(len(r) for r in pending) >= RANK_BATCH:
            update()
    if pending:
        update()
    if seen != worlds:
        raise ValueError(f"the chunks held {seen} worlds, not the {worlds} announced")
    return pd.DataFrame(
        {
            "p_first": first / worlds,
            "rank_low": smallest.max(axis=1).astype(np.int64),
            "rank_high": largest.min(axis=1).astype(np.int64),
        }
    )


def anchored_tiers(separated_from, n_systems: int) -> np.ndarray:
    """Tiers that do not chain: each tier starts at the first system separated from its top.

    Parameters
    ----------
    separated_from : callable
        ``separated_from(t)`` returns booleans for the systems ``t + 1, ..., n - 1``:
        is the gap between system t and that system's interval above zero (the
        same difference interval as for neighbours, applied to a non-adjacent pair).
    n_systems : int

    Returns
    -------
    ndarray of int
        Tier of each system, 1-based, in nominal order.

    Notes
    -----
    Adjacent-gap tiers (:func:`tiers_from_separated`, the rank-uncertainty
    calculator's definition) chain: a run of unseparated neighbours can join a
    20% system to a 95% leader when there are many systems. Here the first tier's
    top is the leader; walking down, the first system separated from that top
    starts the next tier and becomes its top, and so on. Every system in a tier
    is unseparated from the tier's top (not necessarily from each other).
    """
    tiers = np.empty(n_systems, dtype=int)
    top, tier = 0, 1
    while top < n_systems:
        separated = np.asarray(separated_from(top), dtype=bool)
        hits = np.flatnonzero(separated)
        end = top + 1 + int(hits[0]) if hits.size else n_systems
        tiers[top:end] = tier
        top, tier = end, tier + 1
    return tiers


def plausible_scores(
    board: pd.DataFrame, draws: int, rng: np.random.Generator, chunk: int = DRAW_CHUNK
):
    """Yield chunks of plausible true scores, shape (worlds, systems).

    Count and proportion rows: the Jeffreys posterior
    :math:`\\mathrm{Beta}(k + 1/2,\\, n - k + 1/2)` (fractional k allowed), which
    stays non-degenerate at 0% and 100%. SE rows: :math:`N(\\hat s, se^2)`. Each
    chunk draws the Beta columns first, then the normal columns, from ``rng``.

    References
    ----------
    .. [1] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation
       for a binomial proportion. Statistical Science 16, 101-133 (the Jeffreys
       interval).
    """
    is_se = (board["form"] == "se").to_numpy()
    score = board["score"].to_numpy(dtype=float)
    k = board["successes"].to_numpy(dtype=float)[~is_se]
    n = board["n"].to_numpy(dtype=float)[~is_se]
    mean, sd = score[is_se], board["se"].to_numpy(dtype=float)[is_se]
    # Jeffreys posteriors, from their one home
    posterior = beta_posterior_parameters(k, n, JEFFREYS_PRIOR)
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        drawn = rng.beta(posterior.alpha, posterior.beta, size=(size, len(k)))
        if not is_se.any():  # no normal columns (and no draws for them): the Beta draws alone
            yield drawn
            continue
        worlds = np.empty((size, len(score)))
        worlds[:, ~is_se] = drawn
        worlds[:, is_se] = rng.normal(mean, sd, size=(size, len(mean)))
        yield worlds


def _check_settings(level: float, draws: int) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    if int(draws) != draws or draws < MIN_DRAWS:
        raise ValueError(
            f"the number of draws must be a whole number of at least {MIN_DRAWS} (the rank range "
            f"and p_first are shares of the draws), got {draws!r}"
        )


def _assemble(board, gaps, summary, tier_anchored) -> pd.DataFrame:
    notes = board["note"].astype(str).tolist()
    kinds = gaps["pair_kind"].tolist()
    for i, kind in enumerate(kinds):
        if kind == "mixed":
            notes[i] = "; ".join(
                x for x in (notes[i], "gap mixes a proportion and an SE row (MOVER interval)") if x
            )
    table = pd.DataFrame(
        {
            "position": np.arange(1, len(board) + 1),
            "name": board["name"].to_numpy(),
            "form": board["form"].to_numpy(),
            "n": board["n"].to_numpy(dtype=float),
            "score": board["score"].to_numpy(dtype=float),
            "ci_low": board["ci_low"].to_numpy(dtype=float),
            "ci_high": board["ci_high"].to_numpy(dtype=float),
            "gap": gaps["gap"].to_numpy(),
            "gap_low": gaps["gap_low"].to_numpy(),
            "gap_high": gaps["gap_high"].to_numpy(),
            "separated": gaps["separated"].array,
            "tier": tiers_from_separated(gaps["separated"].tolist()),
            "tier_anchored": tier_anchored,
            "p_first": summary["p_first"].to_numpy(),
            "rank_low": summary["rank_low"].to_numpy(),
            "rank_high": summary["rank_high"].to_numpy(),
            "note": notes,
        }
    )
    return table[RANK_COLUMNS]


def rank_table(
    board: pd.DataFrame,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = SEED,
) -> RankReport:
    """The unpaired rank-uncertainty calculator on a leaderboard.

    Parameters
    ----------
    board : DataFrame
        From :func:`parse_leaderboard` / :func:`read_leaderboard` (or
        :func:`leaderboard_from_wide`). Rows are put in nominal order: score
        descending, ties in input order.
    level : float
        Confidence level of the score and gap intervals and of the rank range.
    draws : int
        Plausible worlds, drawn by :func:`plausible_scores` from
        ``numpy.random.default_rng(seed)``.
    seed : int
        Same board, level, draws and seed give an identical table.

    Returns
    -------
    RankReport
        ``table`` with :data:`RANK_COLUMNS` and ``headline``.

    Notes
    -----
    Score intervals: :func:`score_intervals`; gaps: :func:`adjacent_gaps`; a new
    tier starts at every separated adjacent pair (no multiplicity adjustment
    across the pairs); ``tier_anchored`` starts a tier at the first system
    separated from the current tier's top instead (:func:`anchored_tiers`), which
    does not chain on long leaderboards. Plausible ranks: every world is ranked
    with ties sharing the better rank, and :func:`rank_ranges` gives ``p_first``
    and the central rank range, streaming over the draws. Every system is treated
    as an independent estimate; systems scored on the same items have positively
    correlated errors, so this is the conservative reading (see
    :func:`paired_rank_table`).

    Examples
    --------
    >>> from evalbars.readings.ranks import parse_leaderboard
    >>> board = parse_leaderboard(pd.DataFrame({"name": ["a", "b"], "correct": [160, 120],
    ...                                         "total": [200, 200]}))
    >>> report = rank_table(board, draws=2000, seed=1)
    >>> report.table[["name", "tier", "rank_low", "rank_high"]].to_dict("list")
    {'name': ['a', 'b'], 'tier': [1, 2], 'rank_low': [1, 2], 'rank_high': [1, 2]}
    """
    _check_settings(level, draws)
    board = _nominal_order(board)
    low, high = score_intervals(board, level)
    board = board.assign(ci_low=low, ci_high=high)
    gaps = adjacent_gaps(board, level)
    score = board["score"].to_numpy(dtype=float)

    def separated_from(top):
        below = slice(top + 1, None)
        gap_low, _ = mover_difference(
            score[top], low[top], high[top], score[below], low[below], high[below]
        )
        return gap_low > 0

    rng = np.random.default_rng(seed)
    summary = rank_ranges(plausible_scores(board, int(draws), rng), int(draws), level)
    table = _assemble(board, gaps, summary, anchored_tiers(separated_from, len(board)))
    method = (
        f"Unpaired: Wilson (or score ± z·se) intervals, Newcombe gap intervals, "
        f"{int(draws):,} Jeffreys/normal draws (seed {seed})."
    )
    return RankReport(table, headline(table), "unpaired", level, int(draws), seed, method)
