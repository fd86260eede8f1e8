"""Pairwise comparisons of models on a shared question set, and multiplicity adjustment.

Pair convention used by every table: models are ordered by accuracy (highest
first, ties by name; :func:`evalbars.data.scores.accuracy_order`) and each pair ``(model_a, model_b)`` has ``model_a`` earlier
in that order, so ``diff = accuracy_a - accuracy_b >= 0``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores, accuracy_order, text_column, wide_scores
from evalbars.defaults import ALPHA
from evalbars.stats.pair_products import binary_matrix, binary_pair_counts

__all__ = [
    "model_pairs",
    "adjust_pvalues",
    "two_sided_normal_p",
    "zero_se_one_sided_p",
    "rounded_variance",
    "ZERO_SE",
    "REPEATED_SAMPLES",
    "NOT_BINARY",
    "ITEM_SCORE",
    "exact_readings_not_applicable",
    "exact_readings_reasons",
    "difference_test",
    "pair_statistics",
    "pair_range",
    "pair_tests",
    "adjusted_pair_table",
    "gather_pair_tests",
    "PAIR_TEST_COLUMNS",
    "BLOCK_MODELS",
    "paired_z_tests",
    "exact_mcnemar_p",
    "tukey_p",
    "TUKEY_EXACT_LIMIT",
    "pairwise_table",
    "disagreement_rates",
]


def model_pairs(models) -> pd.DataFrame:
    """All K(K-1)/2 pairs ``(model_a, model_b)`` with ``model_a`` before ``model_b`` in ``models``."""
    models = list(models)
    a, b = np.triu_indices(len(models), k=1)
    return pd.DataFrame(
        {"model_a": text_column(models, a), "model_b": text_column(models, b)}, copy=False
    )


def adjust_pvalues(p, method: str) -> np.ndarray:
    """Multiplicity-adjusted p-values, one family per row (the last axis).

    Parameters
    ----------
    p : array_like, shape (..., m)
        Unadjusted p-values; each 1-D slice along the last axis is one family,
        so thousands of simulated families are adjusted at once.
    method : {"bonferroni", "holm", "bh"}
        With sorted :math:`p_{(1)} \\le \\dots \\le p_{(m)}`:

        - Bonferroni (family-wise error): :math:`\\min(1, m p_i)`;
        - Holm's step-down (family-wise error) [1]_:
          :math:`\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`;
        - Benjamini-Hochberg step-up (false discovery rate) [2]_:
          :math:`\\tilde p_{(i)} = \\min_{j \\ge i} \\min(1, m p_{(j)} / j)`.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test
       procedure. Scand J Stat 6, 65-70.
    .. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery
       rate: a practical and powerful approach to multiple testing. J R Stat Soc B 57,
       289-300.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], "holm").round(2).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], "bh").round(3).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p = np.asarray(p, dtype=float)
    m = p.shape[-1]
    # In place where a step makes a new array of every pair: at ten million pairs each is
    # 80 MB of fresh memory, a fifth of a second to map on a virtual machine.
    if method == "bonferroni":
        adjusted = p * m
        return np.minimum(adjusted, 1.0, out=adjusted)
    if method not in ("holm", "bh"):
        raise ValueError(f"unknown adjustment {method!r}; use 'bonferroni', 'holm' or 'bh'")
    if method == "holm" and p.ndim == 1 and m:
        # p-values of 0 (normal tails that underflow: half the pairs of a large leaderboard)
        # are the smallest, adjust to 0, and leave the others' multipliers m - j + 1 as they
        # were: only the others are sorted.
        others = np.flatnonzero(p)
        if others.size < m:
            adjusted = np.zeros(m)
            adjusted[others] = adjust_pvalues(p[others], "holm") if others.size else 0.0
            return adjusted
    # Any sort: tied p-values get the same adjusted value whichever comes first (Holm's
    # running maximum and BH's running minimum pass over a tie unchanged), and introsort takes
    # half of a stable sort's time (1.4 s against 2.6 s at ten million pairs).
    order = np.argsort(p, axis=-1)
    ordered = np.take_along_axis(p, order, axis=-1)
    if method == "holm":
        stepped = ordered
        stepped *= np.arange(m, 0, -1)  # m - j + 1 at the j-th smallest
        np.minimum(stepped, 1.0, out=stepped)
        np.maximum.accumulate(stepped, axis=-1, out=stepped)
    else:
        scaled = ordered * m / np.arange(1, m + 1)
        stepped = np.minimum(1.0, np.minimum.accumulate(scaled[..., ::-1], axis=-1)[..., ::-1])
    adjusted = np.empty_like(stepped)
    np.put_along_axis(adjusted, order, stepped, axis=-1)
    return adjusted


