"""Integer codes for label columns (models, questions, categories) of tables with millions of rows.

A leaderboard of a thousand models on twelve thousand questions repeats each
model name twelve thousand times. These helpers work on the distinct labels
and leave the rows to integer arrays: :func:`as_category` holds a text column
as a categorical with sorted string categories, and :func:`factorize_sorted`
codes any column so that codes order like the labels, as ``pd.factorize(...,
sort=True)`` does, without sorting the rows' codes (which costs seconds at
this size).

At a board's hundred million rows every array of one number per row is hundreds of MB, and
making it costs more than the work done with it; so :func:`index_codes` lets small integer ids
be their own codes, and :func:`code_counts` and :func:`mark_cells` count and mark rows a block
at a time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.blocks import blocks

__all__ = [
    "as_category",
    "factorize_sorted",
    "dense_integer_codes",
    "index_codes",
    "first_rows",
    "first_values",
    "code_counts",
    "mark_cells",
]


def _rank_of(labels) -> tuple[np.ndarray, np.ndarray]:
    """``(rank, order)``: ``order`` sorts ``labels``; ``rank[i]`` is label i's sorted position,
    and ``rank[-1]`` is -1 so that a code of -1 (null) maps to -1."""
    order = np.argsort(np.asarray(labels), kind="stable")
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1
    return rank, order


def as_category(values) -> pd.Categorical:
    """``values`` as a categorical whose categories are strings in sorted order; nulls stay null.

    Sorted categories make the codes order like the strings, so sorting by codes
    sorts by name. Works from the distinct values alone (a categorical's codes
    already are a factorisation), so it costs little however many rows repeat them.
    """
    values = pd.Series(values, copy=False)
    if isinstance(values.dtype, pd.CategoricalDtype):
        categories = values.cat.categories
        if categories.dtype == "str" and categories.is_monotonic_increasing:
            return values.array
        codes, uniques = values.array.codes, categories
    else:
        codes, uniques = pd.factorize(values)
    categories = pd.Index(np.asarray(uniques, dtype=object)).astype("str")
    rank, order = _rank_of(categories.to_numpy())
    return pd.Categorical.from_codes(rank[codes], categories=categories[order])


def factorize_sorted(values: pd.Series, nulls: str = "sentinel") -> tuple[np.ndarray, pd.Index]:
    """Codes and labels as ``pd.factorize(values, sort=True)``: the labels seen, sorted.

    A categorical column keeps its codes, which order as its categories do (as
    in pandas), renumbered only when some category is unused; anything else is
    factorised once and its distinct labels sorted. ``nulls="sentinel"`` codes nulls -1 (as pandas);
    ``nulls="code"`` gives them the code after the last label, so that every
    row has a code usable as an array index and nulls sort last.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        # The categorical's own codes (``.cat.codes`` would copy them into a new Series).
        codes, labels = values.array.codes, values.cat.categories
        has_nulls = bool(len(codes)) and int(codes.min()) < 0
        if has_nulls:
            seen = np.zeros(len(labels) + 1, dtype=bool)
            seen[codes] = True  # a null's code -1 marks the extra last place
            seen = seen[:-1]
        else:  # counted a block at a time: faster than marking at every row's code
            seen = code_counts(codes, len(labels)) > 0
        if not seen.all():
            renumber = np.append(np.cumsum(seen) - 1, -1)
            codes, labels = renumber[codes], labels[seen]
    elif (dense := dense_integer_codes(values)) is not None:
        codes, labels = dense[0], pd.Index(dense[1])
        has_nulls = False  # (an integer column has none)
    else:
        codes, uniques = pd.factorize(values)
        rank, order = _rank_of(uniques)
        codes, labels = rank[codes], pd.Index(uniques).take(order)
        has_nulls = True  # (not known: looked for below)
    if nulls == "code" and has_nulls:
        codes = np.where(codes < 0, len(labels), codes)
    return codes, labels


def _addressable(rows: int) -> int:
    """The widest range of integer labels a table indexed by them may span, for ``rows`` rows."""
    return 4 * rows + 1024


def index_codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """A code per row and the label of each code, for callers that mark or count rows in a table
    with a slot per code (codes order like the labels).

    An integer column whose labels fill most of the numbers from 0 to the largest (question ids
    0 to N, or 70 to 12,101 as MMLU-Pro's) is its own codes: no code is made per row (380 MB on
    a board's 95 M rows). Its slots are then the numbers 0 to the largest, and those no row
    holds stay empty (a caller that lists the labels leaves out the slots no row marks).
    Anything else is coded by :func:`factorize_sorted`, nulls in a slot after the labels.

    Examples
    --------
    >>> codes, labels = index_codes(pd.Series([3, 1, 3]))
    >>> codes.tolist(), labels.tolist()
    ([3, 1, 3], [0, 1, 2, 3])
    >>> codes, labels = index_codes(pd.Series(["b", None, "a"]))
    >>> codes.tolist(), labels.tolist()
    ([1, 2, 0], ['a', 'b', nan])
    """
    if isinstance(values.dtype, np.dtype) and values.dtype.kind in "iu" and len(values):
        numbers = values.to_numpy()
        size = int(numbers.max()) + 1
        if numbers.min() >= 0 and size <= _addressable(len(numbers)):
            held = np.zeros(size, dtype=bool)
            held[numbers] = True
            if 2 * np.count_nonzero(held) >= size:  # few empty slots
                return numbers, pd.Index(np.arange(size, dtype=numbers.dtype))
    codes, labels = factorize_sorted(values, nulls="code")
    if len(codes) and codes.max() == len(labels):
        labels = labels.append(pd.Index([None], dtype=labels.dtype))
    return codes, labels


