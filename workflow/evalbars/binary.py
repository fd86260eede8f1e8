r"""Pairwise model comparisons on the logistic scale: the nested GLMM and GEE, side by side.

The paper's mixed model is linear on 0/1 scores. This module answers whether a model on the right
scale changes a conclusion: for every pair of models it reports

* the log odds ratio :math:`\beta_a - \beta_b` with Wald SE, z, p and Holm / Bonferroni adjusted
  p-values (as ``emmeans``' pairwise contrasts on the logit scale), and
* the difference in accuracy with a delta-method SE, z, p and the same adjustments,

from either fit:

* :func:`evalbars.glmm.fit_glmm`: the logistic GLMM ``correct ~ 0 + model + (1|category) +
  (1|category:question)`` by the Laplace approximation (lme4's ``glmer``, ``nAGQ = 1``). Its
  :math:`\beta` are subject-specific log odds (for a question whose question and category
  effects are zero); the accuracies are marginal (below).
* :func:`evalbars.gee.fit_gee`: GEE with an exchangeable working correlation within question and
  robust SEs. Its :math:`\beta` are population-averaged log odds and the accuracies are
  :math:`\operatorname{logistic}(\beta_k)`.

Marginal accuracy of the GLMM: the accuracy the model implies for a new question from a new
category, integrated over both random effects (population-averaged; Zeger, Liang & Albert 1988),

.. math::  p_k = \int \operatorname{logistic}(\beta_k + \sigma z)\, \phi(z)\, dz,
           \qquad \sigma^2 = \theta_q^2 + \theta_c^2,

by Gauss-Hermite quadrature (probabilists' weight :math:`\phi`, :func:`quadrature_nodes`). Its
derivatives are :math:`\partial p_k / \partial \beta_k = E[\mu(1 - \mu)]` and, by Stein's identity
(:math:`\partial_\sigma E f(\beta + \sigma Z) = \sigma E f''(\beta + \sigma Z)`),
:math:`\partial p_k / \partial \theta_j = \theta_j\, E[\mu (1 - \mu)(1 - 2\mu)]`, which
needs no division by :math:`\sigma` and so holds on the boundary. The delta method with the
covariance ``2 inv(Hessian)`` of :math:`(\theta, \beta)` (lme4's) gives SEs of
:math:`p_a - p_b` that include the uncertainty of the variance components.

Subject-specific odds ratios are larger in magnitude than population-averaged ones (roughly by
:math:`\sqrt{1 + 0.346\,\sigma^2}`; Zeger, Liang & Albert 1988, "Models for longitudinal data: a
generalized estimating equation approach", Biometrics 44:1049-1060), so the GLMM's and the GEE's
log odds ratios answer different questions; their accuracy differences are comparable.

Delta method: for a difference :math:`g(\vartheta)_a - g(\vartheta)_b` of smooth functions of
the parameters with covariance :math:`C`, :math:`\mathrm{SE}^2 = d^\top C d`,
:math:`d = \nabla g_a - \nabla g_b`. Holm (1979), "A simple sequentially rejective multiple test
procedure", Scand. J. Statist. 6:65-70; Bonferroni: :math:`\min(1, m p)`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

from .gee import GeeFit, fit_gee
from .glmm import GlmmFit, binomial_cells, fit_glmm

__all__ = [
    "CONTRAST_COLUMNS",
    "quadrature_nodes",
    "marginal_accuracy",
    "marginal_accuracy_jacobian",
    "glmm_model_table",
    "fit_summary",
    "adjust_pvalues",
    "glmm_contrasts",
    "gee_contrasts",
    "compare_binary",
]

_STATISTICS = ["", "_se", "_z", "_p", "_p_bonferroni", "_p_holm", "_ci_low", "_ci_high"]
#: Columns of :func:`glmm_contrasts` and :func:`gee_contrasts`, in order.
CONTRAST_COLUMNS = (
    ["model_a", "model_b"]
    + [f"log_odds_ratio{s}" for s in _STATISTICS[:1]]
    + ["odds_ratio"]
    + [f"log_odds_ratio{s}" for s in _STATISTICS[1:]]
    + ["accuracy_a", "accuracy_b"]
    + [f"accuracy_difference{s}" for s in _STATISTICS]
)


def quadrature_nodes(sd: float) -> int:
    """Gauss-Hermite nodes for E[logistic(beta + sd Z)] to ~1e-13 relative.

    logistic has poles at imaginary part pi, i.e. at distance pi / sd from the real axis in z;
    the quadrature error then falls like exp(-2 pi sqrt(n) / sd) (checked against adaptive
    quadrature: 1e-9 at sd = 3 with 100 nodes, 6e-14 with 225), so n = 25 sd^2 nodes, at
    least 100, reach ~1e-13.
    """
    return int(min(max(100, np.ceil(25.0 * sd * sd)), 20_000))


def _hermite_expectations(beta, sd: float, n_nodes: int | None = None):
    """E[mu], E[mu(1-mu)], E[mu(1-mu)(1-2mu)] for mu = logistic(beta + sd Z), Z ~ N(0, 1)."""
    nodes, weights = special.roots_hermitenorm(n_nodes or quadrature_nodes(sd))
    weights = weights / weights.sum()  # probabilists' Hermite weights sum to sqrt(2 pi)
    mu = special.expit(np.asarray(beta, float)[:, None] + sd * nodes[None, :])
    var = mu * (1.0 - mu)
    # matrix-vector products over the nodes only (K x n_nodes): negligible
    return mu @ weights, var @ weights, (var * (1.0 - 2.0 * mu)) @ weights


def marginal_accuracy(beta, variance_total: float, n_nodes: int | None = None) -> np.ndarray:
    """Population-averaged accuracy :math:`p_k = E[\\operatorname{logistic}(\\beta_k + \\sigma Z)]`.

    Parameters
    ----------
    beta : array_like
        GLMM fixed effects (log odds for a question with zero random effects).
    variance_total : float
        :math:`\\sigma^2 = \\theta_q^2 + \\theta_c^2`: the variance of the question plus category
        effect of a new question from a new category.
    n_nodes : int, optional
        Gauss-Hermite nodes; default :func:`quadrature_nodes` (error ~1e-13).

    Returns
    -------
    ndarray
        :math:`p_k`: ``logistic(beta)`` when the variance is 0, pulled towards 0.5 otherwise.
    """
    return _hermite_expectations(beta, np.sqrt(variance_total), n_nodes)[0]


def marginal_accuracy_jacobian(fit: GlmmFit, n_nodes: int | None = None):
    """Marginal accuracies and their Jacobian in ``(theta_question, theta_category, beta)``."""
    theta = np.array([fit.theta["question"], fit.theta["category"]])
    p, d_beta, d_sd2 = _hermite_expectations(fit.fixed_effects, np.hypot(*theta), n_nodes)
    jacobian = np.zeros((p.size, p.size + 2))
    jacobian[:, :2] = d_sd2[:, None] * theta[None, :]  # Stein: dp/dtheta_j = theta_j E[f'']
    jacobian[:, 2:] = np.diag(d_beta)
    return p, jacobian


def glmm_model_table(fit: GlmmFit) -> pd.DataFrame:
    """One row per model: ``model, log_odds, se, marginal_accuracy, marginal_accuracy_se``.

    ``log_odds`` and ``se``: fixed effect and its SE (``fit.vcov``); the marginal accuracy's SE
    is by the delta method with the covariance of (theta, beta) (theta known if that is not
    available).
    """
    accuracy, jacobian = marginal_accuracy_jacobian(fit)
    covariance = _covariance(fit, theta_uncertainty=True)
    return pd.DataFrame({
        "model": list(fit.model_names),
        "log_odds": fit.fixed_effects,
        "se": np.sqrt(np.diag(fit.vcov)),
        "marginal_accuracy": accuracy,
        "marginal_accuracy_se": np.sqrt(np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian)),
    })


def fit_summary(glmm_fit: GlmmFit, gee_fit: GeeFit | None = None) -> pd.DataFrame:
    """One row per fit: sizes, variance components, boundary flags, fit criteria.

    Columns: ``method, n_obs, n_cells, n_questions, n_categories, variance_question,
    variance_category, boundary_question, boundary_category, singular, loglik,
    laplace_deviance, deviance, vcov_source, converged, iterations, alpha`` (GEE rows fill
    ``n_obs``, ``n_questions`` (clusters), ``alpha`` and ``converged``; the rest is empty).
    """
    rows = [{
        "method": "glmm_laplace", "n_obs": glmm_fit.n_obs, "n_cells": glmm_fit.n_cells,
        "n_questions": glmm_fit.n_questions, "n_categories": glmm_fit.n_categories,
        "variance_question": glmm_fit.variance["question"],
        "variance_category": glmm_fit.variance["category"],
        "boundary_question": glmm_fit.boundary["question"],
        "boundary_category": glmm_fit.boundary["category"], "singular": glmm_fit.singular,
        "loglik": glmm_fit.loglik, "laplace_deviance": glmm_fit.laplace_deviance,
        "deviance": glmm_fit.deviance, "vcov_source": glmm_fit.vcov_source,
        "converged": glmm_fit.converged, "iterations": glmm_fit.iterations, "alpha": np.nan,
    }]
    if gee_fit is not None:
        rows.append({"method": "gee_exchangeable", "n_obs": gee_fit.n_obs,
                     "n_questions": gee_fit.n_clusters, "converged": gee_fit.converged,
                     "alpha": gee_fit.alpha})
    return pd.DataFrame(rows, columns=list(rows[0]))


def _covariance(fit: GlmmFit, theta_uncertainty: bool) -> np.ndarray:
    """Covariance of (theta, beta): the fit's, or with the theta rows and columns zero."""
    covariance = fit.covariance if theta_uncertainty else None
    if covariance is None:
        k = fit.fixed_effects.size
        covariance = np.zeros((k + 2, k + 2))
        covariance[2:, 2:] = fit.vcov
    return covariance


