"""The leaderboard of a battles run: one row per model, its Elo rating with every interval,
its letters, its tier and its rank interval.

Every column is a reading of :mod:`evalbars.readings.battles` on one fit: the ratings and their
model, per-battle and clustered intervals (:func:`evalbars.stats.bradley_terry.elo_ratings`),
the prompt-cluster bootstrap's percentile interval, the compact letters of the clustered
pairwise tests with Holm (:func:`~evalbars.readings.battles.battle_letters`), the tiers under
max-t control over the adjacent gaps (:func:`~evalbars.readings.battles.adjacent_tiers`), the
marginal rank intervals (:func:`~evalbars.readings.battles.rank_intervals`) and, with the
bootstrap, P(first); beside them each model's battles, wins, ties and losses.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA, LEVEL, SEED
from evalbars.readings.battles import (
    adjacent_tiers,
    battle_letters,
    pairwise_table,
    rank_intervals,
)
from evalbars.stats.bradley_terry import ELO_SCALE, BootstrapDraws, BradleyTerryFit, elo_ratings

__all__ = ["BOARD_READINGS", "battle_leaderboard", "battle_board_headline"]

#: The readings whose intervals the board carries (the clustered one is the board's own).
BOARD_READINGS = ("clustered", "per_battle", "model")


def _bootstrap_interval(draws: BootstrapDraws, order, anchor, anchor_rating, level):
    """Percentile interval of each model's rating over the bootstrap's replicates."""
    theta = draws.ok()
    if anchor is None:
        centred = theta - theta.mean(axis=1, keepdims=True)
    else:
        centred = theta - theta[:, [list(draws.models).index(anchor)]]
    ratings = anchor_rating + ELO_SCALE * centred
    tail = (1 - level) / 2
    low, high = np.quantile(ratings, [tail, 1 - tail], axis=0)
    return low[order], high[order]


def battle_leaderboard(
    fit: BradleyTerryFit,
    *,
    draws: BootstrapDraws | None = None,
    per_model: pd.DataFrame | None = None,
    alpha: float = ALPHA,
    level: float = LEVEL,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    seed: int = SEED,
) -> pd.DataFrame:
    """One row per model, best first (module docstring).

    Parameters
    ----------
    fit : BradleyTerryFit
        A fit with the clustered covariance (:func:`evalbars.readings.battles.fit_battles`).
    draws : BootstrapDraws, optional
        The prompt-cluster bootstrap (:func:`evalbars.stats.bradley_terry.cluster_bootstrap`):
        its percentile intervals and P(first).
    per_model : DataFrame, optional
        ``model, battles, wins, ties, losses``
        (:attr:`evalbars.data.battles.BattlesPreview.per_model`).
    alpha, level
        Level of the letters, tiers and rank intervals; confidence level of the intervals.
    anchor, anchor_rating
        The model rated ``anchor_rating`` (None: the mean rating is).
    seed : int
        Seed of the simulated max-t critical values.

    Returns
    -------
    DataFrame
        ``position, model, rating`` (Elo), ``se, ci_low, ci_high`` (clustered),
        ``ci_low_<reading>, ci_high_<reading>`` for ``per_battle``, ``model`` and
        ``bootstrap``, ``letters``, ``tier``, ``gap_to_next``, ``separated_from_next``,
        ``rank_low, rank_high`` (and ``p_first`` with ``draws``), and ``battles, wins, ties,
        losses`` with ``per_model``.

    Examples
    --------
    >>> from evalbars.data.battles import read_battles
    >>> from evalbars.readings.battles import fit_battles
    >>> fit = fit_battles(read_battles("tests/data/battles/clustered.csv"))
    >>> battle_leaderboard(fit)[["model", "tier", "rank_low", "rank_high"]].values.tolist()[:2]
    [['model-a', 1, 1, 4], ['model-b', 1, 1, 5]]
    """
    tiers = adjacent_tiers(fit, "clustered", alpha=alpha, seed=seed)
    order = [fit.index(m) for m in tiers["model"]]
    board = pd.DataFrame({"position": np.arange(1, len(order) + 1), "model": tiers["model"]})
    for reading in BOARD_READINGS:
        ratings = elo_ratings(
            fit, reading, anchor=anchor, anchor_rating=anchor_rating, level=level
        ).set_index("model")
        rows = ratings.loc[board["model"]]
        if reading == "clustered":
            board["rating"] = rows["rating"].to_numpy()
            board["se"] = rows["se"].to_numpy()
            board["ci_low"], board["ci_high"] = (
                rows["ci_low"].to_numpy(),
                rows["ci_high"].to_numpy(),
            )
        else:
            board[f"ci_low_{reading}"] = rows["ci_low"].to_numpy()
            board[f"ci_high_{reading}"] = rows["ci_high"].to_numpy()
    if draws is not None and len(draws.ok()):
        low, high = _bootstrap_interval(draws, order, anchor, anchor_rating, level)
    else:
        low = high = np.full(len(order), np.nan)
    board["ci_low_bootstrap"], board["ci_high_bootstrap"] = low, high
    pairs = pairwise_table(fit, "clustered", alpha=alpha)
    letters = battle_letters(pairs, board["model"]).set_index("model")["letters"]
    board["letters"] = letters.loc[board["model"]].to_numpy()
    board["tier"] = tiers["tier"].to_numpy()
    board["gap_to_next"] = tiers["gap"].to_numpy()
    board["separated_from_next"] = tiers["separated"].to_numpy()
    ranks = rank_intervals(fit, "clustered", alpha=alpha, seed=seed, draws=draws)
    ranks = ranks.set_index("model").loc[board["model"]]
    board["rank_low"] = ranks["rank_low"].to_numpy()
    board["rank_high"] = ranks["rank_high"].to_numpy()
    board["p_first"] = ranks["p_first"].to_numpy() if "p_first" in ranks else np.nan
    if per_model is not None:
        counts = per_model.set_index("model").loc[board["model"]]
        for column in ("battles", "wins", "ties", "losses"):
            board[column] = counts[column].to_numpy()
    board.attrs["critical"] = tiers.attrs["critical"]
    return board


def battle_board_headline(board: pd.DataFrame, separations: dict | None = None) -> str:
    """The board in one sentence: how many tiers the clustered reading draws, and how many
    pairs each reading separates.

    Examples
    --------
    >>> board = pd.DataFrame({"model": ["a", "b", "c"], "tier": [1, 1, 2]})
    >>> battle_board_headline(board, {"per_battle": 2, "clustered": 1})
    '3 models in 2 tiers (clustered reading, max-t over the adjacent gaps); of 3 pairs, 2 are separated per battle and 1 clustered (Holm).'
    """
    k = len(board)
    tiers = int(board["tier"].nunique()) if k else 0
    text = (
        f"{k} model{'s' if k != 1 else ''} in {tiers} tier{'s' if tiers != 1 else ''} "
        "(clustered reading, max-t over the adjacent gaps)"
    )
    if separations is not None:
        pairs = k * (k - 1) // 2
        naive, blocked = separations["per_battle"], separations["clustered"]
        text += (
            f"; of {pairs:,} pair{'s' if pairs != 1 else ''}, {naive:,} "
            f"{'is' if naive == 1 else 'are'} separated per battle and {blocked:,} clustered (Holm)"
        )
    return text + "."
