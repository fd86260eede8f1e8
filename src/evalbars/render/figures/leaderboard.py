"""Figures of the unpaired leaderboard simulation (the leaderboard-luck explainer).

(a) one run's leaderboard with Wilson whiskers, (b) the leader's questions as a
pass/fail grid, (c) the distribution of A - B over runs, (d) how often each
decision rule is wrong or undecided across question counts, (e) one run played
out question by question.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from evalbars.defaults import LEVEL
from evalbars.render.figures.style import PALETTE, figure, percent_axis
from evalbars.stats.intervals import wilson_interval
from evalbars.studies.leaderboard import DECISION_RULES

__all__ = [
    "one_run_figure",
    "leader_grid_figure",
    "difference_histogram_figure",
    "decision_rules_figure",
    "played_out_figure",
    "leaderboard_figures",
]


@dataclass(frozen=True)
class _OneRun:
    """The played-out run of a :class:`evalbars.studies.leaderboard.LeaderboardResult`, as a
    matrix."""

    wide: pd.DataFrame  # question x model, 0/1
    labels: list
    true_rates: np.ndarray
    final_rank: np.ndarray

    @property
    def questions(self) -> int:
        return len(self.wide)

    @property
    def colours(self) -> dict:
        return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(sorted(self.labels))}

    @property
    def best_first(self) -> np.ndarray:
        """Column indices by final rank, best first."""
        return np.argsort(self.final_rank)

    @property
    def leader(self) -> str:
        return self.labels[int(self.best_first[0])]


def _one_run(one_run: pd.DataFrame) -> _OneRun:
    wide = one_run.pivot(index="question", columns="model", values="correct").sort_index()
    labels = list(wide.columns)
    info = one_run.drop_duplicates("model").set_index("model").loc[labels]
    return _OneRun(wide, labels, info["true_rate"].to_numpy(), info["final_rank"].to_numpy())


def _difference_bins(questions: int, rate_a: float, rate_b: float) -> np.ndarray:
    """Fixed bins (points) for A - B, from the expected spread at ``questions``.

    A - B moves in steps of 100/N points; every bin holds the same number of
    steps and one edge sits half a step left of zero, so the bins left of it hold
    exactly the runs where B scored higher.
    """
    step = 100.0 / questions
    sd = 100.0 * np.sqrt((rate_a * (1 - rate_a) + rate_b * (1 - rate_b)) / questions)
    centre = 100.0 * (rate_a - rate_b)
    width = step * max(1, round((9 * sd / 45) / step))
    lo = -step / 2 - width * np.ceil((step / 2 + 4.5 * sd - centre) / width)
    hi = -step / 2 + width * np.ceil((centre + 4.5 * sd + step / 2) / width)
    return np.arange(lo, hi + width / 2, width)


def one_run_figure(one_run: pd.DataFrame, level: float = LEVEL):
    """(a) One run's leaderboard: observed scores, Wilson whiskers and the true rates."""
    run = _one_run(one_run)
    questions, labels, colours, true_rates = run.questions, run.labels, run.colours, run.true_rates
    counts = run.wide.to_numpy().sum(axis=0)
    low, high = wilson_interval(counts, questions, level)
    observed = counts / questions
    order = run.best_first[::-1]  # best at the top
    with figure(figsize=(7, 3.8)) as (fig, ax):
        y = np.arange(len(labels))
        for pos, idx in zip(y, order, strict=True):
            ax.barh(pos, observed[idx], color=colours[labels[idx]], alpha=0.85)
            ax.errorbar(
                observed[idx],
                pos,
                xerr=[[observed[idx] - low[idx]], [high[idx] - observed[idx]]],
                fmt="none",
                ecolor="black",
                capsize=4,
                lw=1.5,
            )
            ax.vlines(
                true_rates[idx], pos - 0.4, pos + 0.4, colors="black", linestyles="--", lw=1.2
            )
        ax.set_yticks(y, [f"{labels[i]} (true {true_rates[i]:.0%})" for i in order])
        lowest = min(low.min(), true_rates.min())
        ax.set_xlim(max(0.0, lowest - 0.05), min(1.0, high.max() + 0.03))
        percent_axis(ax.xaxis)
        ax.set_xlabel(
            f"Observed score on {questions} questions (whisker: {level:.0%} Wilson interval; dashed: true rate)"
        )
        leader = run.leader
        rank_a = int(run.final_rank[labels.index("A")])
        if low.max() <= high.min():
            finding = "yet every model's interval overlaps every other's"
        else:
            finding = f"the truly best model A ranks {rank_a}"
        ax.set_title(
            f"One run of {questions} questions: {leader} ranks first, {finding}",
            loc="left",
            wrap=True,
        )
    return fig


