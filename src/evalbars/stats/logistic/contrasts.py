r"""Pairwise model comparisons on the logistic scale: the nested GLMM and GEE, side by side.

The paper's mixed model is linear on 0/1 scores. This module answers whether a model on the right
scale changes a conclusion: for every pair of models it reports

* the log odds ratio :math:`\beta_a - \beta_b` with Wald SE, z, p and Holm / Bonferroni adjusted
  p-values (as ``emmeans``' pairwise contrasts on the logit scale), and
* the difference in accuracy with a delta-method SE, z, p and the same adjustments,

from either fit:

* :func:`evalbars.stats.logistic.glmm.fit_glmm`: the logistic GLMM ``correct ~ 0 + model + (1|category) +
  (1|category:question)`` by the Laplace approximation (lme4's ``glmer``, ``nAGQ = 1``). Its
  :math:`\beta` are subject-specific log odds (for a question whose question and category
  effects are zero); the accuracies are marginal (below).
* :func:`evalbars.stats.logistic.gee.fit_gee`: GEE with an exchangeable working correlation within question and
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
covariance ``2 inv(Hessian)`` of :math:`(\theta, \beta)` (lme4's; above 30 models the Schur-form
matrix of :mod:`evalbars.stats.logistic.glmm`) gives SEs of :math:`p_a - p_b` that include the uncertainty of
the variance components.

Subject-specific odds ratios are larger in magnitude than population-averaged ones (roughly by
:math:`\sqrt{1 + 0.346\,\sigma^2}`; Zeger, Liang & Albert 1988, "Models for longitudinal data: a
generalized estimating equation approach", Biometrics 44:1049-1060), so the GLMM's and the GEE's
log odds ratios answer different questions; their accuracy differences are comparable.

Delta method: for a difference :math:`g(\vartheta)_a - g(\vartheta)_b` of smooth functions of
the parameters with covariance :math:`C`, :math:`\mathrm{SE}^2 = d^\top C d`,
:math:`d = \nabla g_a - \nabla g_b` (:func:`evalbars.stats.fits.difference_se`, the one home of the
contrast SE of every fit). A fit that did not converge is flagged on every row it gives
(``converged``) and warned of (:func:`compare_logistic`). Holm (1979), "A simple sequentially rejective multiple test
procedure", Scand. J. Statist. 6:65-70; Bonferroni: :math:`\min(1, m p)`.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import (
    WideScores,
    model_means,
    repeated_text,
    stacked_text,
    text_column,
)
from evalbars.defaults import ALPHA
from evalbars.stats.fits import Fit, difference_se, structured_difference_se
from evalbars.stats.logistic.gee import GeeFit, fit_gee, fit_gee_wide
from evalbars.stats.logistic.glmm import (
    BETA,
    THETA,
    GlmmFit,
    binomial_cells,
    fit_glmm,
    fit_glmm_wide,
)
from evalbars.stats.pairwise import adjust_pvalues

__all__ = [
    "CONTRAST_COLUMNS",
    "quadrature_nodes",
    "marginal_accuracy",
    "marginal_accuracy_jacobian",
    "EFFECT_COLUMNS",
    "glmm_effect_table",
    "gee_effect_table",
    "fit_summary",
    "glmm_contrasts",
    "gee_contrasts",
    "compare_logistic",
    "fit_logistic",
    "effect_table",
    "contrast_blocks",
    "METHODS",
    "LogisticComparison",
    "fit_obstacle",
    "logistic_memory",
    "not_fitted",
]

log = logging.getLogger(__name__)

_STATISTICS = ["", "_se", "_z", "_p", "_p_bonferroni", "_p_holm", "_ci_low", "_ci_high"]
#: Columns of :func:`glmm_contrasts` and :func:`gee_contrasts`, in order (``converged``: the
#: fit's flag, on every row, so that a table of contrasts says whether to trust it).
CONTRAST_COLUMNS = (
    ["model_a", "model_b"]
    + [f"log_odds_ratio{s}" for s in _STATISTICS[:1]]
    + ["odds_ratio"]
    + [f"log_odds_ratio{s}" for s in _STATISTICS[1:]]
    + ["accuracy_a", "accuracy_b"]
    + [f"accuracy_difference{s}" for s in _STATISTICS]
    + ["converged"]
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
    p, d_beta, d_theta = _marginal_parts(fit, n_nodes)
    jacobian = np.zeros((p.size, p.size + 2))
    jacobian[:, THETA] = d_theta
    jacobian[:, BETA] = np.diag(d_beta)
    return p, jacobian


def _marginal_parts(fit: GlmmFit, n_nodes: int | None = None):
    """Marginal accuracies p, dp_k/dbeta_k (K,) and dp_k/dtheta (K, 2): the Jacobian's
    nonzero parts."""
    theta = np.array([fit.theta["question"], fit.theta["category"]])
    p, d_beta, d_sd2 = _hermite_expectations(fit.params, np.hypot(*theta), n_nodes)
    return p, d_beta, d_sd2[:, None] * theta[None, :]  # Stein: dp/dtheta_j = theta_j E[f'']


#: Up to this many models the contrasts' delta-method SEs are computed with the explicit
#: Jacobian (pairs x parameters; the computation of the default run's tables); above it by
#: :func:`evalbars.stats.fits.structured_difference_se`, the same quadratic form from the Jacobian's
#: diagonal structure in memory O(pairs). The two agree to rounding.
EXPLICIT_JACOBIAN_MAX_MODELS = 30


#: Columns of :attr:`LogisticComparison.effects`: the GLMM's (:func:`glmm_effect_table`) and
#: GEE's (:func:`gee_effect_table`) per-model estimates, prefixed ``glmm_`` and ``gee_``, and
#: whether each fit converged.
EFFECT_COLUMNS = [
    "model",
    "glmm_log_odds",
    "glmm_se",
    "glmm_marginal_accuracy",
    "glmm_marginal_accuracy_se",
    "gee_log_odds",
    "gee_se",
    "gee_accuracy",
    "gee_accuracy_se",
    "glmm_converged",
    "gee_converged",
]


def glmm_effect_table(fit: GlmmFit) -> pd.DataFrame:
    """One row per model: ``model, log_odds, se, marginal_accuracy, marginal_accuracy_se,
    converged``.

    ``log_odds`` and ``se``: fixed effect and its SE (``fit.cov``); the marginal accuracy's SE
    is by the delta method with the covariance of (theta, beta) (theta known if that is not
    available).
    """
    covariance = _covariance(fit, theta_uncertainty=True)
    if fit.params.size <= EXPLICIT_JACOBIAN_MAX_MODELS:
        accuracy, jacobian = marginal_accuracy_jacobian(fit)
        variance = np.einsum("ij,jk,ik->i", jacobian, covariance, jacobian)
    else:  # J_k C J_k' from the diagonal and the two theta columns of the Jacobian
        accuracy, d_beta, d_theta = _marginal_parts(fit)
        variance = (
            d_beta**2 * np.diag(covariance)[BETA]
            + 2.0 * d_beta * np.einsum("ij,ji->i", d_theta, covariance[THETA, BETA])
            + np.einsum("ij,jk,ik->i", d_theta, covariance[THETA, THETA], d_theta)
        )
    return pd.DataFrame(
        {
            "model": list(fit.names),
            "log_odds": fit.params,
            "se": np.sqrt(np.diag(fit.cov)),
            "marginal_accuracy": accuracy,
            "marginal_accuracy_se": np.sqrt(variance),
            "converged": bool(fit.converged),
        }
    )


def gee_effect_table(fit: GeeFit) -> pd.DataFrame:
    r"""One row per model: ``model, log_odds, se, accuracy, accuracy_se, converged``.

    The population-averaged log odds with its robust SE, and the accuracy
    :math:`p = \operatorname{logistic}(\beta)` with the delta-method SE :math:`p(1-p)\,SE`.
    """
    se = np.sqrt(np.diag(fit.cov))
    accuracy = fit.accuracy
    return pd.DataFrame(
        {
            "model": list(fit.names),
            "log_odds": fit.params,
            "se": se,
            "accuracy": accuracy,
            "accuracy_se": accuracy * (1.0 - accuracy) * se,
            "converged": bool(fit.converged),
        }
    )


def fit_summary(glmm_fit: GlmmFit, gee_fit: GeeFit | None = None) -> pd.DataFrame:
    """One row per fit: sizes, variance components, boundary flags, fit criteria.

    Columns: ``method, n_obs, n_cells, n_questions, n_categories, variance_question,
    variance_category, boundary_question, boundary_category, singular, loglik,
    laplace_deviance, deviance, vcov_source, converged, iterations, alpha`` (GEE rows fill
    ``n_obs``, ``n_questions`` (clusters), ``alpha`` and ``converged``; the rest is empty).
    """
    rows = [
        {
            "method": "glmm_laplace",
            "n_obs": glmm_fit.n_obs,
            "n_cells": glmm_fit.n_cells,
            "n_questions": glmm_fit.n_questions,
            "n_categories": glmm_fit.n_categories,
            "variance_question": glmm_fit.variance["question"],
            "variance_category": glmm_fit.variance["category"],
            "boundary_question": glmm_fit.boundary["question"],
            "boundary_category": glmm_fit.boundary["category"],
            "singular": glmm_fit.singular,
            "loglik": glmm_fit.loglik,
            "laplace_deviance": glmm_fit.laplace_deviance,
            "deviance": glmm_fit.deviance,
            "vcov_source": glmm_fit.cov_source,
            "converged": glmm_fit.converged,
            "iterations": glmm_fit.iterations,
            "alpha": np.nan,
        }
    ]
    if gee_fit is not None:
        rows.append(
            {
                "method": "gee_exchangeable",
                "n_obs": gee_fit.n_obs,
                "n_questions": gee_fit.n_clusters,
                "converged": gee_fit.converged,
                "alpha": gee_fit.alpha,
            }
        )
    return pd.DataFrame(rows, columns=list(rows[0]))


def _covariance(fit: GlmmFit, theta_uncertainty: bool) -> np.ndarray:
    """Covariance of (theta, beta): the fit's, or with the theta rows and columns zero."""
    covariance = fit.cov_with_theta if theta_uncertainty else None
    if covariance is None:
        k = fit.params.size
        covariance = np.zeros((k + 2, k + 2))
        covariance[BETA, BETA] = fit.cov
    return covariance


