"""Figure of the clustered-questions simulation: SE ratios and interval coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.render.figures.style import PALETTE, figure, percent_axis

__all__ = ["clustered_figure"]


def clustered_figure(table: pd.DataFrame, level: float = LEVEL):
    """SE ratio to the naive SE and interval coverage for each clustering setting."""
    settings = table.drop_duplicates(["cluster_size", "icc"]).sort_values("design_effect")
    labels = [
        f"m = {m}, icc = {icc:g}\n({c} clusters)"
        for m, icc, c in zip(
            settings["cluster_size"], settings["icc"], settings["clusters"], strict=True
        )
    ]
    estimators = {
        "naive": "naive",
        "clustered_miller": "clustered (Miller)",
        "mixed_model": "mixed model (REML)",
    }
    colours = dict(zip(estimators, [PALETTE[3], PALETTE[0], PALETTE[2]], strict=True))
    x = np.arange(len(settings))
    with figure(1, 2, figsize=(10, 4.2)) as (fig, axes):
        width = 0.26
        for j, (est, name) in enumerate(estimators.items()):
            part = (
                table[table["estimator"] == est]
                .set_index(["cluster_size", "icc"])
                .loc[list(zip(settings["cluster_size"], settings["icc"], strict=True))]
            )
            axes[0].bar(
                x + (j - 1) * width,
                part["se_ratio_to_naive"],
                width * 0.95,
                color=colours[est],
                label=name,
            )
            axes[1].bar(
                x + (j - 1) * width,
                part["coverage"],
                width * 0.95,
                yerr=1.96 * part["coverage_se"],
                capsize=2,
                color=colours[est],
                label=name,
            )
            if est == "clustered_miller":
                for xi, v in zip(x, part["se_ratio_to_naive"], strict=True):
                    axes[0].text(xi, v + 0.07, f"{v:.2f}×", ha="center", fontsize=8)
        axes[0].scatter(
            x,
            settings["analytic_se_ratio"],
            marker="_",
            s=600,
            color="black",
            zorder=3,
            label="√(design effect)",
        )
        axes[0].set_ylabel("SE ÷ naive SE (mean over replications)")
        axes[0].set_xticks(x, labels, fontsize=8)
        axes[0].legend(fontsize=8, loc="upper left")
        axes[1].axhline(level, color="black", ls="--", lw=1)
        axes[1].set_ylim(0.5, 1.0)
        axes[1].set_xticks(x, labels, fontsize=8)
        axes[1].set_ylabel(f"Coverage of the {level:.0%} interval")
        percent_axis(axes[1].yaxis)
        worst = table[table["estimator"] == "naive"].sort_values("design_effect").iloc[-1]
        ratio = table[(table["estimator"] == "clustered_miller")].sort_values("design_effect")[
            "se_ratio_to_naive"
        ]
        fig.suptitle(
            f"Ignoring clusters understates the SE {ratio.iloc[0]:.1f}× to {ratio.iloc[-1]:.1f}×: naive "
            f"{level:.0%} intervals cover the true score in only {worst['coverage']:.0%} of replications "
            f"at cluster size {int(worst['cluster_size'])}",
            fontweight="bold",
            fontsize=10.5,
            wrap=True,
        )
    return fig
