r"""Population-averaged logistic model for 0/1 benchmark scores: GEE clustered on question.

Model: :math:`\operatorname{logit} E[y] = \beta_k` for every 0/1 sample of model :math:`k`, with an
exchangeable working correlation :math:`\alpha` between any two samples on the same question (two
models, or two epochs of one model) and independence across questions. The estimating equations
[1]_

.. math::  \sum_q D_q^\top V_q^{-1} (y_q - \mu_q) = 0, \qquad
           V_q = A_q^{1/2} R(\alpha) A_q^{1/2}, \quad A_q = \operatorname{diag}(\mu(1 - \mu)),

are solved by statsmodels' ``GEE`` (family Binomial, ``cov_struct = Exchangeable()``), and the
covariance of :math:`\hat\beta` is the robust (sandwich) one,
:math:`B^{-1} (\sum_q D_q^\top V_q^{-1} r_q r_q^\top V_q^{-1} D_q) B^{-1}` with
:math:`B = \sum_q D_q^\top V_q^{-1} D_q`, which stays valid whatever the true within-question
correlation. :math:`\beta_k` is a population-averaged log odds: :math:`\operatorname{logistic}
(\beta_k)` is model :math:`k`'s accuracy over the population of questions, unlike the GLMM's
subject-specific :math:`\beta_k` [2]_. With every model answering
every question the same number of times, :math:`\hat\beta_k` is the logit of model :math:`k`'s
observed accuracy whatever :math:`\alpha`.

Pairwise odds ratios and accuracy differences: :func:`evalbars.logistic.gee_contrasts`.

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
* Binomial cells are expanded to their 0/1 samples, so the cost grows with the number of samples.

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
import statsmodels.api as sm
from scipy import special

from .glmm import check_binomial_counts

__all__ = ["GeeFit", "fit_gee"]


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

    Satisfies :class:`evalbars.fits.Fit` (``names``, ``params``, ``cov``, ``converged``).
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
) -> GeeFit:
    """Fit the population-averaged logistic model by GEE (statsmodels), clustered on question.

    Parameters
    ----------
    successes, trials : array_like of int, shape (n,)
        Binomial counts per row, as for :func:`evalbars.glmm.fit_glmm`; each cell is expanded to
        its 0/1 samples (trials = 1: the row is the sample).
    model, question : array_like, shape (n,)
        Labels per row; question labels define the clusters.
    model_names : sequence of str, optional
        Order of the coefficients; default sorted labels.
    maxiter, ctol : int, float
        Passed to ``statsmodels.genmod.generalized_estimating_equations.GEE.fit`` (its default
        ctol 1e-6 leaves differences of ~1e-7 between runs and packages; 1e-10 does not).
    ddof_scale : int, optional
        Degrees of freedom subtracted in the moment estimators of alpha and the dispersion:
        statsmodels' default (None: the number of models) or 0 for R geepack's estimates.

    Returns
    -------
    GeeFit

    References
    ----------
    .. [1] Liang, K.-Y. and Zeger, S. L. (1986). Longitudinal data analysis using generalized
       linear models. Biometrika 73, 13-22.
    """
    model = np.asarray(model)
    names = tuple(sorted(set(model.tolist())) if model_names is None else model_names)
    code = pd.Index(names).get_indexer(model)
    if np.any(code < 0):
        raise ValueError("model labels not in model_names")
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
