"""The leaderboard-verdicts figure: the board with intervals and letters, and the resolution strip.

Left panel: each system's score with its interval and its compact letters (systems sharing
a letter are not separated after Holm). Right panel, a strip between the rows: each
adjacent pair's resolution ratio (questions its gap needs over questions available, log
scale), marked where the pair is unresolved (ratio > 1). At most ``max_systems`` systems
are drawn, the top of the board; the title says how many are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.readings.leaderboard.letters import letter_sets
from evalbars.render.figures.style import PALETTE, figure, message_figure, percent_axis

__all__ = ["verdicts_figure"]


def verdicts_figure(table: pd.DataFrame, level: float = LEVEL, max_systems: int = 40):
    """Board and resolution strip of a leaderboard table (:func:`evalbars.readings.leaderboard.table.leaderboard_table`)."""
    if table.empty:
        return message_figure("No systems to draw.")
    total = len(table)
    shown = table.sort_values("position").head(max_systems)
    n = len(shown)
    unresolved = table["unresolved"].dropna().astype(bool)
    groups = len(set().union(*letter_sets(table["letters"])))
    title = (
        f"{total} systems fall in {groups} letter group(s); "
        f"{int(unresolved.sum())} of {len(unresolved)} adjacent gaps are unresolved"
    )
    if total > n:
        title += f"\n(top {n} shown, {total - n} left out)"
    ratio_column = (
        "resolution_ratio_clustered"
        if shown["resolution_ratio_clustered"].notna().any()
        else "resolution_ratio"
    )
    with figure(
        1,
        2,
        figsize=(9.0, 0.45 * n + 1.9),
        sharey=True,
        gridspec_kw={"width_ratios": [3, 1.4]},
    ) as (fig, (board, strip)):
        y = np.arange(n)
        board.errorbar(
            shown["accuracy"],
            y,
            xerr=[shown["accuracy"] - shown["ci_low"], shown["ci_high"] - shown["accuracy"]],
            fmt="o",
            color=PALETTE[0],
            capsize=3,
        )
        for yi, (_, row) in zip(y, shown.iterrows(), strict=True):
            board.text(
                1.01,
                yi,
                row["letters"],
                transform=board.get_yaxis_transform(),
                va="center",
                ha="left",
                family="monospace",
            )
        board.set_yticks(y, shown["model"])
        board.invert_yaxis()
        percent_axis(board.xaxis, 1)
        board.set_xlabel(f"score with {100 * level:g}% interval; letters: not separated (Holm)")
        pairs = shown.dropna(subset=[ratio_column]).iloc[: max(n - 1, 0)]
        ratios = pairs[ratio_column].to_numpy(dtype=float)
        finite = np.where(np.isfinite(ratios), ratios, np.nan)
        top = np.nanmax(finite) * 3 if np.isfinite(finite).any() else 10.0
        drawn = np.where(np.isfinite(ratios), ratios, top)
        between = pairs["position"].to_numpy() - 0.5
        colors = [PALETTE[3] if r > 1 else PALETTE[2] for r in ratios]
        strip.barh(between, drawn, height=0.5, color=colors, left=0)
        strip.axvline(1.0, color="0.3", lw=1, ls="--")
        strip.set_xscale("log")
        strip.set_xlim(min(0.1, np.nanmin(drawn) / 2) if len(drawn) else 0.1, top * 1.5)
        strip.set_xlabel("questions needed / available\n(> 1: unresolved)")
        strip.tick_params(axis="y", left=False)
        fig.suptitle(title)
    return fig