def adjust_pvalues(p) -> dict:
    """Bonferroni and Holm adjusted p-values, as R's ``p.adjust``.

    Holm: sort ascending, multiply the i-th smallest (0-based) by m - i, take the running maximum,
    cap at 1, restore the order. Bonferroni: ``min(1, m p)``.

    Returns
    -------
    dict
        ``{"bonferroni": ndarray, "holm": ndarray}`` in the order of ``p``.
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    holm = np.empty(m)
    holm[order] = np.minimum(np.maximum.accumulate(p[order] * (m - np.arange(m))), 1.0)
    return {"bonferroni": np.minimum(p * m, 1.0), "holm": holm}


def _pair_index(names, pairs):
    """Index pairs (i, j): of the given name pairs, or every i < j in ``names`` order."""
    if pairs is None:
        return np.triu_indices(len(names), k=1)
    lookup = {name: i for i, name in enumerate(names)}
    idx = np.array([[lookup[a], lookup[b]] for a, b in pairs], dtype=int).reshape(-1, 2)
    return idx[:, 0], idx[:, 1]


def _differences(estimate, covariance, jacobian, first, second, prefix, alpha) -> dict:
    """estimate[a] - estimate[b] with delta-method SE sqrt(d' C d), d = J[a] - J[b]; then z,
    two-sided normal p, Bonferroni and Holm over the pairs, and the unadjusted Wald interval."""
    d = jacobian[first] - jacobian[second]
    se = np.sqrt(np.einsum("ij,jk,ik->i", d, covariance, d))
    diff = estimate[first] - estimate[second]
    z = diff / se
    p = 2.0 * stats.norm.sf(np.abs(z))
    adjusted = adjust_pvalues(p)
    half = stats.norm.isf(alpha / 2) * se
    values = [diff, se, z, p, adjusted["bonferroni"], adjusted["holm"], diff - half, diff + half]
    return {prefix + suffix: value for suffix, value in zip(_STATISTICS, values)}


def _table(names, first, second, log_odds, accuracy, accuracy_columns) -> pd.DataFrame:
    table = pd.DataFrame({"model_a": [names[i] for i in first],
                          "model_b": [names[j] for j in second],
                          **log_odds, **accuracy_columns})
    table["odds_ratio"] = np.exp(table["log_odds_ratio"])
    table["accuracy_a"], table["accuracy_b"] = accuracy[first], accuracy[second]
    return table[CONTRAST_COLUMNS]


def glmm_contrasts(fit: GlmmFit, alpha: float = 0.05, pairs=None,
                   theta_uncertainty: bool = True) -> pd.DataFrame:
    """Pairwise comparisons from the logistic GLMM, one row per pair (a - b).

    Parameters
    ----------
    fit : GlmmFit
    alpha : float
        Level of the unadjusted Wald confidence intervals.
    pairs : sequence of (str, str), optional
        Default every pair i < j in ``fit.model_names`` order (emmeans' ``pairs(reverse =
        FALSE)``); Bonferroni and Holm adjust over the pairs given.
    theta_uncertainty : bool
        Whether the SE of an accuracy difference includes the uncertainty of theta (covariance
        ``2 inv(hessian)`` of (theta, beta)). If False, or if lme4 would fall back to the RX
        covariance (Hessian not positive definite), theta is treated as known.

    Returns
    -------
    DataFrame
        :data:`CONTRAST_COLUMNS`: ``model_a, model_b``; ``log_odds_ratio`` = beta_a - beta_b
        (subject-specific), ``odds_ratio``, and ``log_odds_ratio_{se, z, p, p_bonferroni, p_holm,
        ci_low, ci_high}`` from ``fit.vcov``; ``accuracy_a, accuracy_b`` (marginal accuracy,
        Gauss-Hermite) and ``accuracy_difference`` with the same seven companions.
    """
    names = list(fit.model_names)
    first, second = _pair_index(names, pairs)
    k = len(names)
    log_odds = _differences(fit.fixed_effects, fit.vcov, np.eye(k), first, second,
                            "log_odds_ratio", alpha)
    accuracy, jacobian = marginal_accuracy_jacobian(fit)
    differences = _differences(accuracy, _covariance(fit, theta_uncertainty), jacobian, first,
                               second, "accuracy_difference", alpha)
    return _table(names, first, second, log_odds, accuracy, differences)


def gee_contrasts(fit: GeeFit, alpha: float = 0.05, pairs=None) -> pd.DataFrame:
    """Pairwise comparisons from the GEE fit, one row per pair (a - b).

    Same columns as :func:`glmm_contrasts` (:data:`CONTRAST_COLUMNS`): the log odds ratio is
    population-averaged, SEs come from the robust (sandwich) covariance, accuracies are
    ``logistic(coefficient)`` and their differences get the delta-method gradient p (1 - p).
    """
    names = list(fit.model_names)
    first, second = _pair_index(names, pairs)
    accuracy = fit.accuracy
    log_odds = _differences(fit.coefficients, fit.vcov, np.eye(len(names)), first, second,
                            "log_odds_ratio", alpha)
    differences = _differences(accuracy, fit.vcov, np.diag(accuracy * (1.0 - accuracy)), first,
                               second, "accuracy_difference", alpha)
    return _table(names, first, second, log_odds, accuracy, differences)


def compare_binary(items: pd.DataFrame, alpha: float = 0.05, models=None,
                   outcome: str = "correct") -> pd.DataFrame:
    """Both logistic analyses of a long item table, stacked: one row per (method, pair).

    Parameters
    ----------
    items : DataFrame
        ``model, question_id, category`` and the 0/1 ``outcome``, one row per sample (several
        rows per model x question with epochs).
    alpha : float
        Level of the confidence intervals.
    models : sequence of str, optional
        Model order (pairs are i < j in this order); default sorted names.

    Returns
    -------
    DataFrame
        ``method`` ("glmm_laplace" or "gee_exchangeable") followed by :data:`CONTRAST_COLUMNS`.
    """
    cells = binomial_cells(items, outcome)
    args = (cells["successes"], cells["trials"], cells["model"], cells["question_id"])
    glmm_fit = fit_glmm(*args, cells["category"], model_names=models)
    gee_fit = fit_gee(*args, model_names=glmm_fit.model_names)
    return pd.concat(
        [glmm_contrasts(glmm_fit, alpha).assign(method="glmm_laplace"),
         gee_contrasts(gee_fit, alpha).assign(method="gee_exchangeable")],
        ignore_index=True,
    )[["method", *CONTRAST_COLUMNS]]
