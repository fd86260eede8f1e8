"""Blocks of a large matrix: slices that bound the temporaries of one pass over it.

A pass over the question-by-model matrix that needs elementwise temporaries (masks, centred
copies, products) makes them one block at a time, so that its memory is a few blocks whatever
the size of the board (4,500 models x 21,000 questions is 94.5 M cells, 756 MB per float64
copy). Matrices of at most :data:`BLOCK_CELLS` cells (the paper's 1,497 questions x 6 models)
are one block, so their arithmetic is the unblocked arithmetic, digit for digit.
"""

from __future__ import annotations

__all__ = ["BLOCK_CELLS", "blocks"]

#: Cells per block: 32 MB in float64.
BLOCK_CELLS = 2**22


def blocks(length: int, width: int, cells: int | None = None) -> list:
    """Slices of ``range(length)``, each taking at most ``cells // width`` (at least one) of it.

    ``length`` is the axis being split (rows, or models), ``width`` the size of the other axis,
    ``cells`` by default :data:`BLOCK_CELLS` (read at each call).

    Examples
    --------
    >>> blocks(5, 2, cells=4)
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    >>> blocks(1497, 6)
    [slice(0, 1497, None)]
    """
    cells = BLOCK_CELLS if cells is None else cells
    step = max(1, cells // max(1, width))
    return [slice(start, min(start + step, length)) for start in range(0, length, step)]
