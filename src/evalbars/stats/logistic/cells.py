"""The logistic mixed model's data: binomial cells, integer-coded and sorted by model.

:func:`binomial_cells` aggregates an item table to (model, question) cells of successes out
of trials; :class:`_Cells` holds them coded for :mod:`evalbars.stats.logistic.laplace` (the
Laplace deviance) and :mod:`evalbars.stats.logistic.gee`. The model and the notation are in
:mod:`evalbars.stats.logistic.glmm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd


class _Margins(NamedTuple):
    """One 0/1 sample per observed cell of a models x question levels grid, by its margins:
    the successes of each model and on each question level, and the cells not observed
    (``missing_model[i]`` on ``missing_question[i]``; none on a complete grid)."""

    successes_model: np.ndarray
    successes_question: np.ndarray
    missing_model: np.ndarray
    missing_question: np.ndarray

    def observed_model(self, n_questions: int) -> np.ndarray:
        """Observed cells (trials) per model."""
        counts = np.bincount(self.missing_model, minlength=self.successes_model.size)
        return (n_questions - counts).astype(float)

    def observed_question(self, n_models: int) -> np.ndarray:
        """Observed cells (trials) per question level."""
        counts = np.bincount(self.missing_question, minlength=self.successes_question.size)
        return (n_models - counts).astype(float)


@dataclass(frozen=True)
class _Cells:
    """Cell-level binomial data, integer-coded and sorted by model (then question level).

    Question levels are the observed (category, question) pairs. Sorting by model makes the
    per-model sums contiguous segment sums (``np.add.reduceat`` at ``model_start``).
    """

    successes: np.ndarray
    trials: np.ndarray
    model: np.ndarray
    question: np.ndarray
    question_category: np.ndarray  # category code of each question level
    model_start: np.ndarray  # first row of each model
    model_names: tuple
    n_categories: int
    #: Whether the cells are the complete models x questions grid: then ``successes`` and
    #: ``trials`` (and every per-cell array of the fit) are models x questions matrices, the
    #: sums below are axis sums and the gathers broadcasts, ``model`` and ``question`` are None
    #: (the fast path of many models; a different order of summation, so bitwise different
    #: results from the cell list).
    grid: bool = False
    trials_max: float = 0.0
    #: Cells of one 0/1 sample each held by their margins alone (:class:`_Margins`), with
    #: ``successes`` and ``trials`` None: the likelihood reads nothing else
    #: (:mod:`evalbars.stats.logistic.margin_laplace`).
    margins: _Margins | None = None

    @property
    def n_models(self) -> int:
        return len(self.model_names)

    @property
    def n_obs(self) -> int:
        """0/1 samples: the sum of the trials."""
        if self.margins is not None:
            return self.n_cells
        return int(self.trials.sum())

    @property
    def n_cells(self) -> int:
        """Model x question cells."""
        if self.margins is not None:
            return self.n_models * self.n_questions - self.margins.missing_model.size
        return self.successes.size

    @property
    def n_questions(self) -> int:
        return self.question_category.size

    @property
    def unit_trials(self) -> bool:
        """Whether every cell is one 0/1 sample (grid only: then ``trials`` is not multiplied)."""
        return self.grid and self.trials_max == 1

    def model_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-cell values by model."""
        if self.grid:
            return values.sum(axis=1)
        return np.add.reduceat(values, self.model_start)

    def question_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-cell values by question level."""
        if self.grid:
            return values.sum(axis=0)
        return np.bincount(self.question, values, minlength=self.n_questions)

    def at_question(self, values: np.ndarray) -> np.ndarray:
        """A per-question-level vector at every cell (grid: broadcast over the models)."""
        if self.grid:
            return values[None, :]
        return values[self.question]

    def predictor(self, offset, beta: np.ndarray, effect: np.ndarray) -> np.ndarray:
        """``beta[model] + effect[question]`` per cell (``offset``: ``beta[model]`` if known)."""
        if self.grid:
            return beta[:, None] + effect[None, :]
        return offset + effect[self.question]

    def by_question_model(self, values: np.ndarray) -> np.ndarray:
        """Per-cell values as a question levels x models matrix (sums over repeated cells)."""
        K, Q = self.n_models, self.n_questions
        if self.grid:
            return values.T
        return np.bincount(self.question * K + self.model, values, minlength=Q * K).reshape(Q, K)


def check_binomial_counts(successes, trials) -> tuple[np.ndarray, np.ndarray]:
    """Binomial counts as float arrays, refused unless whole and within their cells.

    The one check of the logistic fits' input (:func:`evalbars.stats.logistic.glmm.fit_glmm`,
    :func:`evalbars.stats.logistic.gee.fit_gee`):
    a fractional success (a partial-credit score such as Inspect's ``P``, 0.5) is refused, not
    floored or treated as a quasi-likelihood.

    Parameters
    ----------
    successes, trials : array_like, shape (n,)
        Successes and trials per binomial cell.

    Returns
    -------
    successes, trials : ndarray of float

    Raises
    ------
    ValueError
        Unless ``trials >= 1`` and ``0 <= successes <= trials`` in every cell and both are
        whole numbers.

    Examples
    --------
    >>> check_binomial_counts([0.5, 1], [1, 1])
    Traceback (most recent call last):
    ...
    ValueError: successes and trials must be whole numbers
    """
    successes = np.asarray(successes, dtype=float)
    trials = np.asarray(trials, dtype=float)
    if not (np.all(trials >= 1) and np.all(successes >= 0) and np.all(successes <= trials)):
        raise ValueError("need trials >= 1 and 0 <= successes <= trials in every cell")
    if np.any(successes != np.round(successes)) or np.any(trials != np.round(trials)):
        raise ValueError("successes and trials must be whole numbers")
    return successes, trials


def sorted_codes(values) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(values, sort=True)``: codes into the sorted distinct values present.

    A pandas Categorical is coded through its categories (sorted by value, not by their order
    in the dtype), with no hashing of the rows.
    """
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        cat = pd.Categorical(values)
        present = np.flatnonzero(
            np.bincount(cat.codes[cat.codes >= 0], minlength=cat.categories.size)
        )
        levels = cat.categories[present]
        order = np.argsort(levels.to_numpy(), kind="stable")
        rank = np.full(cat.categories.size + 1, -1)  # the last entry: code -1 (missing)
        rank[present[order]] = np.arange(present.size)
        return rank[cat.codes], levels[order]
    return pd.factorize(np.asarray(values), sort=True)


def _encode(successes, trials, model, question, category, model_names, grid=False) -> _Cells:
    """Integer-coded cells sorted by model then question level; ``grid``: mark a complete grid
    of distinct cells as such (:attr:`_Cells.grid`)."""
    successes, trials = check_binomial_counts(successes, trials)
    n = successes.size
    if not all(np.shape(a) == (n,) for a in (trials, model, question, category)):
        raise ValueError("successes, trials, model, question and category must be 1-D, same length")
    if model_names is None:
        model_code, levels = sorted_codes(model)
        names = tuple(levels.tolist())
    else:
        names = tuple(model_names)
        model_code = _label_codes(model, names)
    if np.any(model_code < 0):
        raise ValueError("model labels not in model_names")
    observed = np.bincount(model_code, minlength=len(names))
    if np.any(observed == 0):
        raise ValueError("every model in model_names needs at least one cell")
    category_code, category_levels = sorted_codes(category)
    raw_question, raw_levels = sorted_codes(question)
    # lme4's category:question factor: one level per observed (category, question) pair
    key = category_code.astype(np.int64) * len(raw_levels) + raw_question
    pair_keys, question_code = np.unique(key, return_inverse=True)
    question_code = question_code.reshape(-1)
    n_questions = pair_keys.size
    cell_key = model_code.astype(np.int64) * n_questions + question_code
    n_grid = len(names) * n_questions
    if np.all(cell_key[1:] > cell_key[:-1]):  # already sorted by model, then question
        order = slice(None)
    elif n == n_grid and np.all(np.bincount(cell_key, minlength=n_grid) == 1):
        order = np.empty(n, dtype=np.int64)  # a complete grid: row i goes to cell_key[i]
        order[cell_key] = np.arange(n)
    else:
        order = np.lexsort((question_code, model_code))
    cell_key = cell_key[order]
    complete = n == len(names) * n_questions and np.all(cell_key[1:] > cell_key[:-1])
    grid = bool(grid and complete)
    shape = (len(names), n_questions) if grid else (n,)
    return _Cells(
        successes=successes[order].reshape(shape),
        trials=trials[order].reshape(shape),
        model=None if grid else model_code[order],
        question=None if grid else question_code[order],
        question_category=pair_keys // len(raw_levels),
        model_start=np.concatenate([[0], np.cumsum(observed)[:-1]]),
        model_names=names,
        n_categories=len(category_levels),
        grid=grid,
        trials_max=float(trials.max(initial=0.0)),
    )


def _label_codes(labels, names) -> np.ndarray:
    """Code of each label in ``names`` (-1 if absent); a Categorical through its categories."""
    index = pd.Index(names)
    if isinstance(getattr(labels, "dtype", None), pd.CategoricalDtype):
        values = pd.Categorical(labels)
        return np.append(index.get_indexer(values.categories), -1)[values.codes]
    return index.get_indexer(np.asarray(labels))


def binomial_cells(frame: pd.DataFrame, outcome: str = "correct") -> pd.DataFrame:
    """Collapse a long table of 0/1 samples to one binomial cell per model x question.

    Parameters
    ----------
    frame : DataFrame
        Columns ``model``, ``question_id``, ``category`` and ``outcome`` (0/1), one row per sample
        (with epochs, several rows per model x question).
    outcome : str
        Name of the 0/1 column.

    Returns
    -------
    DataFrame
        ``model, question_id, category, successes, trials``; the input of
        :func:`evalbars.stats.logistic.glmm.fit_glmm`.
        Rows whose outcome is missing are left out. A partial-credit score (Inspect's ``P``,
        0.5) is summed as it is, so its cell has a fractional success, which the logistic fits
        refuse (:func:`check_binomial_counts`; :func:`evalbars.stats.logistic.contrasts.fit_obstacle` says so
        before any fit).
    """
    # a missing score (an unanswered or errored sample under the `exclude` policy) is no trial
    keys = ["model", "question_id", "category"]
    scored = frame.loc[frame[outcome].notna(), [*keys, outcome]]
    # the groupby's order: Categorical columns by category code, others by sorted value
    codes, levels = zip(*(_group_codes(scored[key]) for key in keys), strict=True)
    sizes = [len(getattr(level, "categories", level)) for level in levels]
    pair = codes[0].astype(np.int64) * sizes[1] + codes[1]
    values = scored[outcome].to_numpy(dtype="float64")
    order = _unique_cell_order(pair, codes[1], codes[2], sizes)
    if order is not None:  # one sample per model x question: the rows are the cells
        cell_codes = [code[order] for code in codes]
        successes, trials = values[order], np.ones(order.size, dtype=np.int64)
    else:
        key = pair * sizes[2] + codes[2]
        unique, inverse = np.unique(key, return_inverse=True)
        cell_codes = [unique // (sizes[1] * sizes[2]), unique // sizes[2] % sizes[1]]
        cell_codes.append(unique % sizes[2])
        successes = np.bincount(inverse.reshape(-1), values, minlength=unique.size)
        trials = np.bincount(inverse.reshape(-1), minlength=unique.size).astype(np.int64)
    columns = {
        key: pd.Categorical.from_codes(code, level.categories)
        if isinstance(level, pd.CategoricalDtype)
        else level.take(code)
        for key, code, level in zip(keys, cell_codes, levels, strict=True)
    }
    return pd.DataFrame({**columns, "successes": successes, "trials": trials})


def _group_codes(column: pd.Series):
    """Codes in the order ``groupby(sort=True)`` sorts a column by, and their levels (the dtype
    itself for a Categorical, whose codes are that order)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64), column.dtype
    code, level = pd.factorize(column.to_numpy(), sort=True)
    return code.astype(np.int64), level


def _unique_cell_order(pair, question, category, sizes):
    """The row order sorted by (model, question), when every (model, question) occurs once and
    each question lies in one category (then the rows are the cells); else None. O(K Q) by one
    scatter, no sort."""
    if sizes[0] * sizes[1] > 4 * pair.size + 1_000_000:
        return None
    slot = np.full(sizes[0] * sizes[1], -1, dtype=np.int64)
    slot[pair] = np.arange(pair.size)
    order = slot[slot >= 0]
    if order.size != pair.size:  # a (model, question) occurs twice
        return None
    category_of = np.zeros(sizes[1], dtype=np.int64)
    category_of[question] = category
    return order if np.array_equal(category_of[question], category) else None


# ---------------------------------------------------------------------------------------------
# Laplace deviance: PIRLS for the conditional modes, the exact gradient by implicit
# differentiation; every operation is a pass over the cells or over the question levels.
# ---------------------------------------------------------------------------------------------


def _sum_rows(matrix: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum the rows of ``matrix`` by ``group`` (a 2-D bincount)."""
    n_cols = matrix.shape[1]
    index = (group[:, None] * n_cols + np.arange(n_cols)).reshape(-1)
    return np.bincount(index, matrix.reshape(-1), minlength=n_groups * n_cols).reshape(
        n_groups, n_cols
    )


def _category_sum(matrix: np.ndarray, qc: np.ndarray, n_categories: int, contiguous: bool):
    """Sum the rows (question levels) of ``matrix`` by category; ``contiguous``: by
    ``np.add.reduceat`` over the levels, which are sorted by category (every category has one),
    else :func:`_sum_rows`."""
    if not contiguous:
        return _sum_rows(matrix, qc, n_categories)
    starts = np.flatnonzero(np.r_[True, qc[1:] != qc[:-1]])
    return np.add.reduceat(matrix, starts, axis=0)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Inner product without BLAS: a multithreaded BLAS ddot on a busy machine can take 100x
    longer than this single pass (observed: 20 ms against 0.1 ms for 72k elements)."""
    if a.ndim > 1:  # the grid's models x questions matrices
        return float(np.einsum("ij,ij->", a, b))
    return float(np.einsum("i,i->", a, b))


def _logistic_terms(eta: np.ndarray):
    """mu = logistic(eta) and log(1 + exp(eta)) from one exponential, stable for any eta."""
    e = np.exp(-np.abs(eta))
    inv = 1.0 / (1.0 + e)
    mu = np.where(eta >= 0, inv, e * inv)
    return mu, np.maximum(eta, 0.0) + np.log1p(e)


def _grid_logistic(eta: np.ndarray, d: _Cells, with_loglik: bool):
    r"""mu and the log-likelihood in few vectorised passes (the grid's fast path).

    With :math:`t = 1 + e^{-\eta}`: :math:`\mu = 1/t` and :math:`\log(1 + e^\eta) = \eta +
    \log t`, so :math:`\sum y\eta - n \log(1 + e^\eta) = -\sum (n - y)\eta - \sum n \log t`:
    one exponential and one logarithm (SIMD in numpy, unlike ``expit``/``log1p``), with an
    absolute error of a few ulp of :math:`\eta` per cell. A non-finite result (an
    :math:`\eta < -709`, where :math:`e^{-\eta}` overflows) falls back to
    :func:`_logistic_terms`.
    """
    with np.errstate(over="ignore"):
        t = np.exp(-eta)
    t += 1.0
    mu = 1.0 / t
    if not with_loglik:
        return mu, np.nan
    np.log(t, out=t)
    if d.unit_trials:
        loglik = -_dot(1.0 - d.successes, eta) - float(t.sum())
    else:
        loglik = -_dot(d.trials - d.successes, eta) - _dot(d.trials, t)
    if not np.isfinite(loglik):
        mu, log1pexp = _logistic_terms(eta)
        loglik = _dot(d.successes, eta) - _dot(d.trials, log1pexp)
    return mu, loglik
