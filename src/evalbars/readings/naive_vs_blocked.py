"""Naive and blocked readings of the same data, side by side.

:func:`naive_vs_blocked` collects, from the pairwise, omnibus and mixed-model
tables, each quantity twice or more: as a reading that ignores the design
(unpaired tests, one-way ANOVA, uncorrected p) and as readings that block on
questions, categories and multiplicity, with the ratio to the naive value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import ALPHA
from evalbars.render.tables import format_p, is_missing

__all__ = [
    "naive_vs_blocked",
    "naive_vs_blocked_display",
    "PROCEDURE_LABELS",
    "QUANTITY_LABELS",
    "PAIRWISE_COLUMNS",
    "MIXED_COLUMNS",
    "LOGISTIC_COLUMNS",
]

#: The columns :func:`naive_vs_blocked` reads from each input table (read only these from the
#: Parquet files: at thousands of models the pair tables have millions of rows).
PAIRWISE_COLUMNS = ("se_unpaired", "se_paired", "p_unpaired", "p_paired", "p_bonferroni", "p_holm")
MIXED_COLUMNS = ("model_spec", "se", "p_holm")
LOGISTIC_COLUMNS = ("method", "accuracy_difference_se", "log_odds_ratio_p_holm")


#: Human-readable names of the quantities in :func:`naive_vs_blocked`.
QUANTITY_LABELS = {
    "contrast_se": "Pairwise contrast SE (mean over pairs)",
    "omnibus_f": "Omnibus F test (all models equal)",
    "significant_pairs": "Pairs declared different",
}

#: Every procedure of :func:`naive_vs_blocked`, in table order: its human-readable name and the
#: structure it accounts for (the ``accounts_for`` column).
_PROCEDURES = {
    "unpaired_z": ("unpaired z-test (naive)", "nothing"),
    "lmm_category": ("mixed model, (1|category) only", "category"),
    "paired_z": ("paired z-test", "question"),
    "lmm_category_question": (
        "mixed model, (1|category) + (1|category:question)",
        "category + question",
    ),
    "glmm_marginal": (
        "logistic mixed model, marginal accuracy",
        "category + question, logit scale",
    ),
    "gee_accuracy": ("GEE (exchangeable), accuracy", "question, logit scale"),
    "oneway_anova": ("one-way ANOVA (naive)", "nothing"),
    "rm_anova": ("repeated-measures ANOVA", "question"),
    "unpaired_uncorrected": ("unpaired z, uncorrected (naive)", "nothing"),
    "paired_uncorrected": ("paired z, uncorrected", "question"),
    "paired_bonferroni": ("paired z, Bonferroni", "question + multiplicity"),
    "paired_holm": ("paired z, Holm", "question + multiplicity"),
    "lmm_question": ("mixed model, (1|question)", "question"),
    "lmm_question_holm": ("question mixed model, Holm", "question + multiplicity"),
    "lmm_category_question_holm": (
        "nested mixed model, Holm",
        "category + question + multiplicity",
    ),
    "glmm_holm": ("logistic mixed model, Holm", "category + question + multiplicity, logit scale"),
    "gee_holm": ("GEE (exchangeable), Holm", "question + multiplicity, logit scale"),
}

#: Human-readable names of the procedures in :func:`naive_vs_blocked`.
PROCEDURE_LABELS = {procedure: label for procedure, (label, _) in _PROCEDURES.items()}


def naive_vs_blocked(
    pairwise: pd.DataFrame,
    omnibus: pd.DataFrame,
    mixed_contrasts: pd.DataFrame,
    alpha: float = ALPHA,
    logistic_contrasts: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Naive and blocked versions of the same quantities, side by side, with their ratio.

    Parameters
    ----------
    pairwise : DataFrame
        :func:`evalbars.stats.pairwise.pairwise_table`.
    omnibus : DataFrame
        :func:`evalbars.stats.omnibus.omnibus_table`.
    mixed_contrasts : DataFrame
        :func:`evalbars.stats.mixed.lmm_contrasts` rows for the model specs ``category`` and
        ``category_question``; for data with no categories, or one, ``question`` (the
        question-only model: the category rows are then left out).
    alpha : float
        Significance level for counting significant pairs.
    logistic_contrasts : DataFrame, optional
        :attr:`evalbars.stats.logistic.contrasts.LogisticComparison.contrasts` for the same pairs: adds the
        logistic mixed model's and GEE's accuracy-difference SEs (``glmm_marginal``,
        ``gee_accuracy``) and their Holm counts on the log odds ratio (``glmm_holm``,
        ``gee_holm``).

    Returns
    -------
    DataFrame
        One row per (quantity, procedure): ``quantity`` (``contrast_se``,
        ``omnibus_f``, ``significant_pairs``), ``procedure`` (keys of
        :data:`PROCEDURE_LABELS`), ``accounts_for`` (the structure the procedure
        uses), ``value`` (mean SE over the pairs; F; number of pairs with p < alpha),
        ``value_min``, ``value_max`` (range of the SE over pairs), ``df1``, ``df2``,
        ``p`` (for the F rows), ``n_pairs`` and ``ratio_to_naive`` (``value`` over the
        first, naive, row of the same quantity).
    """
    rows = []

    def add(quantity, procedure, values, df1=np.nan, df2=np.nan, p=np.nan, count=False):
        # a column read from Parquet may be Arrow-backed: np.asarray would convert it one
        # Python object at a time (ten million pairs at 4,500 models)
        values = pd.Series(values).to_numpy(dtype=float, na_value=np.nan)
        # One model has no pair: a mean SE over no pairs is not a number (nor 0).
        summary = values.size and not count
        rows.append(
            {
                "quantity": quantity,
                "procedure": procedure,
                "accounts_for": _PROCEDURES[procedure][1],
                "value": float(values.sum())
                if count
                else (float(values.mean()) if values.size else np.nan),
                "value_min": float(values.min()) if summary else np.nan,
                "value_max": float(values.max()) if summary else np.nan,
                "df1": float(df1),
                "df2": float(df2),
                "p": float(p),
                "n_pairs": len(pairwise),
            }
        )

    def spec(name):
        chosen = mixed_contrasts[mixed_contrasts["model_spec"] == name]
        if len(chosen) != len(pairwise):
            raise ValueError(
                f"mixed_contrasts has {len(chosen)} rows for model_spec {name!r}, "
                f"expected one per pair ({len(pairwise)})"
            )
        return chosen

    # With no categories, or one, the fits are question-only (evalbars.stats.mixed.BLOCKED_SPECS):
    # the category rows are left out rather than shown empty.
    specs = set(mixed_contrasts["model_spec"].unique())  # not one Python object per row
    question_only = "question" in specs and "category_question" not in specs
    blocked = "question" if question_only else "category_question"
    nested = spec(blocked)
    add("contrast_se", "unpaired_z", pairwise["se_unpaired"])
    if blocked == "category_question":
        add("contrast_se", "lmm_category", spec("category")["se"])
    add("contrast_se", "paired_z", pairwise["se_paired"])
    add("contrast_se", f"lmm_{blocked}", nested["se"])
    logistic = {}
    if logistic_contrasts is not None and len(logistic_contrasts):
        for procedure, method in (("glmm", "glmm_laplace"), ("gee", "gee_exchangeable")):
            logistic[procedure] = logistic_contrasts[logistic_contrasts["method"] == method]
        add("contrast_se", "glmm_marginal", logistic["glmm"]["accuracy_difference_se"])
        add("contrast_se", "gee_accuracy", logistic["gee"]["accuracy_difference_se"])
    tests = omnibus.set_index("test")
    for name in ("oneway_anova", "rm_anova"):
        test = tests.loc[name]
        add("omnibus_f", name, [test["statistic"]], test["df1"], test["df2"], test["p"])
    add("significant_pairs", "unpaired_uncorrected", pairwise["p_unpaired"] < alpha, count=True)
    add("significant_pairs", "paired_uncorrected", pairwise["p_paired"] < alpha, count=True)
    add("significant_pairs", "paired_bonferroni", pairwise["p_bonferroni"] < alpha, count=True)
    add("significant_pairs", "paired_holm", pairwise["p_holm"] < alpha, count=True)
    add("significant_pairs", f"lmm_{blocked}_holm", nested["p_holm"] < alpha, count=True)
    for procedure, contrasts in logistic.items():
        add(
            "significant_pairs",
            f"{procedure}_holm",
            contrasts["log_odds_ratio_p_holm"] < alpha,
            count=True,
        )
    table = pd.DataFrame(rows)
    naive = table.groupby("quantity", sort=False)["value"].transform("first")
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio_to_naive"] = np.where(naive != 0, table["value"] / naive, np.nan)
    return table


