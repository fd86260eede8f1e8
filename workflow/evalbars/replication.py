"""Replication check: the paper's reported numbers against our pipeline over many subsample seeds.

The paper (seed 002, section 5.2) analyses six ~7B models on a category-stratified
subsample of 1,497 MMLU-Pro questions, but does not publish which questions. We
therefore compare distributions, not digits: for each number the paper reports we
compute our value at the configured subsample seed and its distribution over many
other subsample seeds, for each ``missing_prediction`` policy, and ask whether the
paper's value lies inside the middle 95% of that distribution.

Every seed runs the same functions as the analysis stage
(:func:`evalbars.pairwise.pairwise_table`, :mod:`evalbars.omnibus`,
:func:`evalbars.mixed.fit_lmm` on its exact path), so the check cannot drift
from the tables it vouches for. The loop over seeds is a loop over whole
analyses, each vectorised inside.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from . import io, mixed, omnibus, pairwise, sampling
from .io import WideScores

__all__ = [
    "PAPER_MODELS",
    "PAPER_VALUES",
    "paper_quantities",
    "rescore",
    "subsample_seeds",
    "replication_runs",
    "replication_table",
    "replication_summary",
    "replication_figure",
]

log = logging.getLogger(__name__)

#: The numbers seed 002 reports in section 5.2 (text and Tables 1, 3, 4): key, what it
#: is, the paper's value, and the axis label of its figure panel (p-values on log10).
#: The six ~7B models of the paper's Section 5.2 (upstream archive names).
PAPER_MODELS = (
    "Yi-6B",
    "Yi-6b-Chat",
    "Qwen1.5-7B-Chat",
    "Mistral-7B-v0.1",
    "Mistral-7B-Instruct-v0.1",
    "Mistral-7B-Instruct-v0.2",
)

PAPER_VALUES = pd.DataFrame(
    [
        ("spread_points", "top minus bottom accuracy", 5.3, "accuracy points"),
        ("n_significant_unpaired", "pairs with unpaired p < alpha", 5, "pairs of 15"),
        ("n_significant_paired", "pairs with paired p < alpha", 5, "pairs of 15"),
        ("n_significant_bonferroni", "pairs significant after Bonferroni", 3, "pairs of 15"),
        ("n_significant_holm", "pairs significant after Holm", 3, "pairs of 15"),
        ("contrast_se_lmm_category", "contrast SE, (1|category) LMM", 0.0157, "SE (proportion)"),
        ("contrast_se_lmm_nested", "contrast SE, nested LMM", 0.0130, "SE (proportion)"),
        ("contrast_se_paired", "paired contrast SE (mean over pairs)", 0.0128, "SE (proportion)"),
        ("rm_anova_f", "RM-ANOVA F(5, 7480)", 4.45, "F"),
        ("rm_anova_p", "RM-ANOVA p", 4.8e-4, "log10 p"),
        ("oneway_f", "one-way ANOVA F(5, 8976)", 2.90, "F"),
        ("oneway_p", "one-way ANOVA p", 0.013, "log10 p"),
        ("friedman_chi2", "Friedman chi-square(5)", 22.2, "chi-square"),
        ("friedman_p", "Friedman p", 4.8e-4, "log10 p"),
    ],
    columns=["quantity", "description", "paper_value", "axis_label"],
)


def _mean_contrast_se(fit: mixed.LmmFit) -> float:
    """Mean over all pairs of the ``se`` of :func:`evalbars.mixed.lmm_contrasts`, without
    its Tukey p-values (which cost more than the fit and are not needed here)."""
    a, b = np.triu_indices(len(fit.models), k=1)
    return float(mixed.contrast_se(fit, a, b).mean())


def paper_quantities(wide: WideScores, alpha: float = 0.05, mixed_method: str = "exact") -> dict:
    """Our value of every quantity in :data:`PAPER_VALUES` on one complete score matrix.

    Contrast SEs are means over the K(K-1)/2 pairs (the paper reports one number
    per procedure); significance counts use ``alpha``; the mixed models are fitted
    with ``mixed_method`` (``"exact"`` needs complete data and takes milliseconds).
    """
    table = pairwise.pairwise_table(wide, alpha)
    accuracy = np.nanmean(wide.scores, axis=0)
    complete = wide.scores[np.isfinite(wide.scores).all(axis=1)]
    rm = omnibus.rm_anova(complete)
    one = omnibus.oneway_anova(complete)
    fr = omnibus.friedman(complete)
    se = {
        spec: _mean_contrast_se(mixed.fit_lmm(wide, spec, mixed_method))
        for spec in ("category", "category_question")
    }
    return {
        "spread_points": float(100 * (accuracy.max() - accuracy.min())),
        "n_significant_unpaired": int(table["significant_unpaired"].sum()),
        "n_significant_paired": int(table["significant_paired"].sum()),
        "n_significant_bonferroni": int(table["significant_bonferroni"].sum()),
        "n_significant_holm": int(table["significant_holm"].sum()),
        "contrast_se_lmm_category": se["category"],
        "contrast_se_lmm_nested": se["category_question"],
        "contrast_se_paired": float(table["se_paired"].mean()),
        "rm_anova_f": float(rm.f),
        "rm_anova_p": float(rm.p),
        "oneway_f": float(one.f),
        "oneway_p": float(one.p),
        "friedman_chi2": float(fr.statistic),
        "friedman_p": float(fr.p),
    }


def rescore(items: pd.DataFrame, policy: str, seed: int) -> pd.DataFrame:
    """The item table re-scored under another ``missing_prediction`` policy.

    A row counts as a missing prediction when ``pred`` is null but ``answer`` is
    not (rows from tables that give only ``correct`` keep their score). Its
    ``correct`` is set to null and :func:`evalbars.io.apply_missing_policy` scores
    it again; ``random_guess`` uses each question's ``n_options``.
    """
    frame = items.copy()
    missing = frame["pred"].isna() & frame["answer"].notna()
    frame["correct"] = frame["correct"].astype("Int8").mask(missing)
    scored = io.apply_missing_policy(frame, policy, seed)
    return scored[[c for c in items.columns]].reset_index(drop=True)


def subsample_seeds(n_seeds: int, seed: int) -> np.ndarray:
    """``n_seeds`` subsample seeds derived from one entropy value by :class:`numpy.random.SeedSequence`."""
    return np.random.SeedSequence(seed).generate_state(n_seeds).astype(np.int64)


def replication_runs(
    items: pd.DataFrame,
    policies,
    n,
    seeds,
    configured_seed: int,
    alpha: float = 0.05,
    items_policy: str | None = None,
    policy_seed: int = 0,
    models=None,
) -> pd.DataFrame:
    """Every quantity of :data:`PAPER_VALUES` for each policy and subsample seed.

    Parameters
    ----------
    items : DataFrame
        The full canonical item table (all questions), scored under ``items_policy``.
    policies : iterable of str
        ``missing_prediction`` policies to compare; each is applied with
        :func:`rescore` (``items`` is used as is for ``items_policy``).
    n : int or "all"
        Subsample size (the paper: 1,497).
    seeds : iterable of int
        Subsample seeds for the distribution (:func:`subsample_seeds`).
    configured_seed : int
        The workflow's subsample seed ("our value").
    alpha : float
        Significance level for the counts.
    items_policy : str, optional
        The policy ``items`` was built with.
    policy_seed : int
        Seed of the ``random_guess`` policy.
    models : list of str, optional
        Models to analyse (default: all in ``items``).

    Returns
    -------
    DataFrame
        Long: ``policy, seed, configured, quantity, value``; ``configured`` is True
        on the rows of ``configured_seed``.

    Notes
    -----
    Each policy's scores are pivoted once; every seed draws its questions with
    :func:`evalbars.sampling.draw_questions` (the workflow's own draw) from the
    questions every model answered and selects those rows.
    """
    if items_policy == "exclude" and any(p != "exclude" for p in policies):
        raise ValueError(
            "the replication check re-scores missing predictions, but the item table was built "
            "with missing_prediction=exclude, which drops them; build it with wrong or random_guess"
        )
    seeds = [int(s) for s in seeds]
    all_seeds = [int(configured_seed)] + seeds
    rows = []
    for policy in policies:
        scored = items if policy == items_policy else rescore(items, policy, policy_seed)
        wide = io.wide_scores(scored, models)
        eligible, _ = sampling.eligible_questions(scored[scored["model"].isin(wide.models)])
        position = pd.Index(wide.question_ids)
        for i, seed in enumerate(all_seeds):
            drawn = sampling.draw_questions(eligible, n, seed)[0]["question_id"]
            keep = np.zeros(len(position), dtype=bool)
            keep[position.get_indexer(drawn)] = True
            sub = WideScores(
                wide.scores[keep], wide.models, wide.question_ids[keep], wide.categories[keep]
            )
            for quantity, value in paper_quantities(sub, alpha, "exact").items():
                rows.append((policy, seed, i == 0, quantity, value))
    return pd.DataFrame(rows, columns=["policy", "seed", "configured", "quantity", "value"])


def replication_table(runs: pd.DataFrame, paper: pd.DataFrame = PAPER_VALUES) -> pd.DataFrame:
    """Compare the paper's values with our distribution over subsample seeds.

    Returns
    -------
    DataFrame
        One row per (quantity, policy): ``quantity, description, policy,
        paper_value, our_value`` (configured seed), ``seed_q025, seed_median,
        seed_q975`` (over the other seeds), ``paper_percentile``, ``n_seeds``,
        ``reproduced``.

    Notes
    -----
    ``paper_percentile`` is the mid-rank percentile of the paper's value among the
    seed values, :math:`100 (\\#\\{v < x\\} + \\tfrac12 \\#\\{v = x\\}) / N`, so a count
    that ties many seeds lands in the middle of its tie. ``reproduced`` is True
    when the paper's value lies in the closed interval ``[seed_q025, seed_q975]``
    (``numpy.quantile``, linear interpolation).
    """
    others = runs[~runs["configured"]]
    ours = runs[runs["configured"]].set_index(["quantity", "policy"])["value"]
    rows = []
    # Paper order; quantities without runs (a custom ``paper`` table) are left out.
    for quantity in paper.loc[paper["quantity"].isin(runs["quantity"]), "quantity"]:
        spec = paper.set_index("quantity").loc[quantity]
        for policy in runs["policy"].drop_duplicates():
            values = others.loc[
                (others["quantity"] == quantity) & (others["policy"] == policy), "value"
            ].to_numpy(dtype=float)
            x = float(spec["paper_value"])
            low, median, high = np.quantile(values, [0.025, 0.5, 0.975])
            percentile = 100 * ((values < x).sum() + 0.5 * (values == x).sum()) / len(values)
            rows.append(
                {
                    "quantity": quantity,
                    "description": spec["description"],
                    "policy": policy,
                    "paper_value": x,
                    "our_value": float(ours.loc[(quantity, policy)]),
                    "seed_q025": low,
                    "seed_median": median,
                    "seed_q975": high,
                    "paper_percentile": percentile,
                    "n_seeds": len(values),
                    "reproduced": bool(low <= x <= high),
                }
            )
    return pd.DataFrame(rows)


def replication_summary(table: pd.DataFrame) -> str:
    """One plain sentence per policy: which of the paper's numbers we reproduce and which not."""
    sentences = []
    for policy, group in table.groupby("policy", sort=False):
        inside = group.loc[group["reproduced"], "quantity"].tolist()
        outside = group.loc[~group["reproduced"], "quantity"].tolist()
        sentence = (
            f"Under missing_prediction={policy}, {len(inside)} of {len(group)} of the paper's "
            f"numbers lie inside the middle 95% of our {int(group['n_seeds'].iloc[0])} "
            "subsample redraws"
        )
        sentence += (
            f"; not reproduced: {', '.join(outside)}." if outside else "; all are reproduced."
        )
        sentences.append(sentence)
    return " ".join(sentences)


def replication_figure(runs: pd.DataFrame, table: pd.DataFrame, paper: pd.DataFrame = PAPER_VALUES):
    """One small panel per reported number: histogram over seeds, our value, the paper's value.

    Histograms are drawn per policy (step outlines); a dashed line marks our value
    at the configured seed (policy colour), a solid black line the paper's value.
    p-values are shown on a log10 axis.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.ticker import MaxNLocator

    from .plotting import PALETTE, figure

    policies = list(runs["policy"].drop_duplicates())
    quantities = list(paper["quantity"])
    ncols = 4
    nrows = -(-len(quantities) // ncols)
    counts = table.groupby("policy", sort=False)["reproduced"].agg(["sum", "size"])
    finding = ", ".join(f"{int(r['sum'])} of {int(r['size'])} ({p})" for p, r in counts.iterrows())
    n_seeds = int(table["n_seeds"].iloc[0])
    with figure(nrows, ncols, figsize=(3.1 * ncols, 2.3 * nrows)) as (fig, axes):
        axes = np.atleast_1d(axes).ravel()
        for ax, quantity in zip(axes, quantities):
            spec = paper.set_index("quantity").loc[quantity]
            log_scale = spec["axis_label"].startswith("log10")

            def shown(v):
                return np.log10(v) if log_scale else np.asarray(v, dtype=float)

            subset = runs[runs["quantity"] == quantity]
            all_values = shown(
                np.append(subset["value"].to_numpy(dtype=float), spec["paper_value"])
            )
            if quantity.startswith("n_significant"):
                bins = np.arange(all_values.min() - 0.5, all_values.max() + 1.5)
            else:
                bins = np.linspace(all_values.min(), all_values.max(), 25)
            for colour, policy in zip(PALETTE, policies):
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
