"""Rank figures: a forest plot with tiers shaded, and rank ranges with P(first)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..ranks.unpaired import DEFAULT_LEVEL, percent_text
from .style import PALETTE, figure, percent_axis

__all__ = ["forest_figure", "rank_range_figure"]


def _readings(table: pd.DataFrame) -> list:
    if "reading" not in table.columns:
        return [("unpaired", table)]
    return [
        (r, table[table["reading"] == r].sort_values("position"))
        for r in table["reading"].drop_duplicates()
    ]


def _tier_finding(readings) -> str:
    parts = [
        f"{int(t['tier'].max())} tier{'s' if t['tier'].max() != 1 else ''} {r}" for r, t in readings
    ]
    n = len(readings[0][1])
    return f"{n} models form " + (" but ".join(parts) if len(parts) == 2 else parts[0])


def forest_figure(table: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Forest plot: every system's score and interval, tiers shaded; one panel per reading.

    Parameters
    ----------
    table : DataFrame
        A rank table, or the two-reading table of :func:`ranks_readings`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    readings = _readings(table)
    n = len(readings[0][1])
    # Each panel keeps its own y axis: with incomplete data the readings can order the
    # systems differently, and tiers are runs of neighbours in each reading's own order.
    with figure(1, len(readings), figsize=(5.2 * len(readings), 0.55 * n + 1.8), squeeze=False) as (
        fig,
        axes,
    ):
        for ax, (reading, t) in zip(axes[0], readings, strict=True):
            y = np.arange(n)
            for tier, rows in t.groupby("tier"):
                ys = y[rows["position"].to_numpy() - 1]
                ax.axhspan(
                    ys.min() - 0.45, ys.max() + 0.45, color="0.88" if tier % 2 else "0.96", zorder=0
                )
                ax.text(
                    0.99,
                    ys.mean(),
                    f"tier {tier}",
                    transform=ax.get_yaxis_transform(),
                    ha="right",
                    va="center",
                    fontsize=9,
                    color="0.3",
                )
            colour = PALETTE[0] if reading == "unpaired" else PALETTE[2]
            ax.errorbar(
                t["score"],
                y,
                xerr=[t["score"] - t["ci_low"], t["ci_high"] - t["score"]],
                fmt="o",
                color=colour,
                ecolor=colour,
                capsize=3,
                markersize=5,
                zorder=3,
            )
            for i, row in enumerate(t.itertuples(index=False)):
                if i < n - 1 and bool(row.separated):
                    ax.axhline(i + 0.5, color=PALETTE[3], linewidth=1.2, linestyle="--", zorder=2)
            ax.set_yticks(y, t["name"])
            percent_axis(ax.xaxis)
            ax.set_xlabel(f"score with {100 * level:g}% interval")
            ax.set_title(
                f"{reading}: dashed line = separated neighbours", fontsize=9, fontweight="normal"
            )
        for ax in axes[0]:
            ax.invert_yaxis()
        fig.suptitle(_tier_finding(readings), fontweight="bold")
    return fig


def rank_range_figure(table: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Each system's central rank range (left) and P(first) (right), one bar per reading.

    Returns
    -------
    matplotlib.figure.Figure
    """
    readings = _readings(table)
    n = len(readings[0][1])
    # One row per system: align every reading on the first reading's order, by name.
    names = readings[0][1]["name"].to_numpy()
    aligned = [(r, t.set_index("name").loc[names].reset_index()) for r, t in readings]
    colours = {"unpaired": PALETTE[0], "paired": PALETTE[2]}
    height = 0.7 / len(readings)
    offsets = (np.arange(len(readings)) - (len(readings) - 1) / 2) * height
    with figure(
        1, 2, figsize=(8.5, 0.6 * n + 2.0), sharey=True, gridspec_kw={"width_ratios": [3, 1.4]}
    ) as (fig, (ax_rank, ax_first)):
        y = np.arange(n)
        for offset, (reading, t) in zip(offsets, aligned, strict=True):
            colour = colours.get(reading, PALETTE[1])
            ax_rank.barh(
                y + offset,
                t["rank_high"] - t["rank_low"] + 0.8,
                left=t["rank_low"] - 0.4,
                height=height * 0.9,
                color=colour,
                alpha=0.85,
                label=f"{reading}: central {100 * level:g}% rank range",
            )
            ax_first.barh(y + offset, t["p_first"], height=height * 0.9, color=colour, alpha=0.85)
            for yi, p in zip(y + offset, t["p_first"], strict=True):
                ax_first.text(
                    min(p, 1.0) + 0.02,
                    yi,
                    percent_text(float(p)),
                    va="center",
                    fontsize=8,
                    color=colour,
                )
        ax_rank.plot(y + 1, y, "k|", markersize=16, markeredgewidth=2, label="nominal rank")
        ax_rank.set_yticks(y, names)
        ax_rank.invert_yaxis()
        ax_rank.set_xticks(np.arange(1, n + 1))
        ax_rank.set_xlim(0.4, n + 0.6)
        ax_rank.set_xlabel("rank (1 = best)")
        ax_rank.grid(axis="y", visible=False)
        ax_first.set_xlim(0, 1.25)
        ax_first.set_xticks([0, 0.5, 1])
        percent_axis(ax_first.xaxis)
        ax_first.set_xlabel("P(first)")
        handles, labels = ax_rank.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        leaders = {t["name"].iloc[0] for _, t in readings}
        if len(leaders) == 1:
            leader = " and ".join(
                f"{percent_text(float(t['p_first'].iloc[0]))} ({r})" for r, t in readings
            )
            title = f"{names[0]} is first in {leader} of plausible worlds"
        else:
            title = (
                "; ".join(
                    f"{r}: {t['name'].iloc[0]} first in {percent_text(float(t['p_first'].iloc[0]))}"
                    for r, t in readings
                )
                + " of plausible worlds"
            )
        fig.suptitle(title, fontweight="bold")
    return fig
