"""The unpaired rank-uncertainty calculator: score intervals, separated neighbours, tiers, ranks.

Every system is an independent estimate (the rank-uncertainty calculator's
reading): Wilson intervals (or score ± z·se), Newcombe/MOVER intervals for the
gaps between neighbours, tiers, and plausible ranks from Jeffreys posterior draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ..intervals import mover_difference, wilson_interval, z_for_level

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "DEFAULT_LEVEL",
    "DRAW_CHUNK",
    "RANK_COLUMNS",
    "RankReport",
    "score_intervals",
    "adjacent_gaps",
    "tiers_from_separated",
    "rank_counts",
    "rank_summary",
    "plausible_scores",
    "headline",
    "percent_text",
    "rank_table",
]

#: Plausible worlds drawn per system when no draw count is given.
DEFAULT_DRAWS = 10_000
#: Seed of the plausible-world generator when none is given.
DEFAULT_SEED = 2024
#: Confidence level of intervals and rank ranges when none is given.
DEFAULT_LEVEL = 0.95
#: Plausible worlds (or bootstrap replicates) generated and ranked at a time. It bounds
#: memory (a chunk of the bootstrap holds DRAW_CHUNK x questions counts) and is a fixed
#: constant, so results depend on the seed and the number of draws only.
DRAW_CHUNK = 512
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
    "p_first",
    "rank_low",
    "rank_high",
    "note",
]


def _nominal_order(board: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by score, highest first; ties keep their input order."""
    order = np.argsort(-board["score"].to_numpy(dtype=float), kind="stable")
    return board.iloc[order].reset_index(drop=True)