# --- The paper's Table 3: all pairwise comparisons ------------------------------------------------------------

#: Models per block of the exact count products of a part of the table (:func:`pair_statistics`
#: of some pairs of 0/1 scores, a shard): a block holds a ``BLOCK_MODELS x K`` float32 product and
#: the statistics of its pairs (about 100 MB at K = 4,500). The whole table takes the Gram
#: matrices instead (:func:`evalbars.stats.pair_products.gram`).
BLOCK_MODELS = 256


def pair_range(n_models: int, shard: int = 0, shards: int = 1) -> tuple[int, int]:
    """Pair positions ``[start, stop)`` of block ``shard`` of ``shards`` (0-based) in triu order.

    The K(K-1)/2 pairs of :func:`numpy.triu_indices` (the rows of :func:`pairwise_table`) are cut
    into ``shards`` contiguous blocks whose sizes differ by at most one; block ``s`` starts at
    ``s P // S``. Concatenating the blocks in order gives every pair once, in table order.

    Examples
    --------
    >>> [pair_range(6, s, 4) for s in range(4)]
    [(0, 3), (3, 7), (7, 11), (11, 15)]
    """
    if shards < 1 or not 0 <= shard < shards:
        raise ValueError(f"shard {shard} of {shards}: need shards >= 1 and 0 <= shard < shards")
    pairs = n_models * (n_models - 1) // 2
    return shard * pairs // shards, (shard + 1) * pairs // shards