#: What a value that the data cannot give reads as (no two models share a question, or the
#: fit was not made).
NOT_COMPUTED = "not computed (no shared questions, or not fitted)"


def naive_vs_blocked_display(table: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """The human-readable form of :func:`naive_vs_blocked` for Markdown and LaTeX.

    Each quantity is named once, each value carries its context (the SE range
    over pairs; ``F(df1, df2)`` and p; the number of pairs compared) and the
    ratio is written as ``0.82×``.
    """
    shown = []
    previous = None
    for row in table.itertuples(index=False):
        if is_missing(row.value):
            value = NOT_COMPUTED  # said in words, not printed as nan
        elif row.quantity == "contrast_se":
            value = f"{row.value:.4f}"
            if f"{row.value_min:.4f}" != f"{row.value_max:.4f}":
                value += f" (range {row.value_min:.4f}–{row.value_max:.4f})"
        elif row.quantity == "omnibus_f":
            value = f"F({row.df1:g}, {row.df2:g}) = {row.value:.2f}, p = {format_p(row.p)}"
        else:
            value = f"{row.value:.0f} of {row.n_pairs}"
        quantity = QUANTITY_LABELS.get(row.quantity, row.quantity)
        if row.quantity == "significant_pairs":
            quantity += f" (α = {alpha:g})"
        shown.append(
            {
                "Quantity": quantity if row.quantity != previous else "",
                "Procedure": PROCEDURE_LABELS.get(row.procedure, row.procedure),
                "Accounts for": row.accounts_for,
                "Value": value,
                "vs naive": "—" if is_missing(row.ratio_to_naive) else f"{row.ratio_to_naive:.2f}×",
            }
        )
        previous = row.quantity
    return pd.DataFrame(shown)