def _pair_index(names, pairs, order=None):
    """Index pairs (i, j): of the given name pairs, of every pair i < j of the models in the
    order ``order``, or of every i < j in ``names`` order. Each column of ``pairs`` is
    factorized first, so a name is looked up once, not once per pair."""
    if order is not None:
        if pairs is not None:
            raise ValueError("give pairs or pair_order, not both")
        order = list(order)
        positions = pd.Index(names).get_indexer(order)
        if np.any(positions < 0) or len(set(order)) != len(order):
            raise ValueError("pair_order must name each model of the fit at most once")
        first, second = np.triu_indices(len(order), k=1)
        return positions[first], positions[second]
    if pairs is None:
        return np.triu_indices(len(names), k=1)
    pairs = pd.DataFrame(list(pairs) if not isinstance(pairs, pd.DataFrame) else pairs)
    lookup = pd.Index(names)

    def positions(column):
        codes, uniques = pd.factorize(column)
        return np.append(lookup.get_indexer(uniques), -1)[codes]

    first, second = positions(pairs.iloc[:, 0]), positions(pairs.iloc[:, 1])
    if np.any(first < 0) or np.any(second < 0):
        raise ValueError("pairs name a model the fit does not hold")
    return first, second


def _differences(estimate, covariance, jacobian, first, second, prefix, alpha) -> dict:
    """estimate[a] - estimate[b] with delta-method SE sqrt(d' C d), d = J[a] - J[b]; then z,
    two-sided normal p, Bonferroni and Holm over the pairs, and the unadjusted Wald interval.
    ``jacobian``: an array (or None, the identity) for :func:`evalbars.stats.fits.difference_se`, or
    ``(diagonal, leading)`` for :func:`evalbars.stats.fits.structured_difference_se`."""
    if isinstance(jacobian, tuple):
        se = structured_difference_se(covariance, first, second, *jacobian)
    else:
        se = difference_se(covariance, first, second, jacobian)
    diff = estimate[first] - estimate[second]
    # a zero SE (models alike on every question) leaves rounding noise in diff: no test
    z = np.divide(diff, se, out=np.full(diff.shape, np.nan), where=se > 0)
    # the normal tail by ndtr, as scipy.stats.norm computes it (its import costs 0.5 s a job)
    p = 2.0 * special.ndtr(-np.abs(z))
    half = -special.ndtri(alpha / 2) * se
    values = [
        diff,
        se,
        z,
        p,
        adjust_pvalues(p, "bonferroni"),
        adjust_pvalues(p, "holm"),
        diff - half,
        diff + half,
    ]
    return {prefix + suffix: value for suffix, value in zip(_STATISTICS, values, strict=True)}


