"""Figures of the closed-form precision study: interval half-widths and questions needed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from evalbars.defaults import LEVEL
from evalbars.render.figures.style import PALETTE, figure
from evalbars.stats.planning.precision import (
    questions_to_resolve_paired,
    questions_to_resolve_unpaired,
    wilson_halfwidth,
)

__all__ = ["halfwidth_figure", "questions_needed_figure"]


def _plain_log_ticks(axis, ticks) -> None:
    """Label a log axis at ``ticks`` with plain numbers (1,000 rather than 10^3)."""
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,g}"))


def halfwidth_figure(precision: pd.DataFrame, level: float = LEVEL):
    """Half-width of the Wilson interval against the number of questions, log-log."""
    rate = float(precision["rate"].iloc[0])
    grid = np.geomspace(30, 30_000, 300)
    with figure(figsize=(7, 4)) as (fig, ax):
        ax.plot(grid, 100 * wilson_halfwidth(rate, grid, level), color=PALETTE[0], lw=1.8)
        ax.plot(precision["questions"], precision["half_width_points"], "o", color=PALETTE[3])
        for n, h in zip(precision["questions"], precision["half_width_points"], strict=True):
            ax.annotate(
                f"±{h:.1f} at {n:,}", (n, h), textcoords="offset points", xytext=(6, 6), fontsize=9
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Questions")
        ax.set_ylabel(f"Half-width of the {level:.0%} Wilson interval (points)")
        _plain_log_ticks(ax.xaxis, [30, 100, 300, 1000, 3000, 10_000, 30_000])
        _plain_log_ticks(ax.yaxis, [0.5, 1, 2, 5, 10, 20])
        first, last = precision.iloc[0], precision.iloc[-1]
        ax.set_title(
            f"Four times the questions halves the interval: ±{first['half_width_points']:.1f} points at "
            f"{int(first['questions']):,} questions, ±{last['half_width_points']:.1f} at {int(last['questions']):,} "
            f"(score {rate:.0%})",
            loc="left",
            wrap=True,
        )
    return fig


def questions_needed_figure(needed: pd.DataFrame, rate: float):
    """Questions per model needed to resolve a gap, unpaired and paired, log-log."""
    gaps = np.geomspace(0.5, 20, 200)
    with figure(figsize=(7.5, 4.4)) as (fig, ax):
        unpaired = needed[needed["design"] == "unpaired"]
        sds = float(unpaired["sds"].iloc[0])
        ax.plot(
            gaps,
            questions_to_resolve_unpaired(gaps / 100, rate, sds),
            color="black",
            lw=2,
            label=f"unpaired ({unpaired['source'].iloc[0]})",
        )
        ax.plot(unpaired["gap_points"], unpaired["questions_per_model"], "o", color="black")
        for g, q in zip(unpaired["gap_points"], unpaired["questions_per_model"], strict=True):
            ax.annotate(f"{q:,.0f}", (g, q), textcoords="offset points", xytext=(5, 4), fontsize=9)
        paired = needed[needed["design"] == "paired"]
        for i, (label, part) in enumerate(paired.groupby("source", sort=False)):
            delta = float(part["disagreement"].iloc[0])
            ax.plot(
                gaps,
                questions_to_resolve_paired(gaps / 100, delta, sds),
                color=PALETTE[(i + 1) % 8],
                lw=1.6,
                ls="-" if label.startswith("data") else "--",
                label=f"paired, δ = {delta:.2f} ({label})",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis, [0.5, 1, 2, 5, 10, 20])
        _plain_log_ticks(ax.yaxis, [10, 100, 1000, 10_000, 100_000])
        ax.set_xlabel("True gap between the two models (points)")
        ax.set_ylabel("Questions per model")
        ax.legend(fontsize=8)
        # The title's example: a 2-point gap (or the table's middle gap), paired at the measured
        # disagreement if there is one, else at the lowest illustrative rate.
        gap_shown = (
            2.0
            if np.isclose(needed["gap_points"], 2.0).any()
            else float(unpaired["gap_points"].median())
        )
        at_gap = needed[np.isclose(needed["gap_points"], gap_shown)]
        title = f"Resolving a gap at {sds:g} SDs needs {2 * sds**2 * rate * (1 - rate):.2f}/gap² questions unpaired"
        paired_at_gap = at_gap[at_gap["design"] == "paired"]
        if not paired_at_gap.empty:
            from_data = paired_at_gap[paired_at_gap["source"].str.startswith("data")]
            shown = (
                from_data.iloc[0]
                if not from_data.empty
                else paired_at_gap.sort_values("disagreement").iloc[0]
            )
            title = (
                f"A {gap_shown:g}-point gap needs {at_gap.iloc[0]['questions_per_model']:,.0f} questions per "
                f"model unpaired, {shown['questions_per_model']:,.0f} paired when the models disagree on "
                f"{shown['disagreement']:.0%} of questions"
            )
        ax.set_title(title, loc="left", wrap=True)
    return fig