def _moments(n, sum_a, sum_b, sq_a, sq_b, cross) -> dict:
    """Differences and standard errors of pairs from their sums over shared questions.

    ``n`` shared questions; ``sum_a = sum x_a``, ``sq_a = sum x_a^2`` (and for b) and
    ``cross = sum x_a x_b`` over them. Population variances (ddof = 0), as
    :func:`pairwise_table` states: :math:`v_a = \\overline{x_a^2} - \\bar x_a^2` and
    :math:`\\overline{d^2} - \\bar d^2` with :math:`\\overline{d^2} = (\\sum x_a^2 + \\sum x_b^2
    - 2 \\sum x_a x_b) / n`.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_a, mean_b = sum_a / n, sum_b / n
        var_a = sq_a / n - mean_a**2
        var_b = sq_b / n - mean_b**2
        diff = mean_a - mean_b
        mean_sq_diff = (sq_a + sq_b - 2 * cross) / n
        # Round-off of zero (identical columns, one difference on every question) is zero: a
        # variance of 1e-17 would give an SE of 1e-9 and any z.
        se_unpaired = np.sqrt(rounded_variance(var_a + var_b, (sq_a + sq_b) / n) / n)
        se_paired = np.sqrt(rounded_variance(mean_sq_diff - diff**2, mean_sq_diff) / n)
    return {"n": n, "diff": diff, "se_unpaired": se_unpaired, "se_paired": se_paired}


#: A variance below this share of the mean square it was taken from is round-off of zero: the
#: cancellation in :math:`\overline{x^2} - \bar x^2` leaves a few ulps (2.2e-16 each) of the mean
#: square, and a real variance is a far larger share of it (at least 1/n of it for 0/1 scores).
ROUNDING_SHARE = 1e-12


#: A model-based SE at or below this (1e-7 accuracy points) is round-off of zero: a mixed model
#: whose residual variance vanishes (two models with the same difference on every question)
#: leaves an SE of 1e-16 that would give any z. A real SE is at least about 1/n for 0/1
#: scores, far above it for any n a table can hold.
ZERO_SE = 1e-9


def rounded_variance(variance, mean_square):
    """``variance`` with round-off of zero (and below) set to 0 (:data:`ROUNDING_SHARE`).

    Examples
    --------
    >>> rounded_variance(np.array([1e-17, 1e-3, -1e-18]), 0.09).tolist()
    [0.0, 0.001, 0.0]
    """
    # (NaN, no shared question, stays NaN)
    return np.where(variance <= ROUNDING_SHARE * np.abs(mean_square), 0.0, variance)


def _binary_pair_statistics(x, answered, start: int, stop: int, columns=None) -> dict:
    """:func:`pair_statistics` of 0/1 scores for the pairs ``[start, stop)``, from exact counts.

    For 0/1 scores every sum the moments need is a count: ``sum x_a = sum x_a^2`` (over the
    questions b answered), ``cross = sum x_a x_b``, from float32 products
    (:func:`evalbars.stats.pair_products.binary_pair_counts`: the Gram matrices for the whole
    table, blocks of :data:`BLOCK_MODELS` models for a part of it), exact below 2**24
    questions; the statistics are computed from them in float64 a chunk of pairs at a time,
    so they are the same to the last bit whichever products gave the counts.
    """
    out = {key: np.empty(stop - start) for key in PAIR_STATISTICS}
    counts = binary_pair_counts(x, answered, start, stop, BLOCK_MODELS, columns)
    for where, n, sum_a, sum_b, cross in counts:
        block = _moments(n, sum_a, sum_b, sum_a, sum_b, cross)
        # a is right and b wrong on sum(x_a (1 - x_b)) = sum_a - cross.
        block["n10"], block["n01"] = np.rint(sum_a - cross), np.rint(sum_b - cross)
        for key, value in block.items():
            out[key][where] = value
    return out


#: Keys of :func:`pair_statistics`.
PAIR_STATISTICS = ("n", "diff", "se_unpaired", "se_paired", "n10", "n01")
#: Cells (questions x pairs) one step of the strict-comparison counts of graded scores holds.
_COMPARE_CELLS = 2**24


def pair_statistics(scores, pairs: tuple[int, int] | None = None, columns=None) -> dict:
    """Per-pair counts, differences and standard errors, by matrix products.

    Parameters
    ----------
    scores : array_like, shape (..., n, K)
        Question-by-model scores, NaN where a model has no score; leading axes are
        independent stacks (e.g. simulation replicates).
    pairs : (start, stop), optional
        Only the pairs at these positions of :func:`numpy.triu_indices` order
        (:func:`pair_range`); default all. The numbers are those of the whole table's rows,
        to the last bit.
    columns : array_like of int, optional
        Take the models in this order (the last axis of ``scores`` indexed by it); default
        as given.

    Returns
    -------
    dict of ndarray, each of shape (..., K(K-1)/2) (or ``stop - start``)
        For the pairs ``(a, b)`` in :func:`numpy.triu_indices` order, over the
        questions both answered: ``n``, ``diff`` (mean of a minus mean of b),
        ``se_unpaired``, ``se_paired`` (see :func:`pairwise_table`), ``n10`` and
        ``n01`` (questions on which a scored strictly higher / lower than b).

    Notes
    -----
    One matrix of 0/1 scores (NaN allowed) takes exact counts from float32 products
    (:mod:`evalbars.stats.pair_products`): the whole table from the Gram matrix ``X'X`` when
    complete (a is right and b wrong on ``sum x_a - (X'X)_ab`` questions; one symmetric product,
    ``K^2 n`` multiply-adds), three with missing cells (the answered mask ``M``: ``M'M``,
    ``X'M``, ``X'X``); some of the pairs (a shard) from blocks of :data:`BLOCK_MODELS` models
    against the models after them. At 4,500 models x 21,000 questions the Gram matrix is one
    pass of single-precision BLAS over 94.5 million cells.

    Other scores (partial credit, per-question means of several epochs) and stacks take all
    moments from K x K float64 products of the zero-filled scores with the answered mask, so
    a stack of thousands of replicates costs a handful of batched matrix products; the
    strict comparisons behind ``n10`` and ``n01`` are counted directly, in steps of at most
    2**24 question-pair cells.
    """
    x = np.asarray(scores, dtype=float)
    k = x.shape[-1] if columns is None else len(columns)
    start, stop = (0, k * (k - 1) // 2) if pairs is None else pairs
    binary = binary_matrix(x)
    if binary is not None:
        return _binary_pair_statistics(*binary, start, stop, columns)
    if columns is not None:
        x = x[..., columns]
    answered = np.isfinite(x)
    mask = answered.astype(float)
    filled = np.where(answered, x, 0.0)
    filled_t = np.swapaxes(filled, -1, -2)
    n = np.swapaxes(mask, -1, -2) @ mask
    sums = filled_t @ mask  # sums[a, b]: sum of column a over questions b also answered
    sumsq = (filled_t * filled_t) @ mask
    cross = filled_t @ filled
    a, b = np.triu_indices(k, k=1)
    a, b = a[start:stop], b[start:stop]
    out = _moments(
        n[..., a, b],
        sums[..., a, b],
        sums[..., b, a],
        sumsq[..., a, b],
        sumsq[..., b, a],
        cross[..., a, b],
    )
    if np.all((filled == 0) | (filled == 1)):
        # 0/1 scores: a is right and b wrong on sum(x_a (1 - x_b)) = sums[a, b] - cross[a, b].
        out["n10"] = np.rint(sums[..., a, b] - cross[..., a, b])
        out["n01"] = np.rint(sums[..., b, a] - cross[..., a, b])
        return out
    out["n10"] = np.empty(out["n"].shape, dtype=np.int64)
    out["n01"] = np.empty(out["n"].shape, dtype=np.int64)
    step = max(1, _COMPARE_CELLS // max(1, x[..., 0].size))
    for s in range(0, len(a), step):
        pa, pb = a[s : s + step], b[s : s + step]
        both = answered[..., :, pa] & answered[..., :, pb]
        out["n10"][..., s : s + step] = ((filled[..., :, pa] > filled[..., :, pb]) & both).sum(-2)
        out["n01"][..., s : s + step] = ((filled[..., :, pa] < filled[..., :, pb]) & both).sum(-2)
    return out


def paired_z_tests(scores) -> tuple[np.ndarray, np.ndarray]:
    """``(z, p)`` of the paired z-test of every pair, for one matrix or a stack of them.

    Pairs in :func:`numpy.triu_indices` order; ``z > 0`` means the earlier model
    scored higher. The statistic is the one of :func:`pairwise_table`.
    """
    stats = pair_statistics(scores)
    return two_sided_normal_p(stats["diff"], stats["se_paired"])


def two_sided_normal_p(diff, se):
    """``(z, p)`` of the two-sided normal test of ``diff / se``.

    A zero difference with zero SE gives z = 0, p = 1 (two models that agree on
    every question are not different).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where((se == 0) & (diff == 0), 0.0, diff / se)
    return z, 2 * special.ndtr(-np.abs(z))


def zero_se_one_sided_p(diff, n, shift=0.0):
    """One-sided p of :math:`H_1: \\Delta > s` when the SE of the difference is 0.

    A paired SE of 0 means every one of the n shared questions has the same difference c
    (often: no question flipped, c = 0, or every question flipped the same way, c = 1 for
    0/1 scores). A z reading then has no estimate of its sampling error, and a zero-width
    interval would claim any precision: the SE is not used. evalbars decides such a pair, in
    every table and reading, by an exact bound on seeing the same difference n times instead.
    Scores lie in [0, 1], so a question's difference :math:`d_i` lies in [-1, 1]; if its mean
    is at most s, :math:`c\\,P(d_i = c) - (1 - P(d_i = c)) \\le s`, so
    :math:`P(d_i = c) \\le (1 + s)/(1 + c)`, and over independent questions whose mean
    difference is at most s (the product is largest when every question's mean is s):

    .. math:: p = \\left(\\frac{1 + s}{1 + c}\\right)^n \\text{ if } c > s,
              \\qquad p = 1 \\text{ otherwise}.

    For 0/1 scores c is -1, 0 or 1: n wins of n give :math:`((1 + s)/2)^n` (:math:`2^{-n}` at
    s = 0, the sign test, :func:`exact_mcnemar_p` in its two-sided form), no flip against a
    non-inferiority margin d = -s gives :math:`(1 - d)^n`, the release gate's exact statement
    (:mod:`evalbars.readings.gate`). The bound needs nothing of the scores but their range, so
    it holds for partial credit and for means of any numbers of samples per question.
    ``diff``, ``n`` and ``shift`` broadcast.

    Examples
    --------
    >>> float(zero_se_one_sided_p(1.0, 10))  # ten wins of ten
    0.0009765625
    >>> float(zero_se_one_sided_p(0.0, 20, shift=-0.1))  # no flip in 20, 10-point margin
    0.12157665459056935
    >>> float(zero_se_one_sided_p(0.5, 3))  # half a point more on each of 3 questions
    0.2962962962962962
    """
    diff, n, shift = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (diff, n, shift)))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(diff > shift, ((1.0 + shift) / (1.0 + diff)) ** n, 1.0)
    return np.where(np.isfinite(diff), np.clip(p, 0.0, 1.0), np.nan)