def _table(columns: dict) -> pd.DataFrame:
    """A contrast table of :func:`_table_columns`' columns, each held as it is (no copy into
    one block per dtype, which at ten million pairs costs more than the statistics)."""
    return pd.DataFrame(_labelled(columns), copy=False)


def _labelled(columns: dict) -> dict:
    """``columns`` with the model codes (``model_a``, ``model_b``) as text, names from
    ``names``."""
    names = columns["names"]
    return {
        name: text_column(names, columns[name]) if name in ("model_a", "model_b") else value
        for name, value in columns.items()
        if name != "names"
    }


def _table_columns(fit: Fit, first, second, log_odds, accuracy, accuracy_columns) -> dict:
    """The columns of a contrast table (:data:`CONTRAST_COLUMNS`, in order), the models as
    codes into ``names`` (the last entry)."""
    columns = {
        "model_a": first,
        "model_b": second,
        **log_odds,
        **accuracy_columns,
        "odds_ratio": np.exp(log_odds["log_odds_ratio"]),
        "accuracy_a": accuracy[first],
        "accuracy_b": accuracy[second],
        "converged": np.full(len(first), bool(fit.converged)),
    }
    return {name: columns[name] for name in CONTRAST_COLUMNS} | {"names": list(fit.names)}


def glmm_contrasts(
    fit: GlmmFit, alpha: float = ALPHA, pairs=None, theta_uncertainty: bool = True
) -> pd.DataFrame:
    """Pairwise comparisons from the logistic GLMM, one row per pair (a - b).

    Parameters
    ----------
    fit : GlmmFit
    alpha : float
        Level of the unadjusted Wald confidence intervals.
    pairs : sequence of (str, str), optional
        Default every pair i < j in ``fit.names`` order (emmeans' ``pairs(reverse =
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
        ci_low, ci_high}`` from ``fit.cov``; ``accuracy_a, accuracy_b`` (marginal accuracy,
        Gauss-Hermite) and ``accuracy_difference`` with the same seven companions;
        ``converged`` (``fit.converged``).
    """
    return _table(_glmm_columns(fit, alpha, _pair_index(fit.names, pairs), theta_uncertainty))