def score_intervals(board: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Each row's score interval.

    Counts and proportion rows: the Wilson score interval at ``successes`` of
    ``n`` (:func:`evalbars.intervals.wilson_interval`; fractional counts are
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


def adjacent_gaps(board: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
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
    - Two count/proportion rows: Newcombe's hybrid score interval (method 10),
      :func:`evalbars.intervals.newcombe_interval`, i.e. :func:`evalbars.intervals.mover_difference`
      with Wilson bounds:
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


def _min_ranks(samples: np.ndarray) -> np.ndarray:
    """Rank of each column within each row, 1 = highest; ties share the better (smaller) rank."""
    return stats.rankdata(-samples, axis=1, method="min").astype(np.int64)


def rank_counts(sample_chunks, n_systems: int) -> np.ndarray:
    """Tabulate ranks over plausible worlds.

    Parameters
    ----------
    sample_chunks : iterable of ndarray, each (worlds, n_systems)
        Plausible scores; every row is one world.
    n_systems : int

    Returns
    -------
    ndarray, shape (n_systems, n_systems), int
        ``counts[i, r - 1]``: worlds in which system i has rank r (ties share
        the better rank, so a world can give rank 1 to several systems).
    """
    counts = np.zeros(n_systems * n_systems, dtype=np.int64)
    offsets = np.arange(n_systems) * n_systems
    for chunk in sample_chunks:
        ranks = _min_ranks(chunk)
        counts += np.bincount((ranks - 1 + offsets).ravel(), minlength=n_systems * n_systems)
    return counts.reshape(n_systems, n_systems)


def rank_summary(counts: np.ndarray, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """P(first) and the central rank range from a rank-count matrix (:func:`rank_counts`).

    ``rank_low`` is the smallest rank r with :math:`F(r) \\ge (1 - level)/2` and
    ``rank_high`` the smallest with :math:`F(r) \\ge (1 + level)/2`, where F is the
    system's rank distribution over the worlds (inverse-CDF quantiles), so at least
    ``level`` of the worlds put the system inside ``[rank_low, rank_high]``.

    Returns
    -------
    DataFrame
        ``p_first, rank_low, rank_high``, one row per system.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    counts = np.asarray(counts)
    worlds = counts[0].sum()
    cumulative = np.cumsum(counts, axis=1)
    # Integer comparison with a tolerance for the float product level * worlds.
    lower_target = (1 - level) / 2 * worlds * (1 - 1e-12)
    upper_target = (1 + level) / 2 * worlds * (1 - 1e-12)
    rank_low = 1 + np.argmax(cumulative >= lower_target, axis=1)
    rank_high = 1 + np.argmax(cumulative >= upper_target, axis=1)
    return pd.DataFrame(
        {"p_first": counts[:, 0] / worlds, "rank_low": rank_low, "rank_high": rank_high}
    )


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
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        worlds = np.empty((size, len(score)))
        worlds[:, ~is_se] = rng.beta(k + 0.5, n - k + 0.5, size=(size, len(k)))
        worlds[:, is_se] = rng.normal(mean, sd, size=(size, len(mean)))
        yield worlds


@dataclass(frozen=True)
class RankReport:
    """A rank table with its headline and the settings that produced it.

    Attributes
    ----------
    table : DataFrame
        :data:`RANK_COLUMNS`, one row per system in nominal order.
    headline : str
        ``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.
    reading : str
        ``unpaired`` or ``paired``.
    level : float
    draws : int
        Plausible worlds (Jeffreys/normal draws, or bootstrap replicates).
    seed : int
    method : str
        One sentence on how the worlds were drawn and the gaps tested.
    """

    table: pd.DataFrame
    headline: str
    reading: str
    level: float
    draws: int
    seed: int
    method: str

    @property
    def n_tiers(self) -> int:
        return int(self.table["tier"].max())


def _check_settings(level: float, draws: int) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    if int(draws) != draws or draws < 1:
        raise ValueError(f"the number of draws must be a positive integer, got {draws!r}")


def percent_text(p: float) -> str:
    """A share as a whole percentage; never rounds a share below 1 up to 100% (or above 0 to 0%)."""
    if 0.995 <= p < 1:
        return ">99%"
    if 0 < p < 0.005:
        return "<1%"
    return f"{100 * p:.0f}%"


def headline(table: pd.DataFrame) -> str:
    """``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.

    Examples
    --------
    >>> t = pd.DataFrame({"name": ["a", "b"], "tier": [1, 2], "p_first": [0.9712, 0.0288]})
    >>> headline(t)
    '2 systems, 2 tiers; the leader (a) is first in 97% of plausible worlds'
    """
    n = len(table)
    tiers = int(table["tier"].max())
    leader = table.iloc[0]
    return (
        f"{n} system{'s' if n != 1 else ''}, {tiers} tier{'s' if tiers != 1 else ''}; "
        f"the leader ({leader['name']}) is first in {percent_text(float(leader['p_first']))} "
        "of plausible worlds"
    )


def _assemble(board, gaps, summary) -> pd.DataFrame:
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
            "p_first": summary["p_first"].to_numpy(),
            "rank_low": summary["rank_low"].to_numpy(),
            "rank_high": summary["rank_high"].to_numpy(),
            "note": notes,
        }
    )
    return table[RANK_COLUMNS]


def rank_table(
    board: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
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
    across the pairs). Plausible ranks: every world is ranked with ties sharing
    the better rank, and :func:`rank_summary` gives ``p_first`` and the central
    rank range. Every system is treated as an independent estimate; systems
    scored on the same items have positively correlated errors, so this is the
    conservative reading (see :func:`paired_rank_table`).

    Examples
    --------
    >>> from evalbars.ranks import parse_leaderboard
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
    rng = np.random.default_rng(seed)
    counts = rank_counts(plausible_scores(board, int(draws), rng), len(board))
    table = _assemble(board, gaps, rank_summary(counts, level))
    method = (
        f"Unpaired: Wilson (or score ± z·se) intervals, Newcombe gap intervals, "
        f"{int(draws):,} Jeffreys/normal draws (seed {seed})."
    )
    return RankReport(table, headline(table), "unpaired", level, int(draws), seed, method)
