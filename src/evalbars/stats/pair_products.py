r"""Every pair's counts and clustered standard errors from matrix products of the 0/1 scores.

For a questions x models matrix :math:`X` (n x K) of 0/1 scores, one product

.. math::  G = X^\top X, \qquad G_{ab} = n_{11}(a, b) = \#\{i : x_{ia} = x_{ib} = 1\},

gives every pair's concordant successes, and with the column sums :math:`s = X^\top \mathbf 1`
the rest of each pair's 2x2 table: :math:`n_{10} = s_a - G_{ab}` (a right, b wrong),
:math:`n_{01} = s_b - G_{ab}`, :math:`n_{00} = n - s_a - s_b + G_{ab}`. Every per-pair statistic of
a paired 0/1 comparison is an elementwise function of these: the paired difference
:math:`d = (n_{10} - n_{01})/n`, its SE :math:`\sqrt{((n_{10} + n_{01})/n - d^2)/n}`, McNemar's
:math:`b = n_{10}`, :math:`c = n_{01}` and its exact tail, and the models' Gram matrix that the
repeated-measures ANOVA's sphericity correction and the GEE sandwich read. With missing cells the
answered mask :math:`M` adds :math:`M^\top M` (questions both answered) and :math:`X^\top M`
(a's successes on the questions b answered).

float32 products of 0/1 matrices are exact below :math:`2^{24}` (16.7 million) questions, and run
at twice the float64 speed: :func:`gram` takes :math:`X^\top X` by one symmetric product (BLAS
``syrk``, :math:`K^2 n` multiply-adds), the floor of any all-pairs computation on the matrix.

Category-clustered (CR0) SEs of every pair's difference come from a second, small product on the
models x categories sums :math:`S` (:func:`clustered_pair_se`).

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640 (Eq. 4 and 7).
"""

from __future__ import annotations

import numpy as np

from evalbars.data.blocks import BLOCK_CELLS

__all__ = [
    "FLOAT32_EXACT",
    "binary_matrix",
    "binary_totals",
    "gram",
    "triu_positions",
    "binary_pair_counts",
    "clustered_pair_se",
]

#: float32 holds every integer up to 2**24 exactly: sums of that many 0/1 products are exact.
FLOAT32_EXACT = 2**24