def difference_test(diff, se, n):
    """``(z, p)`` of the two-sided test of a difference: the normal test of ``diff / se``,
    and where the SE is 0 the exact rule of :func:`zero_se_one_sided_p` (z is then
    +-inf, or 0 for a zero difference; p is the sign test's, :func:`exact_mcnemar_p`'s for
    0/1 scores). Every table decides a pair this way, so none can disagree on one."""
    diff, se = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    z, p = two_sided_normal_p(diff, se)
    zero = se == 0
    if np.any(zero):
        exact = np.minimum(1.0, 2.0 * zero_se_one_sided_p(np.abs(diff), n))
        p = np.where(zero, exact, p)
        z = np.where(zero & (diff == 0), 0.0, z)
    return z, p


#: Above this many statistics :func:`tukey_p` interpolates the studentized range tail between
#: exact points instead of integrating once per statistic (100 µs each: a minute for the
#: 499,500 pairs of a thousand models).
TUKEY_EXACT_LIMIT = 2000


def tukey_p(z, k: int, grid_points: int = 2049) -> np.ndarray:
    """Tukey-type p-values :math:`P(Q_{k,\\infty} > \\sqrt{2}|z|)` of many z statistics.

    :math:`Q_{k,\\infty}` is the studentized range of k independent standard
    normals (infinite degrees of freedom), evaluated by
    :data:`scipy.stats.studentized_range`. Up to :data:`TUKEY_EXACT_LIMIT`
    statistics each is evaluated exactly. Beyond, the survival function is
    evaluated exactly at ``grid_points`` equally spaced ranges from 0 to the
    largest one and its logarithm interpolated by a monotone cubic (PCHIP): the
    log tail is smooth and the interpolant keeps p decreasing in :math:`|z|`. Against
    the exact values the relative error is below 1e-6 where p > 1e-8; further
    out, scipy's own value (1 - cdf by quadrature) carries an error of the same
    size as the interpolation's.

    Examples
    --------
    >>> round(float(tukey_p(2.0, 3)), 6)  # R: ptukey(2 * sqrt(2), 3, Inf, lower.tail = FALSE)
    0.112183
    """
    # Imported here: scipy.stats takes a second to import, and the jobs that call tukey_p
    # (the mixed-model contrasts) are not the pairwise job, which needs only scipy.special.
    from scipy import stats  # noqa: PLC0415 - see above
    from scipy.interpolate import PchipInterpolator  # noqa: PLC0415

    q = np.sqrt(2.0) * np.abs(np.asarray(z, dtype=float))
    if q.size <= TUKEY_EXACT_LIMIT:
        return np.minimum(1.0, stats.studentized_range.sf(q, k, np.inf))
    grid = np.linspace(0.0, float(q.max()), grid_points)
    exact = stats.studentized_range.sf(grid, k, np.inf)
    # scipy's sf floors near 1e-14 (it is 1 - cdf); flatten the tail there rather than log 0.
    floor = exact[exact > 0].min()
    curve = PchipInterpolator(grid, np.log(np.clip(exact, floor, 1.0)))
    return np.minimum(1.0, np.exp(curve(q)))