def _glmm_columns(fit: GlmmFit, alpha: float, index, theta_uncertainty: bool = True) -> dict:
    """:func:`glmm_contrasts`' columns (:func:`_table_columns`) of the pairs ``index``."""
    names = list(fit.names)
    first, second = index
    k = len(names)
    if k <= EXPLICIT_JACOBIAN_MAX_MODELS:
        identity = np.eye(k)
        accuracy, jacobian = marginal_accuracy_jacobian(fit)
    else:
        identity = None
        accuracy, d_beta, d_theta = _marginal_parts(fit)
        jacobian = (d_beta, d_theta)
    log_odds = _differences(fit.params, fit.cov, identity, first, second, "log_odds_ratio", alpha)
    differences = _differences(
        accuracy,
        _covariance(fit, theta_uncertainty),
        jacobian,
        first,
        second,
        "accuracy_difference",
        alpha,
    )
    return _table_columns(fit, first, second, log_odds, accuracy, differences)


def gee_contrasts(fit: GeeFit, alpha: float = ALPHA, pairs=None) -> pd.DataFrame:
    """Pairwise comparisons from the GEE fit, one row per pair (a - b).

    Same columns as :func:`glmm_contrasts` (:data:`CONTRAST_COLUMNS`): the log odds ratio is
    population-averaged, SEs come from the robust (sandwich) covariance, accuracies are
    ``logistic(coefficient)`` and their differences get the delta-method gradient p (1 - p).
    """
    return _table(_gee_columns(fit, alpha, _pair_index(fit.names, pairs)))


