"""Figures of the family-wise error simulation (the paper's section 5.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.render.figures.style import PALETTE, figure, percent_axis
from evalbars.studies.fwer import FWER_METHODS, independent_tests_fwer, studentized_range_fwer

__all__ = ["methods_figure", "models_figure", "power_figure"]

METHOD_NAMES = {
    "uncorrected": "Uncorrected pairwise",
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "rm_anova": "RM-ANOVA (omnibus)",
    "friedman": "Friedman (omnibus)",
}


#: One colour per procedure, shared by the three figures.
COLOURS = dict(zip(FWER_METHODS, PALETTE, strict=False))


def methods_figure(table: pd.DataFrame, models: int = 4, questions: int = 400):
    """FWER of every procedure at K = ``models`` under the null, one group of bars per rho."""
    null = table[(table["gap"] == 0) & (table["questions"] == questions)]
    # Methods at K models, one group of bars per rho.
    at_k = null[null["models"] == models]
    rhos = sorted(at_k["rho"].unique())
    with figure(figsize=(8, 4.2)) as (fig, ax):
        width = 0.8 / max(1, len(rhos))
        for j, rho in enumerate(rhos):
            part = at_k[at_k["rho"] == rho].set_index("method").loc[list(FWER_METHODS)]
            x = np.arange(len(FWER_METHODS)) + (j - (len(rhos) - 1) / 2) * width
            ax.bar(
                x,
                part["fwer"],
                width=width * 0.95,
                yerr=1.96 * part["fwer_se"],
                capsize=2,
                color=[COLOURS[m] for m in FWER_METHODS],
                alpha=0.45 + 0.5 * (j + 1) / len(rhos),
                edgecolor="black",
                lw=0.4,
            )
            for xi, v, se in zip(x, part["fwer"], part["fwer_se"], strict=True):
                ax.text(xi, v + 1.96 * se + 0.004, f"{v:.3f}", ha="center", va="bottom", fontsize=7)
        alpha = float(at_k["alpha"].iloc[0])
        ax.axhline(alpha, color="black", ls="--", lw=1, label=f"nominal α = {alpha:g}")
        ax.axhline(
            float(at_k["studentized_range_fwer"].iloc[0]),
            color=PALETTE[0],
            ls="-.",
            lw=1,
            label=f"studentized range, exact: {at_k['studentized_range_fwer'].iloc[0]:.4f}",
        )
        ax.axhline(
            float(at_k["independent_tests_fwer"].iloc[0]),
            color="grey",
            ls=":",
            lw=1.2,
            label=f"if the {models * (models - 1) // 2} tests were independent: "
            f"{at_k['independent_tests_fwer'].iloc[0]:.3f}",
        )
        ax.set_xticks(
            np.arange(len(FWER_METHODS)), [METHOD_NAMES[m] for m in FWER_METHODS], fontsize=8
        )
        percent_axis(ax.yaxis)
        ax.set_ylabel("Family-wise error rate")
        ax.set_xlabel(
            "Bars within a method, left to right (darker = larger): ρ = "
            + ", ".join(f"{r:g}" for r in rhos)
            + " (correlation of the models' conditional mean scores)",
            fontsize=8,
        )
        ax.set_ylim(0, max(0.3, float(at_k["fwer"].max()) + 0.06))
        ax.legend(fontsize=8, loc="center right")
        main = at_k[np.isclose(at_k["rho"], 0.5)] if np.isclose(at_k["rho"], 0.5).any() else at_k
        main = main.set_index("method")
        ax.set_title(
            f"{models} models, {questions} shared questions, true null: uncorrected pairwise tests make a false "
            f"claim in {main.loc['uncorrected', 'fwer']:.0%} of replications; Bonferroni, Holm and the omnibus "
            f"tests stay near {alpha:.0%}",
            loc="left",
            wrap=True,
        )
    return fig


def models_figure(table: pd.DataFrame, questions: int = 400):
    """FWER across K at the main rho, with the exact studentized-range curve."""
    null = table[(table["gap"] == 0) & (table["questions"] == questions)]
    # FWER across K at the main rho.
    rho_main = 0.5 if np.isclose(null["rho"], 0.5).any() else float(null["rho"].iloc[0])
    curve = null[np.isclose(null["rho"], rho_main)].sort_values("models")
    ks = np.arange(2, max(12, int(curve["models"].max())) + 1)
    alpha = float(curve["alpha"].iloc[0])
    with figure(figsize=(8, 4.4)) as (fig, ax):
        ax.plot(
            ks,
            studentized_range_fwer(ks, alpha),
            color="black",
            lw=1.8,
            label="exact (studentized range)",
        )
        ax.plot(
            ks,
            independent_tests_fwer(ks, alpha),
            color="grey",
            ls=":",
            lw=1.5,
            label="independent-tests benchmark",
        )
        for method in FWER_METHODS:
            part = curve[curve["method"] == method]
            ax.errorbar(
                part["models"],
                part["fwer"],
                yerr=1.96 * part["fwer_se"],
                marker="o",
                ms=3.5,
                capsize=2,
                lw=1,
                color=COLOURS[method],
                label=f"{METHOD_NAMES[method]} (simulated)",
            )
        ax.axhline(alpha, color="black", ls="--", lw=0.8)
        ax.set_xticks(ks)
        ax.set_xlabel("Models compared (K)")
        ax.set_ylabel("Family-wise error rate")
        percent_axis(ax.yaxis)
        ax.legend(fontsize=8, loc="upper left")
        top = curve[(curve["method"] == "uncorrected")].iloc[-1]
        ax.set_title(
            f"Uncorrected pairwise tests: false claims in {top['fwer']:.0%} of null replications at K = "
            f"{int(top['models'])} (exact {top['studentized_range_fwer']:.0%}); corrections hold {alpha:.0%}",
            loc="left",
            wrap=True,
        )
    return fig


def power_figure(table: pd.DataFrame, models: int = 4):
    """Power under a true gap: at least one / every true gap found, across K (a row per gap)."""
    power = table[table["gap"] > 0]
    gaps = sorted(power["gap"].unique())
    with figure(
        max(1, len(gaps)), 2, figsize=(10, 4 * max(1, len(gaps))), sharey=True, squeeze=False
    ) as (fig, axes):
        if not gaps:
            axes[0][0].text(0.5, 0.5, "no grid row has a true gap (gap > 0)", ha="center")
            fig.suptitle("Power needs a setting with a true gap; the FWER grid has none")
        for row, gap in zip(axes, gaps, strict=False):  # one row of panels per gap
            part = power[power["gap"] == gap]
            for ax, measure in zip(row, ("power_any", "power_all"), strict=True):
                for method in FWER_METHODS:
                    m = part[part["method"] == method].sort_values("models")
                    if m[measure].isna().all():
                        continue
                    ax.errorbar(
                        m["models"],
                        m[measure],
                        yerr=1.96 * m[f"{measure}_se"],
                        marker="o",
                        ms=3.5,
                        capsize=2,
                        lw=1.2,
                        ls=":" if method == "bonferroni" else "-",
                        color=COLOURS[method],
                        label=METHOD_NAMES[method],
                    )
                ax.set_xticks(sorted(part["models"].unique()))
                ax.set_xlabel("Models compared (K)")
                ax.set_ylim(0, 1.02)
                percent_axis(ax.yaxis)
            row[0].set_title(f"Gap {100 * gap:g} points: at least one true gap found", fontsize=10)
            row[1].set_title(f"Gap {100 * gap:g} points: all K − 1 true gaps found", fontsize=10)
            row[0].set_ylabel("Power")
        axes[0][0].legend(fontsize=8, loc="lower left")
        shown = power[(power["gap"] == gaps[0]) & (power["models"] == models)] if gaps else power
        if not shown.empty:
            g = shown.set_index("method")
            fig.suptitle(
                f"Multiplicity costs power: with one of {models} models better by {100 * gaps[0]:g} points, "
                f"Holm finds a true gap in {g.loc['holm', 'power_any']:.0%} of replications and all "
                f"{models - 1} in {g.loc['holm', 'power_all']:.0%}; uncorrected tests: "
                f"{g.loc['uncorrected', 'power_any']:.0%} and {g.loc['uncorrected', 'power_all']:.0%}",
                fontweight="bold",
                fontsize=10.5,
                wrap=True,
            )
    return fig
