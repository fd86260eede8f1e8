"""Logistic-verdicts figure: the linear and the two logistic readings of every pair, side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.render.figures.style import PALETTE, figure, message_figure

__all__ = ["logistic_verdicts_figure", "RASTER_PAIRS"]

#: Above this many pairs the points are drawn as an image inside the SVG (and the PDF): a vector
#: file of 500,000 markers takes most of a minute to write and tens of MB; the axes, labels and
#: text stay vector.
RASTER_PAIRS = 10_000

#: Colour and marker of each logistic reading.
_LOGISTIC = {
    "glmm": ("logistic mixed model", PALETTE[0], "o"),
    "gee": ("GEE, exchangeable", PALETTE[2], "s"),
}


def _agreement_title(table: pd.DataFrame) -> str:
    n, agree = len(table), int(table["agree"].sum())
    if agree == n:
        return f"The logistic readings agree with the linear mixed model on all {n:,} pairs"
    return (
        f"The logistic readings agree with the linear mixed model on {agree:,} of {n:,} pairs;\n"
        f"{n - agree:,} verdict{'s' if n - agree != 1 else ''} change"
    )


def _visible_points(x: np.ndarray, y: np.ndarray, thin: bool, steps: int = 600):
    """The points to draw: all of them, or with ``thin`` one per cell of a ``steps`` x ``steps``
    grid over their range (finer than the markers, so the picture is the same; a board of
    4,500 models has 10 million pairs, which take minutes to draw one by one)."""
    if not thin:
        return x, y
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if not len(x):
        return x, y
    cells = []
    for values in (x, y):
        low, span = values.min(), np.ptp(values) or 1.0
        cells.append(np.minimum((values - low) / span * steps, steps - 1).astype(np.int64))
    # the first point of each occupied cell, in cell order (np.unique's return_index, unsorted)
    first = np.full(steps * steps, len(x))
    np.minimum.at(first, cells[0] * steps + cells[1], np.arange(len(x)))
    first = first[first < len(x)]
    return x[first], y[first]


def logistic_verdicts_figure(table: pd.DataFrame, not_fitted: str | None = None):
    """Two panels over all pairs: the size and the strength of each difference, per reading.

    Left: each pair's difference in accuracy (points) under the logistic mixed model
    (marginal accuracies) and GEE against the linear mixed model's; on the diagonal the scales
    agree. Right: the Wald z of the logistic models' log odds ratios against the linear model's
    z; pairs whose Holm verdicts differ are ringed in vermillion (above :data:`RASTER_PAIRS`
    pairs the points and the rings are thinned to one per visible cell, :func:`_visible_points`).

    Parameters
    ----------
    table : DataFrame
        :func:`evalbars.readings.logistic_verdicts.verdict_table`.
    not_fitted : str, optional
        Why the logistic models were not fitted (:func:`evalbars.stats.logistic.contrasts.fit_obstacle`, read
        back by :func:`evalbars.readings.logistic_verdicts.not_fitted_reason`): the figure then says so
        instead.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not_fitted is not None or table.empty:
        reason = not_fitted or "no pairs to compare"
        return message_figure(f"Logistic models not fitted: {reason}.")
    changed = ~table["agree"].to_numpy(dtype=bool)
    rasterized = len(table) > RASTER_PAIRS
    # per panel: the linear model's column, the logistic readings' column suffix, the scale
    panels = (
        ("lmm_difference", "accuracy_difference", 100, "accuracy difference (points)"),
        ("lmm_z", "z", 1, "z statistic"),
    )
    with figure(1, 2, figsize=(10, 4.6)) as (fig, axes):
        for ax, (lmm_column, suffix, scale, label) in zip(axes, panels, strict=True):
            lmm = scale * table[lmm_column]
            for prefix, (name, colour, marker) in _LOGISTIC.items():
                values = scale * table[f"{prefix}_{suffix}"]
                x, y = _visible_points(lmm.to_numpy(float), values.to_numpy(float), rasterized)
                ax.plot(
                    x,
                    y,
                    marker,
                    color=colour,
                    alpha=0.7,
                    markersize=4,
                    label=name,
                    rasterized=rasterized,
                )
                if suffix == "z" and changed.any():
                    x, y = _visible_points(
                        lmm[changed].to_numpy(float), values[changed].to_numpy(float), rasterized
                    )
                    ax.plot(
                        x,
                        y,
                        "o",
                        markersize=10,
                        markerfacecolor="none",
                        markeredgecolor=PALETTE[3],
                        label="verdict differs" if prefix == "glmm" else None,
                        rasterized=rasterized,
                    )
            low = float(np.nanmin([ax.get_xlim()[0], ax.get_ylim()[0]]))
            high = float(np.nanmax([ax.get_xlim()[1], ax.get_ylim()[1]]))
            ax.plot([low, high], [low, high], color="0.6", linewidth=0.8, zorder=0)
            ax.set_xlim(low, high)
            ax.set_ylim(low, high)
            ax.set_xlabel(f"linear mixed model: {label}")
            ax.set_ylabel(f"logistic readings: {label}")
        size_ax, z_ax = axes
        size_ax.set_title("size: marginal accuracy difference", fontsize=9, fontweight="normal")
        z_ax.set_title("strength: z of the log odds ratio", fontsize=9, fontweight="normal")
        z_ax.legend(loc="upper left", fontsize=8)
        fig.suptitle(_agreement_title(table), fontweight="bold")
    return fig