def exact_mcnemar_p(n10, n01) -> np.ndarray:
    """Exact two-sided McNemar p-value: :math:`\\min(1, 2 P(X \\le \\min(b, c)))`, X ~ Bin(b + c, 1/2).

    This is the conditional binomial (sign) test on the discordant pairs, as
    statsmodels ``mcnemar(exact=True)`` and R ``binom.test(b, b + c)`` compute it
    (the two agree because Bin(m, 1/2) is symmetric). With no discordant pairs p = 1.

    References
    ----------
    .. [1] McNemar, Q. (1947). Note on the sampling error of the difference between
       correlated proportions or percentages. Psychometrika 12, 153-157.

    Examples
    --------
    >>> f"{float(exact_mcnemar_p(150, 86)):.4e}"  # Agresti (1990) presidential approval
    '3.7159e-05'
    """
    b = np.asarray(n10, dtype=np.int64)
    c = np.asarray(n01, dtype=np.int64)
    return np.minimum(1.0, 2 * special.bdtr(np.minimum(b, c), b + c, 0.5))


#: Why the exact readings of a pair do not apply: some cell of the pair holds more than one
#: sample (epochs), a score that is not 0 or 1 (partial credit), or an item score over k samples
#: (``ITEM_SCORE.format("pass@5")``).
REPEATED_SAMPLES = "repeated samples per question"
NOT_BINARY = "scores are not 0/1"
ITEM_SCORE = "{} scores"


