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
obtained by forward differences of that gradient (both from :mod:`evalbars.stats.optimize`), K + 2
gradients per Hessian. Above (``hessian = "schur"``,
:func:`evalbars.stats.logistic.schur_newton.schur_newton`): Newton steps with
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
:mod:`evalbars.stats.logistic.contrasts`.

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

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, special

from evalbars.data.scores import WideScores
from evalbars.stats.logistic.cells import (
    _Cells,
    _encode,
    _Margins,
    binomial_cells,
    check_binomial_counts,
)
from evalbars.stats.logistic.grid_laplace import _GridLaplace
from evalbars.stats.logistic.laplace import BETA, THETA, _Laplace, _Params
from evalbars.stats.logistic.margin_laplace import _MarginLaplace, use_margins
from evalbars.stats.logistic.schur_newton import block_covariances, schur_newton
from evalbars.stats.optimize import FreeCoordinates, chord_newton
from evalbars.stats.pair_products import binary_totals

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
#: Position of theta_category in the packed vector (``THETA`` holds question, category).
_THETA_CATEGORY = 1


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

    Satisfies :class:`evalbars.stats.fits.Fit` (``names``, ``params``, ``cov``, ``converged``).
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
    if cells.margins is not None:
        succ, tot = cells.margins.successes_model, cells.margins.observed_model(cells.n_questions)
    elif cells.grid:
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
        The matrix every analysis job reads (:mod:`evalbars.data.scores`); a cell's binomial counts
        are its samples and the samples scored 1
        (:meth:`evalbars.data.scores.WideScores.binomial_counts`).
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
    options = (gtol, hessian_step, bfgs_maxiter, newton_maxiter)
    if hessian == "auto":
        hessian = "full" if len(names) <= FULL_HESSIAN_MAX_MODELS else "schur"
    if hessian == "schur" and not wide.has_repeats:
        totals = binary_totals(np.asarray(wide.scores), pd.Index(wide.models).get_indexer(names))
        if totals is not None:  # complete, one 0/1 sample per cell: the margins are the data
            return _fit_cells(
                _margin_grid(wide, names, *totals),
                "schur",
                theta,
                options,
                lambda: (
                    list(zip(wide.categories.tolist(), wide.question_ids.tolist(), strict=True)),
                    np.unique(wide.categories).tolist(),
                ),
            )
    wide = wide.columns(names)
    successes, trials = wide.binomial_counts()
    answered = trials.any(axis=1)
    if not answered.all():  # a question no model has a sample of is no level
        wide, successes, trials = wide.rows(answered), successes[answered], trials[answered]
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


def _objective(cells: _Cells, hessian: str) -> _Laplace:
    """The Laplace deviance of the cells. The Schur path on one 0/1 sample per cell takes it
    from the margins (:mod:`evalbars.stats.logistic.margin_laplace`; with at most
    :data:`~evalbars.stats.logistic.margin_laplace.MARGIN_MAX_MISSING` cells not observed); a complete grid of epochs from the grid's
    matrix form; anything else, and the full path (the default run's tables), from the cell
    list."""
    if cells.margins is not None or (hessian == "schur" and use_margins(cells)):
        return _MarginLaplace(cells)
    return _GridLaplace(cells) if cells.grid else _Laplace(cells)


def _margin_grid(wide: WideScores, names, model_totals, question_totals) -> _Cells:
    """The complete grid of one 0/1 sample per cell of ``wide`` by its margins (models in the
    order ``names``; question levels the matrix's rows, sorted by category as lme4's)."""
    category_code = wide.category_codes
    empty = np.empty(0, dtype=np.int64)
    return _Cells(
        successes=None,
        trials=None,
        model=None,
        question=None,
        question_category=category_code,
        model_start=np.arange(len(names)) * len(question_totals),
        model_names=tuple(names),
        n_categories=int(category_code.max(initial=-1)) + 1,
        grid=True,
        trials_max=1.0,
        margins=_Margins(model_totals, question_totals, empty, empty),
    )


def _fit_cells(cells: _Cells, hessian: str, theta, options, levels) -> GlmmFit:
    """The optimisation and covariance of :func:`fit_glmm` on encoded cells; ``options``
    ``(gtol, hessian_step, bfgs_maxiter, newton_maxiter)``, ``levels`` a function giving the
    labels ``(question_levels, category_levels)``."""
    gtol, hessian_step, bfgs_maxiter, newton_maxiter = options
    if cells.margins is not None:
        succ = cells.margins.successes_model
        tot = cells.margins.observed_model(cells.n_questions)
    else:
        succ = cells.model_sum(cells.successes)
        tot = cells.model_sum(cells.trials)
    if np.any(succ == 0) or np.any(succ == tot):
        raise ValueError("a model with accuracy 0 or 1 has no finite log odds")
    objective = _objective(cells, hessian)
    x0 = _start(cells)
    free = np.ones(x0.size, dtype=bool)
    if theta is not None:
        x0[THETA] = theta
        free[THETA] = False
    if cells.n_categories < 2:
        # A single category's effect is the same shift for every model, absorbed by the fixed
        # effects: the question-only model (theta_category pinned at 0).
        x0[_THETA_CATEGORY], free[_THETA_CATEGORY] = 0.0, False
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
    """The fit of :func:`fit_glmm` with ``hessian = "schur"``:
    :func:`evalbars.stats.logistic.schur_newton.schur_newton` from
    :func:`_moment_start` (theta free) or ``x0``, then the covariance from
    :meth:`_Laplace.schur_hessian` at the estimates."""
    if not fixed:
        x0 = _moment_start(objective, x0)
        if cells.n_categories < 2:
            x0[_THETA_CATEGORY] = 0.0
    x, iterations, converged = schur_newton(objective, x0, space.free, gtol, step, max_iter)
    sign = np.ones(x.size)
    sign[THETA] = np.where(x[THETA] < 0, -1.0, 1.0)
    x = x * sign
    value, grad = objective.deviance_and_gradient(x)
    hess, schur = objective.schur_hessian(x, step)
    inverse = objective.schur_inverse(x) if hasattr(objective, "schur_inverse") else None
    cov_rx, cov_full = block_covariances(hess, schur, space.free[THETA], inverse)
    positive = cov_full is not None
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
        n_obs=cells.n_obs,
        n_cells=cells.n_cells,
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
    accuracies), for :func:`evalbars.stats.logistic.schur_newton.schur_newton`.

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
