r"""Population-averaged logistic model for 0/1 benchmark scores: GEE clustered on question.

Model: :math:`\operatorname{logit} E[y] = \beta_k` for every 0/1 sample of model :math:`k`, with an
exchangeable working correlation :math:`\alpha` between any two samples on the same question (two
models, or two epochs of one model) and independence across questions. The estimating equations
[1]_

.. math::  \sum_q D_q^\top V_q^{-1} (y_q - \mu_q) = 0, \qquad
           V_q = A_q^{1/2} R(\alpha) A_q^{1/2}, \quad A_q = \operatorname{diag}(\mu(1 - \mu)),

are solved by statsmodels' ``GEE`` (family Binomial, ``cov_struct = Exchangeable()``) up to
:data:`STATSMODELS_MAX_MODELS` models, and above it in closed form from per-question sums
(:func:`_closed_form`: the exchangeable inverse per cluster, bread and meat by matrix products,
no samples x models design; the two agree to ~1e-12 on the fixtures). The covariance of :math:`\hat\beta` is the robust (sandwich) one,
:math:`B^{-1} (\sum_q D_q^\top V_q^{-1} r_q r_q^\top V_q^{-1} D_q) B^{-1}` with
:math:`B = \sum_q D_q^\top V_q^{-1} D_q`, which stays valid whatever the true within-question
correlation. :math:`\beta_k` is a population-averaged log odds: :math:`\operatorname{logistic}
(\beta_k)` is model :math:`k`'s accuracy over the population of questions, unlike the GLMM's
subject-specific :math:`\beta_k` [2]_. With every model answering
every question the same number of times, :math:`\hat\beta_k` is the logit of model :math:`k`'s
observed accuracy whatever :math:`\alpha`.

Pairwise odds ratios and accuracy differences: :func:`evalbars.stats.logistic.contrasts.gee_contrasts`.

The moment estimator of :math:`\alpha` is the sum of the products of Pearson residuals over the
pairs within questions, divided by the number of pairs and by the dispersion
:math:`\phi = \sum r^2 / N`. statsmodels subtracts the number of parameters from both counts
(``ddof_scale``, default ``K``); R's geepack subtracts nothing, which ``ddof_scale = 0``
reproduces. With every model answering every question equally often :math:`\hat\beta` and its
robust covariance do not depend on :math:`\alpha`; otherwise the two conventions differ in the
fourth or fifth digit.

Notation
--------
With :math:`M = \sum_q D_q^\top V_q^{-1} r_q r_q^\top V_q^{-1} D_q`:

=============================================  ========================================
symbol                                         :class:`GeeFit` attribute
=============================================  ========================================
:math:`\beta_k`, population-averaged log odds  ``params[k]``, in the order of ``names``
:math:`\operatorname{logistic}(\beta_k)`       ``accuracy[k]``
sandwich :math:`B^{-1} M B^{-1}`               ``cov`` (robust)
:math:`B^{-1}` (times the scale)               ``cov_naive`` (model-based)
:math:`\alpha`                                 ``alpha``
=============================================  ========================================

Not implemented / limits
------------------------
* One working correlation, exchangeable within question, and no category level: questions are
  taken as independent clusters, so a correlation between the questions of one category (the
  logistic mixed model's category effect) is not in the robust covariance.
* The robust covariance is the plain sandwich: with few questions it is biased downwards (no
  small-sample correction such as Mancl and DeRouen's [3]_).
* statsmodels' path expands binomial cells to their 0/1 samples, with a dense samples x models
  design (memory 8 N K bytes); the closed form holds questions x models matrices instead.

References
----------
.. [1] Liang, K.-Y. and Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
   models. Biometrika 73, 13-22.
.. [2] Zeger, S. L., Liang, K.-Y. and Albert, P. S. (1988). Models for longitudinal data: a
   generalized estimating equation approach. Biometrics 44, 1049-1060.
.. [3] Mancl, L. A. and DeRouen, T. A. (2001). A covariance estimator for GEE with improved
   small-sample properties. Biometrics 57, 126-134.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores
from evalbars.stats.logistic.cells import _label_codes, check_binomial_counts, sorted_codes
from evalbars.stats.pair_products import binary_matrix, gram

__all__ = ["GeeFit", "fit_gee", "fit_gee_wide"]


@dataclass(frozen=True)
class GeeFit:
    """GEE fit of ``correct ~ 0 + model``, exchangeable within question, robust covariance.

    Attributes
    ----------
    names : tuple of str
        Order of the coefficients.
    params : ndarray, shape (K,)
        Population-averaged log odds of a correct answer per model.
    cov : ndarray, shape (K, K)
        Robust (sandwich) covariance of ``params``.
    cov_naive : ndarray, shape (K, K)
        Model-based covariance (right only if the working correlation is).
    alpha : float
        Estimated exchangeable working correlation.
    scale : float
        statsmodels' scale (1 for the binomial family).
    n_obs, n_clusters : int
        0/1 samples and questions.
    converged : bool
        statsmodels' convergence flag (change in the estimates below ``ctol``).

    Satisfies :class:`evalbars.stats.fits.Fit` (``names``, ``params``, ``cov``, ``converged``).
    """

    names: tuple
    params: np.ndarray
    cov: np.ndarray
    cov_naive: np.ndarray
    alpha: float
    scale: float
    n_obs: int
    n_clusters: int
    converged: bool

    @property
    def accuracy(self) -> np.ndarray:
        """Population-averaged accuracy, ``logistic(params)``."""
        return special.expit(self.params)


#: Up to this many models :func:`fit_gee` runs statsmodels' GEE on the 0/1 samples (a dense
#: samples x models design; the default run's tables are that fit's); above it, the closed form.
STATSMODELS_MAX_MODELS = 30


def _samples(successes, trials):
    """Expand binomial cells to their 0/1 samples: index of the cell, outcome."""
    successes, trials = (a.astype(np.int64) for a in check_binomial_counts(successes, trials))
    cell = np.repeat(np.arange(trials.size), trials)
    # position of each sample within its cell; the first `successes` samples are the 1s
    position = np.arange(cell.size) - np.repeat(np.cumsum(trials) - trials, trials)
    return cell, (position < successes[cell]).astype(float)


def fit_gee(
    successes,
    trials,
    model,
    question,
    *,
    model_names=None,
    maxiter: int = 100,
    ctol: float = 1e-10,
    ddof_scale: int | None = None,
    method: str = "auto",
) -> GeeFit:
    """Fit the population-averaged logistic model by GEE, clustered on question.

    Parameters
    ----------
    successes, trials : array_like of int, shape (n,)
        Binomial counts per row, as for :func:`evalbars.stats.logistic.glmm.fit_glmm` (trials = 1: the row is
        the sample).
    model, question : array_like, shape (n,)
        Labels per row; question labels define the clusters.
    model_names : sequence of str, optional
        Order of the coefficients; default sorted labels.
    maxiter, ctol : int, float
        Iteration limit and tolerance on the Euclidean norm of the estimating function (as
        statsmodels' ``GEE.fit``; its default ctol 1e-6 leaves differences of ~1e-7 between runs
        and packages; 1e-10 does not).
    ddof_scale : int, optional
        Degrees of freedom subtracted in the moment estimators of alpha and the dispersion:
        statsmodels' default (None: the number of models) or 0 for R geepack's estimates.
    method : {"auto", "statsmodels", "closed_form"}
        ``"statsmodels"``: statsmodels' ``GEE`` on the 0/1 samples (family Binomial,
        ``cov_struct = Exchangeable()``) with a dense samples x models design, memory
        :math:`8 N K` bytes; ``"closed_form"``: :func:`_closed_form`, the same estimating
        equations and sandwich from per-question sums (no design matrix, no expansion of the
        cells); ``"auto"``: statsmodels up to :data:`STATSMODELS_MAX_MODELS` models, else the
        closed form. The two agree to ~1e-10 (tests).

    Returns
    -------
    GeeFit

    References
    ----------
    .. [1] Liang, K.-Y. and Zeger, S. L. (1986). Longitudinal data analysis using generalized
       linear models. Biometrika 73, 13-22.
    """
    names = tuple(sorted_codes(model)[1].tolist() if model_names is None else model_names)
    code = _label_codes(model, names)
    if np.any(code < 0):
        raise ValueError("model labels not in model_names")
    if method == "auto":
        method = "statsmodels" if len(names) <= STATSMODELS_MAX_MODELS else "closed_form"
    if method == "closed_form":
        return _closed_form(successes, trials, code, question, names, maxiter, ctol, ddof_scale)
    if method != "statsmodels":
        raise ValueError(f"method must be auto, statsmodels or closed_form, not {method!r}")
    # imported here: the closed form (above 30 models) needs none of it, and it takes 0.5 s
    import statsmodels.api as sm  # noqa: PLC0415

    cell, outcome = _samples(successes, trials)
    design = np.zeros((cell.size, len(names)))
    design[np.arange(cell.size), code[cell]] = 1.0
    groups = pd.factorize(np.asarray(question), sort=True)[0][cell]
    gee = sm.GEE(
        outcome,
        design,
        groups=groups,
        family=sm.families.Binomial(),
        cov_struct=sm.cov_struct.Exchangeable(),
    )
    result = gee.fit(maxiter=maxiter, ctol=ctol, ddof_scale=ddof_scale)
    return GeeFit(
        names=names,
        params=np.asarray(result.params),
        cov=np.asarray(result.cov_robust),
        cov_naive=np.asarray(result.cov_naive),
        alpha=float(gee.cov_struct.dep_params),
        scale=float(result.scale),
        n_obs=int(cell.size),
        n_clusters=int(groups.max() + 1),
        converged=bool(result.converged),
    )


def fit_gee_wide(
    wide: WideScores,
    *,
    model_names=None,
    maxiter: int = 100,
    ctol: float = 1e-10,
    ddof_scale: int | None = None,
    method: str = "auto",
) -> GeeFit:
    """:func:`fit_gee` on a question x model matrix of 0/1 scores (with epochs, of their means).

    The closed form reads the matrix's binomial counts
    (:meth:`evalbars.data.scores.WideScores.binomial_counts`) as its questions x models grids;
    statsmodels gets the scored cells as rows, model by model. Questions no model has a sample
    of are no clusters. Arguments as :func:`fit_gee`.
    """
    names = sorted(wide.models) if model_names is None else list(model_names)
    if method == "auto":
        method = "statsmodels" if len(names) <= STATSMODELS_MAX_MODELS else "closed_form"
    if method == "closed_form" and not wide.has_repeats:
        columns = pd.Index(wide.models).get_indexer(names)
        binary = binary_matrix(np.asarray(wide.scores), columns)
        if binary is not None and binary[1] is None:  # complete, one 0/1 sample per cell
            scores = np.asarray(wide.scores, dtype=float)
            return _closed_form_binary(
                scores, binary[0], columns, tuple(names), maxiter, ctol, ddof_scale
            )
    wide = wide.columns(names)
    successes, trials = wide.binomial_counts()
    answered = trials.any(axis=1)
    if method == "closed_form":
        successes, trials = check_binomial_counts(successes[answered], trials[answered])
        return _closed_form_grid(successes, trials, tuple(names), maxiter, ctol, ddof_scale)
    # the rows model by model, each model's by question id: the order of binomial_cells' rows,
    # whose sums statsmodels' start (a GLM fit over every row) takes in that order
    by_id = np.argsort(np.asarray(wide.question_ids), kind="stable")
    observed = trials[by_id].T > 0
    model_row, question_row = np.nonzero(observed)
    question_row = by_id[question_row]
    successes, trials = successes[by_id].T[observed], trials[by_id].T[observed]
    return fit_gee(
        successes,
        trials,
        np.asarray(names, dtype=object)[model_row],
        np.asarray(wide.question_ids)[question_row],
        model_names=names,
        maxiter=maxiter,
        ctol=ctol,
        ddof_scale=ddof_scale,
        method=method,
    )


def _closed_form(successes, trials, code, question, names, maxiter, ctol, ddof_scale) -> GeeFit:
    r"""Exchangeable logistic GEE and its sandwich from per-question sums (no design matrix).

    With one coefficient per model, every sample of model :math:`k` has the same mean
    :math:`\mu_k = \operatorname{logistic}(\beta_k)`, variance :math:`v_k = \mu_k(1-\mu_k)` and
    :math:`s_k = \sqrt{v_k}`. Let :math:`N_{qk}` and :math:`Y_{qk}` be model k's trials and
    successes on question q (0 where it did not answer), :math:`m_q = \sum_k N_{qk}` the cluster
    size, :math:`R_{qk} = Y_{qk} - N_{qk}\mu_k` and :math:`E_q = \sum_k R_{qk}/s_k` the sum of
    the cluster's Pearson residuals. The exchangeable inverse is closed form per cluster,

    .. math::  R_q(\alpha)^{-1} = \frac{1}{1-\alpha}\Bigl(I - \gamma_q \mathbf 1\mathbf 1^\top
               \Bigr), \qquad \gamma_q = \frac{\alpha}{1 + (m_q - 1)\alpha},

    so with :math:`D_q = A_q X_q` and :math:`V_q = A_q^{1/2} R_q A_q^{1/2}` ([1]_) the
    per-cluster estimating function and the bread are

    .. math::  u_{qk} = \frac{1}{1-\alpha}\bigl(R_{qk} - \gamma_q E_q N_{qk} s_k\bigr), \qquad
               B = \frac{1}{1-\alpha}\Bigl(\operatorname{diag}(n_k v_k)
               - S N^\top \Gamma N S\Bigr),

    :math:`S = \operatorname{diag}(s)`, :math:`\Gamma = \operatorname{diag}(\gamma)`,
    :math:`n_k = \sum_q N_{qk}`. Fisher scoring :math:`\beta \leftarrow \beta + B^{-1}\sum_q u_q`
    (the solve by conjugate gradients with products by :math:`N` and :math:`N^\top`, so an
    iteration is a few passes over the questions x models grid) alternates with the moment
    estimators of statsmodels' ``Exchangeable``: :math:`\phi = \sum e^2 / (N_{obs} - d)` and
    :math:`\alpha = \tfrac12 \sum_q (E_q^2 - \sum_{i \in q} e_i^2) / \phi / (P - d)`, :math:`P =
    \sum_q m_q(m_q-1)/2` pairs, :math:`d` = ``ddof_scale``. At the solution the robust covariance
    is :math:`B^{-1} (U^\top U) B^{-1}` (:math:`U` the questions x models matrix of
    :math:`u_{qk}`; two matrix products) and the naive one :math:`B^{-1}` (binomial scale 1).
    The start is the independence fit, :math:`\beta_k = \operatorname{logit}(y_k / n_k)`, as
    statsmodels' (a GLM).

    Memory: the grids :math:`N, Y, R, U` of questions x models, 8 bytes per entry each.
    """
    successes, trials = check_binomial_counts(successes, trials)
    q_code, q_levels = sorted_codes(question)
    n_models, n_questions = len(names), len(q_levels)
    key = q_code.astype(np.int64) * n_models + code
    size = n_questions * n_models
    grid_n = np.bincount(key, trials, minlength=size).reshape(n_questions, n_models)
    grid_y = np.bincount(key, successes, minlength=size).reshape(n_questions, n_models)
    return _closed_form_grid(grid_y, grid_n, names, maxiter, ctol, ddof_scale)


def _closed_form_grid(grid_y, grid_n, names, maxiter, ctol, ddof_scale) -> GeeFit:
    """:func:`_closed_form` from the questions x models successes and trials."""
    n_models, n_questions = len(names), grid_n.shape[0]
    n_k, y_k, m_q = grid_n.sum(axis=0), grid_y.sum(axis=0), grid_n.sum(axis=1)
    n_obs = float(m_q.sum())
    n_pairs = float(np.sum(m_q * (m_q - 1.0)) / 2.0)
    ddof = n_models if ddof_scale is None else ddof_scale
    beta = special.logit(y_k / n_k)
    converged = False
    for _ in range(maxiter):
        mu = special.expit(beta)
        s = np.sqrt(mu * (1.0 - mu))
        resid = grid_y - grid_n * mu
        e_q = resid @ (1.0 / s)
        # sum of squared Pearson residuals, model by model: y(1-mu)^2 + (n-y)mu^2 over v
        ssr = float(np.sum((y_k * (1.0 - mu) ** 2 + (n_k - y_k) * mu**2) / s**2))
        phi = ssr / (n_obs - ddof)
        alpha = (float(e_q @ e_q) - ssr) / 2.0 / phi / (n_pairs - ddof)
        gamma = alpha / (1.0 + (m_q - 1.0) * alpha)
        score = ((y_k - n_k * mu) - s * (grid_n.T @ (gamma * e_q))) / (1.0 - alpha)
        if np.sqrt(score @ score) < ctol:
            converged = True
            break
        beta = beta + _bread_solve(grid_n, gamma, s, n_k, alpha, score)
    bread = (np.diag(n_k * s**2) - s[:, None] * _gram(grid_n, gamma) * s[None, :]) / (1.0 - alpha)
    bread_inv = np.linalg.inv(bread)
    u = (resid - (gamma * e_q)[:, None] * grid_n * s[None, :]) / (1.0 - alpha)
    meat = u.T @ u
    robust = bread_inv @ meat @ bread_inv
    return GeeFit(
        names=names,
        params=beta,
        cov=(robust + robust.T) / 2.0,
        cov_naive=(bread_inv + bread_inv.T) / 2.0,
        alpha=float(alpha),
        scale=1.0,
        n_obs=int(n_obs),
        n_clusters=n_questions,
        converged=converged,
    )


#: :func:`_closed_form_binary` stops when no estimate moves by more than this (log odds).
_STEP_TOLERANCE = 1e-10


def _closed_form_binary(scores, x, columns, names, maxiter, ctol, ddof_scale) -> GeeFit:
    r""":func:`_closed_form_grid` of a complete matrix of one 0/1 sample per cell, from its Gram
    matrix.

    With every cluster of size K (:math:`N = \mathbf 1 \mathbf 1^\top`, :math:`\gamma_q =
    \gamma`) the bread is a diagonal less a rank-one term, inverted in closed form
    (Sherman-Morrison): with :math:`d = 1/(n s^2)`, :math:`w = 1/(n s)` and
    :math:`\kappa = n\gamma / (1 - K\gamma)`, :math:`B^{-1} = (1 - \alpha)(\operatorname{diag}(d)
    + \kappa w w^\top)`. The estimating functions are :math:`(1 - \alpha) U = Y - A C^\top`,
    :math:`A = [\mathbf 1, \gamma E]` (questions x 2), :math:`C = [\mu, s]` (models x 2), so the
    meat is

    .. math::  (1 - \alpha)^2 U^\top U = Y^\top Y - Y^\top A C^\top - C A^\top Y
               + C A^\top A C^\top,

    with :math:`Y^\top Y` the Gram matrix of the 0/1 scores (:func:`evalbars.stats.pair_products.
    gram`, exact in float32, one symmetric product) and everything else products of the matrix with
    vectors. No questions x models grid beyond the scores is made, and the sandwich costs
    :math:`K^2` besides the Gram matrix, instead of two :math:`K^3` products.

    ``scores`` is the float64 matrix (questions x all its models), ``x`` its columns ``columns``
    (the models in ``names`` order) as float32 0/1.
    """
    n_questions, n_models = x.shape
    y_k = x.sum(axis=0, dtype=np.float64)
    n_obs = float(n_questions * n_models)
    n_pairs = n_questions * n_models * (n_models - 1.0) / 2.0
    ddof = n_models if ddof_scale is None else ddof_scale

    def times(weights):  # Y w, Y the scores of the models in names order
        spread = np.zeros(scores.shape[1])
        spread[columns] = weights
        return scores @ spread

    beta = special.logit(y_k / n_questions)
    converged = False
    for _ in range(maxiter):
        mu = special.expit(beta)
        s = np.sqrt(mu * (1.0 - mu))
        e_q = times(1.0 / s) - float(np.sum(mu / s))
        ssr = float(np.sum((y_k * (1.0 - mu) ** 2 + (n_questions - y_k) * mu**2) / s**2))
        phi = ssr / (n_obs - ddof)
        alpha = (float(e_q @ e_q) - ssr) / 2.0 / phi / (n_pairs - ddof)
        gamma = alpha / (1.0 + (n_models - 1.0) * alpha)
        e_sum = float(e_q.sum())
        score = ((y_k - n_questions * mu) - s * (gamma * e_sum)) / (1.0 - alpha)
        d, w = 1.0 / (n_questions * s**2), 1.0 / (n_questions * s)
        kappa = n_questions * gamma / (1.0 - n_models * gamma)
        step = (1.0 - alpha) * (d * score + kappa * w * (w @ score))
        # converged at ctol, or when no estimate moves by 1e-10: at thousands of models the
        # score's rounding alone is about 1e-10 (4,500 x 21,000), and the bread is nearly
        # singular along a common shift (K gamma near 1), so steps of 1e-12 go round in it
        if np.sqrt(score @ score) < ctol or np.max(np.abs(step)) < _STEP_TOLERANCE:
            converged = True
            break
        beta = beta + step
    # The meat from the Gram matrix and the products with A = [1, gamma e].
    y_a = np.column_stack([y_k, gamma * (scores.T @ e_q)[columns]])
    c = np.column_stack([mu, s])
    a_a = np.array(
        [[n_questions, gamma * e_sum], [gamma * e_sum, gamma * gamma * float(e_q @ e_q)]]
    )
    meat = gram(x).astype(np.float64)
    meat -= y_a @ c.T
    meat -= c @ y_a.T
    meat += c @ a_a @ c.T
    # bread^-1 meat bread^-1 with bread^-1 = (1 - alpha)(diag(d) + kappa w w'), over (1 - alpha)^2
    meat_w = meat @ w
    robust = d[:, None] * meat * d[None, :]
    corner = kappa * (d * meat_w)
    robust += corner[:, None] * w[None, :] + w[:, None] * corner[None, :]
    robust += (kappa * kappa * float(w @ meat_w)) * np.outer(w, w)
    bread_inv = (1.0 - alpha) * (np.diag(d) + kappa * np.outer(w, w))
    return GeeFit(
        names=names,
        params=beta,
        cov=(robust + robust.T) / 2.0,
        cov_naive=(bread_inv + bread_inv.T) / 2.0,
        alpha=float(alpha),
        scale=1.0,
        n_obs=int(n_obs),
        n_clusters=n_questions,
        converged=converged,
    )


def _gram(grid_n: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """:math:`N^\\top \\operatorname{diag}(\\gamma) N`: one matrix product, or, when every
    model answered every question once (:math:`N = \\mathbf 1 \\mathbf 1^\\top`), its value
    :math:`(\\sum_q \\gamma_q)\\, \\mathbf 1 \\mathbf 1^\\top` (a product of K^2 Q
    multiplications saved)."""
    if grid_n.min(initial=1.0) == 1.0 == grid_n.max(initial=1.0):
        return np.full((grid_n.shape[1], grid_n.shape[1]), float(gamma.sum()))
    return (grid_n * gamma[:, None]).T @ grid_n


def _bread_solve(grid_n, gamma, s, n_k, alpha, rhs, rtol: float = 1e-13) -> np.ndarray:
    """:math:`B^{-1}` rhs by preconditioned conjugate gradients; B applied as
    :math:`(\\operatorname{diag}(n v) x - s \\circ N^\\top(\\gamma \\circ N(s \\circ x)))/(1-\\alpha)`."""

    def apply(x):
        return (n_k * s**2 * x - s * (grid_n.T @ (gamma * (grid_n @ (s * x))))) / (1.0 - alpha)

    diagonal = (n_k * s**2 - s**2 * ((grid_n**2).T @ gamma)) / (1.0 - alpha)
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = r / diagonal
    p = z.copy()
    rz = r @ z
    norm = np.sqrt(rhs @ rhs)
    for _ in range(10 * rhs.size + 50):
        if np.sqrt(r @ r) <= rtol * norm:
            break
        bp = apply(p)
        step = rz / (p @ bp)
        x += step * p
        r -= step * bp
        z = r / diagonal
        rz, previous = r @ z, rz
        p = z + (rz / previous) * p
    return x