def _gee_columns(fit: GeeFit, alpha: float, index) -> dict:
    """:func:`gee_contrasts`' columns (:func:`_table_columns`) of the pairs ``index``."""
    names = list(fit.names)
    first, second = index
    accuracy = fit.accuracy
    slope = accuracy * (1.0 - accuracy)
    explicit = len(names) <= EXPLICIT_JACOBIAN_MAX_MODELS
    log_odds = _differences(
        fit.params,
        fit.cov,
        np.eye(len(names)) if explicit else None,
        first,
        second,
        "log_odds_ratio",
        alpha,
    )
    differences = _differences(
        accuracy,
        fit.cov,
        np.diag(slope) if explicit else (slope, None),
        first,
        second,
        "accuracy_difference",
        alpha,
    )
    return _table_columns(fit, first, second, log_odds, accuracy, differences)


class LogisticComparison(NamedTuple):
    """Result of :func:`compare_logistic`.

    Attributes
    ----------
    contrasts : DataFrame
        ``method`` ("glmm_laplace" or "gee_exchangeable") followed by :data:`CONTRAST_COLUMNS`,
        one row per (method, pair).
    effects : DataFrame
        One row per model, :data:`EFFECT_COLUMNS`: the GLMM's fixed effect (log odds for a
        question with zero random effects) and marginal accuracy, GEE's population-averaged log
        odds and accuracy, each with its SE.
    summary : DataFrame
        :func:`fit_summary` of both fits.
    """

    contrasts: pd.DataFrame
    effects: pd.DataFrame
    summary: pd.DataFrame


