"""Omnibus tests of "all K models score the same" on a shared question set.

Every core function takes scores of shape ``(..., n_questions, n_models)``: one
complete question-by-model matrix, or a stack of them (e.g. simulation
replicates x questions x models), and returns a NamedTuple of arrays with the
leading (stack) shape. Closed forms only; nothing loops over questions or
replicates.

- :func:`rm_anova`: repeated-measures ANOVA, question as subject (two-way
  additive model, model x question), with the Greenhouse-Geisser epsilon;
- :func:`oneway_anova`: the naive one-way ANOVA that ignores question identity;
- :func:`friedman`: Friedman's rank test with the tie correction;
- :func:`cochran_q`: Cochran's Q for 0/1 scores (equal to the tie-corrected
  Friedman statistic on 0/1 data).

:func:`omnibus_table` applies all four to a :class:`~evalbars.data.scores.WideScores`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores
from evalbars.stats.pair_products import FLOAT32_EXACT, binary_matrix, gram

__all__ = [
    "RmAnova",
    "OneWayAnova",
    "ChiSquareTest",
    "rm_anova",
    "oneway_anova",
    "friedman",
    "cochran_q",
    "omnibus_table",
]


class RmAnova(NamedTuple):
    """Repeated-measures ANOVA result (arrays with the stack shape)."""

    f: np.ndarray
    df1: float
    df2: float
    p: np.ndarray
    ss_model: np.ndarray
    ss_question: np.ndarray
    ss_error: np.ndarray
    ms_error: np.ndarray
    epsilon: np.ndarray
    p_gg: np.ndarray


class OneWayAnova(NamedTuple):
    """One-way ANOVA result (arrays with the stack shape)."""

    f: np.ndarray
    df1: float
    df2: float
    p: np.ndarray
    ss_between: np.ndarray
    ss_within: np.ndarray


class ChiSquareTest(NamedTuple):
    """A chi-square statistic with its degrees of freedom and upper-tail p-value."""

    statistic: np.ndarray
    df: float
    p: np.ndarray


def _as_stack(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    if scores.ndim < 2:
        raise ValueError(f"scores must have shape (..., n_questions, n_models), got {scores.shape}")
    n, k = scores.shape[-2:]
    if n < 2 or k < 2:
        raise ValueError(f"need at least 2 questions and 2 models, got {n} x {k}")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinite values; pass complete rows only")
    return scores


def _ratio(num, den):
    """num / den with 0/0 -> NaN and x/0 -> inf, silently (degenerate data)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.divide(num, den)


