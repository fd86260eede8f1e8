"""Rank figures: a forest plot with tiers shaded, rank ranges with P(first), and an overview.

The forest and rank-range figures draw at most ``max_systems`` systems (the top
of the leaderboard, :data:`MAX_SYSTEMS` by default) so that labels stay
readable; :func:`rank_overview_figure` shows every system, however many, as
score against the width of its plausible rank range.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.readings.ranks.render import percent_text
from evalbars.render.figures.style import PALETTE, figure, percent_axis

__all__ = ["forest_figure", "rank_range_figure", "rank_overview_figure", "MAX_SYSTEMS"]

#: Systems drawn in one figure by default (the config's ``display: max_systems``).
MAX_SYSTEMS = 40


def _readings(table: pd.DataFrame) -> list:
    if "reading" not in table.columns:
        return [("unpaired", table.sort_values("position"))]
    return [
        (r, table[table["reading"] == r].sort_values("position"))
        for r in table["reading"].drop_duplicates()
    ]


def _shown_note(n: int, shown: int) -> str:
    """`` (top 40 of 1,000 shown)`` when a figure leaves systems out, else nothing."""
    return f" (top {shown} of {n:,} shown)" if shown < n else ""


def _tier_finding(readings) -> str:
    """``"1,000 models form 7 tiers unpaired but 5 tiers paired"`` (or "in both readings"; with
    a third reading, the readings that agree named together)."""
    counts = [int(t["tier"].max()) for _, t in readings]
    n = len(readings[0][1])

    def tiers(count: int) -> str:
        return f"{count} tier{'s' if count != 1 else ''}"

    if len(set(counts)) == 1:
        where = {1: "", 2: " in both readings"}.get(len(counts), " in every reading")
        return f"{n:,} models form {tiers(counts[0])}{where}"
    groups: dict[int, list] = {}
    for count, (reading, _) in zip(counts, readings, strict=True):
        groups.setdefault(count, []).append(reading)
    parts = [f"{tiers(c)} {' and '.join(names)}" for c, names in groups.items()]
    return f"{n:,} models form " + " but ".join(parts)


def forest_figure(table: pd.DataFrame, level: float = LEVEL, max_systems: int = MAX_SYSTEMS):
    """Forest plot: each system's score and interval, tiers shaded; one panel per reading.

    Parameters
    ----------
    table : DataFrame
        A rank table, or the two-reading table of :func:`evalbars.readings.ranks.ranks_readings`.
    max_systems : int
        Draw the top ``max_systems`` systems of each reading; the title still
        counts the tiers of all of them.

    Returns
    -------
    matplotlib.figure.Figure
    """
    everything = _readings(table)
    title = _tier_finding(everything)
    total = len(everything[0][1])
    readings = [(r, t[t["position"] <= max_systems]) for r, t in everything]
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
                f"{reading}; dashes mark separated neighbours",
                fontsize=9,
                fontweight="normal",
            )
        for ax in axes[0]:
            ax.invert_yaxis()
        fig.suptitle(title + _shown_note(total, n), fontweight="bold")
    return fig


def rank_range_figure(table: pd.DataFrame, level: float = LEVEL, max_systems: int = MAX_SYSTEMS):
    """Each system's central rank range (left) and P(first) (right), one bar per reading.

    Draws the first reading's top ``max_systems`` systems.

    Returns
    -------
    matplotlib.figure.Figure
    """
    readings = _readings(table)
    total = len(readings[0][1])
    n = min(total, max_systems)
    # One row per system: align every reading on the first reading's order, by name.
    names = readings[0][1]["name"].to_numpy()[:n]
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
        # The shown systems' ranges can reach ranks of systems left out.
        last = max(n, *(int(t["rank_high"].max()) for _, t in aligned))
        if last <= 2 * MAX_SYSTEMS:
            ax_rank.set_xticks(np.arange(1, last + 1, 1 if last <= MAX_SYSTEMS else 5))
        ax_rank.set_xlim(0.4, last + 0.6)
        ax_rank.set_xlabel(f"rank (1 = best){_shown_note(total, n)}")
        ax_rank.grid(axis="y", visible=False)
        ax_first.set_xlim(0, 1.25)
        ax_first.set_xticks([0, 0.5, 1])
        percent_axis(ax_first.xaxis)
        ax_first.set_xlabel("P(first)")
        handles, labels = ax_rank.get_legend_handles_labels()
        # Three readings and the nominal rank do not fit on one line: two columns then.
        ncols = len(labels) if len(labels) <= 3 else 2
        fig.legend(handles, labels, loc="outside lower center", ncols=ncols)
        leaders = {t["name"].iloc[0] for _, t in readings}
        if len(leaders) == 1:
            shares = [f"{percent_text(float(t['p_first'].iloc[0]))} ({r})" for r, t in readings]
            leader = " and ".join(
                [", ".join(shares[:-1]), shares[-1]] if len(shares) > 2 else shares
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


def rank_overview_figure(table: pd.DataFrame, level: float = LEVEL):
    """Every system at once: score against the width of its plausible rank range.

    Each system is one dot per reading at (score, ranks its central rank range
    spans). A leaderboard of any size shows where ranks are settled (width 1:
    the system holds its rank in nearly every plausible world) and where a
    crowd of similar scores leaves dozens of ranks open. The title gives each
    reading's median width.

    Returns
    -------
    matplotlib.figure.Figure
    """
    readings = _readings(table)
    n = len(readings[0][1])
    colours = {"unpaired": PALETTE[0], "paired": PALETTE[2]}
    widths = {r: t["rank_high"] - t["rank_low"] + 1 for r, t in readings}
    medians = {r: float(np.median(w)) for r, w in widths.items()}
    with figure(figsize=(7.5, 4.8)) as (fig, ax):
        for reading, t in readings:
            ax.plot(
                t["score"],
                widths[reading],
                "o",
                color=colours.get(reading, PALETTE[1]),
                markersize=3 if n > 200 else 5,
                alpha=0.6,
                label=f"{reading} (median {medians[reading]:g})",
            )
        percent_axis(ax.xaxis)
        ax.set_xlabel("score")
        ax.set_ylabel(f"ranks in the central {100 * level:g}% range")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left")
        parts = " vs ".join(f"{medians[r]:g} ({r})" for r, _ in readings)
        # Three readings do not fit on one line of the title: break before the numbers.
        joint = "\n" if len(readings) > 2 else " "
        ax.set_title(f"{n:,} systems: a typical rank range spans{joint}{parts}", loc="left")
    return fig