def compare_logistic(
    items: pd.DataFrame | WideScores,
    alpha: float = ALPHA,
    models=None,
    outcome: str = "correct",
    pairs=None,
    *,
    pair_order=None,
    glmm_options: dict | None = None,
    gee_options: dict | None = None,
) -> LogisticComparison:
    """Both logistic analyses of a long item table: the nested GLMM and GEE.

    Parameters
    ----------
    items : DataFrame or WideScores
        ``model, question_id, category`` and the 0/1 ``outcome``, one row per sample (several
        rows per model x question with epochs: the fits take the binomial counts per cell); or
        the question x model matrix of the same scores (:class:`evalbars.data.scores.WideScores`,
        what the workflow's job reads), whose cells are those counts.
    alpha : float
        Level of the confidence intervals.
    models : sequence of str, optional
        Model order of the fixed effects; default sorted names.
    pairs : DataFrame or sequence of (str, str), optional
        The pairs to compare, ``model_a, model_b`` (e.g. the linear mixed model's, so that the
        tables line up); default every i < j in ``models`` order.
    pair_order : sequence of str, optional
        Instead of ``pairs``: every pair i < j of these models in this order, the pairs
        :func:`evalbars.stats.pairwise.model_pairs` lists, without making them as names first
        (at 4,500 models that table of names takes 0.74 GB and 2.9 s, and looking them up
        again 1.2 s).
    glmm_options, gee_options : dict, optional
        Keyword arguments of :func:`evalbars.stats.logistic.glmm.fit_glmm` and :func:`evalbars.stats.logistic.gee.fit_gee`
        (tolerances and iteration limits).

    Returns
    -------
    LogisticComparison

    Notes
    -----
    A fit that did not converge is flagged in every table (``converged`` of the contrasts and
    the fit summary, ``glmm_converged`` / ``gee_converged`` of the effects) and logged as a
    warning, which the workflow's scripts print on the console.
    """
    glmm_fit, gee_fit = fit_logistic(
        items, models, outcome, glmm_options=glmm_options, gee_options=gee_options
    )
    # The rows of the two tables one after the other, each column made once at its full length
    # (concatenating two frames would copy each into one block per dtype, and again on
    # selecting the columns): ten million pairs a fit at 4,500 models. Both fits compare the
    # same pairs, so their names are made once and shared.
    index, names = _pairs_and_names(glmm_fit, pairs, pair_order)
    parts = [_glmm_columns(glmm_fit, alpha, index), _gee_columns(gee_fit, alpha, index)]
    columns = {
        column: stacked_text(names[column], len(parts))
        if column in names
        else np.concatenate([part.pop(column) for part in parts])
        for column in CONTRAST_COLUMNS
    }
    methods = repeated_text(list(METHODS), [len(index[0])] * len(parts))
    contrasts = pd.DataFrame({"method": methods} | columns, copy=False)
    return LogisticComparison(
        contrasts, effect_table(glmm_fit, gee_fit), fit_summary(glmm_fit, gee_fit)
    )


#: The ``method`` of each fit's rows in :func:`compare_logistic`'s contrasts, in their order.
METHODS = ("glmm_laplace", "gee_exchangeable")


def fit_logistic(
    items: pd.DataFrame | WideScores,
    models=None,
    outcome: str = "correct",
    *,
    glmm_options: dict | None = None,
    gee_options: dict | None = None,
) -> tuple[GlmmFit, GeeFit]:
    """The two fits of :func:`compare_logistic`: the GLMM (Laplace), then GEE on its model order.

    Parameters
    ----------
    items : DataFrame or WideScores
        As for :func:`compare_logistic`.
    models : sequence of str, optional
        Model order of the fixed effects; default sorted names.
    outcome : str
        The 0/1 column of a long table.
    glmm_options, gee_options : dict, optional
        Keyword arguments of :func:`evalbars.stats.logistic.glmm.fit_glmm` and
        :func:`evalbars.stats.logistic.gee.fit_gee`.

    Returns
    -------
    tuple of GlmmFit and GeeFit
        A fit that did not converge is logged as a warning.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> items = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 300),
    ...                       "question_id": np.tile(np.arange(300), 3),
    ...                       "category": np.tile(np.arange(300) % 3, 3),
    ...                       "correct": rng.integers(0, 2, 900)})
    >>> glmm_fit, gee_fit = fit_logistic(items)
    >>> list(glmm_fit.names) == list(gee_fit.names) == ["a", "b", "c"]
    True
    """
    if isinstance(items, WideScores):
        glmm_fit = fit_glmm_wide(items, model_names=models, **(glmm_options or {}))
        gee_fit = fit_gee_wide(items, model_names=glmm_fit.names, **(gee_options or {}))
    else:
        cells = binomial_cells(items, outcome)
        args = (cells["successes"], cells["trials"], cells["model"], cells["question_id"])
        glmm_fit = fit_glmm(*args, cells["category"], model_names=models, **(glmm_options or {}))
        gee_fit = fit_gee(*args, model_names=glmm_fit.names, **(gee_options or {}))
    for fit, label in ((glmm_fit, "logistic mixed model (Laplace)"), (gee_fit, "GEE")):
        if not fit.converged:
            log.warning(
                "the %s did not converge: its estimates and verdicts are flagged "
                "converged = False and may be off",
                label,
            )
    return glmm_fit, gee_fit