def dense_integer_codes(values) -> tuple[np.ndarray, np.ndarray] | None:
    """Sorted codes of an integer column by direct addressing, or None where that does not pay.

    Where the ids span a range not much wider than the number of rows (MMLU-Pro's question
    ids, a synthetic board's), a table of the range marks the ids seen and its running sum
    numbers them in sorted order: one pass over the rows, no hashing and no sort. Returns
    ``(codes, labels)`` as :func:`factorize_sorted`; None for other dtypes, nulls or a wide
    range.
    """
    values = np.asarray(values) if not isinstance(values, pd.Series) else values.to_numpy()
    if values.dtype.kind not in "iu" or not len(values):
        return None
    low, high = int(values.min()), int(values.max())
    if high - low > _addressable(len(values)):
        return None
    if 0 <= low and high <= _addressable(len(values)):
        low = 0  # ids index the table as they are: no shifted copy of every row
    offset = values - low if low else values
    seen = np.zeros(high - low + 1, dtype=bool)
    seen[offset] = True
    # int32 codes while they fit: half the memory of int64 on a board's hundred million rows.
    code_of = np.cumsum(seen, dtype=np.int32 if len(seen) < 2**31 else np.int64) - 1
    return code_of[offset], np.flatnonzero(seen).astype(values.dtype) + low


def first_rows(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The first row at which each of ``n_codes`` codes occurs (``len(codes)`` where none does).

    Writing the rows in reverse leaves each code's earliest row last (fancy assignment keeps the
    last write), which ``np.minimum.at`` would do at a tenth of the speed.

    Examples
    --------
    >>> first_rows(np.array([2, 0, 2, 0]), 4).tolist()
    [1, 4, 0, 4]
    """
    first = np.full(n_codes, len(codes), dtype=np.int64)
    # Row numbers in int32 while they fit: half the memory of int64 on a board's 95 M rows.
    row_type = np.int32 if len(codes) < 2**31 else np.int64
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1, dtype=row_type)
    return first


def first_values(values: pd.Series, codes: np.ndarray, n_codes: int, at=None):
    """The value of ``values`` at the first row of each of ``n_codes`` codes (``codes`` one per
    row), as an array of ``values``' type: of every code (null where no row holds it), or of the
    codes ``at`` only (an index array or boolean mask of codes that rows hold).

    A categorical column's codes are written in reverse, each code's earliest last (as
    :func:`first_rows`), so that no row number is made for each row; other columns are taken at
    :func:`first_rows`.

    Examples
    --------
    >>> values = pd.Series(pd.Categorical(["x", "y", "z", "y"]))
    >>> list(first_values(values, np.array([1, 0, 1, 0]), 3))
    ['y', 'x', nan]
    >>> np.asarray(first_values(pd.Series([5, 6, 7]), np.array([2, 0, 2]), 3, at=[0, 2]))
    array([6, 5])
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        first = np.full(n_codes, -1, dtype=values.array.codes.dtype)
        first[codes[::-1]] = values.array.codes[::-1]
        first = first if at is None else first[at]
        return pd.Categorical.from_codes(first, dtype=values.dtype)
    rows = first_rows(codes, n_codes)
    if at is not None:  # (held codes: no fill, so integers stay integers)
        return values.array.take(rows[at])
    return values.array.take(np.where(rows < len(codes), rows, -1), allow_fill=True)


#: Rows :func:`code_counts` counts at a time.
COUNT_BLOCK = 1 << 20


def code_counts(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """How many rows hold each of ``n_codes`` codes (``np.bincount(codes, minlength=n_codes)``).

    Counted a block of :data:`COUNT_BLOCK` rows at a time: ``np.bincount`` makes an int64 copy
    of its input, 760 MB at once for the int16 model codes of a board's 95 M rows, where a
    block's copy stays in cache (and the count takes half the time).

    Examples
    --------
    >>> code_counts(np.array([2, 0, 2], dtype=np.int16), 4).tolist()
    [1, 0, 2, 0]
    """
    counts = np.zeros(n_codes, dtype=np.int64)
    for rows in blocks(len(codes), 1, COUNT_BLOCK):
        counts += np.bincount(codes[rows], minlength=n_codes)
    return counts


#: Rows :func:`mark_cells` marks at a time.
MARK_BLOCK = 1 << 16


def mark_cells(table: np.ndarray, codes) -> None:
    """``table[tuple(codes)] = True`` for a boolean ``table`` and one code per row for each of its
    axes, a block of :data:`MARK_BLOCK` rows at a time.

    Each block's cells are numbered in the flattened table and marked at one index array: three
    times faster than numpy's assignment at several index arrays, and without the cell number
    per row (380 MB on a board's 95 M rows) that one such array for all rows would take.

    Examples
    --------
    >>> table = np.zeros((2, 3), dtype=bool)
    >>> mark_cells(table, [np.array([0, 1, 1]), np.array([2, 0, 2], dtype=np.int16)])
    >>> table.astype(int).tolist()
    [[0, 0, 1], [1, 0, 1]]
    """
    flat = np.reshape(table, -1, copy=False)  # marks the table itself (a copy would raise)
    for block in blocks(len(codes[0]), 1, MARK_BLOCK):
        cell = codes[0][block].astype(np.intp)
        for axis_codes, size in zip(codes[1:], table.shape[1:], strict=True):
            cell *= size
            cell += axis_codes[block]
        flat[cell] = True
