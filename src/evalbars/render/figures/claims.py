"""Claim figures: each claim's interval against its threshold, and the category x pair heatmap."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.readings.claims.verdicts import JUDGE_CORRECTED, Reading, table_readings
from evalbars.render.figures.style import figure, message_figure

__all__ = ["VERDICT_COLOURS", "claims_figure", "category_heatmap"]

#: Colour of each verdict (Okabe-Ito green, grey, vermillion).
VERDICT_COLOURS = {
    "supported": "#009E73",
    "not supported": "0.45",
    "contradicted": "#D55E00",
    "n/a": "0.8",
}
#: Readings with an interval on the accuracy-point scale, top to bottom: (kind, adjusted by the
#: family's adjustment).
_INTERVAL_READINGS = (
    ("naive", False),
    ("paired", False),
    ("bayes", False),
    ("paired", True),
    ("mixed", True),
    (JUDGE_CORRECTED, True),
    ("runs", False),  # runs as a random effect, where a model was run more than once
)


def _interval_readings(table: pd.DataFrame) -> list[Reading]:
    """The readings of ``table`` drawn with an interval, in :data:`_INTERVAL_READINGS` order."""
    present = table_readings(table)
    return [
        r
        for kind, adjusted in _INTERVAL_READINGS
        for r in present
        if (r.kind, r.adjusted) == (kind, adjusted)
    ]


def _thresholds(kind: str, margin: float) -> list:
    if kind == "superiority":
        return [margin]
    if kind in ("noninferiority", "noninferior_at_cost"):  # the cost half is not a gap
        return [-margin]
    if kind == "equivalence":
        return [-margin, margin]
    return [0.0]


def claims_figure(table: pd.DataFrame):
    """One panel per claim: the gap (points) and interval of each reading, coloured by verdict.

    ``table`` is :func:`evalbars.readings.claims.evaluate_claims`. Dashed lines mark the
    claim's threshold (0; -d for non-inferiority; -d and +d for equivalence). For
    ``best``/``top k`` the gap is to the deciding rival, named in the title, and
    the bootstrap reading's verdict and rank interval are written under it.
    """
    claims = list(dict.fromkeys(table["claim"]))
    if not claims:
        return message_figure("No claims configured (config: claims).", width=6)
    shown = _interval_readings(table)
    rows = len(shown)
    with figure(len(claims), 1, figsize=(7.5, 1.55 * len(claims) + 0.6), squeeze=False) as (
        fig,
        axes,
    ):
        for ax, claim in zip(axes[:, 0], claims, strict=True):
            rows_here = table[table["claim"] == claim]
            group = {Reading(r["reading"], r["adjustment"]): r for _, r in rows_here.iterrows()}
            first = rows_here.iloc[0]
            y = np.arange(rows)[::-1]
            for yy, reading in zip(y, shown, strict=True):
                row = group[reading]
                colour = VERDICT_COLOURS[row["verdict"]]
                if np.isfinite(row["ci_low_points"]):
                    ax.plot(
                        [row["ci_low_points"], row["ci_high_points"]],
                        [yy, yy],
                        color=colour,
                        lw=2.2,
                    )
                    ax.plot(row["estimate_points"], yy, "o", color=colour, ms=5)
                ax.text(
                    1.01,
                    yy,
                    row["verdict"],
                    transform=ax.get_yaxis_transform(),
                    va="center",
                    color=colour,
                    fontsize=8,
                )
            for threshold in _thresholds(first["kind"], first["margin_points"]):
                ax.axvline(threshold, color="black", ls="--", lw=1)
            ax.set_yticks(y, [r.title for r in shown], fontsize=8)
            ax.set_ylim(-0.6, rows - 0.4)
            title = claim
            rival = group[Reading("paired")]["rival"]
            if isinstance(rival, str) and rival:
                title += f"  (gap to {rival})"
            boot = group.get(Reading("bootstrap"))
            if boot is not None and boot["verdict"] != "n/a":
                title += (
                    f"\nbootstrap ranks {int(boot['rank_low'])}-{int(boot['rank_high'])}: "
                    f"{boot['verdict']}"
                )
            ax.set_title(title, fontsize=9, loc="left")
            ax.grid(axis="y", visible=False)
        axes[-1, 0].set_xlabel("accuracy gap, points (interval per reading; dashed: threshold)")
    return fig


def category_heatmap(table: pd.DataFrame, max_pairs: int = 45):
    """Category x pair heatmap of the paired gap (points) with significance marks.

    ``table`` is :func:`evalbars.readings.category_pairwise.category_pairwise_table`. Marks:
    ``**`` significant after Holm over all tests, ``*`` after Benjamini-Hochberg
    only, ``+`` unadjusted exact McNemar only. With more than ``max_pairs``
    pairs (ten models and more) only neighbours in the accuracy order are drawn,
    the first ``max_pairs`` of them: the comparisons a ranking claims.
    """
    pairs = list(dict.fromkeys(zip(table["model_a"], table["model_b"], strict=True)))
    if not pairs:  # one model, or one category: nothing per category to draw
        return message_figure("No pair of models to compare within categories.", width=6)
    scope = ""
    if len(pairs) > max_pairs:
        # Pairs follow the accuracy order: the first model's pairs list every other model.
        leader = pairs[0][0]
        order = [leader] + [b for a, b in pairs if a == leader]
        pairs = list(zip(order[:-1], order[1:], strict=True))[:max_pairs]
        kept = set(pairs)
        rows = [pair in kept for pair in zip(table["model_a"], table["model_b"], strict=True)]
        table = table[rows]
        scope = f"; neighbours in accuracy order, top {len(pairs) + 1} models"
    categories = sorted(table["category"].unique())
    grid = np.full((len(categories), len(pairs)), np.nan)
    marks = np.full(grid.shape, "", dtype=object)
    col = {pair: j for j, pair in enumerate(pairs)}
    row_of = {c: i for i, c in enumerate(categories)}
    for rec in table.itertuples(index=False):
        i, j = row_of[rec.category], col[(rec.model_a, rec.model_b)]
        grid[i, j] = 100 * rec.diff
        if rec.significant_holm:
            marks[i, j] = "**"
        elif rec.significant_bh:
            marks[i, j] = "*"
        elif rec.significant_mcnemar:
            marks[i, j] = "+"
    limit = max(float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0, 1.0)
    with figure(figsize=(0.55 * len(pairs) + 3.5, 0.38 * len(categories) + 3.2)) as (fig, ax):
        image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                if marks[i, j]:
                    ax.text(j, i, marks[i, j], ha="center", va="center", fontsize=9, weight="bold")
        ax.set_xticks(
            np.arange(len(pairs)),
            [f"{a} vs {b}" for a, b in pairs],
            rotation=60,
            ha="right",
            fontsize=7,
        )
        ax.set_yticks(np.arange(len(categories)), categories, fontsize=8)
        ax.grid(False)
        bar = fig.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("gap, points (first model minus second)")
        ax.set_title(
            "Per-category gaps: ** Holm, * Benjamini-Hochberg, + unadjusted McNemar only" + scope,
            fontsize=9,
            loc="left",
        )
    return fig
