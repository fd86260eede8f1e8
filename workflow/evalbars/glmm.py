r"""The nested logistic mixed model for 0/1 benchmark scores, fitted by the Laplace approximation.

Model (lme4 notation, ``glmer(..., family = binomial, nAGQ = 1)``)::

    correct ~ 0 + model + (1 | category) + (1 | category:question)

Each 0/1 sample of model :math:`k` on question :math:`q` of category :math:`c` is Bernoulli with

.. math::  \operatorname{logit} \Pr(y = 1) = \beta_k + \theta_q u_q + \theta_c v_c,
           \qquad u_q, v_c \sim N(0, 1) \text{ independent},

so the question and category effects :math:`b_q = \theta_q u_q`, :math:`b_c = \theta_c v_c` have
variances :math:`\theta_q^2` and :math:`\theta_c^2` on the logit scale (lme4's spherical
parametrisation, [1]_ sections 2 and 5). Question levels are the observed
(category, question) pairs, exactly lme4's ``category:question`` factor. Several samples per
model x question (epochs) enter as binomial counts: ``successes`` out of ``trials`` per cell, with
the likelihood of the individual 0/1 samples (no binomial coefficient), so the fit equals glmer on
one row per sample.

Notation
--------
Three parametrisations of the random effects, as lme4's: spherical (:math:`u, v \sim N(0, I)`,
what PIRLS solves for), standard deviation :math:`\theta` (what is optimised) and the effect
scale :math:`b = \theta u` (what is reported).

=========================================  =======================================================
symbol                                     :class:`GlmmFit` attribute
=========================================  =======================================================
:math:`\beta_k`, model k's log odds        ``params[k]``, in the order of ``names``
:math:`2\,[\mathcal H^{-1}]_{\beta\beta}`  ``cov`` if ``cov_source`` is ``"hessian"``
:math:`\Sigma_{RX}` (below)                ``cov_rx``; ``cov`` if ``cov_source`` is ``"rx"``
:math:`\theta_q`, :math:`\theta_c`         ``theta["question"]``, ``theta["category"]``
:math:`\theta_q^2`, :math:`\theta_c^2`     ``variance`` (same keys)
:math:`\hat b_q = \theta_q \hat u_q`       ``question_effects``
:math:`\hat b_c = \theta_c \hat v_c`       ``category_effects``
:math:`D(\hat\beta, \hat\theta)`           ``laplace_deviance``; ``loglik`` is :math:`-D/2`
:math:`\mathcal H`, :math:`\nabla D`       ``hessian``, ``gradient`` (:data:`THETA`, :data:`BETA`)
=========================================  =======================================================

Laplace approximation
---------------------
Write :math:`\eta = X\beta + G w`, :math:`w = (u, v)`, where row :math:`i` of :math:`G = Z\Lambda`
holds :math:`\theta_q` in the column of its question and :math:`\theta_c` in that of its category.
The penalised deviance and its minimiser, the conditional mode, are

.. math::  P(w; \beta, \theta) = -2 \sum_i [y_i \eta_i - n_i \log(1 + e^{\eta_i})] + \lVert w \rVert^2,
           \qquad \hat w = \arg\min_w P,

found by penalised iteratively reweighted least squares (PIRLS: Newton's method on :math:`P`,
with step halving). With :math:`W = \operatorname{diag}(n_i \mu_i (1 - \mu_i))` at
:math:`\hat w`, the Laplace approximation of the marginal likelihood [2]_, written in lme4's
spherical parametrisation, gives the deviance that glmer minimises for ``nAGQ = 1`` (lme4's
``glmerLaplace``: -2 log-likelihood at the modes, plus :math:`\lVert \hat w \rVert^2`, plus the
log-determinant of :math:`LL^\top = H`):

.. math::  D(\beta, \theta) = P(\hat w; \beta, \theta) + \log\det H,
           \qquad H = I + G^\top W G,

and :math:`\log L = -D / 2`. The estimates minimise :math:`D` jointly over :math:`(\theta, \beta)`
(lme4's second optimisation stage).

The block structure used here
-----------------------------
Every question lies in one category. :math:`H` then has a diagonal question block
:math:`h_q = 1 + \theta_q^2 w_q`, a diagonal category block :math:`h_c = 1 + \theta_c^2 w_c`
(:math:`w_q, w_c` the sums of :math:`W` over the question's and category's rows), and one
off-diagonal entry per question, :math:`k_q = \theta_q \theta_c w_q`, in the column of its
category. The Schur complement of the question block is diagonal too,

.. math::  s_c = h_c - \sum_{q \in c} k_q^2 / h_q, \qquad
           \log\det H = \sum_q \log h_q + \sum_c \log s_c,

so solving with :math:`H`, its log-determinant and the entries of :math:`H^{-1}` that the
gradient needs cost :math:`O(\#\text{questions})` after one pass over the rows (two weighted
``bincount``\ s). Each PIRLS step and each evaluation of :math:`D` and of its exact gradient
(implicit differentiation through :math:`\hat w`) is a handful of vectorised passes over the
data; there is no sparse Cholesky factorisation and no loop over questions. On a complete
models x questions grid the predictor is additive in model and question, so every
:math:`\mu` comes from an outer sum without an exponential per cell and those passes are
matrix-vector products (:class:`_GridLaplace`; :func:`fit_glmm_wide` lays the workflow's
score matrix out as that grid).

Optimisation, up to :data:`FULL_HESSIAN_MAX_MODELS` models (``hessian = "full"``): BFGS on the
exact gradient (preconditioned by a cheap approximate Hessian), then Newton steps on a Hessian
obtained by forward differences of that gradient (both from :mod:`evalbars.optimize`), K + 2
gradients per Hessian. Above (``hessian = "schur"``, :func:`_schur_newton`): Newton steps with
the Schur-form Hessian below, corrected along the way by L-BFGS secant pairs, so an iteration
costs a few passes over the data and one matrix product, not K passes; both stop at the
stationary point of the same :math:`D`, so the estimates are glmer's either way. :math:`D` is even in each :math:`\theta` (flipping its sign flips the
sign of the modes), so the optimisation is unconstrained and a variance on the boundary
(:math:`\theta = 0`) is an ordinary stationary point; the reported :math:`\theta` are
:math:`|\theta|`.

Covariance of the fixed effects (``cov``, named by ``cov_source``):

* ``"hessian"`` (up to :data:`FULL_HESSIAN_MAX_MODELS` models): as lme4's ``vcov`` for glmer,
  the fixed-effect block of :math:`2\,\mathcal H^{-1}`, :math:`\mathcal H` the Hessian of
  :math:`D` in :math:`(\theta, \beta)` by forward differences of the exact gradient;
* ``"schur"`` (above): the same with :math:`\mathcal H` replaced by the Schur-form matrix whose
  theta rows and columns are forward differences of the exact gradient (two gradients) and
  whose beta block is :math:`2S`, :math:`S = X^\top W X - X^\top W G H^{-1} G^\top W X`. Given
  the modes the question effects are independent within a category, so :math:`S` is
  :math:`X^\top W X` minus a sum of per-question rank-one terms and one per category: one
  symmetric matrix product over the questions x models weights (:meth:`_Laplace._schur`). The
  fixed-effect block of :math:`2\,\mathcal H^{-1}` is then
  :math:`(S - \tfrac12 \mathcal H_{\beta\theta} \mathcal H_{\theta\theta}^{-1}
  \mathcal H_{\theta\beta})^{-1}`: the RX covariance widened by the uncertainty of theta. It
  leaves out the log-determinant's curvature in beta: on the committed 100-model glmer
  reference its SEs are within 8e-4 (relative) of glmer's ``vcov`` and within 5e-4 of
  ``vcov(fit, use.hessian = FALSE)``, its contrast SEs within 0.5% of ``vcov``'s (tests);
* ``"rx"``: lme4's conditional covariance :math:`\Sigma_{RX} = S^{-1}` (``vcov(fit,
  use.hessian = FALSE)``), the fallback of both when their matrix is not positive definite, as
  lme4's. Always returned as ``cov_rx``.

Pairwise contrasts and the marginal (population-averaged) accuracy the fit implies are in
:mod:`evalbars.logistic`.

Not implemented / limits
------------------------
* Only the Laplace approximation (``nAGQ = 1``): no adaptive Gauss-Hermite quadrature
  (``nAGQ > 1``), which lme4 allows only for a single scalar random effect anyway.
* Random intercepts only, nested (question within category): no random slopes, no crossed
  factors, no correlated random effects.
* The Laplace approximation is biased when clusters are small and the variances large (the
  variance components, and with them the fixed effects, towards zero) [2]_ [3]_; a question holds
  only one 0/1 sample per model (or a few, with epochs), so the question variance is the
  component to read with care.
* A model right on every or no question has no finite log odds and is refused.

References
----------
.. [1] Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear mixed-effects
   models using lme4. J Stat Softw 67(1), 1-48 (the spherical parametrisation, PIRLS and the
   Laplace deviance, Sections 2 and 5).
.. [2] Breslow, N. E. and Clayton, D. G. (1993). Approximate inference in generalized linear
   mixed models. JASA 88, 9-25.
.. [3] Breslow, N. E. and Lin, X. (1995). Bias correction in generalised linear mixed models with
   a single component of dispersion. Biometrika 82, 81-91.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import linalg, optimize, special

from .blocks import blocks
from .optimize import FreeCoordinates, chord_newton, forward_difference_hessian
from .scores import WideScores

__all__ = [
    "SINGULAR_TOLERANCE",
    "GlmmFit",
    "binomial_cells",
    "check_binomial_counts",
    "fit_glmm",
    "fit_glmm_wide",
    "laplace_deviance",
]

#: lme4's ``isSingular`` tolerance: a standard deviation below this counts as on the boundary.
SINGULAR_TOLERANCE = 1e-4
#: Up to this many models :func:`fit_glmm` (``hessian = "auto"``) differentiates the exact
#: gradient in every coordinate (K + 2 gradients; lme4's ``vcov``); above it the Schur form.
FULL_HESSIAN_MAX_MODELS = 30
#: BFGS stops at this largest gradient component; Newton steps finish the optimisation.
_BFGS_GTOL = 1e-4


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

    @property
    def n_models(self) -> int:
        return len(self.model_names)

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

    The one check of the logistic fits' input (:func:`fit_glmm`, :func:`evalbars.gee.fit_gee`):
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
        ``model, question_id, category, successes, trials``; the input of :func:`fit_glmm`.
        Rows whose outcome is missing are left out. A partial-credit score (Inspect's ``P``,
        0.5) is summed as it is, so its cell has a fractional success, which the logistic fits
        refuse (:func:`check_binomial_counts`; :func:`evalbars.logistic.fit_obstacle` says so
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


#: Positions of the variance parameters and of the fixed effects in the packed vector
#: ``(theta_question, theta_category, beta)`` (of :meth:`_Params.packed`, ``GlmmFit.hessian``
#: and ``GlmmFit.cov_with_theta``).
THETA = slice(0, 2)
BETA = slice(2, None)


@dataclass(frozen=True)
class _Params:
    """The parameters of the Laplace deviance, and their packed vector (as statsmodels'
    ``MixedLMParams``): ``(theta_q, theta_c, beta_1, ..., beta_K)``."""

    theta_q: float
    theta_c: float
    beta: np.ndarray

    @classmethod
    def from_packed(cls, x) -> _Params:
        return cls(x[0], x[1], np.asarray(x[BETA]))

    @staticmethod
    def pack(theta_q, theta_c, beta) -> np.ndarray:
        return np.concatenate([[theta_q, theta_c], beta])


@dataclass(frozen=True)
class _ModeState:
    r"""Per-cell and per-level quantities at spherical modes (u, v), and the block system H.

    Cells: ``eta`` (linear predictor), ``mu``, ``weight`` :math:`W = n\mu(1-\mu)`, ``resid``
    :math:`y - n\mu`. Question levels: ``w_q, r_q`` (sums of weight and residual), ``h_q``
    (diagonal of H), ``k_q`` (its off-diagonal entry in the column of the question's category).
    Categories: ``w_c, r_c``, ``h_c`` and the Schur complement ``s_c``. ``loglik`` (NaN when
    not computed) and ``penalised`` :math:`P = -2\,\mathrm{loglik} + \lVert u \rVert^2 +
    \lVert v \rVert^2`.
    """

    question_category: np.ndarray
    eta: np.ndarray
    mu: np.ndarray
    weight: np.ndarray
    resid: np.ndarray
    w_q: np.ndarray
    r_q: np.ndarray
    w_c: np.ndarray
    r_c: np.ndarray
    h_q: np.ndarray
    k_q: np.ndarray
    h_c: np.ndarray
    s_c: np.ndarray
    loglik: float
    penalised: float
    u: np.ndarray
    v: np.ndarray
    #: A grid state's fixed effects (:class:`_GridLaplace` keeps no per-cell arrays and makes
    #: its cells again from these and the modes), and the column sums of
    #: :math:`A = W \circ (1 - 2\mu)` when its pass made them.
    beta: np.ndarray | None = None
    curvature_q: np.ndarray | None = None

    @property
    def deviance(self) -> float:
        r"""The Laplace deviance :math:`D = P + \log\det H` at these modes."""
        return self.penalised + np.sum(np.log(self.h_q)) + np.sum(np.log(self.s_c))

    def solve(self, rhs_q, rhs_c):
        """Solve H x = rhs by the block structure (question block diagonal, Schur on categories)."""
        qc = self.question_category
        h_q, k_q = self.h_q, self.k_q
        x_c = (rhs_c - np.bincount(qc, k_q * rhs_q / h_q, minlength=self.h_c.size)) / self.s_c
        return (rhs_q - k_q * x_c[qc]) / h_q, x_c

    def solve_matrix(self, rhs_q, rhs_c):
        """:meth:`solve` for several right-hand sides (columns)."""
        qc = self.question_category
        h_q, k_q = self.h_q[:, None], self.k_q[:, None]
        folded = _sum_rows(k_q * rhs_q / h_q, qc, rhs_c.shape[0])
        x_c = (rhs_c - folded) / self.s_c[:, None]
        return (rhs_q - k_q * x_c[qc]) / h_q, x_c


class _Laplace:
    """Laplace deviance D(theta_q, theta_c, beta) with warm-started PIRLS modes.

    The state kept between calls is only the last modes on the effect scale (b = theta u), so
    an evaluation depends on the previous one only through PIRLS's starting point.
    """

    #: PIRLS stops after applying a Newton step whose largest component is below this; Newton's
    #: quadratic convergence leaves an error of order tol^2 in the modes.
    tol = 1e-7
    #: Newton steps larger than this (in spherical units) are checked for a decrease of P and
    #: halved if needed; smaller ones are in the region where the quadratic model is accurate.
    checked_step = 0.1
    #: Whether PIRLS's first state takes the log-likelihood (needed only before a big step).
    _initial_loglik = True

    def __init__(self, cells: _Cells, max_iter: int = 100):
        self.cells = cells
        self.max_iter = max_iter
        self.effect_q = np.zeros(cells.n_questions)
        self.effect_c = np.zeros(cells.n_categories)
        self.evaluations = 0

    def _state(self, theta_q, theta_c, beta, offset, u, v, with_loglik=True) -> _ModeState:
        """:class:`_ModeState` at spherical modes (u, v): one pass over the cells."""
        d = self.cells
        qc = d.question_category
        eta = d.predictor(offset, beta, theta_q * u + theta_c * v[qc])
        if d.grid:
            mu, loglik = _grid_logistic(eta, d, with_loglik)
        elif with_loglik:
            mu, log1pexp = _logistic_terms(eta)
            loglik = _dot(d.successes, eta) - _dot(d.trials, log1pexp)
        else:
            mu, loglik = special.expit(eta), np.nan
        if d.unit_trials:
            weight = mu * (1.0 - mu)
            resid = d.successes - mu
        else:
            weight = d.trials * mu * (1.0 - mu)
            resid = d.successes - d.trials * mu
        return self._mode_state(
            theta_q,
            theta_c,
            d.question_sum(weight),
            d.question_sum(resid),
            loglik,
            u,
            v,
            eta=eta,
            mu=mu,
            weight=weight,
            resid=resid,
        )

    def _mode_state(self, theta_q, theta_c, w_q, r_q, loglik, u, v, **cells) -> _ModeState:
        """:class:`_ModeState` from the question sums of the weights and residuals: the
        category sums, the block system H and the penalised deviance; ``cells``: the per-cell
        fields (``eta, mu, weight, resid``, or a grid state's ``beta, curvature_q``)."""
        d = self.cells
        qc = d.question_category
        w_c = np.bincount(qc, w_q, minlength=d.n_categories)
        r_c = np.bincount(qc, r_q, minlength=d.n_categories)
        h_q = 1.0 + theta_q**2 * w_q
        k_q = theta_q * theta_c * w_q
        h_c = 1.0 + theta_c**2 * w_c
        s_c = h_c - np.bincount(qc, k_q**2 / h_q, minlength=d.n_categories)
        return _ModeState(
            question_category=qc,
            **{"eta": None, "mu": None, "weight": None, "resid": None} | cells,
            w_q=w_q,
            r_q=r_q,
            w_c=w_c,
            r_c=r_c,
            h_q=h_q,
            k_q=k_q,
            h_c=h_c,
            s_c=s_c,
            loglik=loglik,
            penalised=-2.0 * loglik + _dot(u, u) + _dot(v, v),
            u=u,
            v=v,
        )

    def _with_loglik(self, state: _ModeState, theta_q, theta_c, beta, offset) -> _ModeState:
        """``state`` with its log-likelihood and penalised deviance (recomputed)."""
        return self._state(theta_q, theta_c, beta, offset, state.u, state.v)

    def modes(self, params: _Params) -> _ModeState:
        """PIRLS: Newton's method on the penalised deviance in the spherical modes (u, v)."""
        d = self.cells
        theta_q, theta_c = params.theta_q, params.theta_c
        beta = params.beta
        offset = None if d.grid else beta[d.model]
        # warm start from the last modes on the effect scale (b = theta u); as theta -> 0 the
        # spherical mode u = theta r -> 0, so start at 0 there rather than divide by ~0
        u = self.effect_q / theta_q if abs(theta_q) > 1e-8 else np.zeros(d.n_questions)
        v = self.effect_c / theta_c if abs(theta_c) > 1e-8 else np.zeros(d.n_categories)
        state = self._state(theta_q, theta_c, beta, offset, u, v, self._initial_loglik)
        for _ in range(self.max_iter):
            # half the gradient of P; Newton step -H^{-1} g
            g_u = state.u - theta_q * state.r_q
            g_v = state.v - theta_c * state.r_c
            step_u, step_v = state.solve(-g_u, -g_v)
            size = max(np.max(np.abs(step_u), initial=0.0), np.max(np.abs(step_v), initial=0.0))
            last = size < self.tol
            if size < self.checked_step:
                # the final state needs the log-likelihood (for D); intermediate ones do not
                state = self._state(
                    theta_q,
                    theta_c,
                    beta,
                    offset,
                    state.u + step_u,
                    state.v + step_v,
                    with_loglik=last,
                )
            else:
                if np.isnan(state.penalised):  # a big step after small ones: need P now
                    state = self._with_loglik(state, theta_q, theta_c, beta, offset)
                for _halving in range(60):
                    trial = self._state(
                        theta_q, theta_c, beta, offset, state.u + step_u, state.v + step_v
                    )
                    # accept a step that does not increase P beyond rounding
                    if trial.penalised <= state.penalised * (1 + 1e-12):
                        break
                    step_u, step_v = step_u / 2, step_v / 2
                state = trial
            if last:
                break
        else:
            raise RuntimeError("PIRLS did not converge")
        self.effect_q = theta_q * state.u
        self.effect_c = theta_c * state.v
        self.evaluations += 1
        return state

    def deviance(self, x) -> float:
        return self.modes(_Params.from_packed(x)).deviance

    def deviance_and_gradient(self, x):
        """D and its exact gradient in (theta_q, theta_c, beta), modes differentiated implicitly.

        With a_i = n_i mu_i (1 - mu_i)(1 - 2 mu_i) l_i, l_i = (G H^{-1} G')_ii, and
        s = H^{-1} G' a: dD/dbeta_k = sum_{i in k} (-2 r_i + a_i - W_i (G s)_i), and for each theta
        the same terms against dG plus 2 tr(H^{-1} G' W dG).
        """
        d = self.cells
        params = _Params.from_packed(x)
        theta_q, theta_c = params.theta_q, params.theta_c
        st = self.modes(params)
        qc = d.question_category
        h_q, k_q, s_c = st.h_q, st.k_q, st.s_c
        value = st.deviance
        # entries of H^{-1} on the question diagonal, category diagonal and question-category
        ratio = k_q / h_q
        inv_cc = 1.0 / s_c
        inv_qc = -ratio * inv_cc[qc]
        inv_qq = 1.0 / h_q + ratio**2 * inv_cc[qc]
        leverage_q = theta_q**2 * inv_qq + 2 * theta_q * theta_c * inv_qc + theta_c**2 * inv_cc[qc]
        grad_beta, t_q, s_q, s_cat = self._cell_gradient(st, theta_q, theta_c, leverage_q)
        t_c = np.bincount(qc, t_q, minlength=d.n_categories)
        grad_q = (
            _dot(st.u, t_q - 2.0 * st.r_q)
            + _dot(s_q, st.r_q)
            + 2.0 * _dot(st.w_q, theta_q * inv_qq + theta_c * inv_qc)
        )
        grad_c = (
            _dot(st.v, t_c - 2.0 * st.r_c)
            + _dot(s_cat, st.r_c)
            + 2.0 * (theta_c * _dot(inv_cc, st.w_c) + theta_q * _dot(inv_qc, st.w_q))
        )
        return value, _Params.pack(grad_q, grad_c, grad_beta)

    def _cell_gradient(self, st: _ModeState, theta_q, theta_c, leverage_q):
        """The cell terms of :meth:`deviance_and_gradient`: the beta gradient, the question sums
        ``t_q`` of :math:`a_i - W_i (G s)_i`, and :math:`s = H^{-1} G' a` (question and category
        parts)."""
        d = self.cells
        qc = d.question_category
        a = st.weight * (1.0 - 2.0 * st.mu) * d.at_question(leverage_q)
        a_q = d.question_sum(a)
        s_q, s_cat = st.solve(
            theta_q * a_q, theta_c * np.bincount(qc, a_q, minlength=d.n_categories)
        )
        gs = d.at_question(theta_q * s_q + theta_c * s_cat[qc])
        total = a - st.weight * gs  # a_i - W_i (G s)_i
        return d.model_sum(total - 2.0 * st.resid), d.question_sum(total), s_q, s_cat

    def _cell_weights(self, st: _ModeState) -> np.ndarray:
        """:math:`W` per cell at the state's modes."""
        return st.weight

    def _gradient(self, x) -> np.ndarray:
        return self.deviance_and_gradient(x)[1]

    def hessian(self, x, step: float = 1e-7) -> np.ndarray:
        """Forward differences of the exact gradient, symmetrised.

        The gradient is exact to rounding (~1e-11 relative after PIRLS), so a small step is
        safe: the truncation error is ~step relative (2e-7 on the fixtures against central
        differences); lme4's own Hessian, second differences of the deviance with step 1e-4,
        is accurate to ~1e-5.
        """
        x = np.asarray(x, dtype=float)
        hess = forward_difference_hessian(self._gradient, x, step)
        self.deviance_and_gradient(x)  # leave the warm start at x
        return (hess + hess.T) / 2

    def approximate_hessian(self, x, step: float = 1e-5) -> np.ndarray:
        """A cheap Hessian for preconditioning: the theta columns by forward differences of the
        gradient (two evaluations), the beta block 2 (X'WX - X'WG H^{-1} G'WX) (the Hessian of the
        penalised deviance in beta, without the log-determinant's curvature)."""
        x = np.asarray(x, dtype=float)
        hess = forward_difference_hessian(self._gradient, x, step, columns=range(2))
        hess[THETA, BETA] = hess[BETA, THETA].T
        hess[THETA, THETA] = (hess[THETA, THETA] + hess[THETA, THETA].T) / 2
        hess[BETA, BETA] = 2.0 * self._schur(x)
        self.deviance_and_gradient(x)  # leave the warm start at x
        return hess

    def schur_hessian(self, x, step: float = 1e-7):
        """:meth:`approximate_hessian` with the exact gradient's forward-difference step
        ``step`` in the theta columns, and the Schur complement it holds (the beta block / 2)."""
        x = np.asarray(x, dtype=float)
        base = self._gradient(x)
        hess = forward_difference_hessian(self._gradient, x, step, base=base, columns=range(2))
        hess[THETA, BETA] = hess[BETA, THETA].T
        hess[THETA, THETA] = (hess[THETA, THETA] + hess[THETA, THETA].T) / 2
        schur = self._schur(x)
        hess[BETA, BETA] = 2.0 * schur
        return hess, schur

    def rx_covariance(self, x) -> np.ndarray:
        """lme4's RX covariance: (X'WX - X'WG H^{-1} G'WX)^{-1} at the modes for x."""
        return np.linalg.inv(self._schur(x))

    def _schur(self, x) -> np.ndarray:
        """X'WX - X'WG H^{-1} G'WX at the modes for x (fixed-effect block of the PIRLS system)."""
        d = self.cells
        params = _Params.from_packed(x)
        st = self.modes(params)
        qc = d.question_category
        # G'WX: per question level and model, the weight sum, scaled by theta
        weight = self._cell_weights(st)
        wqk = d.by_question_model(weight)
        wck = _category_sum(wqk, qc, d.n_categories, d.grid)
        rhs_q, rhs_c = params.theta_q * wqk, params.theta_c * wck
        xwx = np.diag(d.model_sum(weight))
        if not d.grid:
            sol_q, sol_c = st.solve_matrix(rhs_q, rhs_c)
            return xwx - rhs_q.T @ sol_q - rhs_c.T @ sol_c
        # the same, symmetric: X'WX - A' diag(1/h_q) A - Z' diag(1/s_c) Z with A = G_q'WX and
        # Z = G_c'WX - sum_{q in c} (k_q / h_q) A_q (the category rows after eliminating the
        # questions); the big term is one symmetric product (BLAS syrk, K^2 Q / 2 multiplies)
        scaled = rhs_q / np.sqrt(st.h_q)[:, None]
        z = rhs_c - _category_sum(rhs_q * (st.k_q / st.h_q)[:, None], qc, d.n_categories, True)
        schur = xwx - scaled.T @ scaled
        del scaled
        schur -= (z / st.s_c[:, None]).T @ z
        return (schur + schur.T) / 2


class _GridLaplace(_Laplace):
    r""":class:`_Laplace` on a complete models x questions grid (:attr:`_Cells.grid`): every
    per-cell quantity computed a block of models at a time, in cache, and summed at once.

    On the grid the predictor is additive, :math:`\eta_{kq} = \beta_k + e_q` with
    :math:`e_q = \theta_q u_q + \theta_c v_{c(q)}`, so with :math:`a_k = e^{-\beta_k}` and
    :math:`c_q = e^{-e_q}` every :math:`\mu` is :math:`M_{kq} = c_q^{-1} / (a_k + c_q^{-1})`:
    an outer sum and a division, no exponential per cell. With :math:`N` the trials, :math:`Y`
    the successes and :math:`\circ` elementwise, a PIRLS step needs only column sums,

    .. math::  w_q = \mathbf 1^\top (N \circ M)_{\cdot q} - \mathbf 1^\top (N \circ M \circ
               M)_{\cdot q}, \qquad r_q = \textstyle\sum_k Y_{kq} - \mathbf 1^\top
               (N \circ M)_{\cdot q},

    and the log-likelihood is :math:`\sum N \circ \log M - \sum_k \beta_k F_k - \sum_q e_q F_q`
    with :math:`F = N - Y` summed by model and by question (one logarithm per cell, in the last
    state of a PIRLS solve only). The gradient's cell terms are products of
    :math:`W = N \circ M \circ (1 - M)` with vectors (:meth:`_cell_gradient`) and the Schur
    matrix a sum of products of blocks of :math:`W` (:meth:`_schur`). :math:`M` is never
    stored: each pass makes it a block of :data:`_BLOCK_CELLS` cells at a time (cheap: two
    operations a cell), so the passes run in cache rather than through memory, which two cores
    share. These are the formulas of :class:`_Laplace` summed in another order, so the
    estimates agree with the cell path to rounding (tests).
    """

    #: Cells of one block (2 MB in float64: a block and its temporaries stay in cache).
    _BLOCK_CELLS = 2**18

    def __init__(self, cells: _Cells, max_iter: int = 100):
        super().__init__(cells, max_iter)
        failures = cells.trials - cells.successes
        self._failures_model = failures.sum(axis=1)
        self._failures_question = failures.sum(axis=0)
        del failures
        self._successes_model = cells.successes.sum(axis=1)
        self._successes_question = cells.successes.sum(axis=0)
        self._model_blocks = blocks(cells.n_models, cells.n_questions, self._BLOCK_CELLS)
        self._question_blocks = blocks(cells.n_questions, cells.n_models, self._BLOCK_CELLS)
        self._latest = None  # (parameters, state) of the last PIRLS solve

    @staticmethod
    def _factors(beta: np.ndarray, effect: np.ndarray):
        """:math:`a = e^{-\\beta}` and :math:`c^{-1} = e^{e}`, whose outer sum makes :math:`M`."""
        with np.errstate(over="ignore"):
            return np.exp(-beta), np.exp(effect)

    @staticmethod
    def _mu(factors, rows=slice(None), columns=slice(None)) -> np.ndarray:
        """:math:`M` of the models ``rows`` and questions ``columns`` (a fresh block)."""
        a, inverse_c = factors
        with np.errstate(over="ignore", invalid="ignore"):
            mu = np.add.outer(a[rows], inverse_c[columns])
            np.divide(inverse_c[columns], mu, out=mu)
        return mu

    def _trials(self, rows=slice(None), columns=slice(None)):
        """The trials of a block, or None when every cell is one sample (then no product)."""
        return None if self.cells.unit_trials else self.cells.trials[rows, columns]

    def _effect(self, theta_q, theta_c, u, v) -> np.ndarray:
        return theta_q * u + theta_c * v[self.cells.question_category]

    def _loglik(self, effect: np.ndarray, beta: np.ndarray) -> float:
        """The log-likelihood at predictors ``beta_k + effect_q``, block by block."""
        total = 0.0
        factors = self._factors(beta, effect)
        with np.errstate(divide="ignore"):  # a mu of 0 (eta < -745): -inf, the cell path's case
            for rows in self._model_blocks:
                logs = np.log(self._mu(factors, rows))  # log mu = -log(1 + exp(-eta))
                trials = self._trials(rows)
                total += float(logs.sum()) if trials is None else _dot(trials, logs)
        return total - _dot(beta, self._failures_model) - _dot(effect, self._failures_question)

    _initial_loglik = False  # computed when needed (:meth:`_with_loglik`)

    def _with_loglik(self, state: _ModeState, theta_q, theta_c, beta, offset) -> _ModeState:
        if state.eta is not None:
            return super()._with_loglik(state, theta_q, theta_c, beta, offset)
        loglik = self._loglik(self._effect(theta_q, theta_c, state.u, state.v), beta)
        if not np.isfinite(loglik):
            return super()._with_loglik(state, theta_q, theta_c, beta, offset)
        return replace(
            state,
            loglik=loglik,
            penalised=-2.0 * loglik + _dot(state.u, state.u) + _dot(state.v, state.v),
        )

    def _state(self, theta_q, theta_c, beta, offset, u, v, with_loglik=True) -> _ModeState:
        d = self.cells
        effect = self._effect(theta_q, theta_c, u, v)
        fitted_q = np.zeros(d.n_questions)
        square_q = np.zeros(d.n_questions)
        cube_q = np.zeros(d.n_questions) if with_loglik else None
        log_sum = 0.0
        factors = self._factors(beta, effect)
        for rows in self._model_blocks:
            mu = self._mu(factors, rows)
            trials = self._trials(rows)
            if trials is None:
                fitted_q += mu.sum(axis=0)
                square_q += np.einsum("kq,kq->q", mu, mu)
            else:
                fitted_q += np.einsum("kq,kq->q", trials, mu)
                square_q += np.einsum("kq,kq,kq->q", trials, mu, mu)
            # the last state of a PIRLS solve (the one with the log-likelihood) is the one the
            # gradient reads: its column sums of mu^3 and logs in the same pass, in cache
            if with_loglik:
                if trials is None:
                    cube_q += np.einsum("kq,kq,kq->q", mu, mu, mu)
                else:
                    cube_q += np.einsum("kq,kq,kq,kq->q", trials, mu, mu, mu)
                with np.errstate(divide="ignore"):  # mu = 0 (eta < -745): the cell path's case
                    logs = np.log(mu, out=mu)  # log mu = -log(1 + exp(-eta))
                log_sum += float(logs.sum()) if trials is None else _dot(trials, logs)
        w_q = fitted_q - square_q
        loglik = np.nan
        if with_loglik:
            loglik = log_sum - _dot(beta, self._failures_model)
            loglik -= _dot(effect, self._failures_question)
        if not np.all(np.isfinite(w_q)) or (with_loglik and not np.isfinite(loglik)):
            # exp overflows for |eta| > 709: the cell path, which takes logs per cell
            return super()._state(theta_q, theta_c, beta, offset, u, v, with_loglik)
        return self._mode_state(
            theta_q,
            theta_c,
            w_q,
            self._successes_question - fitted_q,
            loglik,
            u,
            v,
            beta=beta,
            # 1'A = 1'(N M (1 - M)(1 - 2M)) = w - 2 (1'N M^2 - 1'N M^3)
            curvature_q=None if cube_q is None else w_q - 2.0 * (square_q - cube_q),
        )

    def modes(self, params: _Params) -> _ModeState:
        """:meth:`_Laplace.modes`, or the last state when it was solved for the same parameters
        (the optimiser asks for the gradient and then the Schur matrix at one point)."""
        key = (float(params.theta_q), float(params.theta_c), np.asarray(params.beta).tobytes())
        if self._latest is not None and self._latest[0] == key:
            return self._latest[1]
        state = super().modes(params)
        self._latest = (key, state)
        return state

    def _state_factors(self, st: _ModeState, theta_q, theta_c):
        """:meth:`_factors` at a state's fixed effects and modes."""
        return self._factors(st.beta, self._effect(theta_q, theta_c, st.u, st.v))

    def _weights(self, factors, rows=slice(None), columns=slice(None)):
        """:math:`M` and :math:`W = N \\circ M (1 - M)` of a block."""
        mu = self._mu(factors, rows, columns)
        weight = mu * (1.0 - mu)
        trials = self._trials(rows, columns)
        if trials is not None:
            weight *= trials
        return mu, weight

    def _cell_gradient(self, st: _ModeState, theta_q, theta_c, leverage_q):
        r"""The cell terms from products of :math:`W` and :math:`M` with vectors: with
        :math:`A = W \circ (1 - 2M)`, their question sums are :math:`\ell_q \mathbf 1^\top
        A_{\cdot q} - (Gs)_q w_q` and their model sums :math:`A \ell - W (Gs) - 2 (y_k -
        (N \circ M) \mathbf 1)`. :math:`s` needs :math:`\mathbf 1^\top A` of every block
        first: the state's own pass made it (``curvature_q``), else one pass more does."""
        if st.eta is not None:
            return super()._cell_gradient(st, theta_q, theta_c, leverage_q)
        d = self.cells
        qc = d.question_category
        factors = self._state_factors(st, theta_q, theta_c)
        curvature_q = st.curvature_q  # 1' A by question, from the state's pass if it made it
        if curvature_q is None:
            curvature_q = np.zeros(d.n_questions)
            for rows in self._model_blocks:
                mu, weight = self._weights(factors, rows)
                curvature_q += weight.sum(axis=0) - 2.0 * np.einsum("kq,kq->q", weight, mu)
        a_q = leverage_q * curvature_q
        s_q, s_cat = st.solve(
            theta_q * a_q, theta_c * np.bincount(qc, a_q, minlength=d.n_categories)
        )
        gs_q = theta_q * s_q + theta_c * s_cat[qc]
        grad_beta = np.empty(d.n_models)
        for rows in self._model_blocks:
            mu, weight = self._weights(factors, rows)
            trials = self._trials(rows)
            fitted = mu.sum(axis=1) if trials is None else np.einsum("kq,kq->k", trials, mu)
            grad_beta[rows] = weight @ (leverage_q - gs_q)
            grad_beta[rows] -= 2.0 * np.einsum("kq,kq,q->k", weight, mu, leverage_q)
            grad_beta[rows] -= 2.0 * (self._successes_model[rows] - fitted)
        return grad_beta, a_q - gs_q * st.w_q, s_q, s_cat

    def _schur(self, x) -> np.ndarray:
        r""":meth:`_Laplace._schur` a block of questions at a time: with :math:`w_q` the column of
        :math:`W` of question q, :math:`S = \operatorname{diag}(W \mathbf 1) - \sum_q
        (\theta_q^2 / h_q) w_q w_q^\top - Z^\top \operatorname{diag}(1/s_c) Z`,
        :math:`Z_c = \sum_{q \in c} (\theta_c - \theta_q k_q / h_q) w_q` (one symmetric
        product per block)."""
        params = _Params.from_packed(x)
        st = self.modes(params)
        if st.eta is not None:
            return super()._schur(x)
        d = self.cells
        theta_q, theta_c = params.theta_q, params.theta_c
        qc = d.question_category
        schur = np.zeros((d.n_models, d.n_models))
        diagonal = np.zeros(d.n_models)
        z = np.zeros((d.n_categories, d.n_models))
        scale_q = theta_q / np.sqrt(st.h_q)
        coefficient_q = theta_c - theta_q * st.k_q / st.h_q
        factors = self._state_factors(st, theta_q, theta_c)
        for columns in self._question_blocks:
            weight = self._weights(factors, columns=columns)[1]
            diagonal += weight.sum(axis=1)
            scaled = weight * scale_q[columns]
            schur -= scaled @ scaled.T
            z += _sum_rows((weight * coefficient_q[columns]).T, qc[columns], d.n_categories)
        schur[np.diag_indices_from(schur)] += diagonal
        schur -= (z / st.s_c[:, None]).T @ z
        return (schur + schur.T) / 2


# ---------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GlmmFit:
    """Laplace fit of ``correct ~ 0 + model + (1|category) + (1|category:question)`` (binomial).

    Attributes
    ----------
    names : tuple of str
        Order of the fixed effects.
    params : ndarray, shape (K,)
        :math:`\\beta_k`, the log odds of a correct answer for model k on a question whose
        question and category effects are zero (subject-specific, not marginal).
    cov : ndarray, shape (K, K)
        Covariance of the fixed effects: the fixed-effect block of ``2 inv(hessian)`` if that
        matrix is positive definite (lme4's ``vcov`` with the full Hessian), else ``cov_rx``.
    cov_source : {"hessian", "schur", "rx"}
        Which ``cov`` is (column ``vcov_source`` of the fit summary; module docstring).
    cov_rx : ndarray, shape (K, K)
        Covariance of the fixed effects given theta, :math:`(X^\\top W X - X^\\top W G H^{-1}
        G^\\top W X)^{-1}` at the conditional modes (lme4's ``vcov(fit, use.hessian = FALSE)``).
    theta : dict
        Standard deviations of the random effects on the logit scale, ``{"question", "category"}``
        (lme4's ``getME(fit, "theta")``, order category:question, category).
    variance : dict
        ``theta ** 2``, same keys (lme4's ``VarCorr``).
    boundary : dict
        Per component, whether the standard deviation is below :data:`SINGULAR_TOLERANCE`;
        ``singular`` is any of them (lme4's ``isSingular``).
    loglik : float
        Laplace approximation of the log-likelihood of the 0/1 samples, ``-laplace_deviance/2``.
    laplace_deviance : float
        The minimised objective :math:`D(\\hat\\beta, \\hat\\theta)`.
    deviance : float
        :math:`-2 \\sum \\log p(y \\mid \\hat b)` over the 0/1 samples at the conditional modes;
        lme4's ``deviance()`` for a glmer fit on one row per sample.
    hessian : ndarray, shape (K + 2, K + 2)
        Hessian of :math:`D` in ``(theta_question, theta_category, beta)`` (lme4's
        ``optinfo$derivs$Hessian``), by forward differences of the exact gradient; with
        ``cov_source = "schur"`` the Schur-form matrix (beta block :math:`2S`).
    gradient : ndarray, shape (K + 2,)
        Exact gradient of :math:`D` at the estimates (zero up to the convergence tolerance).
    question_effects, category_effects : ndarray
        Conditional modes :math:`\\hat b` (lme4's ``ranef``), per question level (sorted by
        category, then question label) and per category (sorted); labels in
        ``question_levels`` (pairs (category, question)) and ``category_levels``.
    n_obs, n_cells, n_questions, n_categories : int
        0/1 samples (sum of trials), model x question cells, question levels, categories.
    iterations : int
        Outer iterations (quasi-Newton plus Newton); ``evaluations``: PIRLS solves in total.
    converged : bool
        Whether the final Newton step and the gradient met the tolerances.
    theta_fixed : bool
        Whether theta was given rather than estimated.

    Satisfies :class:`evalbars.fits.Fit` (``names``, ``params``, ``cov``, ``converged``).
    """

    names: tuple
    params: np.ndarray
    cov: np.ndarray
    cov_source: str
    cov_rx: np.ndarray
    theta: dict
    variance: dict
    boundary: dict
    singular: bool
    loglik: float
    laplace_deviance: float
    deviance: float
    hessian: np.ndarray
    gradient: np.ndarray
    question_effects: np.ndarray
    category_effects: np.ndarray
    question_levels: list = field(repr=False)
    category_levels: list = field(repr=False)
    n_obs: int = 0
    n_cells: int = 0
    n_questions: int = 0
    n_categories: int = 0
    iterations: int = 0
    evaluations: int = 0
    converged: bool = False
    theta_fixed: bool = False
    #: ``2 inv(hessian)`` over (theta, beta) when the fit computed it (the Schur path).
    cov_full: np.ndarray | None = field(default=None, repr=False)

    @property
    def cov_with_theta(self) -> np.ndarray | None:
        """Covariance of ``(theta_question, theta_category, beta)``: ``2 inv(hessian)``; with
        theta fixed, zero in the theta rows and columns; None if the Hessian is not positive
        definite (then only ``cov_rx`` is available)."""
        if self.cov_full is not None:
            return self.cov_full
        if self.cov_source != "hessian":
            return None
        if self.theta_fixed:
            covariance = np.zeros_like(self.hessian)
            covariance[BETA, BETA] = self.cov
            return covariance
        return 2.0 * np.linalg.inv(self.hessian)


def _start(cells: _Cells) -> np.ndarray:
    """Starting values: theta = (1, 1) as lme4, beta = logit of each model's smoothed accuracy."""
    if cells.grid:
        succ, tot = cells.model_sum(cells.successes), cells.model_sum(cells.trials)
    else:
        succ = np.bincount(cells.model, cells.successes, minlength=cells.n_models)
        tot = np.bincount(cells.model, cells.trials, minlength=cells.n_models)
    return np.concatenate([[1.0, 1.0], special.logit((succ + 0.5) / (tot + 1.0))])


def fit_glmm(
    successes,
    trials,
    model,
    question,
    category,
    *,
    model_names=None,
    theta=None,
    gtol: float = 1e-6,
    hessian_step: float = 1e-7,
    bfgs_maxiter: int = 1000,
    newton_maxiter: int = 50,
    hessian: str = "auto",
) -> GlmmFit:
    """Fit the nested logistic GLMM by the Laplace approximation (lme4's ``glmer``, ``nAGQ = 1``).

    Parameters
    ----------
    successes, trials : array_like of int, shape (n,)
        Binomial counts per row: with one 0/1 sample per model x question, ``trials = 1`` and
        ``successes`` is the score; with epochs, the number correct out of the samples. Rows need
        not be unique cells (the likelihood is a sum over rows).
    model, question, category : array_like, shape (n,)
        Labels per row (any hashable values). Question levels are (category, question) pairs.
    model_names : sequence of str, optional
        Order of the fixed effects; default ``sorted`` labels (lme4's factor order in C locale).
    theta : (float, float), optional
        Fix the random-effect standard deviations ``(question, category)`` and fit only the
        fixed effects (e.g. ``(0, 0)``: ordinary logistic regression).
    gtol : float
        Convergence tolerance on the largest gradient component of the Laplace deviance.
    hessian_step : float
        Step of the forward differences of the exact gradient that give the Hessian.
    bfgs_maxiter, newton_maxiter : int
        Iteration limits of the two stages; a fit that reaches the Newton limit before the
        tolerances is returned with ``converged = False``.
    hessian : {"auto", "full", "schur"}
        ``"full"``: BFGS, then Newton with the forward-difference Hessian (K + 2 gradients,
        each a pass over the data), covariance lme4's ``vcov``; ``"schur"``: Newton with the
        Schur-form Hessian (two gradients and one matrix product), covariance from it (module
        docstring); ``"auto"``: full up to :data:`FULL_HESSIAN_MAX_MODELS` models (the default
        run's tables are that fit's), else schur. The schur path lays a complete models x
        questions grid out as matrices (axis sums instead of bincounts).

    Returns
    -------
    GlmmFit

    Notes
    -----
    BFGS on the exact gradient brings (theta, beta) near the optimum; safeguarded Newton steps
    with a finite-difference Hessian finish it (quadratic convergence, so the optimum is found to
    ~1e-9 in the parameters rather than where a derivative-free optimiser stops). The Hessian at
    the optimum gives ``cov``. Models with accuracy 0 or 1 have no finite estimate.

    References
    ----------
    .. [1] Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting linear
       mixed-effects models using lme4. J Stat Softw 67(1), 1-48.
    .. [2] Breslow, N. E. and Clayton, D. G. (1993). Approximate inference in generalized linear
       mixed models. JASA 88, 9-25.
    """
    if hessian not in ("auto", "full", "schur"):
        raise ValueError(f"hessian must be auto, full or schur, not {hessian!r}")
    n_models = len(model_names) if model_names is not None else None
    if hessian == "auto":
        if n_models is None:
            n_models = pd.Series(model).nunique()
        hessian = "full" if n_models <= FULL_HESSIAN_MAX_MODELS else "schur"
    cells = _encode(
        successes, trials, model, question, category, model_names, grid=hessian == "schur"
    )
    options = (gtol, hessian_step, bfgs_maxiter, newton_maxiter)
    return _fit_cells(cells, hessian, theta, options, lambda: _levels(question, category))


def fit_glmm_wide(
    wide: WideScores,
    *,
    model_names=None,
    theta=None,
    gtol: float = 1e-6,
    hessian_step: float = 1e-7,
    bfgs_maxiter: int = 1000,
    newton_maxiter: int = 50,
    hessian: str = "auto",
) -> GlmmFit:
    """:func:`fit_glmm` on a question x model matrix of 0/1 scores (with epochs, of their means).

    Parameters
    ----------
    wide : WideScores
        The matrix every analysis job reads (:mod:`evalbars.scores`); a cell's binomial counts
        are its samples and the samples scored 1
        (:meth:`evalbars.scores.WideScores.binomial_counts`).
    model_names : sequence of str, optional
        Order of the fixed effects; default sorted.
    theta, gtol, hessian_step, bfgs_maxiter, newton_maxiter, hessian
        As :func:`fit_glmm`.

    Returns
    -------
    GlmmFit
        The fit of :func:`fit_glmm` on the matrix's scored cells as rows. A complete matrix on
        the Schur path is laid out as the grid directly (no table of rows, no sort); otherwise
        the cells are passed to :func:`fit_glmm` as rows, model by model.
    """
    names = sorted(wide.models) if model_names is None else list(model_names)
    wide = wide.columns(names)
    successes, trials = wide.binomial_counts()
    answered = trials.any(axis=1)
    if not answered.all():  # a question no model has a sample of is no level
        wide, successes, trials = wide.rows(answered), successes[answered], trials[answered]
    if hessian == "auto":
        hessian = "full" if len(names) <= FULL_HESSIAN_MAX_MODELS else "schur"
    options = (gtol, hessian_step, bfgs_maxiter, newton_maxiter)
    if hessian != "schur" or not np.all(trials > 0):
        observed = trials.T > 0  # models x questions: the rows model by model
        model_row, question_row = np.nonzero(observed)
        return fit_glmm(
            successes.T[observed],
            trials.T[observed],
            np.asarray(names, dtype=object)[model_row],
            wide.question_ids[question_row],
            wide.categories[question_row],
            model_names=names,
            theta=theta,
            gtol=gtol,
            hessian_step=hessian_step,
            bfgs_maxiter=bfgs_maxiter,
            newton_maxiter=newton_maxiter,
            hessian=hessian,
        )
    successes, trials = check_binomial_counts(successes, trials)
    trials_max = float(trials.max(initial=0.0))
    shape = (len(names), successes.shape[0])
    successes = np.ascontiguousarray(successes.T)  # models x questions; the copy is dropped
    # one sample per cell: a read-only view of ones in place of a matrix (8 bytes a cell less)
    trials = np.broadcast_to(1.0, shape) if trials_max == 1 else np.ascontiguousarray(trials.T)
    category_code = wide.category_codes
    cells = _Cells(
        successes=successes,
        trials=trials,
        model=None,
        question=None,
        question_category=category_code,  # rows sorted by category: the levels in lme4's order
        model_start=np.arange(len(names)) * shape[1],
        model_names=tuple(names),
        n_categories=int(category_code.max(initial=-1)) + 1,
        grid=True,
        trials_max=trials_max,
    )
    del successes, trials
    return _fit_cells(
        cells,
        "schur",
        theta,
        options,
        lambda: (
            list(zip(wide.categories.tolist(), wide.question_ids.tolist(), strict=True)),
            np.unique(wide.categories).tolist(),
        ),
    )


def _fit_cells(cells: _Cells, hessian: str, theta, options, levels) -> GlmmFit:
    """The optimisation and covariance of :func:`fit_glmm` on encoded cells; ``options``
    ``(gtol, hessian_step, bfgs_maxiter, newton_maxiter)``, ``levels`` a function giving the
    labels ``(question_levels, category_levels)``."""
    gtol, hessian_step, bfgs_maxiter, newton_maxiter = options
    succ = cells.model_sum(cells.successes)
    tot = cells.model_sum(cells.trials)
    if np.any(succ == 0) or np.any(succ == tot):
        raise ValueError("a model with accuracy 0 or 1 has no finite log odds")
    objective = _GridLaplace(cells) if cells.grid else _Laplace(cells)
    x0 = _start(cells)
    free = np.ones(x0.size, dtype=bool)
    if theta is not None:
        x0[THETA] = theta
        free[THETA] = False
    space = FreeCoordinates(x0, free)
    if hessian == "schur":
        return _fit_schur(
            cells,
            objective,
            space,
            x0,
            gtol,
            hessian_step,
            newton_maxiter,
            levels,
            theta is not None,
        )

    # quasi-Newton to get close (cheap iterations), then Newton to finish
    bfgs = optimize.minimize(
        space.objective(objective.deviance_and_gradient),
        space.restrict(x0),
        jac=True,
        method="BFGS",
        options={
            "gtol": _BFGS_GTOL,
            "maxiter": bfgs_maxiter,
            "hess_inv0": _precondition(objective, x0, space),
        },
    )
    x, hess, anchor, newton_iterations, converged = chord_newton(
        objective.deviance_and_gradient,
        lambda z: objective.hessian(z, hessian_step),
        space.embed(bfgs.x),
        gtol,
        space.free,
        max_iter=newton_maxiter,
    )
    # D is even in each theta: report theta >= 0. The theta-beta cross derivatives change sign
    # with theta, so flip them rather than recompute; recompute the Hessian only if the last one
    # was taken more than 1e-7 away (its relative error is of that order).
    sign = np.ones(x.size)
    sign[THETA] = np.where(x[THETA] < 0, -1.0, 1.0)
    x = x * sign
    value, grad = objective.deviance_and_gradient(x)
    if hess is None or np.max(np.abs(anchor * sign - x)) > 1e-7:
        hess = objective.hessian(x, hessian_step)
    else:
        hess = hess * np.outer(sign, sign)
    h_free = space.block(hess)
    positive = bool(np.all(np.linalg.eigvalsh(h_free) > 0))
    if positive:
        cov = (2.0 * np.linalg.inv(h_free))[-cells.n_models :, -cells.n_models :]
    cov_rx = objective.rx_covariance(x)
    return _glmm_fit(
        cells,
        objective,
        (x, value, grad, hess),
        (cov if positive else cov_rx, "hessian" if positive else "rx", cov_rx),
        levels(),
        iterations=int(bfgs.nit) + newton_iterations,
        converged=converged,
        theta_fixed=theta is not None,
    )


def _fit_schur(cells, objective, space, x0, gtol, step, max_iter, levels, fixed):
    """The fit of :func:`fit_glmm` with ``hessian = "schur"``: :func:`_schur_newton` from
    :func:`_moment_start` (theta free) or ``x0``, then the covariance from
    :meth:`_Laplace.schur_hessian` at the estimates."""
    if not fixed:
        x0 = _moment_start(objective, x0)
    x, iterations, converged = _schur_newton(objective, x0, space.free, gtol, step, max_iter)
    sign = np.ones(x.size)
    sign[THETA] = np.where(x[THETA] < 0, -1.0, 1.0)
    x = x * sign
    value, grad = objective.deviance_and_gradient(x)
    hess, schur = objective.schur_hessian(x, step)
    cov_rx = _spd_inverse(schur)
    h_free = space.block(hess)
    full = _spd_inverse(h_free)
    if full is not None:
        cov_full = np.zeros_like(hess)
        cov_full[np.ix_(space.free, space.free)] = 2.0 * full
    positive = full is not None and cov_rx is not None
    if cov_rx is None:
        cov_rx = np.linalg.pinv(schur)
    return _glmm_fit(
        cells,
        objective,
        (x, value, grad, hess),
        (cov_full[BETA, BETA] if positive else cov_rx, "schur" if positive else "rx", cov_rx),
        levels(),
        iterations=iterations,
        converged=converged,
        theta_fixed=fixed,
        cov_full=cov_full if positive else None,
    )


def _glmm_fit(
    cells, objective, estimates, covariances, levels, *, iterations, converged, theta_fixed, **extra
) -> GlmmFit:
    """The :class:`GlmmFit` of either optimiser: ``estimates`` ``(x, deviance, gradient,
    hessian)`` at the optimum, ``covariances`` ``(cov, cov_source, cov_rx)``, ``levels`` the
    labels ``(question_levels, category_levels)``."""
    x, value, grad, hess = estimates
    cov, cov_source, cov_rx = covariances
    params = _Params.from_packed(x)
    state = objective.modes(params)
    theta_hat = {"question": float(params.theta_q), "category": float(params.theta_c)}
    boundary = {k: bool(v < SINGULAR_TOLERANCE) for k, v in theta_hat.items()}
    return GlmmFit(
        names=cells.model_names,
        params=params.beta.copy(),
        cov=cov,
        cov_source=cov_source,
        cov_rx=cov_rx,
        theta=theta_hat,
        variance={k: v**2 for k, v in theta_hat.items()},
        boundary=boundary,
        singular=any(boundary.values()),
        loglik=-value / 2,
        laplace_deviance=float(value),
        deviance=-2.0 * state.loglik,
        hessian=hess,
        gradient=grad,
        question_effects=params.theta_q * state.u,
        category_effects=params.theta_c * state.v,
        question_levels=levels[0],
        category_levels=levels[1],
        n_obs=int(cells.trials.sum()),
        n_cells=cells.successes.size,
        n_questions=cells.n_questions,
        n_categories=cells.n_categories,
        iterations=iterations,
        evaluations=objective.evaluations,
        converged=bool(converged),
        theta_fixed=theta_fixed,
        **extra,
    )


def _moment_start(objective: _Laplace, x0: np.ndarray) -> np.ndarray:
    r"""A start nearer the optimum than ``x0`` (theta = (1, 1), beta the logits of the models'
    accuracies), for :func:`_schur_newton`.

    Theta: one EM step from ``x0``. Given the modes, the posterior second moment of an effect
    :math:`b = \theta u` is :math:`\theta^2 (\hat u^2 + (H^{-1})_{uu})` in the Laplace
    approximation, and its mean over the levels is the EM update of :math:`\theta^2` (Laird
    and Ware 1982, "Random-effects models for longitudinal data", Biometrics 38:963-974,
    with the Laplace approximation's conditional moments). Beta: the logits of accuracy are population-averaged
    log odds, smaller than the model's subject-specific ones by about
    :math:`\sqrt{1 + 0.346\,\sigma^2}`, :math:`\sigma^2 = \theta_q^2 + \theta_c^2` (Zeger,
    Liang and Albert 1988, "Models for longitudinal data: a generalized estimating equation
    approach", Biometrics 44:1049-1060), so they are scaled by that. Newton then takes 9
    iterations instead of 15 on a 1,000-model board; the optimum is the same (the start only
    decides the path).
    """
    state = objective.modes(_Params.from_packed(x0))
    qc = objective.cells.question_category
    ratio = state.k_q / state.h_q
    inverse_c = 1.0 / state.s_c
    inverse_q = 1.0 / state.h_q + ratio**2 * inverse_c[qc]
    theta = np.array(
        [
            abs(x0[0]) * np.sqrt(np.mean(state.u**2 + inverse_q)),
            abs(x0[1]) * np.sqrt(np.mean(state.v**2 + inverse_c)),
        ]
    )
    start = np.array(x0, dtype=float)
    start[THETA] = theta
    start[BETA] *= np.sqrt(1.0 + 0.346 * float(theta @ theta))
    return start


def _schur_newton(objective: _Laplace, x, free, gtol: float, step: float, max_iter: int):
    r"""Minimise the Laplace deviance by Newton steps with the Schur-form Hessian.

    The matrix of :meth:`_Laplace.schur_hessian` (exact in the theta rows and columns to the
    forward difference, :math:`2 S` in the beta block: the log-determinant's curvature in beta
    left out) is factored by Cholesky once and reused, corrected by the L-BFGS secant pairs of
    the steps since ([2]_ Alg. 7.4), while each step is taken in full (chord iterations, [1]_
    Sec. 5.4); after a backtracked step it is computed afresh. A matrix that is
    not positive definite (far from the optimum, in theta) is shifted by a multiple of the
    identity until it is (Levenberg). Each step is backtracked to an Armijo decrease, as
    :func:`evalbars.optimize.chord_newton`. Because the beta block is not the exact Hessian the
    convergence is linear, with a rate of the size of the left-out curvature relative to
    :math:`2 S` (small: a few iterations to 1e-9 on the fixtures), and the optimum is the
    exact one, the stationary point of :math:`D`: the estimates are glmer's.

    Returns ``(x, iterations, converged)``: converged when the largest free gradient component
    is below ``gtol`` and the step the matrix asks for is below 1e-9 (then not taken).

    References
    ----------
    .. [1] Dennis, J. E. and Schnabel, R. B. (1996). Numerical Methods for Unconstrained
       Optimization and Nonlinear Equations. SIAM.
    .. [2] Nocedal, J. and Wright, S. J. (2006). Numerical Optimization, 2nd ed. Springer.
    """
    space = FreeCoordinates(np.zeros_like(x), np.asarray(free, dtype=bool))
    x = np.array(x, dtype=float)
    value, grad = objective.deviance_and_gradient(x)
    factor, converged, pairs = None, False, []
    for iteration in range(1, max_iter + 1):  # noqa: B007 (returned: the count)
        if factor is None:
            hess = space.block(objective.schur_hessian(x, step)[0])
            factor, shifted = _shifted_cholesky(hess)
            pairs = []
        g = space.restrict(grad)
        direction = -_two_loop(factor, pairs, g)
        # converged when the gradient is below gtol and the step it asks for below 1e-9 (the
        # estimates are then within ~1e-9 of the stationary point without taking it)
        if np.max(np.abs(g)) < gtol and np.max(np.abs(direction)) < 1e-9 and not shifted:
            converged = True
            break
        full = space.embed(direction)
        t = 1.0
        for _ in range(50):
            trial_value, trial_grad = objective.deviance_and_gradient(x + t * full)
            if trial_value <= value + 1e-4 * t * min(g @ direction, 0.0) + 1e-12 * abs(value):
                break
            t /= 2
        x, value, grad = x + t * full, trial_value, trial_grad
        if t < 1 or shifted:
            factor = None  # fresh matrix next time
        else:  # the curvature met along the step corrects the matrix (L-BFGS pair)
            change = space.restrict(grad) - g
            if (t * direction) @ change > 0:
                pairs = [*pairs[-9:], (t * direction, change)]
    return x, iteration, converged


def _two_loop(factor, pairs, g: np.ndarray) -> np.ndarray:
    """:math:`H^{-1} g` for the BFGS update of the factored matrix by the secant pairs
    ``(s, y)`` (the two-loop recursion of L-BFGS, [1]_ Alg. 7.4, with the factored matrix as
    the initial Hessian).

    References
    ----------
    .. [1] Nocedal, J. and Wright, S. J. (2006). Numerical Optimization, 2nd ed. Springer.
    """
    q = g.copy()
    coefficients = []
    for s, y in reversed(pairs):
        a = (s @ q) / (s @ y)
        q -= a * y
        coefficients.append(a)
    r = linalg.cho_solve(factor, q, check_finite=False)
    for (s, y), a in zip(pairs, reversed(coefficients), strict=True):
        r += s * (a - (y @ r) / (s @ y))
    return r


def _shifted_cholesky(matrix: np.ndarray):
    """Cholesky factor of ``matrix + tau I`` for the smallest tau in 0, 1e-6 s, 1e-5 s, ...
    (s the largest diagonal entry) that is positive definite; ``(factor, tau > 0)``."""
    scale = np.max(np.abs(np.diag(matrix)))
    for tau in [0.0, *(scale * 10.0 ** np.arange(-6, 3))]:
        try:
            shifted = matrix + tau * np.eye(matrix.shape[0]) if tau else matrix
            return linalg.cho_factor(shifted, lower=True, check_finite=False), tau > 0
        except linalg.LinAlgError:
            continue
    raise RuntimeError("no positive definite shift of the Hessian")


def _spd_inverse(matrix: np.ndarray) -> np.ndarray | None:
    """Inverse of a symmetric positive definite matrix by Cholesky; None if not positive
    definite."""
    try:
        factor = linalg.cho_factor(matrix, lower=True, check_finite=False)
    except linalg.LinAlgError:
        return None
    inverse = linalg.cho_solve(factor, np.eye(matrix.shape[0]), check_finite=False)
    return (inverse + inverse.T) / 2


def _precondition(objective: _Laplace, x0: np.ndarray, space: FreeCoordinates) -> np.ndarray:
    """BFGS's starting inverse Hessian: a cheap approximate Hessian made positive definite (the
    scales of theta and beta differ by orders of magnitude, and BFGS would otherwise spend its
    first iterations learning them)."""
    eigval, eigvec = np.linalg.eigh(space.block(objective.approximate_hessian(x0)))
    eigval = np.maximum(np.abs(eigval), 1e-8 * np.max(np.abs(eigval)))  # made positive definite
    hess_inv0 = (eigvec / eigval) @ eigvec.T
    return (hess_inv0 + hess_inv0.T) / 2


def _levels(question, category):
    """Labels of the question levels ((category, question), sorted) and of the categories."""
    frame = pd.DataFrame({"category": np.asarray(category), "question": np.asarray(question)})
    pairs = frame.drop_duplicates().sort_values(["category", "question"])
    return list(pairs.itertuples(index=False, name=None)), sorted(frame["category"].unique())


def laplace_deviance(
    successes, trials, model, question, category, theta, beta, model_names=None
) -> float:
    """The Laplace deviance :math:`D(\\beta, \\theta)` that :func:`fit_glmm` minimises.

    ``theta = (sd_question, sd_category)``; ``beta`` in ``model_names`` order. Equals lme4's
    stage-2 deviance function (``update(fit, devFunOnly = TRUE)``) evaluated at
    ``c(theta, beta)`` with PIRLS run to convergence.
    """
    cells = _encode(successes, trials, model, question, category, model_names)
    return float(
        _Laplace(cells).deviance(
            np.concatenate([np.asarray(theta, float), np.asarray(beta, float)])
        )
    )