def rm_anova(scores) -> RmAnova:
    """One-way repeated-measures ANOVA with question as subject.

    Parameters
    ----------
    scores : array_like, shape (..., n, K)
        Complete scores: n questions (subjects) by K models (levels).

    Returns
    -------
    RmAnova
        ``f`` with ``df1 = K - 1`` and ``df2 = (n - 1)(K - 1)``, ``p``, the sums of
        squares, ``ms_error``, the Greenhouse-Geisser ``epsilon`` and ``p_gg``
        (the F test on ``epsilon * df1``, ``epsilon * df2`` degrees of freedom).

    Notes
    -----
    With grand mean :math:`\\bar s`, model means :math:`\\bar s_{\\cdot k}` and
    question means :math:`\\bar s_{i \\cdot}`:

    .. math::

        SS_{model} = n \\sum_k (\\bar s_{\\cdot k} - \\bar s)^2, \\quad
        SS_{question} = K \\sum_i (\\bar s_{i \\cdot} - \\bar s)^2, \\quad
        SS_{error} = SS_{total} - SS_{model} - SS_{question},

    :math:`F = \\frac{SS_{model}/(K-1)}{SS_{error}/((n-1)(K-1))}`. The
    Greenhouse-Geisser (1959) epsilon is
    :math:`\\hat\\varepsilon = \\operatorname{tr}(\\tilde S)^2 / ((K-1)\\operatorname{tr}(\\tilde S^2))`
    with :math:`\\tilde S` the double-centred K x K sample covariance of the
    models' scores (Box 1954). Same values as R ``aov(y ~ model +
    Error(question/model))``, pingouin ``rm_anova`` and statsmodels ``AnovaRM``.

    References
    ----------
    .. [1] Greenhouse, S. W., Geisser, S. (1959). On methods in the analysis of
       profile data. Psychometrika 24, 95-112.
    """
    x = _as_stack(scores)
    n, k = x.shape[-2:]
    if len(_question_blocks(x)) > 1 and n < FLOAT32_EXACT and _binary(x):
        return _binary_rm_anova(x)
    grand = x.mean(axis=(-2, -1), keepdims=True)
    model_means = x.mean(axis=-2, keepdims=True)
    question_means = x.mean(axis=-1, keepdims=True)
    ss_model = n * ((model_means - grand) ** 2).sum(axis=(-2, -1))
    ss_question = k * ((question_means - grand) ** 2).sum(axis=(-2, -1))
    # The interaction residual computed directly, not by subtraction, to avoid cancellation;
    # it and the cross products of the centred scores in blocks of questions. (A large 0/1
    # matrix takes both from exact counts: _binary_rm_anova.)
    ss_error, cross = 0.0, 0.0
    for rows in _question_blocks(x):
        part = x[..., rows, :]
        ss_error = ss_error + (
            (part - model_means - question_means[..., rows, :] + grand) ** 2
        ).sum(axis=(-2, -1))
        centred = part - model_means
        cross = cross + np.swapaxes(centred, -1, -2) @ centred
    return _rm_anova_result(n, k, ss_model, ss_question, ss_error, cross)


def _rm_anova_result(n, k, ss_model, ss_question, ss_error, cross) -> RmAnova:
    """:class:`RmAnova` from the sums of squares and the centred cross products of the models."""
    df1, df2 = k - 1, (n - 1) * (k - 1)
    ms_error = ss_error / df2
    f = _ratio(ss_model / df1, ms_error)
    p = special.fdtrc(df1, df2, f)
    cov = cross / (n - 1)
    double_centred = cov - cov.mean(axis=-1, keepdims=True) - cov.mean(axis=-2, keepdims=True)
    double_centred = double_centred + cov.mean(axis=(-2, -1), keepdims=True)
    trace = np.trace(double_centred, axis1=-2, axis2=-1)
    trace_sq = (double_centred * double_centred).sum(axis=(-2, -1))
    epsilon = _ratio(trace**2, (k - 1) * trace_sq)
    p_gg = special.fdtrc(epsilon * df1, epsilon * df2, f)
    return RmAnova(
        f, float(df1), float(df2), p, ss_model, ss_question, ss_error, ms_error, epsilon, p_gg
    )


def _binary_rm_anova(x: np.ndarray) -> RmAnova:
    r""":func:`rm_anova` of one large complete 0/1 matrix, from exact counts.

    With column (model) totals :math:`c_k`, row (question) totals :math:`r_i` and the grand
    total :math:`T = \sum_k c_k` (whole numbers, and :math:`\sum x^2 = T`), the error sum of
    squares of the two-way additive model is

    .. math::  SS_{error} = \frac{nK\,T - K \sum_k c_k^2 - n \sum_i r_i^2 + T^2}{nK},

    whose numerator is computed in exact integer arithmetic (no cancellation at all), and the
    centred cross products of the models are :math:`X^\top X - n\,\bar s \bar s^\top`, the Gram
    matrix a whole number below 2**24 in float32 (:func:`evalbars.stats.pair_products.gram`, one
    symmetric product: :math:`K^2 n` multiply-adds, the sphericity correction's floor).
    """
    n, k = x.shape
    columns, rows = _binary_totals(x)
    total = int(columns.sum())
    model_means = (columns / n)[None, :]
    question_means = (rows / k)[:, None]
    grand = total / (n * k)
    ss_model = n * ((model_means - grand) ** 2).sum()
    ss_question = k * ((question_means - grand) ** 2).sum()
    # Python integers: exact whatever the size (n k T reaches 10**15 on a large board).
    numerator = n * k * total - k * _square_sum(columns) - n * _square_sum(rows) + total * total
    ss_error = np.float64(numerator / (n * k))
    cross = gram(binary_matrix(x)[0]).astype(np.float64) - n * (model_means.T @ model_means)
    return _rm_anova_result(n, k, ss_model, ss_question, ss_error, cross)


