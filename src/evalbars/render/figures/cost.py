"""The cost-accuracy frontier with uncertainty.

Each costed model at its mean cost per question (horizontal, log scale when the costs span more
than a factor of 10) and its accuracy (vertical), with both intervals drawn
(``cost.csv``: ``cost_low``/``cost_high`` and ``accuracy_low``/``accuracy_high``). The models of
the set that covers the true frontier (``frontier.csv``'s ``in_frontier_set``) are in colour and
named; the observed frontier is joined by a step line; the others, each significantly less
accurate and costlier than some model, are grey (above 200 models, as dots without their
intervals). At most ``max_systems`` models are named (the set's most accurate); every model is
drawn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.render.figures.best import shorten_names
from evalbars.render.figures.style import PALETTE, figure, message_figure, percent_axis

__all__ = ["frontier_figure"]


def _title(frontier: pd.DataFrame, alpha: float) -> str:
    kept = frontier.loc[frontier["in_frontier_set"].astype(bool), "model"].astype(str).tolist()
    level = f"{100 * (1 - alpha):g}%"
    if len(kept) == len(frontier):
        return (
            f"No model is shown to cost more for less:\nall {len(kept)} may be on the "
            f"cost-accuracy frontier ({level})"
        )
    return (
        f"{len(kept)} of {len(frontier)} models may be on the cost-accuracy frontier ({level}):"
        f"\n{shorten_names(kept)}"
    )


#: Above this many models, those outside the frontier set are drawn as dots without intervals.
_INTERVALS_UP_TO = 200


def frontier_figure(
    cost: pd.DataFrame, frontier: pd.DataFrame, alpha: float = ALPHA, max_systems: int = 40
):
    """The frontier figure of ``cost.csv`` and ``frontier.csv``
    (:func:`evalbars.readings.leaderboard.cost.cost_readings`).

    Parameters
    ----------
    cost, frontier : DataFrame
        The two tables, one row per costed model.
    alpha : float
        The frontier set's error rate (named in the title).
    max_systems : int
        Most models named in the figure.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if cost.empty:
        return message_figure("No cost-accuracy frontier: no model has a cost on shared questions.")
    board = cost.merge(frontier[["model", "on_frontier", "in_frontier_set"]], on="model")
    level = 1 - alpha
    kept = board["in_frontier_set"].astype(bool).to_numpy()
    x = board["mean_cost"].to_numpy(dtype=float)
    y = board["accuracy"].to_numpy(dtype=float)
    positive = x[x > 0]
    log_scale = positive.size > 0 and positive.max() / positive.min() > 10
    with figure(figsize=(8.0, 5.6)) as (fig, ax):
        crowded = len(board) > _INTERVALS_UP_TO
        if crowded and (~kept).any():
            part = board[~kept]
            ax.scatter(part["mean_cost"], part["accuracy"], s=4, color="0.7", zorder=2, lw=0)
        for chosen, colour, order in ((~kept, "0.65", 2), (kept, PALETTE[0], 3)):
            if not chosen.any() or (crowded and colour != PALETTE[0]):
                continue
            part = board[chosen]
            ax.errorbar(
                part["mean_cost"],
                part["accuracy"],
                xerr=[
                    part["mean_cost"] - part["cost_low"],
                    part["cost_high"] - part["mean_cost"],
                ],
                yerr=[
                    part["accuracy"] - part["accuracy_low"],
                    part["accuracy_high"] - part["accuracy"],
                ],
                fmt="o",
                color=colour,
                ecolor=colour,
                elinewidth=1.2,
                capsize=2,
                ms=5,
                zorder=order,
            )
        on = board[board["on_frontier"].astype(bool)].sort_values("mean_cost")
        ax.step(
            on["mean_cost"],
            on["accuracy"],
            where="post",
            color=PALETTE[1],
            lw=1.5,
            zorder=1,
            label="observed frontier",
        )
        named = board[kept].sort_values("accuracy", ascending=False).head(max_systems)
        for _, row in named.iterrows():
            ax.annotate(
                str(row["model"]),
                (row["mean_cost"], row["accuracy"]),
                xytext=(5, 4),
                textcoords="offset points",
                fontsize=8,
                color=PALETTE[0],
            )
        if log_scale:
            ax.set_xscale("log")
        percent_axis(ax.yaxis)
        ax.set_xlabel(f"mean cost per question, dollars ({100 * level:g}% interval)")
        ax.set_ylabel(f"accuracy ({100 * level:g}% interval)")
        ax.plot([], [], "o", color=PALETTE[0], label="in the set that covers the true frontier")
        ax.plot([], [], "o", color="0.65", label="less accurate and costlier than another")
        fig.legend(loc="outside lower center", ncols=3, fontsize=8)
        fig.suptitle(_title(board, alpha))
        if np.isfinite(y).all() and len(y):
            ax.margins(x=0.08, y=0.08)
    return fig