def effect_table(glmm_fit: GlmmFit, gee_fit: GeeFit) -> pd.DataFrame:
    """:func:`compare_logistic`'s effects: one row per model, :data:`EFFECT_COLUMNS` (the
    GLMM's :func:`glmm_effect_table` and GEE's :func:`gee_effect_table`, prefixed)."""
    effects = _prefixed(glmm_effect_table(glmm_fit), "glmm_").merge(
        _prefixed(gee_effect_table(gee_fit), "gee_"), on="model", validate="one_to_one"
    )
    return effects[EFFECT_COLUMNS]


def contrast_blocks(
    glmm_fit: GlmmFit, gee_fit: GeeFit, alpha: float = ALPHA, pairs=None, *, pair_order=None
) -> list:
    """:func:`compare_logistic`'s contrasts as two blocks of rows, one per fit.

    Parameters
    ----------
    glmm_fit, gee_fit : GlmmFit, GeeFit
        The fits (:func:`fit_logistic`).
    alpha, pairs, pair_order
        As for :func:`compare_logistic`.

    Returns
    -------
    list of callables
        A function of no arguments per fit (the GLMM's, then GEE's), making that fit's rows:
        ``method`` (:data:`METHODS`) and :data:`CONTRAST_COLUMNS`. Their rows end to end are
        :func:`compare_logistic`'s contrasts; made one at a time
        (:class:`evalbars.render.tables.TableBlocks`), they hold one fit's rows, not both (ten
        million pairs a fit at 4,500 models). The pairs' names are made once, for both.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> scores = pd.DataFrame(np.random.default_rng(1).integers(0, 2, (240, 3)), columns=list("xyz"))
    >>> items = scores.rename_axis("question_id").reset_index().melt(
    ...     id_vars="question_id", var_name="model", value_name="correct")
    >>> items["category"] = items["question_id"] % 4
    >>> blocks = contrast_blocks(*fit_logistic(items))
    >>> [(block()["method"].iloc[0], len(block())) for block in blocks]
    [('glmm_laplace', 3), ('gee_exchangeable', 3)]
    >>> pd.concat([block() for block in blocks], ignore_index=True).equals(
    ...     compare_logistic(items).contrasts)
    True
    """
    index, names = _pairs_and_names(glmm_fit, pairs, pair_order)

    def block(fit, columns, method):
        def rows() -> pd.DataFrame:
            values = columns(fit, alpha, index)
            table = {c: names[c] if c in names else values[c] for c in CONTRAST_COLUMNS}
            method_column = repeated_text([method], [len(index[0])])
            return pd.DataFrame({"method": method_column} | table, copy=False)

        return rows

    return [
        block(glmm_fit, _glmm_columns, METHODS[0]),
        block(gee_fit, _gee_columns, METHODS[1]),
    ]


def _pairs_and_names(fit: Fit, pairs, pair_order) -> tuple[tuple, dict]:
    """The pairs both fits compare, as model indices (:func:`_pair_index`), and their
    ``model_a``, ``model_b`` text columns, made once for both fits."""
    index = _pair_index(fit.names, pairs, pair_order)
    return index, _labelled({"model_a": index[0], "model_b": index[1], "names": list(fit.names)})


