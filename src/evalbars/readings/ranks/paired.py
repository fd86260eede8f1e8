"""Rank uncertainty that respects pairing: a bootstrap over the shared questions.

When per-question outcomes are available, every system answered the same
questions, so their errors are positively correlated; resampling questions
(the same questions for every model) and paired z intervals for the gaps keep
that, and read the ordering more sharply than the unpaired calculator.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores, accuracy_order
from evalbars.defaults import DRAWS, LEVEL, SEED
from evalbars.readings.ranks.board_file import leaderboard_from_wide
from evalbars.readings.ranks.defaults import DRAW_CHUNK
from evalbars.readings.ranks.render import headline
from evalbars.readings.ranks.report import RankReport
from evalbars.readings.ranks.unpaired import (
    _assemble,
    _check_settings,
    anchored_tiers,
    rank_ranges,
    score_intervals,
)
from evalbars.stats.intervals import z_for_level
from evalbars.stats.pairwise import rounded_variance, zero_se_one_sided_p

__all__ = ["bootstrap_accuracies", "paired_rank_table"]


def _shared_questions(wide: WideScores) -> WideScores:
    """The questions every model answered (``wide`` itself, no copy, when that is all of them)."""
    keep = np.isfinite(wide.scores).all(axis=1)
    if not keep.any():
        raise ValueError(
            "no question was answered by every model; a paired reading needs shared questions"
        )
    return wide if keep.all() else wide.rows(keep)


def _whole_number_dtype(scores: np.ndarray):
    """float32 when every score is 0 or 1 and there are fewer than 2**24 questions, else float64.

    Sums of 0/1 scores over the questions (with whole-number weights up to the number of
    questions, as bootstrap counts are) are whole numbers below 2**24, exact in float32, whose
    matrix products run twice as fast as float64's and hold half the memory.
    """
    if scores.shape[0] >= 2**24:
        return np.float64
    # checked a block of questions at a time (no masks of a whole board's matrix)
    for rows in blocks(scores.shape[0], scores.shape[1]):
        part = scores[rows]
        if not ((part == 0) | (part == 1)).all():
            return np.float64
    return np.float32


#: Cells per block of the transposed copy of :class:`_PairedMoments` (a few MB: in cache).
_TRANSPOSE_CELLS = 2**21


class _PairedMoments:
    """Column moments of a complete score matrix, for paired gaps between any two columns.

    For columns a and b over n questions, with :math:`d_i = s_{ia} - s_{ib}`:
    :math:`\\bar d = \\bar s_a - \\bar s_b` and
    :math:`SE_p^2 = (\\overline{d^2} - \\bar d^2)/n`, where
    :math:`\\overline{d^2} = \\overline{s_a^2} + \\overline{s_b^2} - 2\\,\\overline{s_a s_b}`
    (population variance, as ``se_paired`` of :func:`evalbars.stats.pairwise.pairwise_table`).
    Cross moments of neighbours come from one elementwise product, those of one
    column with all later ones from one matrix-vector product: never a K x K table.

    ``order`` gives the columns of ``scores`` in the order the gaps are read (column j of the
    reading is ``scores[:, order[j]]``); the matrix is copied once, models as contiguous rows in
    that order, in float32 when the scores are 0/1 (every cross moment a whole number then, so
    the same in either precision).
    """

    def __init__(self, scores: np.ndarray, order=None):
        order = np.arange(scores.shape[1]) if order is None else np.asarray(order)
        # Models as contiguous rows: "this column against every later one" is then a view.
        # Transposed a block of questions at a time (in cache: a third of the time of the
        # whole matrix's strided copy at 4,500 models x 21,000 questions).
        self.by_model = np.empty((len(order), scores.shape[0]), dtype=_whole_number_dtype(scores))
        for rows in blocks(scores.shape[0], scores.shape[1], _TRANSPOSE_CELLS):
            self.by_model[:, rows] = scores[rows].T[order]
        self.n = scores.shape[0]
        self.mean = scores.mean(axis=0)[order]
        self.mean_sq = np.einsum("ij,ij->i", self.by_model, self.by_model, dtype=np.float64)
        self.mean_sq /= self.n

    def _gaps(self, a, b, cross) -> tuple[np.ndarray, np.ndarray]:
        diff = self.mean[a] - self.mean[b]
        mean_sq_diff = self.mean_sq[a] + self.mean_sq[b] - 2 * cross
        # Round-off of zero (two identical columns, one difference on every question) is zero.
        return diff, np.sqrt(rounded_variance(mean_sq_diff - diff**2, mean_sq_diff) / self.n)

    def separated(self, diff, se, z, level) -> np.ndarray:
        """Whether each gap's interval lies above 0; at a zero SE (no interval: the same
        difference on every question) the exact rule of every table decides
        (:func:`evalbars.stats.pairwise.zero_se_one_sided_p`), so one question never
        separates two models and 120 wins of 120 do."""
        exact = zero_se_one_sided_p(diff, self.n) < (1 - level) / 2
        with np.errstate(invalid="ignore"):
            return np.where(se > 0, diff - z * se > 0, exact)

    def adjacent(self) -> tuple[np.ndarray, np.ndarray]:
        """``(diff, se_paired)`` of every column and the next one."""
        rows = self.by_model
        cross = np.einsum("ij,ij->i", rows[:-1], rows[1:], dtype=np.float64) / self.n
        columns = np.arange(rows.shape[0])
        return self._gaps(columns[:-1], columns[1:], cross)

    def from_column(self, top: int) -> tuple[np.ndarray, np.ndarray]:
        """``(diff, se_paired)`` of column ``top`` and each column after it."""
        below = np.arange(top + 1, self.by_model.shape[0])
        cross = (self.by_model[top + 1 :] @ self.by_model[top]).astype(np.float64) / self.n
        return self._gaps(np.full(below.size, top), below, cross)


#: Bootstrap replicates per matrix product. The product (replicates x questions) @ (questions x
#: models) runs near the BLAS peak from about a thousand rows (at 128 rows, the repacking of the
#: score matrix costs most of the time: 1.6 s against 0.17 s per 1,000 replicates at 1,000
#: models x 12,032 questions); the chunk holds BOOTSTRAP_CHUNK x questions counts (86 MB in
#: float32 at 21,000 questions). The numbers do not depend on it (see DRAW_CHUNK).
BOOTSTRAP_CHUNK = 1024


#: Bootstrap draws per block of replicate rows when the counts are drawn in bulk
#: (:func:`_bootstrap_counts`): the block's words, picks and counts (about 2 MB) stay in the
#: processor cache, so each pass over them costs a fraction of one over a whole chunk.
_DRAW_BLOCK = 2**15
_LOW32 = 0xFFFFFFFF


class _Words:
    """The 32-bit words ``Generator.integers`` reads from a PCG64 bit generator, in order.

    numpy serves a 32-bit draw from the low half of a 64-bit output and keeps the high half for
    the next one (the ``has_uint32`` and ``uinteger`` of the bit generator's state);
    :meth:`close` leaves that state as numpy would.
    """

    def __init__(self, bit_generator):
        self.bit_generator = bit_generator
        state = bit_generator.state
        self.spare = np.array([state["uinteger"]] if state["has_uint32"] else [], np.uint32)

    def take(self, count: int) -> np.ndarray:
        raw = self.bit_generator.random_raw((count - self.spare.size + 1) // 2)
        if sys.byteorder == "little":  # each output's low half, then its high half
            words = raw.view(np.uint32)
        else:
            words = np.column_stack([raw & _LOW32, raw >> 32]).astype(np.uint32).ravel()
        if self.spare.size:
            words = np.concatenate([self.spare, words])
        self.spare = words[count:]
        return words[:count]

    def close(self) -> None:
        state = self.bit_generator.state
        state["has_uint32"] = int(self.spare.size)
        if self.spare.size:
            state["uinteger"] = int(self.spare[0])
        self.bit_generator.state = state


def _bounded_draws(words: _Words, bounds: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    r"""``Generator.integers(0, bounds)`` for uint64 ``bounds`` from 2 to 2**32, as int64.

    numpy's algorithm (Lemire's multiply-and-shift, as ``Generator.integers`` draws an array of
    bounds one element at a time), over the whole array: a draw is :math:`\lfloor w b / 2^{32}
    \rfloor` for the next word w, unless the low 32 bits of :math:`w b` fall below
    ``thresholds`` :math:`= 2^{32} \bmod b`, when the draw takes the next word instead (with
    probability below :math:`b / 2^{32}`), and every later draw one word later.

    References
    ----------
    .. [1] Lemire, D. (2019). Fast random integer generation in an interval. ACM Transactions on
       Modeling and Computer Simulation 29(1), 3. arXiv:1805.10941.
    """
    out = np.empty(bounds.size, np.uint64)
    done = 0
    drawn = words.take(bounds.size)
    while True:
        product = drawn.astype(np.uint64)
        product *= bounds[done:]
        redrawn = np.flatnonzero((product & _LOW32) < thresholds[done:])
        stop = int(redrawn[0]) if redrawn.size else product.size
        np.right_shift(product[:stop], 32, out=out[done : done + stop])
        if not redrawn.size:
            return out.view(np.int64)  # every draw is below 2**32
        done += stop
        drawn = np.concatenate([drawn[stop + 1 :], words.take(1)])


def _bootstrap_counts(rng: np.random.Generator, starts, ends, out: np.ndarray) -> None:
    """Fill ``out`` (replicates x questions) with how often each question is drawn.

    Replicate r counts the picks ``rng.integers(starts, ends, size=(len(out), n))[r]``: the same
    numbers, and the same generator state after. With numpy's default bit generator (PCG64)
    they are drawn by :func:`_bounded_draws`, :data:`_DRAW_BLOCK` draws at a time; a question
    alone in its stratum is its own pick and draws nothing, as in ``Generator.integers``.
    """
    replicates, n_questions = out.shape
    if type(rng.bit_generator) not in (np.random.PCG64, np.random.PCG64DXSM):
        offsets = np.arange(DRAW_CHUNK)[:, None] * n_questions
        for row in range(0, replicates, DRAW_CHUNK):
            rows = min(DRAW_CHUNK, replicates - row)
            picks = rng.integers(starts, ends, size=(rows, n_questions))
            picks += offsets[:rows]
            out[row : row + rows] = np.bincount(
                picks.ravel(), minlength=rows * n_questions
            ).reshape(rows, n_questions)
        return
    drawn = ends - starts > 1
    bounds = (ends - starts)[drawn].astype(np.uint64)
    block = max(1, _DRAW_BLOCK // max(1, bounds.size))
    bounds = np.tile(bounds, block)
    thresholds = (2**32 - bounds) % bounds
    # Position of each pick in the block's flattened (rows x questions) count matrix.
    base = (np.arange(block)[:, None] * n_questions + starts[drawn]).ravel()
    words = _Words(rng.bit_generator)
    try:
        for row in range(0, replicates, block):
            rows = min(block, replicates - row)
            cells = rows * (bounds.size // block)
            picks = _bounded_draws(words, bounds[:cells], thresholds[:cells])
            picks += base[:cells]
            out[row : row + rows] = np.bincount(picks, minlength=rows * n_questions).reshape(
                rows, n_questions
            )
    finally:
        words.close()
    out[:, ~drawn] = 1


def bootstrap_accuracies(
    scores: np.ndarray,
    strata,
    replicates: int,
    rng: np.random.Generator,
    chunk: int = BOOTSTRAP_CHUNK,
):
    """Yield chunks of stratified-bootstrap mean scores, shape (replicates, models).

    Every replicate resamples, within each stratum h of size :math:`n_h`, :math:`n_h`
    questions with replacement and takes each model's mean over the resampled
    question set, **the same questions for every model** (so pairing is kept).
    The replicate mean is :math:`\\bar s^*_m = \\frac1n \\sum_i c_i s_{im}` where
    :math:`c_i` counts how often question i was drawn: each chunk draws the indices
    ``rng.integers`` would draw (:func:`_bootstrap_counts`: the same numbers, drawn in bulk),
    turns them into a (chunk, questions) count matrix with ``bincount`` and multiplies it
    by the score matrix, so memory is O(chunk x questions) whatever the number of
    replicates. With 0/1 scores the product runs in float32, exactly
    (:func:`_whole_number_dtype`).

    Parameters
    ----------
    scores : ndarray, shape (questions, models)
        Complete scores (no NaN).
    strata : array_like of length questions, or None
        Stratum label of each question (category); None for an unstratified bootstrap.
    replicates : int
    rng : numpy.random.Generator
    chunk : int
        Replicates per yielded chunk (and per matrix product); the numbers do not depend on it.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall (the nonparametric bootstrap).
    .. [2] Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press, section 3.7 (stratified resampling).
    """
    scores = np.asarray(scores)
    n_questions = scores.shape[0]
    exact_dtype = _whole_number_dtype(scores)
    codes = (
        np.zeros(n_questions, dtype=np.int64)
        if strata is None
        else np.unique(np.asarray(strata), return_inverse=True)[1]
    )
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
    ends = np.searchsorted(sorted_codes, sorted_codes, side="right")
    # Questions already in stratum order (the canonical order sorts by category): no reordering.
    in_order = bool((order == np.arange(n_questions)).all())
    sorted_scores = np.asarray(scores if in_order else scores[order], dtype=exact_dtype)
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        counts = np.empty((size, n_questions), dtype=exact_dtype)
        _bootstrap_counts(rng, starts, ends, counts)
        # Float counts: the product then runs in BLAS (integer matmul does not), still exact.
        yield (counts @ sorted_scores).astype(np.float64) / n_questions


def paired_rank_table(
    wide: WideScores,
    level: float = LEVEL,
    replicates: int = DRAWS,
    seed: int = SEED,
    stratify: bool = True,
    board: pd.DataFrame | None = None,
) -> RankReport:
    """Rank uncertainty that respects pairing, from item-level scores.

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores; only the questions every model answered are used.
    level : float
        Confidence level of intervals and rank ranges.
    replicates : int
        Bootstrap replicates of the question set (:func:`bootstrap_accuracies`).
    seed : int
        Seed of ``numpy.random.default_rng``; same inputs and seed, same table.
    stratify : bool
        Resample within categories (default), so each replicate keeps the
        benchmark's category mix.
    board : DataFrame, optional
        :func:`leaderboard_from_wide` of ``wide``, when the caller has it: used when every
        model answered every question (it is then the shared questions' board too).

    Returns
    -------
    RankReport
        Same columns as :func:`rank_table`, models in
        :func:`evalbars.data.scores.accuracy_order`.

    Notes
    -----
    - ``score``, ``ci_low``, ``ci_high``: accuracy and Wilson interval on the
      shared questions (pairing does not change one model's own precision).
    - Gap to the next model: the paired z interval :math:`\\bar d \\pm z\\, SE_p`
      with :math:`SE_p = \\sqrt{\\frac1n \\cdot \\frac1n \\sum_i (d_i - \\bar d)^2}`, the
      per-question differences :math:`d_i = s_{ia} - s_{ib}` (Miller 2024, Eq. 7;
      ``se_paired`` of :func:`evalbars.stats.pairwise.pairwise_table`). For 0/1 scores
      its test is the large-sample McNemar test; on per-question means of repeated samples
      it stays valid whatever each model's number of samples (the mean differences are
      unbiased). ``separated``: the interval excludes zero; at a zero SE (the same
      difference on every question) there is no interval and the exact bound of
      :func:`evalbars.stats.pairwise.zero_se_one_sided_p` decides; tiers as in
      :func:`rank_table`.
    - Plausible ranks: every bootstrap replicate is one world; ranks with ties
      sharing the better rank (ties are common, since replicate accuracies are
      multiples of 1/n), then ``p_first`` and the central rank range. Because all
      models are resampled on the same questions, the question-difficulty
      variance they share cancels from their differences (Hall and Miller 2009
      use this bootstrap to judge the authority of an empirical ranking).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
    .. [2] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    .. [3] Hall, P. and Miller, H. (2009). Using the bootstrap to quantify the
       authority of an empirical ranking. Annals of Statistics 37, 3929-3959.
    .. [4] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika 12, 153-157.
    """
    _check_settings(level, replicates)
    shared = _shared_questions(wide)
    order = accuracy_order(shared)
    # Models in accuracy order through an index, not a reordered copy of the score matrix.
    columns = pd.Index(shared.models).get_indexer(order)
    scores = shared.scores
    n_questions = scores.shape[0]
    board = leaderboard_from_wide(shared) if board is None or shared is not wide else board
    low, high = score_intervals(board, level)
    board = board.assign(ci_low=low, ci_high=high)

    z = z_for_level(level)
    moments = _PairedMoments(scores, columns)
    gap, se = moments.adjacent()
    gap, se = np.append(gap, np.nan), np.append(se, np.nan)
    separated = pd.array(moments.separated(gap, se, z, level), dtype="boolean")
    separated[len(order) - 1] = pd.NA
    half = np.where(se > 0, z * se, np.nan)  # a zero SE gives no interval
    gaps = pd.DataFrame(
        {
            "gap": gap,
            # a gap of two mean scores in [0, 1] lies in [-1, 1], and so does its interval
            "gap_low": np.clip(gap - half, -1.0, 1.0),
            "gap_high": np.clip(gap + half, -1.0, 1.0),
            "separated": separated,
            "pair_kind": np.where(np.isnan(gap), "", "paired"),
        }
    )

    def separated_from(top):
        diff, diff_se = moments.from_column(top)
        return moments.separated(diff, diff_se, z, level)

    rng = np.random.default_rng(seed)
    strata = shared.categories if stratify else None
    # The moments' copy of the matrix (models in accuracy order, float32 for 0/1 scores) is the
    # bootstrap's too, as its transpose: one copy, and replicate columns already in order.
    replicate_means = bootstrap_accuracies(moments.by_model.T, strata, int(replicates), rng)
    summary = rank_ranges(replicate_means, int(replicates), level)
    table = _assemble(board, gaps, summary, anchored_tiers(separated_from, len(order)))
    n_strata = len(np.unique(shared.categories))
    dropped = wide.scores.shape[0] - n_questions
    method = (
        f"Paired: {int(replicates):,} bootstrap replicates of the {n_questions:,} shared questions"
        + (f" stratified by {n_strata} categories" if stratify else "")
        + f" (seed {seed}); paired z gap intervals"
        + (f"; {dropped:,} questions not answered by every model left out" if dropped else "")
        + "."
    )
    return RankReport(table, headline(table), "paired", level, int(replicates), seed, method)