def leader_grid_figure(one_run: pd.DataFrame):
    """(b) The leader's questions as a pass/fail grid: a score is a count."""
    run = _one_run(one_run)
    questions = run.questions
    leader = run.leader
    passes = run.wide[leader].to_numpy()
    columns = 20 if questions <= 400 else 50
    rows_needed = int(np.ceil(questions / columns))
    grid = np.full(rows_needed * columns, np.nan)
    grid[:questions] = passes
    with figure(figsize=(6.4, max(2.2, 0.3 * rows_needed + 1.2))) as (fig, ax):
        ax.imshow(
            grid.reshape(rows_needed, columns),
            cmap=ListedColormap(["#3b3b3b", "#F0E442"]),
            vmin=0,
            vmax=1,
            aspect="equal",
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        ax.set_xlabel(f"Each cell is one question: bright = pass, dark = fail ({columns} per row)")
        ax.set_title(
            f"The leader's score is a count: {leader} passed {int(passes.sum())} of {questions} questions "
            f"({passes.mean():.1%})",
            loc="left",
            wrap=True,
        )
    return fig


def difference_histogram_figure(runs: pd.DataFrame, one_run: pd.DataFrame):
    """(c) A - B in points over runs; the hatched bars are the runs where B scored higher."""
    run = _one_run(one_run)
    questions, true_rates = run.questions, run.true_rates
    diffs = runs["a_minus_b_points"].to_numpy()
    bins = _difference_bins(questions, true_rates[0], true_rates[1])
    hist, edges = np.histogram(np.clip(diffs, bins[0], bins[-1]), bins=bins)
    share = hist / diffs.size
    mean, sd = diffs.mean(), diffs.std(ddof=1)
    below = float((diffs < 0).mean())
    with figure(figsize=(7, 3.8)) as (fig, ax):
        ax.axvspan(mean - 2 * sd, mean + 2 * sd, color="#0072B2", alpha=0.06, lw=0, label="±2 SD")
        ax.axvspan(mean - sd, mean + sd, color="#0072B2", alpha=0.12, lw=0, label="±1 SD")
        negative = edges[1:] <= 0
        ax.bar(
            edges[:-1][~negative],
            share[~negative],
            width=np.diff(edges)[~negative],
            align="edge",
            color="#0072B2",
            edgecolor="white",
            lw=0.3,
        )
        ax.bar(
            edges[:-1][negative],
            share[negative],
            width=np.diff(edges)[negative],
            align="edge",
            color="#D55E00",
            alpha=0.5,
            hatch="///",
            edgecolor="#D55E00",
            lw=0.3,
            label="B scored higher",
        )
        ax.axvline(mean, color="black", ls="--", lw=1.2, label=f"mean {mean:+.1f} points")
        ax.axvline(0, color="black", lw=0.8)
        ax.text(
            edges[0] + 0.02 * (edges[-1] - edges[0]),
            share.max() * 0.92,
            f"B above A:\n{below:.1%} of runs",
            color="#D55E00",
            fontweight="bold",
            va="top",
        )
        ax.set_xlim(edges[0], edges[-1])
        percent_axis(ax.yaxis, decimals=1)
        ax.set_xlabel(
            f"Observed A − B in points ({questions} questions each, {diffs.size:,} runs; true gap "
            f"{100 * (true_rates[0] - true_rates[1]):.0f} points)"
        )
        ax.set_ylabel("Share of runs")
        ax.legend(loc="upper right", fontsize=8)
        ax.set_title(
            f"The truly worse model B scores higher in {below:.0%} of runs at {questions} questions",
            loc="left",
            wrap=True,
        )
    return fig


def decision_rules_figure(table: pd.DataFrame, spread: float = 1.0, questions: int = 200):
    """(d) WRONG and UNDECIDED of each decision rule across question counts, at one spread."""
    curve = table[np.isclose(table["spread"], spread)].sort_values("questions")
    names = {
        "higher_score_wins": "HIGHER SCORE WINS",
        "intervals_must_not_overlap": "INTERVALS MUST NOT OVERLAP",
    }
    with figure(1, 2, figsize=(9, 3.8), sharey=True) as (fig, axes):
        for ax, measure in zip(axes, ("wrong", "undecided"), strict=True):
            for i, rule in enumerate(DECISION_RULES):
                part = curve[curve["rule"] == rule]
                ax.errorbar(
                    part["questions"],
                    part[measure],
                    yerr=1.96 * part[f"{measure}_se"],
                    marker="o",
                    ms=4,
                    capsize=2,
                    label=names[rule],
                    color=["#D55E00", "#0072B2"][i],
                )
            ax.set_xscale("log")
            ticks = curve["questions"].unique()
            ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
            ax.minorticks_off()
            ax.set_xlabel("Questions per model")
            ax.set_ylim(-0.02, 1.02)
            percent_axis(ax.yaxis)
            ax.set_title(
                f"{measure.upper()}: share of runs "
                + ("picking B" if measure == "wrong" else "with no pick"),
                fontsize=10,
            )
        axes[0].legend(fontsize=8)
        here = curve[curve["questions"] == questions].set_index("rule")
        if not here.empty:
            fig.suptitle(
                f"At {questions} questions, HIGHER SCORE WINS picks the worse model in "
                f"{here.loc['higher_score_wins', 'wrong']:.0%} of runs; NON-OVERLAP is wrong in "
                f"{here.loc['intervals_must_not_overlap', 'wrong']:.1%} because it declines in "
                f"{here.loc['intervals_must_not_overlap', 'undecided']:.0%}",
                fontweight="bold",
                fontsize=10.5,
                wrap=True,
            )
    return fig


def played_out_figure(one_run: pd.DataFrame, level: float = LEVEL):
    """(e) One run played out question by question: running scores, bands and lead changes."""
    run = _one_run(one_run)
    questions, labels, colours, true_rates = run.questions, run.labels, run.colours, run.true_rates
    wide = run.wide
    cumulative = wide.to_numpy().cumsum(axis=0)
    answered = np.arange(1, questions + 1)[:, None]
    running = cumulative / answered
    run_low, run_high = wilson_interval(cumulative, answered, level)
    top = cumulative.max(axis=1, keepdims=True)
    unique_leader = (cumulative == top).sum(axis=1) == 1
    leader_index = np.where(unique_leader, cumulative.argmax(axis=1), -1)
    # Carry the last unique leader through ties, then count hand-overs.
    last_seen = np.maximum.accumulate(np.where(leader_index >= 0, np.arange(questions), 0))
    carried = np.where(leader_index[last_seen] >= 0, leader_index[last_seen], -1)
    changes = np.flatnonzero((carried[1:] != carried[:-1]) & (carried[:-1] >= 0)) + 1
    with figure(figsize=(8, 4.2)) as (fig, ax):
        for j, label in enumerate(labels):
            ax.fill_between(
                answered[:, 0],
                run_low[:, j],
                run_high[:, j],
                color=colours[label],
                alpha=0.07,
                lw=0,
            )
            ax.plot(
                answered[:, 0],
                running[:, j],
                color=colours[label],
                lw=1.4,
                label=f"{label} (true {true_rates[j]:.0%})",
            )
        y_floor = max(0.0, true_rates.min() - 0.3)
        for q in changes:
            ax.plot(q, y_floor + 0.01, marker="|", ms=10, color=colours[labels[carried[q]]])
        ax.set_ylim(y_floor, 1.0)
        ax.set_xlim(1, questions)
        percent_axis(ax.yaxis)
        ax.set_xlabel(
            f"Questions answered (bands: {level:.0%} Wilson interval; ticks at the bottom: lead changes)"
        )
        ax.set_ylabel("Running score")
        fig.legend(ncols=5, fontsize=8, loc="outside lower center")
        ax.set_title(
            f"Played out question by question, the lead changes hands {changes.size} times in {questions} questions",
            loc="left",
            wrap=True,
        )
    return fig


def leaderboard_figures(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    one_run: pd.DataFrame,
    spread: float = 1.0,
    level: float = LEVEL,
) -> dict:
    """The five leaderboard figures, keyed by name.

    Parameters
    ----------
    table : DataFrame
        The combined leaderboard table (all settings).
    runs, one_run : DataFrame
        :class:`evalbars.studies.leaderboard.LeaderboardResult` ``runs`` and ``one_run`` of the
        figure's setting.
    spread : float
        Spread of that setting; figure (d) plots every table row with this spread.
    level : float
        Level of the Wilson whiskers and bands.

    Returns
    -------
    dict of matplotlib Figure
        ``one_run`` (a), ``leader_grid`` (b), ``difference_histogram`` (c),
        ``decision_rules`` (d), ``played_out`` (e).
    """
    questions = int(one_run["question"].max())
    return {
        "one_run": one_run_figure(one_run, level),
        "leader_grid": leader_grid_figure(one_run),
        "difference_histogram": difference_histogram_figure(runs, one_run),
        "decision_rules": decision_rules_figure(table, spread, questions),
        "played_out": played_out_figure(one_run, level),
    }