def _prefixed(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """Every column but ``model`` prefixed."""
    return table.add_prefix(prefix).rename(columns={f"{prefix}model": "model"})


def not_fitted(reason: str) -> LogisticComparison:
    """The empty :class:`LogisticComparison` of data the logistic models are not fitted to
    (:func:`fit_obstacle`): no contrasts, and a summary row per method whose ``note`` says why."""
    summary = pd.DataFrame(
        {"method": ["glmm_laplace", "gee_exchangeable"], "note": f"not fitted: {reason}"}
    )
    return LogisticComparison(
        pd.DataFrame(columns=["method", *CONTRAST_COLUMNS]),
        pd.DataFrame(columns=EFFECT_COLUMNS),
        summary,
    )


#: Memory of the logistic fits per models x questions cell (bytes): the float64 matrix the job
#: reads and GEE's float32 copy for its Gram matrix (the GLMM holds only the margins,
#: :mod:`evalbars.stats.logistic.margin_laplace`).
BYTES_PER_CELL = 12
#: ... and per pair of models: the contrast table's columns of both fits (two rows a pair, 27
#: columns) and their temporaries; with BYTES_PER_CELL, the job's peak of 6.8 GB measured at
#: 4,500 models x 21,000 questions (10.1 M pairs), less 0.25 GB of a Python process with its
#: libraries. :func:`fit_obstacle` quotes both.
BYTES_PER_PAIR = 540


def logistic_memory(n_models: int, n_questions: int) -> float:
    """About how many bytes the logistic fits and their tables hold (:data:`BYTES_PER_CELL`,
    :data:`BYTES_PER_PAIR`)."""
    pairs = n_models * (n_models - 1) // 2
    return float(n_models * n_questions * BYTES_PER_CELL + pairs * BYTES_PER_PAIR)


def fit_obstacle(items, max_cells: int, outcome: str = "correct") -> str | None:
    """Why the logistic models are not fitted to ``items``, or None when they can be.

    ``items``: a long item table or its question x model matrix (as :func:`compare_logistic`).
    They are not fitted when the models x questions grid holds more than ``max_cells`` cells
    (``analysis.logistic_max_cells``, a memory guard: the fits and their tables hold about
    :func:`logistic_memory` bytes), when a score is neither 0 nor 1 (partial credit has
    no binomial likelihood), or when a model is right on every or no question (its log odds
    are infinite).
    """
    if isinstance(items, WideScores):
        n_models, n_questions = len(items.models), items.scores.shape[0]
    else:
        n_models, n_questions = items["model"].nunique(), items["question_id"].nunique()
    n_cells = n_models * n_questions
    if n_cells > max_cells:
        return (
            f"{n_models:,} models x {n_questions:,} questions = {n_cells:,} cells, more than "
            f"analysis.logistic_max_cells = {max_cells:,} (the fits would need about "
            f"{logistic_memory(n_models, n_questions) / 1e9:.1f} GB of memory; raise the limit "
            "to fit them)"
        )
    if isinstance(items, WideScores) and items.item_score is not None:
        return f"not applicable to {items.item_score} scores (no binomial model)"
    if isinstance(items, WideScores):
        partial = items.non_binary_cells()
        what = "scores are" if not items.has_repeats else "cells hold a sample"
        if items.has_repeats and partial == 1:
            what = "cell holds a sample"
    else:
        scores = items[outcome].dropna().to_numpy(dtype=float)
        partial = int(np.count_nonzero((scores != 0) & (scores != 1)))
        what = "scores are"
    if partial:
        return f"{partial:,} {what} neither 0 nor 1 (partial credit has no binomial model)"
    if isinstance(items, WideScores) and not items.has_repeats:  # (no copies of the matrix)
        accuracy = pd.Series(model_means(items), index=items.models)
    elif isinstance(items, WideScores):
        successes, trials = items.binomial_counts()
        accuracy = pd.Series(successes.sum(axis=0) / trials.sum(axis=0), index=items.models)
    else:
        accuracy = items.groupby("model", observed=True)[outcome].mean()
    extreme = accuracy[(accuracy == 0) | (accuracy == 1)]
    if len(extreme):
        return "no finite log odds for " + ", ".join(
            f"{model} (accuracy {value:.0%})" for model, value in extreme.items()
        )
    return None