def _binary_totals(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column and row totals of a 0/1 matrix as int64, a block of questions at a time."""
    columns = np.zeros(x.shape[1], dtype=np.int64)
    rows = np.empty(x.shape[0], dtype=np.int64)
    for part in _question_blocks(x):
        block = x[part]
        columns += block.sum(axis=0).astype(np.int64)
        rows[part] = block.sum(axis=1)
    return columns, rows


def _square_sum(values: np.ndarray) -> int:
    """Sum of squares of whole numbers as an exact Python integer."""
    return int((values.astype(object) ** 2).sum()) if values.size else 0


def oneway_anova(scores) -> OneWayAnova:
    """The naive one-way ANOVA of the K models' scores, ignoring question identity.

    Treats the K columns as independent groups; NaN entries are left out, so
    groups may differ in size (:math:`n_k` scores in column k, N in all):
    :math:`SS_{between} = \\sum_k n_k (\\bar s_{\\cdot k} - \\bar s)^2`,
    :math:`SS_{within} = \\sum_{i,k} (s_{ik} - \\bar s_{\\cdot k})^2`,
    :math:`F = \\frac{SS_{between}/(K-1)}{SS_{within}/(N - K)}`
    (scipy ``f_oneway``, R ``anova(lm(y ~ model))``). ``df2`` is an array when a
    stack has different numbers of missing entries per slice.
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim < 2 or x.shape[-1] < 2:
        raise ValueError(f"scores must have shape (..., n_questions, n_models), got {x.shape}")
    n, k = x.shape[-2:]
    # Sums in blocks of questions (one block up to evalbars.data.blocks.BLOCK_CELLS cells).
    parts = _question_blocks(x)
    n_k, sums, grand_sum = 0, 0.0, 0.0
    for rows in parts:
        present = np.isfinite(x[..., rows, :])
        values = np.where(present, x[..., rows, :], 0.0)
        n_k = n_k + present.sum(axis=-2, keepdims=True)
        sums = sums + values.sum(axis=-2, keepdims=True)
        grand_sum = grand_sum + values.sum(axis=(-2, -1), keepdims=True)
    total = n_k.sum(axis=(-2, -1), keepdims=True)
    grand = grand_sum / total
    model_means = _ratio(sums, n_k)
    ss_between = (n_k * (model_means - grand) ** 2).sum(axis=(-2, -1))
    ss_within = 0.0
    for rows in parts:
        part = x[..., rows, :]
        ss_within = ss_within + (np.where(np.isfinite(part), part - model_means, 0.0) ** 2).sum(
            axis=(-2, -1)
        )
    df1 = float(k - 1)
    df2 = (total - k).reshape(ss_between.shape).astype(float)
    if np.all(df2 == df2.flat[0]):  # complete data: one df2 for the whole stack
        df2 = float(df2.flat[0])
    f = _ratio(ss_between / df1, ss_within / df2)
    return OneWayAnova(f, df1, df2, special.fdtrc(df1, df2, f), ss_between, ss_within)


def friedman(scores) -> ChiSquareTest:
    """Friedman's chi-square test with the correction for ties.

    Scores are ranked within each question (average ranks for ties), and

    .. math::

        Q = \\frac{(K-1) \\sum_k (R_k - n(K+1)/2)^2}{\\sum_{i,k} r_{ik}^2 - nK(K+1)^2/4},

    with :math:`R_k` the rank sum of model k; ``df = K - 1``. Without ties this is
    :math:`\\frac{12}{nK(K+1)}\\sum_k R_k^2 - 3n(K+1)`; with ties it equals that
    divided by :math:`1 - \\sum (t^3 - t)/(nK(K^2-1))` (R ``friedman.test``,
    scipy ``friedmanchisquare``, pingouin ``friedman``). Questions on which all
    models tie add nothing to numerator or denominator.

    References
    ----------
    .. [1] Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed.,
       section 5.8 (T1).
    """
    x = _as_stack(scores)
    n, k = x.shape[-2:]
    binary = _binary(x)
    if binary and len(_question_blocks(x)) > 1:
        # A large 0/1 matrix: the rank sums from its totals (_binary_ranks summed over a row's
        # z zeros and K - z ones): R_k = sum_i (z_i + 1)/2 + (K/2) c_k. Half-integers, so the
        # same numbers as the sums of the ranks.
        columns, rows = _binary_totals(x)
        zeros = (k - rows).astype(float)
        low, high = (zeros + 1) / 2, zeros + (k - zeros + 1) / 2
        rank_sums = low.sum() + (k / 2) * columns
        squares = float((zeros * low**2 + (k - zeros) * high**2).sum())
        return _friedman_result(n, k, rank_sums, squares)
    if not binary:
        # Imported only for graded scores: 0/1 scores are ranked by counting (_binary_ranks),
        # and scipy.stats takes a second to import.
        from scipy.stats import rankdata  # noqa: PLC0415 - a second of import, graded scores only
    # Rank sums and squared ranks in blocks of questions: half-integers and their squares, so
    # their sums are exact in any order (below 2**53, i.e. n K**3 < 9e15).
    rank_sums, squares = 0.0, 0.0
    for rows in blocks(n, x.size // n):
        ranks = _binary_ranks(x[..., rows, :]) if binary else rankdata(x[..., rows, :], axis=-1)
        rank_sums = rank_sums + ranks.sum(axis=-2)
        squares = squares + (ranks**2).sum(axis=(-2, -1))
    return _friedman_result(n, k, rank_sums, squares)


def _friedman_result(n, k, rank_sums, squares) -> ChiSquareTest:
    """Friedman's tie-corrected statistic from the rank sums and the sum of squared ranks."""
    numerator = (k - 1) * ((rank_sums - n * (k + 1) / 2) ** 2).sum(axis=-1)
    denominator = squares - n * k * (k + 1) ** 2 / 4
    q = _ratio(numerator, denominator)
    return ChiSquareTest(q, float(k - 1), special.chdtrc(k - 1, q))


def _question_blocks(x: np.ndarray) -> list:
    """Blocks of questions for the passes over one score matrix (:func:`evalbars.data.blocks.blocks`);
    a stack of matrices (simulation replicates) is one block, its arithmetic as it always was."""
    if x.ndim != 2:
        return [slice(None)]
    return blocks(x.shape[0], x.shape[1])


def _binary(x: np.ndarray) -> bool:
    """Every score 0 or 1 (checked in blocks of questions)."""
    n = x.shape[-2]
    return all(
        bool(((x[..., rows, :] == 0) | (x[..., rows, :] == 1)).all())
        for rows in blocks(n, x.size // n)
    )


def _binary_ranks(x: np.ndarray) -> np.ndarray:
    """``rankdata(x, axis=-1)`` of 0/1 scores without sorting: with z zeros in a row, its zeros
    share the average rank (z + 1)/2 and its ones z + (K - z + 1)/2 (half-integers, exact)."""
    k = x.shape[-1]
    zeros = k - x.sum(axis=-1, keepdims=True)
    return np.where(x == 1.0, zeros + (k - zeros + 1) / 2, (zeros + 1) / 2)


def cochran_q(scores) -> ChiSquareTest:
    """Cochran's Q test that K matched proportions are equal (0/1 scores).

    .. math::

        Q = (K-1)\\frac{K\\sum_k C_k^2 - N^2}{KN - \\sum_i R_i^2},

    with :math:`C_k` the column (model) totals, :math:`R_i` the row (question)
    totals and :math:`N` the grand total; ``df = K - 1``. On 0/1 data it equals the
    tie-corrected Friedman statistic; with K = 2 it is McNemar's uncorrected
    :math:`(b-c)^2/(b+c)`.

    References
    ----------
    .. [1] Cochran, W. G. (1950). The comparison of percentages in matched samples.
       Biometrika 37, 256-266.
    """
    x = _as_stack(scores)
    if not _binary(x):
        raise ValueError("Cochran's Q needs 0/1 scores")
    k = x.shape[-1]
    column_totals = x.sum(axis=-2)
    row_totals = x.sum(axis=-1)
    total = row_totals.sum(axis=-1)
    q = _ratio(
        (k - 1) * (k * (column_totals**2).sum(axis=-1) - total**2),
        k * total - (row_totals**2).sum(axis=-1),
    )
    return ChiSquareTest(q, float(k - 1), special.chdtrc(k - 1, q))


def omnibus_table(wide: WideScores) -> pd.DataFrame:
    """All omnibus tests on the questions every model answered.

    Returns
    -------
    DataFrame
        Columns ``test, statistic, df1, df2, p, epsilon, n_questions``; rows

        - ``rm_anova``: repeated-measures F, question as subject;
        - ``rm_anova_gg``: the same F with Greenhouse-Geisser corrected degrees of
          freedom (``epsilon * df``) and p; ``epsilon`` is filled on both RM rows;
        - ``oneway_anova``: the naive one-way F that ignores question identity;
        - ``friedman``: tie-corrected Friedman chi-square (``df2`` empty);
        - ``cochran_q``: Cochran's Q (only when every score is 0 or 1, and not for an item
          score over k samples such as pass@k, whose 0s and 1s are not single samples).

        All rows use the same complete questions (rows with a missing score are
        dropped, listwise), so the naive and the blocked tests see identical data;
        with fewer than two such questions, or one model (nothing to compare), every
        statistic is missing.
    """
    complete = np.isfinite(wide.scores).all(axis=1)
    x = wide.scores if complete.all() else wide.scores[complete]
    # question_set: all with fewer than two questions every model answered, or one model
    if len(x) < 2 or x.shape[1] < 2:
        names = ["rm_anova", "rm_anova_gg", "oneway_anova", "friedman"]
        table = pd.DataFrame({"test": names})
        for column in ("statistic", "df1", "df2", "p", "epsilon"):
            table[column] = np.nan
        table["n_questions"] = len(x)
        return table
    rm = rm_anova(x)
    one = oneway_anova(x)
    fr = friedman(x)
    rows = [
        ("rm_anova", rm.f, rm.df1, rm.df2, rm.p, rm.epsilon),
        ("rm_anova_gg", rm.f, rm.epsilon * rm.df1, rm.epsilon * rm.df2, rm.p_gg, rm.epsilon),
        ("oneway_anova", one.f, one.df1, one.df2, one.p, np.nan),
        ("friedman", fr.statistic, fr.df, np.nan, fr.p, np.nan),
    ]
    if wide.item_score is None and _binary(np.asarray(x, dtype=float)):
        cq = cochran_q(x)
        rows.append(("cochran_q", cq.statistic, cq.df, np.nan, cq.p, np.nan))
    table = pd.DataFrame(rows, columns=["test", "statistic", "df1", "df2", "p", "epsilon"])
    for column in ("statistic", "df1", "df2", "p", "epsilon"):
        table[column] = table[column].astype(float)
    table["n_questions"] = int(complete.sum())
    return table