def exact_readings_reasons(wide: WideScores, a, b) -> np.ndarray:
    """Why the exact readings do not apply to each pair (``a[i]``, ``b[i]``); "" where they do.

    The exact readings (the exact McNemar test, the sign test, the counts of flipped
    questions, the discordant odds ratio, the Bayesian posterior of the 2x2 table) are defined
    for one 0/1 score per (question, model): the pair's 2x2 table is then the data, and under
    :math:`\\Delta = 0` a discordant question favours either model with probability 1/2.
    A cell mean of several samples breaks both. A question's sign is no longer the sign of a
    0/1 difference, and when the two models hold different numbers of samples the signs favour
    the model with fewer: at a true accuracy of 0.8 on every question, three samples of A and
    one of B, B is ahead on 39% of the questions and A on 20% (:math:`0.8 (1 - 0.8^3)` against
    :math:`0.2 (1 - 0.2^3)`), although neither model is better. Partial credit has no 2x2
    table either. The paired z on the per-question means stays valid whatever the samples.
    Nor do they apply to item scores over k samples (pass@k, pass^k, maj@k: ``wide.score``).

    Parameters
    ----------
    wide : WideScores
    a, b : array_like of int
        Columns of ``wide``, one pair per position.

    Returns
    -------
    ndarray of str
        ``ITEM_SCORE.format(wide.score)`` for every pair of pass@k scores; else
        :data:`REPEATED_SAMPLES` where some cell of the pair, on the
        questions both answered, holds more than one sample; else :data:`NOT_BINARY` where a
        score there is neither 0 nor 1; else "".

    Examples
    --------
    >>> wide = WideScores(np.array([[1.0, 0.0, 0.5]]), ["A", "B", "C"], np.arange(1),
    ...     np.array(["x"]))
    >>> exact_readings_reasons(wide, [0, 0], [1, 2]).tolist()
    ['', 'scores are not 0/1']
    """
    a, b = (np.atleast_1d(np.asarray(v, dtype=np.int64)) for v in (a, b))
    scores = np.asarray(wide.scores)
    barred = "" if wide.item_score is None else ITEM_SCORE.format(wide.score)
    reasons = np.full(a.shape, barred, dtype=object)
    if barred or (not wide.has_repeats and _zero_one(scores)):
        return reasons
    answered = np.isfinite(scores)
    repeated = (wide.sample_counts > 1) if wide.has_repeats else None
    partial = answered & (scores != 0) & (scores != 1)
    for cells, reason in ((repeated, REPEATED_SAMPLES), (partial, NOT_BINARY)):
        if cells is not None and cells.any():
            reasons[(reasons == "") & _pairs_touching(cells, answered, a, b)] = reason
    return reasons


def _zero_one(scores: np.ndarray) -> bool:
    """Whether every score is 0, 1 or NaN, checked :data:`BLOCK_MODELS` columns at a time (no
    mask of a whole board's matrix)."""
    for c0 in range(0, scores.shape[-1], BLOCK_MODELS):
        block = scores[..., c0 : c0 + BLOCK_MODELS]
        if not np.all((block == 0) | (block == 1) | np.isnan(block)):
            return False
    return True


def _pairs_touching(cells: np.ndarray, answered: np.ndarray, a, b) -> np.ndarray:
    """Per pair: whether a cell of either model flagged in ``cells`` lies on a question both
    answered. Complete data need only each model's own flag; otherwise the counts
    ``cells' answered`` of the flagged models against the pairs' models (one float32 product,
    exact below 2**24 questions)."""
    flagged = cells.any(axis=0)
    if answered.all():
        return flagged[a] | flagged[b]
    if cells.shape[0] >= 2**24:  # beyond float32's exact counts: pair by pair
        both = answered[:, a] & answered[:, b]
        return ((cells[:, a] | cells[:, b]) & both).any(axis=0)
    rows, columns = np.flatnonzero(flagged), np.unique(np.concatenate([a, b]))
    counts = cells[:, rows].T.astype(np.float32) @ answered[:, columns].astype(np.float32)
    row_of = np.full(cells.shape[1], -1)
    row_of[rows] = np.arange(rows.size)
    column_of = np.searchsorted(columns, np.arange(cells.shape[1]))

    def shared(x, y):  # flagged cells of x on the questions y answered
        found = row_of[x] >= 0
        out = np.zeros(x.shape, dtype=bool)
        out[found] = counts[row_of[x[found]], column_of[y[found]]] > 0
        return out

    return shared(a, b) | shared(b, a)


def exact_readings_not_applicable(wide: WideScores, a: str, b: str) -> str | None:
    """Why the exact readings do not apply to models ``a`` and ``b`` of ``wide``, or None.

    The one rule every table and reading follows (:func:`exact_readings_reasons`): they apply
    when every cell of the pair, on the questions both answered, holds one 0/1 sample. Where
    they do not, an exact reading says "not applicable (<reason>)", carries no p and decides
    nothing.

    Parameters
    ----------
    wide : WideScores
    a, b : str
        Two of ``wide.models``.

    Returns
    -------
    str or None
        :data:`REPEATED_SAMPLES`, :data:`NOT_BINARY`, :data:`ITEM_SCORE`, or None where
        the exact readings apply.

    Examples
    --------
    >>> wide = WideScores(np.array([[1.0, 2 / 3], [0.0, 1.0]]), ["A", "B"], np.arange(2),
    ...     np.array(["x", "x"]), samples=np.array([[1, 3], [1, 3]]))
    >>> exact_readings_not_applicable(wide, "A", "B")
    'repeated samples per question'
    """
    reason = exact_readings_reasons(wide, [wide.models.index(a)], [wide.models.index(b)])[0]
    return reason or None


