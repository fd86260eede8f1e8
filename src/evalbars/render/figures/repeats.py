"""The figure of repeated samples: each pair's pass@k difference over k, with its band."""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import MaxNLocator

from evalbars.render.figures.style import PALETTE, figure, message_figure

__all__ = ["passk_curve_figure", "decided_ks"]

#: Panels of one figure at most (a board of many pairs draws the first ones).
MAX_PANELS = 12


def decided_ks(rows: pd.DataFrame) -> str:
    """The ks at which a pair's band decides the sign, as text: ``"3-6"``, ``"2, 5"`` or ``""``.

    Examples
    --------
    >>> decided_ks(pd.DataFrame({"k": [1, 2, 3, 4, 6], "sign": [0, 1, 1, 1, 1]}))
    '2-4, 6'
    """
    ks = rows.loc[rows["sign"] != 0, "k"].astype(int).tolist()
    runs, start = [], None
    for i, k in enumerate(ks):
        if start is None:
            start = k
        if i + 1 == len(ks) or ks[i + 1] != k + 1:
            runs.append(f"{start}" if start == k else f"{start}-{k}")
            start = None
    return ", ".join(runs)


def _title(rows: pd.DataFrame) -> str:
    """A panel's title: the pair, and at which k the band decides who is ahead."""
    a, b = rows["model_a"].iloc[0], rows["model_b"].iloc[0]
    category = rows["category"].iloc[0] if "category" in rows else None
    where = f" in {category}" if isinstance(category, str) and category else ""
    ahead = [(1, a), (-1, b)]
    said = [
        f"{name} ahead at k = {decided_ks(rows[rows['sign'] == sign])}"
        for sign, name in ahead
        if (rows["sign"] == sign).any()
    ]
    return f"{a} - {b}{where}\n" + ("; ".join(said) if said else "no k decided")


def passk_curve_figure(table: pd.DataFrame):
    """One panel per pair: the pass@k difference (A - B, points) over k, the band over k
    shaded, the pointwise intervals as bars, the ks where the band decides the sign filled.

    Parameters
    ----------
    table : DataFrame
        ``passk_curve.csv`` (:func:`evalbars.jobs.repeats.repeats_passk_curve`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if table.empty:
        return message_figure("No pair has two or more shared questions with repeated samples.")
    keys = ["model_a", "model_b", "category"]
    groups = list(table.groupby(keys, sort=False, dropna=False))[:MAX_PANELS]
    columns = min(3, len(groups))
    rows_ = -(-len(groups) // columns)
    decided = sum(bool((rows["sign"] != 0).any()) for _, rows in groups)
    width = max(4.2 * columns, 6.5)
    with figure(rows_, columns, figsize=(width, 3.4 * rows_), squeeze=False) as (
        fig,
        axes,
    ):
        for ax, (_, rows) in zip(axes.ravel(), groups, strict=False):
            k = rows["k"].to_numpy(dtype=float)
            points = {c: 100 * rows[c].to_numpy(dtype=float) for c in rows if "_low" in c}
            points |= {c: 100 * rows[c].to_numpy(dtype=float) for c in rows if "_high" in c}
            difference = 100 * rows["difference"].to_numpy(dtype=float)
            ax.fill_between(
                k,
                points["band_low"],
                points["band_high"],
                color=PALETTE[0],
                alpha=0.18,
                linewidth=0,
                label="band (every k at once)",
            )
            ax.vlines(
                k,
                points["pointwise_low"],
                points["pointwise_high"],
                color=PALETTE[0],
                linewidth=1.2,
                label="pointwise interval",
            )
            signed = rows["sign"].to_numpy() != 0
            ax.plot(k, difference, color=PALETTE[0], linewidth=1.2)
            ax.scatter(
                k[~signed],
                difference[~signed],
                facecolors="white",
                edgecolors=PALETTE[0],
                zorder=3,
                label="sign not decided",
            )
            ax.scatter(
                k[signed], difference[signed], color=PALETTE[3], zorder=3, label="sign decided"
            )
            ax.axhline(0, color="black", linewidth=0.8)
            ax.set_title(_title(rows), fontsize=9)
            ax.set_xlabel("k (samples drawn)")
            ax.set_ylabel("pass@k difference, points")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        for ax in axes.ravel()[len(groups) :]:
            ax.axis("off")
        axes.ravel()[0].legend(fontsize=7, loc="best")
        pairs = "pair" if len(groups) == 1 else "pairs"
        fig.suptitle(
            f"pass@k gaps: {decided} of {len(groups)} {pairs} decided at some k", fontsize=11
        )
    return fig
