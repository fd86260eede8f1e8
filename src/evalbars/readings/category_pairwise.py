"""Every pair of models within every category, with multiplicity control and homogeneity tests.

Leaderboards that break a benchmark down by category invite "A wins on math,
B on law" readings from many small comparisons. :func:`category_pairwise_table`
tests every pair in every category (paired z and exact McNemar on that
category's questions) and adjusts the exact McNemar p over **all** category x
pair tests, by Holm (family-wise error) and by Benjamini-Hochberg (false
discovery rate). The exact test is defined for one 0/1 score per (question, model)
(:func:`evalbars.stats.pairwise.exact_readings_reasons`): where a pair holds repeated
samples (epochs) or partial credit its ``p_mcnemar`` is empty, the ``test`` column says why,
and the paired z p of the per-question means enters the family in its place (a sign test of
epoch means favours the model with fewer samples). :func:`category_summary` counts, per
pair, the naive category wins and how many survive each correction, and asks whether the
gap differs between categories at all:

- per pair, the **discordant-split homogeneity test**: on the questions where
  the two models disagree, is the share model a wins the same in every category?
  Conditional on the discordant counts :math:`m_c`, model a's wins are
  :math:`b_c \\sim \\mathrm{Bin}(m_c, \\pi_c)`, and the Pearson chi-square of the
  C x 2 table :math:`(b_c, m_c - b_c)` tests :math:`\\pi_c = \\pi`, i.e. a common
  conditional (matched-pair Mantel-Haenszel) odds ratio :math:`\\pi/(1-\\pi)`
  across categories; categories without a discordant question carry no
  information and are left out (df = categories used - 1); like McNemar's test it needs
  one 0/1 score per cell, and is empty for a pair where the exact test does not apply;
- over all models, the **model x category interaction** of the nested mixed
  model (:func:`interaction_test`): the likelihood-ratio test of
  ``correct ~ model * category + (1|question)`` against
  ``correct ~ model + category + (1|question)``, both by maximum likelihood (the
  fixed effects differ, so REML likelihoods are not comparable), and the exact
  split-plot F test of the same term.

References
----------
.. [1] McNemar, Q. (1947). Psychometrika 12, 153-157.
.. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery
   rate. J R Stat Soc B 57, 289-300.
.. [3] Holm, S. (1979). Scand J Stat 6, 65-70.
.. [4] Agresti, A. (2013). Categorical Data Analysis, 3rd ed., Wiley, section
   11.3 (conditional logistic models and the Mantel-Haenszel odds ratio for
   matched pairs).
.. [5] Kirk, R. E. (2013). Experimental Design, 4th ed., Sage, chapter 12
   (split-plot factorial designs: the B x A interaction against B x S/A).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores, accuracy_order, text_column
from evalbars.defaults import ALPHA
from evalbars.stats.pairwise import (
    adjust_pvalues,
    difference_test,
    exact_mcnemar_p,
    exact_readings_reasons,
    pair_statistics,
)

__all__ = [
    "CATEGORY_PAIR_COLUMNS",
    "CategoryComparison",
    "category_pairwise_table",
    "compare_categories",
    "pairs_among",
    "discordant_homogeneity",
    "interaction_test",
    "category_summary",
]

#: Columns of the per-category pairwise table.
CATEGORY_PAIR_COLUMNS = [
    "category",
    "model_a",
    "model_b",
    "n",
    "accuracy_a",
    "accuracy_b",
    "diff",
    "se_paired",
    "z_paired",
    "p_paired",
    "n10",
    "n01",
    "p_mcnemar",
    "p_holm",
    "p_bh",
    "naive_winner",
    "significant_mcnemar",
    "significant_holm",
    "significant_bh",
    "test",
]

#: The ``test`` of a row whose ``p_holm`` and ``p_bh`` adjust its exact McNemar p.
EXACT_TEST = "exact McNemar"


def category_pairwise_table(wide: WideScores, alpha: float = ALPHA) -> pd.DataFrame:
    """Paired z and exact McNemar of every pair in every category, Holm and BH over all of them.

    Pairs follow :func:`evalbars.stats.pairwise.model_pairs` over the overall accuracy
    order (so a pair keeps its orientation in every category and ``diff`` may be
    negative); categories are sorted. ``p_paired`` is the two-sided test of
    :func:`evalbars.stats.pairwise.difference_test` (a zero SE takes the exact bound, never
    z = inf). ``p_holm`` and ``p_bh`` adjust, over the categories x pairs tests, each row's
    ``p_mcnemar``, or its ``p_paired`` where the exact test does not apply (``p_mcnemar``
    empty; ``test`` names the test and why: :data:`EXACT_TEST`, or "paired z (repeated
    samples per question)", "paired z (scores are not 0/1)"). ``naive_winner`` is the model
    with the higher accuracy in the category (empty on a tie); ``significant_*`` flag
    p < alpha.

    Returns
    -------
    DataFrame
        :data:`CATEGORY_PAIR_COLUMNS`, one row per (category, pair).
    """
    order = accuracy_order(wide)
    columns = [wide.models.index(m) for m in order]
    a, b = np.triu_indices(len(order), k=1)
    categories = sorted(set(wide.categories.tolist()))
    # Each category fills its rows of the columns, one frame at the end: every text column is
    # built from codes (no Python object per row; 7 million rows at a thousand models).
    pairs, total = len(a), len(categories) * len(a)
    table = {}  # the numbers' columns, each filled one category at a time
    winner, reason = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    reasons = {"": 0}  # each reason the exact test does not apply, by its code in ``reason``
    for i, category in enumerate(categories):
        rows = slice(i * pairs, (i + 1) * pairs)
        part = wide.rows(wide.categories == category)
        scores = part.scores[:, columns]
        st = pair_statistics(scores)
        z, p = difference_test(st["diff"], st["se_paired"], st["n"])
        # "" where the exact test applies on this category's questions, else the reason
        barred = exact_readings_reasons(part, np.asarray(columns)[a], np.asarray(columns)[b])
        # nanmean's sum over count, without its warning for a model with no score here
        answered = np.isfinite(scores)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(answered, scores, 0.0).sum(axis=0) / answered.sum(axis=0)
        diff = st["diff"]
        # the winner's position in the accuracy order; len(order) for a tie (no winner)
        winner[rows] = np.where(diff > 0, a, np.where(diff < 0, b, len(order)))
        codes, found = pd.factorize(barred)
        reason[rows] = np.array([reasons.setdefault(r, len(reasons)) for r in found])[codes]
        for column, values in (
            ("n", st["n"].astype(int)),
            ("accuracy_a", means[a]),
            ("accuracy_b", means[b]),
            ("diff", diff),
            ("se_paired", st["se_paired"]),
            ("z_paired", z),
            ("p_paired", p),
            ("n10", st["n10"].astype(int)),
            ("n01", st["n01"].astype(int)),
            ("p_mcnemar", np.where(barred == "", exact_mcnemar_p(st["n10"], st["n01"]), np.nan)),
        ):
            if column not in table:
                table[column] = np.empty(total, dtype=values.dtype)
            table[column][rows] = values
    exact = reason == 0
    tested = np.where(exact, table["p_mcnemar"], table["p_paired"])
    table["p_holm"] = adjust_pvalues(tested, "holm")
    table["p_bh"] = adjust_pvalues(tested, "bh")
    for test in ("mcnemar", "holm", "bh"):
        table[f"significant_{test}"] = table[f"p_{test}"] < alpha
    labels = [EXACT_TEST] + [f"paired z ({r})" for r in list(reasons)[1:]]
    table |= {
        "category": text_column(categories, np.repeat(np.arange(len(categories)), pairs)),
        "model_a": text_column(order, np.tile(a, len(categories))),
        "model_b": text_column(order, np.tile(b, len(categories))),
        "naive_winner": _labels([*order, ""], winner),
        "test": _labels(labels, reason),
    }
    return pd.DataFrame({column: table[column] for column in CATEGORY_PAIR_COLUMNS})


def _labels(names, codes: np.ndarray):
    """:func:`evalbars.data.scores.text_column`, and an empty object column where there is no
    row (as pandas infers an empty column of labels)."""
    return text_column(names, codes) if codes.size else np.empty(0, dtype=object)


def discordant_homogeneity(n10, n01) -> tuple[float, int, float]:
    """``(chi2, df, p)``: is the share of discordant questions model a wins equal across strata?

    Pearson chi-square of the table ``(n10_c, n01_c)`` over strata with at least
    one discordant question (df = such strata - 1). NaN when fewer than two
    strata have discordant questions, or when a wins all or none of them.
    """
    b = np.asarray(n10, dtype=float)
    c = np.asarray(n01, dtype=float)
    used = (b + c) > 0
    b, c = b[used], c[used]
    if used.sum() < 2 or b.sum() == 0 or c.sum() == 0:
        return np.nan, int(max(used.sum() - 1, 0)), np.nan
    m = b + c
    share = b.sum() / m.sum()
    chi2 = float(np.sum((b - m * share) ** 2 / (m * share * (1 - share))))
    df = int(used.sum() - 1)
    # chdtrc and fdtrc are the survival functions scipy.stats.chi2 and .f call (a second of
    # import less for the job)
    return chi2, df, float(special.chdtrc(df, chi2))


def _homogeneity_by_pair(n10, n01, pair, pairs: int):
    """``(chi2, df, p)`` of :func:`discordant_homogeneity` for every pair at once.

    ``n10`` and ``n01`` hold one stratum per row, the rows of a pair consecutive (``pair``,
    non-decreasing codes ``0 .. pairs - 1``) and in stratum order. The pairs that use u strata
    become the rows of a (pairs, u) array of their used strata: numpy sums each row as it sums
    the pair's own 1-D array (pairwise summation from 8 terms on), so every statistic is
    :func:`discordant_homogeneity`'s to the last bit, with one pass per number of strata used.
    """
    b = np.asarray(n10, dtype=float)
    c = np.asarray(n01, dtype=float)
    used = (b + c) > 0
    used_count = np.bincount(pair[used], minlength=pairs)
    chi2 = np.full(pairs, np.nan)
    tested = np.zeros(pairs, dtype=bool)
    for u in np.unique(used_count[used_count >= 2]):
        members = np.flatnonzero(used_count == u)
        strata = used & (used_count[pair] == u)
        bu, cu = b[strata].reshape(-1, u), c[strata].reshape(-1, u)
        mu = bu + cu
        b_sum, c_sum, m_sum = bu.sum(axis=1), cu.sum(axis=1), mu.sum(axis=1)
        split = (b_sum != 0) & (c_sum != 0)  # a wins some and not all: a share to test
        share = (b_sum[split] / m_sum[split])[:, None]
        bu, mu = bu[split], mu[split]
        tested[members[split]] = True
        chi2[members[split]] = np.sum((bu - mu * share) ** 2 / (mu * share * (1 - share)), axis=1)
    df = np.maximum(used_count - 1, 0)
    p = np.full(pairs, np.nan)
    p[tested] = special.chdtrc(df[tested], chi2[tested])
    return chi2, df, p


def interaction_test(wide: WideScores) -> dict:
    """Model x category interaction in ``correct ~ model (*|+) category + (1|question)``.

    Complete data only (every model scored on every question). Within each
    question, the K - 1 orthonormal contrasts of the scores carry the residual
    variance and the model effects; the question means carry the question
    variance and the category means, which both models fit freely. So with
    :math:`SS_{full} = \\sum (y_{qm} - \\bar y_{q\\cdot} - \\bar y_{c,m} + \\bar y_{c})^2`
    (model effects per category) and
    :math:`SS_{red} = \\sum (y_{qm} - \\bar y_{q\\cdot} - \\bar y_{\\cdot m} + \\bar y)^2`,
    on :math:`N_w = n(K-1)` within-question contrasts:

    - ``lrt``: the maximum-likelihood ratio statistic
      :math:`N_w \\log(SS_{red}/SS_{full})` on (C - 1)(K - 1) df (lme4's
      ``anova(reduced, full)`` with ``REML = FALSE``), valid when the ML question
      variance is positive in both fits (``boundary`` False; else NaN);
    - ``f``: the split-plot F,
      :math:`[(SS_{red} - SS_{full})/((C-1)(K-1))] / [SS_{full}/((n-C)(K-1))]`
      on ((C - 1)(K - 1), (n - C)(K - 1)) df, exact under normality and sphericity.

    Returns
    -------
    dict
        ``lrt, lrt_df, lrt_p, f, f_df1, f_df2, f_p, boundary, n_questions,
        n_categories, n_models``.
    """
    scores = np.asarray(wide.scores, dtype=float)
    if not np.isfinite(scores).all():
        raise ValueError("the interaction test needs every model scored on every question")
    n, k = scores.shape
    names, codes = np.unique(np.asarray(wide.categories), return_inverse=True)
    c = names.size
    if c < 2 or k < 2:
        raise ValueError("the interaction test needs at least two categories and two models")
    size = np.bincount(codes).astype(float)
    question_mean = scores.mean(axis=1, keepdims=True)
    cell = np.stack([np.bincount(codes, weights=scores[:, m]) for m in range(k)], axis=1)
    cell /= size[:, None]  # (C, K): category-by-model means
    centred_full = scores - question_mean - cell[codes] + cell[codes].mean(axis=1, keepdims=True)
    centred_red = scores - question_mean - scores.mean(axis=0) + scores.mean()
    ss_full, ss_red = np.sum(centred_full**2), np.sum(centred_red**2)
    n_within = n * (k - 1)
    df1, df2 = (c - 1) * (k - 1), (n - c) * (k - 1)
    # Models alike on every question leave no within-question variation: F and LRT are NaN.
    with np.errstate(divide="ignore", invalid="ignore"):
        f = ((ss_red - ss_full) / df1) / (ss_full / df2)
        ratio = ss_red / ss_full
    # ML variance of a question mean: phi = sigma_q^2 + sigma^2 / K must exceed sigma^2 / K.
    category_mean = np.bincount(codes, weights=question_mean[:, 0]) / size
    phi = float(np.sum((question_mean[:, 0] - category_mean[codes]) ** 2) / n)
    boundary = phi <= max(ss_full, ss_red) / n_within / k
    lrt = np.nan if boundary or not np.isfinite(ratio) else n_within * np.log(ratio)
    return {
        "lrt": float(lrt),
        "lrt_df": int(df1),
        "lrt_p": float(special.chdtrc(df1, lrt)) if not boundary else np.nan,
        "f": float(f),
        "f_df1": int(df1),
        "f_df2": int(df2),
        "f_p": float(special.fdtrc(df1, df2, f)),
        "boundary": bool(boundary),
        "n_questions": int(n),
        "n_categories": int(c),
        "n_models": int(k),
    }


def category_summary(table: pd.DataFrame, wide: WideScores | None = None) -> pd.DataFrame:
    """Per pair: naive category wins, how many survive each correction, and the homogeneity test.

    ``table`` is :func:`category_pairwise_table`. One row per pair
    (``test = "discordant split"``) and, with ``wide`` (complete data), two rows
    for all pairs together: the model x category ``LRT (ML)`` and ``split-plot F``
    (:func:`interaction_test`). Columns: ``model_a, model_b, categories,
    wins_a, wins_b, ties, significant_mcnemar, significant_holm, significant_bh,
    test, statistic, df, df2, p``. The count columns of the all-pairs rows are totals. The
    discordant split of a pair is empty (statistic and p) where the exact test does not apply
    in some category (``table``'s ``test`` column). Every pair's split is
    :func:`discordant_homogeneity` of its rows in the table's order, to the last bit, computed
    for all pairs at once (half a million pairs of a thousand models in seconds).
    """
    # groupby's pairs (first appearance, a missing name left out) and each pair's rows in
    # the table's order: the strata of the per-pair loop this replaces, bit for bit
    grouping = table.groupby(["model_a", "model_b"], sort=False)
    codes = grouping.ngroup().to_numpy()
    pairs = grouping.ngroups
    kept = np.flatnonzero(codes >= 0)
    order = np.argsort(codes[kept], kind="stable")
    rows, pair = kept[order], codes[kept][order].astype(np.int64)
    size = np.bincount(pair, minlength=pairs)
    first = rows[np.cumsum(size) - size]

    def per_pair(flags) -> np.ndarray:  # how many of each pair's rows are flagged
        flags = np.asarray(flags, dtype=bool)[rows]
        return np.bincount(pair[flags], minlength=pairs)

    chi2, df, p = _homogeneity_by_pair(
        table["n10"].to_numpy()[rows], table["n01"].to_numpy()[rows], pair, pairs
    )
    if "test" in table:  # no 2x2 table to split where the exact test does not apply
        barred = per_pair(table["test"] != EXACT_TEST) > 0
        chi2[barred], p[barred] = np.nan, np.nan
    winner = table["naive_winner"]
    summary = (
        pd.DataFrame(
            {
                "model_a": table["model_a"].iloc[first].to_numpy(),
                "model_b": table["model_b"].iloc[first].to_numpy(),
                "categories": size,
                "wins_a": per_pair(winner == table["model_a"]),
                "wins_b": per_pair(winner == table["model_b"]),
                "ties": per_pair(winner == ""),
                **{
                    column: per_pair(table[column])
                    for column in ("significant_mcnemar", "significant_holm", "significant_bh")
                },
                "test": "discordant split",
                "statistic": chi2,
                "df": df,
                "df2": np.nan,
                "p": p,
            }
        )
        if pairs
        else pd.DataFrame()
    )
    testable = (
        wide is not None
        and np.isfinite(wide.scores).all()
        and len(wide.models) >= 2
        and len(set(wide.categories.tolist())) >= 2
    )
    if testable:  # (one model, or one category: no interaction to test)
        result = interaction_test(wide)
        totals = {
            "model_a": "all pairs",
            "model_b": "",
            "categories": int(table["category"].nunique()),
        } | {
            column: int(summary[column].sum())
            for column in (
                "wins_a",
                "wins_b",
                "ties",
                "significant_mcnemar",
                "significant_holm",
                "significant_bh",
            )
        }
        extra = [
            totals
            | {
                "test": "model x category LRT (ML)",
                "statistic": result["lrt"],
                "df": result["lrt_df"],
                "df2": np.nan,
                "p": result["lrt_p"],
            },
            totals
            | {
                "test": "model x category split-plot F",
                "statistic": result["f"],
                "df": result["f_df1"],
                "df2": result["f_df2"],
                "p": result["f_p"],
            },
        ]
        summary = pd.concat([summary, pd.DataFrame(extra)], ignore_index=True)
    return summary


class CategoryComparison(NamedTuple):
    """The per-category comparison of :func:`compare_categories`."""

    #: :func:`category_pairwise_table` of the compared models.
    table: pd.DataFrame
    #: :func:`category_summary` of ``table``.
    summary: pd.DataFrame
    #: The compared models (whose pairs make the Holm and BH family), in the input's order.
    models: list


def compare_categories(
    wide: WideScores, *, alpha: float = ALPHA, max_models: int | None = None
) -> CategoryComparison:
    """Every pair in every category, and the per-pair summary, over one family of tests.

    Parameters
    ----------
    wide : WideScores
        All the models' scores.
    alpha : float, optional
        Level of the ``significant_*`` flags.
    max_models : int, optional
        Compare only the ``max_models`` most accurate models (overall accuracy, ties by name;
        the config's ``analysis.category_pairwise_models``): the Holm and BH family is then the
        category x pair tests among them. Default every model. No display setting enters
        here: what figures draw (:func:`pairs_among`) never changes a number.

    Returns
    -------
    CategoryComparison
        ``table``, ``summary`` and ``models``; the models keep ``wide``'s order, so the sums
        (and their last digits) do not depend on the accuracy order.
    """
    if max_models is not None and max_models < len(wide.models):
        top = set(accuracy_order(wide)[:max_models])
        wide = wide.columns([model for model in wide.models if model in top])
    table = category_pairwise_table(wide, alpha)
    return CategoryComparison(table, category_summary(table, wide), list(wide.models))


def pairs_among(table: pd.DataFrame, models) -> pd.DataFrame:
    """The rows of a pairwise ``table`` whose two models are both in ``models``."""
    keep = set(models)
    return table[table["model_a"].isin(keep) & table["model_b"].isin(keep)]
