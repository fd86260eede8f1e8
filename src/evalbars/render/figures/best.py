"""The confidence set for the best model: Hsu's constrained MCB intervals, the set highlighted.

One row per system, best first: the interval of its true score minus the best true score of the
others (:func:`evalbars.stats.best.sets.best_set`'s ``mcb_low`` and ``mcb_high``), simultaneous
at the set's level. A system is in the confidence set for the best when its interval reaches
above 0 (drawn in colour); a system whose interval is :math:`[0, D^+]` is the best (the set is
that system alone). A tag marks the systems in the confidence set for the top k. At most
``max_systems`` systems are drawn, the top of the board (every member of the set is among them
unless the set is larger); the title says how many are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.render.figures.style import PALETTE, figure, message_figure

__all__ = ["best_set_figure", "shorten_names"]


def shorten_names(names, width: int = 55) -> str:
    """Names joined by commas, as many as fit in ``width`` characters, then "and N more"."""
    text, shown = "", 0
    for name in names:
        candidate = f"{text}, {name}" if text else str(name)
        if len(candidate) > width and shown:
            break
        text, shown = candidate, shown + 1
    return text + (f" and {len(names) - shown} more" if shown < len(names) else "")


def _title(table: pd.DataFrame, alpha: float) -> str:
    members = table.loc[table["in_best_set"].astype(bool), "model"].astype(str).tolist()
    level = f"{100 * (1 - alpha):g}%"
    if len(members) == 1:
        return (
            f"{members[0]} is the best\n(the confidence set for the best at {level}, "
            "Hsu's MCB, is this system alone)"
        )
    return (
        f"The best is one of {len(members)} of {len(table)} systems: {shorten_names(members)}"
        f"\n(the confidence set for the best at {level}, Hsu's MCB)"
    )


def best_set_figure(table: pd.DataFrame, alpha: float = ALPHA, max_systems: int = 40):
    """MCB intervals of a leaderboard table (:func:`evalbars.readings.leaderboard.table.leaderboard_table`),
    the confidence set for the best in colour.

    Parameters
    ----------
    table : DataFrame
        ``leaderboard.csv``: ``position, model, in_best_set, mcb_low, mcb_high, top_k,
        in_top_k_set``.
    alpha : float
        The sets' error rate (named in the title).
    max_systems : int
        Most systems drawn (the top of the board).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if table.empty or table["in_best_set"].isna().all():
        return message_figure(
            "No confidence set for the best: the systems share fewer than two questions."
        )
    table = table.sort_values("position")
    total = len(table)
    shown = table.head(max_systems)
    n = len(shown)
    title = _title(table, alpha)
    left_out = total - n
    if left_out:
        outside = int(table.iloc[n:]["in_best_set"].astype(bool).sum())
        title += f"\n(top {n} shown; {left_out} left out, {outside} of them in the set)"
    k = int(table["top_k"].iloc[0])
    with figure(figsize=(8.0, 0.38 * n + 1.9)) as (fig, ax):
        y = np.arange(n)
        low = 100 * shown["mcb_low"].to_numpy(dtype=float)
        high = 100 * shown["mcb_high"].to_numpy(dtype=float)
        member = shown["in_best_set"].astype(bool).to_numpy()
        colours = np.where(member, PALETTE[0], "0.6")
        ax.hlines(y, low, high, colors=colours, lw=5, alpha=0.85)
        ax.plot(high, y, "|", color="0.25", ms=10)
        ax.plot(low, y, "|", color="0.25", ms=10)
        ax.axvline(0.0, color="0.2", lw=1, ls="--")
        if k < total:
            for yi, in_top in zip(y, shown["in_top_k_set"].astype(bool), strict=True):
                if in_top:
                    ax.text(
                        1.01,
                        yi,
                        f"top-{k} set",
                        transform=ax.get_yaxis_transform(),
                        va="center",
                        ha="left",
                        fontsize=8,
                        color=PALETTE[2],
                    )
        labels = [
            f"{model} ●" if m else str(model)
            for model, m in zip(shown["model"], member, strict=True)
        ]
        ax.set_yticks(y, labels)
        for tick, m in zip(ax.get_yticklabels(), member, strict=True):
            tick.set_color(PALETTE[0] if m else "0.35")
            tick.set_fontweight("bold" if m else "normal")
        ax.invert_yaxis()
        ax.set_xlabel(
            "true score minus the best true score of the others, points\n"
            f"(simultaneous {100 * (1 - alpha):g}% intervals; coloured, ●: in the set, "
            "the interval reaches above 0)"
        )
        fig.suptitle(title)
    return fig