def pairwise_table(wide: WideScores, alpha: float = ALPHA) -> pd.DataFrame:
    """Unpaired and paired z-tests, exact McNemar and multiplicity-adjusted p for every pair (Table 3).

    Every pair uses the questions both models answered (all of them in complete
    data). With :math:`d_i = s_{ia} - s_{ib}`, :math:`\\bar d = \\hat p_a - \\hat p_b`:

    - unpaired (Miller 2024, Eq. 5; two independent samples):
      :math:`SE = \\sqrt{v_a/n + v_b/n}` with :math:`v` the population variance
      (:math:`\\hat p(1-\\hat p)` for 0/1 scores);
    - paired (Miller 2024, Eq. 7): :math:`SE = \\sqrt{\\frac1n \\cdot \\frac1n\\sum_i (d_i - \\bar d)^2}`,
      population variance (``ddof=0``). For 0/1 scores with ``n10`` questions only a
      got right and ``n01`` only b got right this gives
      :math:`z^2 = (n_{10} - n_{01})^2 / ((n_{10} + n_{01}) - (n_{10} - n_{01})^2/n)`
      (with ``ddof=1`` it would be multiplied by (n - 1)/n);
    - ``p_mcnemar``: :func:`exact_mcnemar_p` on ``n10, n01`` (counts of questions a
      scored strictly higher / lower than b), NaN where the exact readings do not apply
      (repeated samples or partial credit on the pair's shared questions:
      :func:`exact_readings_reasons`);
    - ``p_bonferroni``, ``p_holm``: :func:`adjust_pvalues` of ``p_paired`` over the
      K(K-1)/2 pairs.

    ``significant_<test>`` flags are ``p < alpha`` for ``unpaired``, ``paired``,
    ``mcnemar``, ``bonferroni`` and ``holm``.

    Returns
    -------
    DataFrame
        One row per pair, in :func:`model_pairs` order over :func:`accuracy_order`
        (``model_a`` the more accurate, so ``diff >= 0`` in complete data): ``model_a,
        model_b, n, diff, se_unpaired, z_unpaired, p_unpaired, se_paired, z_paired,
        p_paired, n10, n01, p_mcnemar, p_bonferroni, p_holm, significant_*``.

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
    """
    tests = _pair_test_columns(wide)
    # One constructor call, without a copy: column-by-column assignment costs more than the
    # statistics, a frame of the tests first would copy every column once more, and a copying
    # constructor stacks the float columns into one block (4 s for the 10 M pairs of 4,500
    # models).
    return pd.DataFrame(_adjusted_columns(tests, tests["p_paired"], alpha), copy=False)


#: Columns of :func:`pair_tests`: every statistic of a pair that does not depend on the others.
PAIR_TEST_COLUMNS = [
    "model_a",
    "model_b",
    "n",
    "diff",
    "se_unpaired",
    "z_unpaired",
    "p_unpaired",
    "se_paired",
    "z_paired",
    "p_paired",
    "n10",
    "n01",
    "p_mcnemar",
]
#: The tests whose ``significant_<test>`` flag :func:`pairwise_table` reports.
SIGNIFICANCE_TESTS = ("unpaired", "paired", "mcnemar", "bonferroni", "holm")


def pair_tests(wide: WideScores, pairs: tuple[int, int] | None = None) -> pd.DataFrame:
    """The rows of :func:`pairwise_table` without the family-wide columns (its first 13).

    Parameters
    ----------
    wide : WideScores
    pairs : (start, stop), optional
        Only the rows at these positions of the whole table (:func:`pair_range`, one shard of
        a table computed by several jobs); default all.

    Returns
    -------
    DataFrame
        :data:`PAIR_TEST_COLUMNS`: each pair's own statistics. Bonferroni and Holm need every
        pair's p (:func:`adjusted_pair_table`), so shards are adjusted once gathered.
    """
    return pd.DataFrame(_pair_test_columns(wide, pairs), copy=False)