def binary_matrix(scores: np.ndarray, columns=None):
    """``(x, answered)``: one 0/1 matrix (NaN allowed) of fewer than 2**24 questions as float32
    arrays, its columns in the order ``columns``, NaN as 0, ``answered`` None when complete;
    None for anything else (other scores, stacks). Built a block of questions at a time
    (:data:`evalbars.data.blocks.BLOCK_CELLS`; contiguous reads and writes), so the float64
    matrix is never copied whole.

    Examples
    --------
    >>> x, answered = binary_matrix(np.array([[1.0, 0.0], [0.0, 1.0]]))
    >>> x.dtype.name, answered is None
    ('float32', True)
    >>> binary_matrix(np.array([[0.5, 1.0]])) is None
    True
    """
    if scores.ndim != 2 or scores.shape[0] >= FLOAT32_EXACT:
        return None
    n, k = scores.shape
    everything = columns is None or np.array_equal(columns, np.arange(k))
    columns = np.arange(k) if columns is None else np.asarray(columns)
    x = np.empty((n, len(columns)), dtype=np.float32)
    answered = None
    step = max(1, BLOCK_CELLS // max(1, k))
    for r0 in range(0, n, step):
        part = scores[r0 : r0 + step] if everything else scores[r0 : r0 + step, columns]
        finite = np.isfinite(part)
        if not np.all((part == 0) | (part == 1) | ~finite):
            return None
        if finite.all():
            x[r0 : r0 + step] = part
            continue
        x[r0 : r0 + step] = np.where(finite, part, 0.0)
        if answered is None:  # every block before this one was complete
            answered = np.ones(x.shape, dtype=np.float32)
        answered[r0 : r0 + step] = finite
    return x, answered


def binary_totals(scores: np.ndarray, columns=None):
    """``(column_totals, row_totals)`` (float64) of a complete 0/1 matrix, over its columns
    ``columns`` (default all, in order), or None when a score is missing or neither 0 nor 1;
    a block of rows at a time (:data:`evalbars.data.blocks.BLOCK_CELLS`).

    Examples
    --------
    >>> [t.tolist() for t in binary_totals(np.array([[1.0, 0.0], [1.0, 1.0]]))]
    [[2.0, 1.0], [1.0, 2.0]]
    >>> binary_totals(np.array([[1.0, np.nan]])) is None
    True
    """
    n, k = scores.shape
    everything = columns is None or np.array_equal(np.sort(columns), np.arange(k))
    columns = np.arange(k) if columns is None else np.asarray(columns)
    column_totals = np.zeros(len(columns))
    row_totals = np.empty(n)
    for r0 in range(0, n, max(1, BLOCK_CELLS // max(1, k))):
        block = scores[r0 : r0 + max(1, BLOCK_CELLS // max(1, k))]
        if not everything:
            block = block[:, columns]
        if not np.all((block == 0) | (block == 1)):
            return None
        row_totals[r0 : r0 + block.shape[0]] = block.sum(axis=1)
        totals = block.sum(axis=0)
        column_totals += totals[columns] if everything else totals
    return column_totals, row_totals


def gram(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """:math:`X^\\top X` (or :math:`X^\\top Y`) of float32 matrices: exact whole numbers when both
    hold 0/1 values and there are fewer than 2**24 rows.

    ``x.T @ x`` is one BLAS ``syrk`` on ``x`` in place (half the multiplications of a general
    product).

    Examples
    --------
    >>> x = np.array([[1, 0], [1, 1], [0, 1]], dtype=np.float32)
    >>> gram(x).tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """
    if y is None:
        return x.T @ x
    return x.T @ y


def triu_positions(k: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``(a, b)`` at positions ``[start, stop)`` of :func:`numpy.triu_indices` order
    (``a < b``, by ``a`` then ``b``) of ``k`` models, without the whole list of pairs.

    Examples
    --------
    >>> [v.tolist() for v in triu_positions(4, 2, 5)]
    [[0, 1, 1], [3, 2, 3]]
    """
    # Position of the first pair (a, a + 1) of each row a.
    first = np.concatenate([[0], np.cumsum(np.arange(k - 1, 0, -1))])
    position = np.arange(start, stop)
    a = np.searchsorted(first, position, side="right") - 1
    b = position - first[a] + a + 1
    return a, b


def binary_pair_counts(x, answered, start: int, stop: int, block: int = 256, columns=None):
    """Exact counts of the pairs ``[start, stop)`` of triu order, a chunk at a time.

    Parameters
    ----------
    x, answered : ndarray
        :func:`binary_matrix`'s float32 0/1 scores (NaN as 0) and answered mask (None when
        complete), questions x models.
    start, stop : int
        Pair positions (:func:`triu_positions`).
    block : int
        Models per block of the products of a part of the table.
    columns : array_like of int, optional
        The models in this order (the columns of ``x`` indexed by it; default as given): the
        whole table permutes the Gram matrices, not the scores.

    Yields
    ------
    where, n, sum_a, sum_b, cross
        ``where`` a slice of ``[0, stop - start)``; for its pairs ``(a, b)``, float64: the
        questions both answered, a's and b's successes on them, and the successes they share.

    Notes
    -----
    The whole table takes every count from the Gram matrices (:func:`gram`: ``X'X`` when
    complete; ``M'M`` and ``X'M`` too with missing cells, ``M`` the answered mask), one
    symmetric float32 product each; a part of it (a shard) from the products of blocks of
    ``block`` models against the models after them. Sums of 0/1 products in float32 are exact
    below 2**24 questions, so the counts are the same whichever products gave them.
    """
    k = x.shape[1] if columns is None else len(columns)
    if stop - start == k * (k - 1) // 2:
        order = np.arange(x.shape[1]) if columns is None else np.asarray(columns)
        column_sums = x.sum(axis=0, dtype=np.float64)[order]
        cross = gram(x)[np.ix_(order, order)]
        counts = None
        if answered is not None:
            counts = tuple(m[np.ix_(order, order)] for m in (gram(answered), gram(x, answered)))
        for first in range(0, stop - start, _PAIR_CHUNK):
            last = min(first + _PAIR_CHUNK, stop - start)
            a, b = triu_positions(k, start + first, start + last)
            counts_of = _pair_entries(x.shape[0], column_sums, cross, counts, a, b)
            yield (slice(first, last), *counts_of)
        return
    if columns is not None:
        x = x[:, columns]
        answered = None if answered is None else answered[:, columns]
    column_sums = x.sum(axis=0, dtype=np.float64)
    # Position of the first pair (a, a + 1) of each row a in triu order.
    first = np.concatenate([[0], np.cumsum(np.arange(k - 1, 0, -1))])
    for r0 in range(int(np.searchsorted(first, start, "right")) - 1, k - 1, block):
        if first[r0] >= stop:
            break
        r1 = min(r0 + block, k - 1)
        rows = slice(r0, r1)
        i, j = np.triu_indices(r1 - r0, k=1, m=k - r0)
        lo, hi = max(start - first[r0], 0), min(stop - first[r0], len(i))
        i, j = i[lo:hi], j[lo:hi]
        cross = x[:, rows].T @ x[:, r0:]
        counts = None
        if answered is not None:
            counts = (answered[:, rows].T @ answered[:, r0:], x[:, rows].T @ answered[:, r0:])
            counts += (answered[:, rows].T @ x[:, r0:],)
        counts_of = _pair_entries(x.shape[0], column_sums, cross, counts, i + r0, j + r0, r0)
        yield (slice(first[r0] + lo - start, first[r0] + hi - start), *counts_of)


def _pair_entries(n_questions, column_sums, cross, counts, a, b, offset: int = 0):
    """``(n, sum_a, sum_b, cross)`` of the pairs ``(a, b)`` from products whose rows start at
    model ``offset``: ``cross`` = ``X'X``; ``counts`` None when complete, else ``M'M`` and
    ``X'M``, with ``M'X`` third where the product is not the whole Gram matrix (whose
    ``(X'M)[b, a]`` it is)."""

    def entry(matrix, u, v):
        return matrix[u - offset, v - offset].astype(np.float64)

    crossed = entry(cross, a, b)
    if counts is None:
        return np.full(len(a), float(n_questions)), column_sums[a], column_sums[b], crossed
    # b's successes on the questions a answered
    sum_b = entry(counts[2], a, b) if len(counts) > 2 else entry(counts[1], b, a)
    return entry(counts[0], a, b), entry(counts[1], a, b), sum_b, crossed


def clustered_pair_se(scores, categories, columns=None) -> np.ndarray:
    r"""Category-clustered (CR0) SE of every pair's mean difference, by one small product.

    Parameters
    ----------
    scores : array_like, shape (n, K)
        Complete scores (any values; 0/1 as a rule), questions by models.
    categories : array_like, shape (n,)
        Cluster (category) label of each question.
    columns : array_like of int, optional
        Take the models in this order; default as given.

    Returns
    -------
    ndarray, shape (K(K-1)/2,)
        For the pairs ``(a, b)`` in :func:`numpy.triu_indices` order, Miller's clustered SE
        (Eq. 4, no small-sample factor; :func:`evalbars.stats.intervals.clustered_se`) of the
        mean of :math:`D_i = s_{ia} - s_{ib}`; NaN with fewer than two categories (one
        cluster's deviations sum to zero: not estimable).

    Notes
    -----
    With :math:`S` the models x categories score sums, :math:`n_c` the category sizes and
    :math:`d_{ab}` the mean difference, the cluster sums of the centred differences are
    :math:`S_{ac} - S_{bc} - n_c d_{ab}`, so

    .. math::  N^2 SE_{ab}^2 = \sum_c (S_{ac} - S_{bc} - n_c d_{ab})^2
               = Q_{aa} + Q_{bb} - 2 Q_{ab} - 2 d_{ab} (P_a - P_b) + d_{ab}^2 \sum_c n_c^2,

    with :math:`Q = S S^\top` (K x K, :math:`K^2 C` multiply-adds) and :math:`P = S n`. The
    expansion cancels about :math:`\log_{10}(\max Q / N SE^2)` digits (three or four on a
    benchmark), far from float64's sixteen.

    Examples
    --------
    >>> x = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0], [1, 0]], dtype=float)
    >>> round(float(clustered_pair_se(x, list("aabbcc"))[0]), 6)
    0.360041
    """
    x = np.asarray(scores, dtype=float)
    if columns is not None:
        x = x[:, np.asarray(columns)]
    n, k = x.shape
    codes = np.unique(np.asarray(categories), return_inverse=True)[1].ravel()
    n_categories = int(codes.max()) + 1 if codes.size else 0
    sizes = np.bincount(codes, minlength=n_categories).astype(float)
    sums = np.zeros((n_categories, k))
    step = max(1, BLOCK_CELLS // max(1, k))
    for r0 in range(0, n, step):  # category sums a block of questions at a time
        sums += _category_rows(x[r0 : r0 + step], codes[r0 : r0 + step], n_categories)
    products = sums.T @ sums  # Q = S S'
    projected = sums.T @ sizes  # P = S n
    totals = sums.sum(axis=0)
    squared_sizes = float(sizes @ sizes)
    pairs = k * (k - 1) // 2
    out = np.empty(pairs)
    if n_categories < 2:
        out[:] = np.nan
        return out
    for start in range(0, pairs, _PAIR_CHUNK):  # temporaries of a chunk of pairs, not K^2
        stop = min(start + _PAIR_CHUNK, pairs)
        a, b = triu_positions(k, start, stop)
        d = (totals[a] - totals[b]) / n
        squares = products[a, a] + products[b, b] - 2.0 * products[a, b]
        squares += d * (d * squared_sizes - 2.0 * (projected[a] - projected[b]))
        out[start:stop] = np.sqrt(np.maximum(squares, 0.0)) / n
    return out


#: Pairs per chunk of the elementwise passes (a few MB of temporaries each).
_PAIR_CHUNK = 2**18


def _category_rows(block: np.ndarray, codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Rows of ``block`` summed by category code (categories x columns)."""
    indicator = np.zeros((n_categories, block.shape[0]))
    indicator[codes, np.arange(block.shape[0])] = 1.0
    return indicator @ block
