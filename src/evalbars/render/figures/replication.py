"""Figure of the replication check: the paper's numbers against our subsample distribution."""

from __future__ import annotations

from functools import partial

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from evalbars.readings.paper import PAPER_VALUES
from evalbars.render.figures.style import PALETTE, figure

__all__ = ["replication_figure"]


def _on_axis(values, log_scale: bool):
    """Values as a panel shows them: log10 for p-values, as they are otherwise."""
    return np.log10(values) if log_scale else np.asarray(values, dtype=float)


def replication_figure(runs: pd.DataFrame, table: pd.DataFrame, paper: pd.DataFrame = PAPER_VALUES):
    """One small panel per reported number: histogram over seeds, our value, the paper's value.

    Histograms are drawn per policy (step outlines); a dashed line marks our value
    at the configured seed (policy colour), a solid black line the paper's value.
    p-values are shown on a log10 axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    policies = list(runs["policy"].drop_duplicates())
    quantities = list(paper["quantity"])
    ncols = 4
    nrows = -(-len(quantities) // ncols)
    counts = table.groupby("policy", sort=False)["reproduced"].agg(["sum", "size"])
    finding = ", ".join(f"{int(r['sum'])} of {int(r['size'])} ({p})" for p, r in counts.iterrows())
    n_seeds = int(table["n_seeds"].iloc[0])
    with figure(nrows, ncols, figsize=(3.1 * ncols, 2.3 * nrows)) as (fig, axes):
        axes = np.atleast_1d(axes).ravel()
        for ax, quantity in zip(axes, quantities, strict=False):
            spec = paper.set_index("quantity").loc[quantity]
            log_scale = spec["axis_label"].startswith("log10")
            shown = partial(_on_axis, log_scale=log_scale)
            subset = runs[runs["quantity"] == quantity]
            all_values = shown(
                np.append(subset["value"].to_numpy(dtype=float), spec["paper_value"])
            )
            if quantity.startswith("n_significant"):
                bins = np.arange(all_values.min() - 0.5, all_values.max() + 1.5)
            else:
                bins = np.linspace(all_values.min(), all_values.max(), 25)
            for colour, policy in zip(PALETTE, policies, strict=False):
                sel = subset[subset["policy"] == policy]
                ax.hist(
                    shown(sel.loc[~sel["configured"], "value"]),
                    bins=bins,
                    histtype="step",
                    color=colour,
                    linewidth=1.4,
                    label=f"{policy}: {n_seeds} seeds",
                )
                ax.axvline(
                    float(shown(sel.loc[sel["configured"], "value"].iloc[0])),
                    color=colour,
                    linestyle="--",
                    linewidth=1.2,
                    label=f"{policy}: configured seed",
                )
            ax.axvline(
                float(shown(spec["paper_value"])), color="black", linewidth=1.8, label="paper"
            )
            ax.set_title(spec["description"], fontsize=9)
            ax.set_xlabel(spec["axis_label"], fontsize=8)
            ax.set_ylabel("seeds", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
        for ax in axes[len(quantities) :]:
            ax.set_visible(False)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8)
        fig.suptitle(
            f"Paper's numbers inside the middle 95% of {n_seeds} subsample redraws: {finding}",
            fontweight="bold",
        )
    return fig
