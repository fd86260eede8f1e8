"""Figures of a battles run: the ratings with their intervals and tiers, and per-battle against
clustered intervals of every pair.

The ratings figure draws each model's Elo rating with its clustered interval (thick) and its
per-battle interval (thin, grey, just below), coloured by tier (the clustered reading's, max-t over the adjacent
gaps), its compact letters at the right. The per-battle against clustered figure draws every
pair's difference with both intervals one above the other, the clustered one filled where it
separates the pair (Holm over all pairs). At most ``max_systems`` models (and the pairs among
them) are drawn; the title says how many are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.render.figures.style import PALETTE, figure, message_figure

__all__ = ["battle_ratings_figure", "per_battle_vs_clustered_figure"]


def battle_ratings_figure(board: pd.DataFrame, level: float = LEVEL, max_systems: int = 40):
    """Ratings with intervals and tiers of ``battles_leaderboard.csv``
    (:func:`evalbars.readings.battle_board.battle_leaderboard`)."""
    if board.empty:
        return message_figure("No models to draw.")
    total = len(board)
    shown = board.sort_values("position").head(max_systems)
    n = len(shown)
    tiers = int(board["tier"].nunique())
    title = (
        f"{total} models fall in {tiers} tier{'s' if tiers != 1 else ''} under the clustered "
        "reading"
    )
    if total > n:
        title += f"\n(top {n} shown, {total - n} left out)"
    with figure(figsize=(8.0, 0.42 * n + 1.8)) as (fig, ax):
        y = np.arange(n)
        colours = [PALETTE[(int(t) - 1) % len(PALETTE)] for t in shown["tier"]]
        rating = shown["rating"].to_numpy()
        ax.hlines(y + 0.22, shown["ci_low_per_battle"], shown["ci_high_per_battle"],
                  colors="0.45", lw=1.5, label="per battle")  # fmt: skip
        ax.hlines(y, shown["ci_low"], shown["ci_high"], colors=colours, lw=4.5, alpha=0.9,
                  label="clustered")  # fmt: skip
        ax.scatter(rating, y, color="white", edgecolors="0.2", zorder=3, s=28)
        for yi, (_, row) in zip(y, shown.iterrows(), strict=True):
            ax.text(1.01, yi, f"{row['letters']}  tier {row['tier']}", va="center", ha="left",
                    transform=ax.get_yaxis_transform(), family="monospace")  # fmt: skip
        ax.set_yticks(y, shown["model"])
        ax.invert_yaxis()
        ax.set_xlabel(
            f"Elo rating with its {100 * level:g}% interval: clustered (thick, coloured by tier), "
            "per battle (thin, grey)"
        )
        ax.set_title(title)
    return fig


def per_battle_vs_clustered_figure(
    table: pd.DataFrame, level: float = LEVEL, max_systems: int = 40
):
    """Every pair's difference with its per-battle and clustered intervals
    (``battles_naive_vs_blocked.csv``, :func:`evalbars.readings.battles.naive_vs_clustered`)."""
    if table.empty:
        return message_figure("One model: no pair to draw.")
    naive = int(table["separated_per_battle"].sum())
    blocked = int(table["separated_clustered"].sum())
    total = len(table)
    models = list(dict.fromkeys([*table["model_a"], *table["model_b"]]))
    kept = set(models[:max_systems])
    shown = table[table["model_a"].isin(kept) & table["model_b"].isin(kept)].head(3 * max_systems)
    n = len(shown)
    title = (
        f"{naive} of {total} pairs are separated per battle, {blocked} clustered\n"
        "(Holm over all pairs)"
    )
    if total > n:
        title += f"\n({n} pairs shown, {total - n} left out)"
    with figure(figsize=(8.5, 0.36 * n + 2.3)) as (fig, ax):
        y = np.arange(n)
        ax.axvline(0.0, color="0.3", lw=1, ls="--")
        ax.hlines(y - 0.17, shown["ci_low_per_battle"], shown["ci_high_per_battle"],
                  colors=PALETTE[1], lw=2.5, label="per battle")  # fmt: skip
        ax.hlines(y + 0.17, shown["ci_low_clustered"], shown["ci_high_clustered"],
                  colors=PALETTE[0], lw=2.5, label="clustered")  # fmt: skip
        separated = shown["separated_clustered"].to_numpy(dtype=bool)
        ax.scatter(shown["diff"], y, s=26, zorder=3, color=np.where(separated, "0.1", "white"),
                   edgecolors="0.1", label="difference (filled: separated, clustered)")  # fmt: skip
        ax.set_yticks(y, [f"{a} − {b}" for a, b in zip(shown["model_a"], shown["model_b"],
                                                       strict=True)])  # fmt: skip
        ax.invert_yaxis()
        ax.set_xlabel(f"difference in Elo points with its {100 * level:g}% interval")
        fig.legend(loc="outside lower center", ncols=3, fontsize=8)
        ax.set_title(title)
    return fig
