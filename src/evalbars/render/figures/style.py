"""One shared matplotlib style and one deterministic save helper for every figure.

Figures are built by pure functions that return a :class:`matplotlib.figure.Figure`;
only :func:`save_figure` touches the disk. PNG and SVG are written with fixed
metadata (no dates, no software string, a fixed SVG hash salt) so that the same
data give byte-identical files.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import PercentFormatter  # noqa: E402

__all__ = [
    "STYLE",
    "PALETTE",
    "figure",
    "message_figure",
    "save_figure",
    "percent_axis",
    "FigureOutput",
]

#: Colour-blind-safe palette (Okabe & Ito 2008), in the order series are drawn.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "svg.hashsalt": "evalbars",
    "svg.fonttype": "path",
    "path.simplify": False,
}


@contextmanager
def figure(*args, **kwargs):
    """``plt.subplots`` under the shared style; yields ``(fig, axes)``."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(*args, layout="constrained", **kwargs)
        yield fig, axes


def message_figure(text: str, width: float = 7.5):
    """A figure that only says ``text``: what a figure shows when there is nothing to draw."""
    with figure(figsize=(width, 1.5)) as (fig, ax):
        ax.axis("off")
        ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True)
    return fig


def percent_axis(axis, decimals: int = 0) -> None:
    """Format an axis holding proportions as percentages."""
    axis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=decimals))


def save_figure(fig, png_path, svg_path=None) -> None:
    """Save ``fig`` as PNG (and SVG) with deterministic metadata, then close it.

    ``svg_path`` defaults to ``png_path`` with the suffix ``.svg``.
    """
    png_path = Path(png_path)
    svg_path = Path(svg_path) if svg_path is not None else png_path.with_suffix(".svg")
    png_path.parent.mkdir(parents=True, exist_ok=True)
    svg_path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(STYLE):
        fig.savefig(png_path, format="png", metadata={"Software": None})
        fig.savefig(svg_path, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


@dataclass(frozen=True)
class FigureOutput:
    """A figure a job writes (:func:`evalbars.jobs.run.write_outputs`): the outputs
    ``<name>_png`` and ``<name>_svg``."""

    figure: matplotlib.figure.Figure

    suffixes = ("png", "svg")

    def write(self, png, svg=None) -> None:
        save_figure(self.figure, png, svg)