def _pair_test_columns(wide: WideScores, pairs: tuple[int, int] | None = None) -> dict:
    """The columns of :func:`pair_tests`, as arrays."""
    order = accuracy_order(wide)
    columns = [wide.models.index(m) for m in order]
    stats = pair_statistics(wide.scores, pairs, columns=columns)
    k = len(order)
    start, stop = (0, k * (k - 1) // 2) if pairs is None else pairs
    a, b = np.triu_indices(k, k=1)
    a, b = a[start:stop], b[start:stop]
    diff, se_unpaired, se_paired = stats["diff"], stats["se_unpaired"], stats["se_paired"]
    z_unpaired, p_unpaired = difference_test(diff, se_unpaired, stats["n"])
    z_paired, p_paired = difference_test(diff, se_paired, stats["n"])
    n10, n01 = stats["n10"], stats["n01"]
    return {
        "model_a": text_column(order, a),
        "model_b": text_column(order, b),
        "n": stats["n"].astype(int),
        "diff": diff,
        "se_unpaired": se_unpaired,
        "z_unpaired": z_unpaired,
        "p_unpaired": p_unpaired,
        "se_paired": se_paired,
        "z_paired": z_paired,
        "p_paired": p_paired,
        "n10": n10.astype(int),
        "n01": n01.astype(int),
        # No shared question is no test at all, not a p of 1.
        "p_mcnemar": np.where(
            stats["n"] > 0, _exact_p_where_it_applies(wide, columns, a, b, n10, n01), np.nan
        ),
    }


def _exact_p_where_it_applies(wide, columns, a, b, n10, n01) -> np.ndarray:
    """:func:`exact_mcnemar_p` of the pairs (``a``, ``b``) of positions in ``columns``, NaN
    where the exact readings do not apply (:func:`exact_readings_reasons`)."""
    p = exact_mcnemar_p(n10, n01)
    if not wide.has_repeats and _zero_one(np.asarray(wide.scores)):
        return p  # one 0/1 sample per cell: they apply to every pair (no per-pair reasons)
    columns = np.asarray(columns)
    barred = exact_readings_reasons(wide, columns[a], columns[b]) != ""
    return np.where(barred, np.nan, p)


def adjusted_pair_table(tests: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`pair_tests` of every pair, with Bonferroni and Holm over them and the flags.

    ``p_bonferroni`` and ``p_holm`` are :func:`adjust_pvalues` of ``p_paired`` over all the
    rows (the family is every pair); ``significant_<test>`` is ``p_<test> < alpha``.
    """
    columns = {column: tests[column].array for column in PAIR_TEST_COLUMNS}
    return pd.DataFrame(_adjusted_columns(columns, tests["p_paired"].to_numpy(), alpha), copy=False)


def _adjusted_columns(columns: dict, p_paired: np.ndarray, alpha: float) -> dict:
    """``columns`` with ``p_bonferroni``, ``p_holm`` and the ``significant_*`` flags added."""
    columns["p_bonferroni"] = adjust_pvalues(p_paired, "bonferroni")
    columns["p_holm"] = adjust_pvalues(p_paired, "holm")
    for test in SIGNIFICANCE_TESTS:
        columns[f"significant_{test}"] = np.asarray(columns[f"p_{test}"]) < alpha
    return columns


def gather_pair_tests(paths) -> pd.DataFrame:
    """The :func:`pair_tests` of every pair from the Parquet files of its shards, in order.

    Each shard holds the rows of one :func:`pair_range` block; read back and stacked they
    are the rows one job computes (Parquet keeps every float and dtype), ready for
    :func:`adjusted_pair_table`.
    """
    parts = [pd.read_parquet(path) for path in paths]
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def disagreement_rates(items: pd.DataFrame, models=None) -> pd.DataFrame:
    """Share of shared questions on which each pair of models differs.

    Parameters
    ----------
    items : DataFrame
        Canonical item table (:data:`evalbars.data.items.ITEM_COLUMNS`).
    models : list, optional
        Models to compare (default: all in ``items``).

    Returns
    -------
    DataFrame
        ``model_a, model_b, questions, diff, disagreement`` in the pair convention
        of :mod:`evalbars.stats.pairwise` (model_a the more accurate), over the questions
        both models answered.

    Notes
    -----
    The disagreement rate is the mean square of the per-question difference,
    :math:`\\delta = \\overline{(x_a - x_b)^2}`, the quantity the paired sample
    size needs (:math:`\\mathrm{Var}(d) = \\delta - g^2`). For 0/1 scores it is the
    share of questions one model gets right and the other wrong; for per-question
    means of several epochs, or partial credit, it is smaller than the share of
    questions on which the two scores differ at all.
    """
    wide = wide_scores(items, models)
    order = accuracy_order(wide)
    x = wide.scores[:, [wide.models.index(m) for m in order]]
    stats = pair_statistics(x)
    pairs = model_pairs(order)
    pairs["questions"] = stats["n"].astype(int)
    pairs["diff"] = stats["diff"]
    # Sum over shared questions of (x_a - x_b)^2 by K x K products (an integer count for 0/1).
    mask = np.isfinite(x).astype(float)
    filled = np.where(mask > 0, x, 0.0)
    squares = (filled * filled).T @ mask
    a, b = np.triu_indices(x.shape[1], k=1)
    squared = squares[a, b] + squares[b, a] - 2 * (filled.T @ filled)[a, b]
    with np.errstate(divide="ignore", invalid="ignore"):
        pairs["disagreement"] = np.maximum(squared, 0.0) / stats["n"]
    return pairs
