"""Linear mixed models for K models answering clustered questions, fitted by REML.

Two specifications, both with model as a fixed effect in the cell-means
parametrisation (lme4's ``correct ~ 0 + model``):

``category``
    :math:`y_{qm} = \\beta_m + u_{c(q)} + e_{qm}`, i.e. ``(1|category)``;
``category_question``
    :math:`y_{qm} = \\beta_m + u_{c(q)} + v_q + e_{qm}`, i.e.
    ``(1|category) + (1|category:question)``, the paper's Eq. (3),

with :math:`u_c \\sim N(0, \\tau^2)`, :math:`v_q \\sim N(0, \\sigma_q^2)`,
:math:`e_{qm} \\sim N(0, \\sigma^2)`, all independent.

Two ways to fit them (``method`` of :func:`fit_lmm`):

``exact``
    Complete data only (every model scored on every question). An orthonormal
    change of basis inside each question splits the data into two independent
    strata. The K-1 within-question contrasts carry only :math:`\\sigma^2` and
    the model contrasts; the question means carry
    :math:`\\varphi = \\sigma_q^2 + \\sigma^2/K` and :math:`\\tau^2` through a
    one-way random-effects model of question means nested in categories. The
    REML likelihood is then a closed-form function of per-category sufficient
    statistics, maximised by one-dimensional root finding on its analytic
    derivative (to machine precision), with every boundary handled exactly.
    Cost: one pass over the score matrix.
``general``
    Any missingness pattern. The exact REML deviance and its analytic gradient
    are computed through the Woodbury identity from per-question and
    per-category sums (no N x N matrix), and minimised by L-BFGS-B over the
    variance ratios with bounds at zero; each boundary is checked by refitting
    with that component fixed at zero.
``auto`` uses ``exact`` when the data are complete and ``general`` otherwise.

References
----------
.. [1] Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting
   linear mixed-effects models using lme4. J Stat Softw 67(1), 1-48
   (the REML criterion, Eq. 42, and the cell-means fixed effects).
.. [2] Searle, S. R., Casella, G. and McCulloch, C. E. (1992). Variance
   Components. Wiley (REML, Ch. 6; the unbalanced one-way model, Ch. 3).
.. [3] Harville, D. A. (1977). Maximum likelihood approaches to variance
   component estimation and to related problems. JASA 72, 320-338.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .pairwise import adjust_pvalues, model_pairs
from .scores import WideScores, accuracy_order

__all__ = [
    "MODEL_SPECS",
    "METHODS",
    "COMPONENTS",
    "LmmFit",
    "fit_lmm",
    "variance_components",
    "contrast_se",
    "lmm_contrasts",
]

log = logging.getLogger(__name__)

MODEL_SPECS = ("category", "category_question")
METHODS = ("auto", "exact", "general")
#: Variance components of each specification, in table order.
COMPONENTS = {
    "category": ("category", "residual"),
    "category_question": ("category", "question", "residual"),
}
_LOG_2PI = np.log(2.0 * np.pi)
#: Two deviances closer than this are a tie; a tie goes to the boundary fit.
_DEVIANCE_TIE = 1e-9


@dataclass(frozen=True)
class LmmFit:
    """A fitted mixed model.

    Attributes
    ----------
    model_spec : str
        ``"category"`` (``correct ~ 0 + model + (1|category)``) or
        ``"category_question"`` (the same ``+ (1|category:question)``).
    method : str
        The path that ran: ``"exact"`` or ``"general"``.
    models : list of str
        Order of the fixed effects (the column order of the input).
    fixed : ndarray, shape (K,)
        REML/GLS estimates of the per-model means :math:`\\beta_m`.
    cov : ndarray, shape (K, K)
        Their covariance, :math:`\\hat\\sigma^2 (X^T V_0^{-1} X)^{-1}` at the
        REML estimates (lme4's ``vcov``).
    variance : dict
        ``{"category": tau2, "question": sigma_q2, "residual": sigma2}``
        (``question`` only for ``category_question``).
    boundary : dict
        Component -> True when its estimate is exactly zero (a singular fit).
    reml_criterion : float
        :math:`-2\\,\\ell_R` at the estimates, constants included (lme4's
        ``REMLcrit``).
    n_obs, n_questions, n_categories : int
        Observations, questions and categories that entered the fit.
    order : list of str
        Models by observed accuracy, highest first
        (:func:`evalbars.pairwise.accuracy_order`); contrasts follow it.
    """

    model_spec: str
    method: str
    models: list
    fixed: np.ndarray
    cov: np.ndarray
    variance: dict
    boundary: dict
    reml_criterion: float
    n_obs: int
    n_questions: int
    n_categories: int
    order: list = field(default_factory=list)


# --------------------------------------------------------------------------------------
# Input checks shared by every path
# --------------------------------------------------------------------------------------


def _prepare(wide: WideScores, model_spec: str):
    """Scores, category codes and observed mask, with empty questions dropped and checks."""
    if model_spec not in MODEL_SPECS:
        raise ValueError(f"model_spec must be one of {MODEL_SPECS}, got {model_spec!r}")
    scores = np.asarray(wide.scores, dtype=float)
    if scores.ndim != 2 or scores.shape[1] < 2:
        raise ValueError("the mixed models compare at least two models (two score columns)")
    observed = np.isfinite(scores)
    keep = observed.any(axis=1)
    scores, observed = scores[keep], observed[keep]
    categories = np.asarray(wide.categories)[keep]
    names, codes = np.unique(categories, return_inverse=True)
    empty_models = [
        m for m, seen in zip(wide.models, observed.any(axis=0), strict=True) if not seen
    ]
    if empty_models:
        raise ValueError(f"models without any score: {empty_models}")
    if names.size < 2:
        raise ValueError(
            "a (1|category) random effect needs at least two categories; "
            f"the data have {names.size}"
        )
    if model_spec == "category_question" and np.bincount(codes).max() < 2:
        raise ValueError(
            "the question variance cannot be told apart from the category variance when "
            "every category has a single question"
        )
    return scores, observed, codes, names.size


# --------------------------------------------------------------------------------------
# Exact path: complete data, two strata
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StrataStats:
    """Sufficient statistics of complete data for both REML strata.

    ``ss_within``: :math:`\\sum_{q,m} (y_{qm} - \\bar y_{q\\cdot} - \\bar y_{\\cdot m}
    + \\bar y)^2`, the RM-ANOVA error sum of squares, on ``df_within`` degrees of
    freedom; ``size``, ``mean``: questions per category and the category means
    of the question means; ``ss_between_q``: :math:`\\sum_c \\sum_{q \\in c}
    (\\bar y_{q\\cdot} - \\bar y_c)^2`. ``k``: observations per question;
    ``p_within``: fixed effects in the within stratum (K-1 for cell means, 0 for
    an intercept-only model); ``x_scale``: :math:`X^T V^{-1} X` of the
    between-stratum fixed effect is ``x_scale * sum_c n_c / (phi + n_c tau2)``.
    """

    ss_within: float
    df_within: int
    size: np.ndarray
    mean: np.ndarray
    ss_between_q: float
    k: int
    p_within: int
    x_scale: float

    @property
    def n(self) -> int:
        return int(self.size.sum())

    @property
    def n_fixed(self) -> int:
        return self.p_within + 1


def _strata_stats(scores: np.ndarray, codes: np.ndarray, intercept_only=False) -> _StrataStats:
    """Sufficient statistics of a complete (n, K) score matrix.

    Cell-means fixed effects (one mean per column) by default; ``intercept_only``
    gives the model with a single mean, where the K columns are exchangeable
    replicates (e.g. lme4's ``Pastes``: two tests per cask).
    """
    n, k = scores.shape
    question_mean = scores.mean(axis=1)
    residual = scores - question_mean[:, None]
    if not intercept_only:
        residual = residual - scores.mean(axis=0)[None, :] + scores.mean()
    p_within = 0 if intercept_only else k - 1
    size = np.bincount(codes).astype(float)
    mean = np.bincount(codes, weights=question_mean) / size
    return _StrataStats(
        ss_within=float(np.sum(residual**2)),
        df_within=n * (k - 1) - p_within,
        size=size,
        mean=mean,
        ss_between_q=float(np.sum((question_mean - mean[codes]) ** 2)),
        k=k,
        p_within=p_within,
        x_scale=1.0 if intercept_only else 1.0 / k,
    )


def _oneway_terms(rho: np.ndarray, st: _StrataStats):
    """Quantities of the question-mean stratum at ratios ``rho = tau2 / phi`` (vectorised).

    With :math:`a_c = n_c / (1 + n_c\\rho)`: ``logdet`` :math:`= \\sum_c \\log(1 + n_c\\rho)`,
    ``s`` :math:`= \\sum_c a_c`, ``r`` :math:`= SS_{bq} + \\sum_c a_c (\\bar y_c - \\hat\\mu)^2`
    (the GLS residual quadratic form times :math:`\\varphi`), ``mu`` the GLS mean,
    and ``dr`` :math:`= dr/d\\rho = -\\sum_c a_c^2 (\\bar y_c - \\hat\\mu)^2`, ``ds`` likewise.
    """
    rho = np.atleast_1d(np.asarray(rho, dtype=float))[:, None]
    a = st.size[None, :] / (1.0 + st.size[None, :] * rho)
    s = a.sum(axis=1)
    mu = (a * st.mean[None, :]).sum(axis=1) / s
    dev2 = (st.mean[None, :] - mu[:, None]) ** 2
    return {
        "logdet": np.log1p(st.size[None, :] * rho).sum(axis=1),
        "s": s,
        "ds": -(a**2).sum(axis=1),
        "r": st.ss_between_q + (a * dev2).sum(axis=1),
        "dr": -(a**2 * dev2).sum(axis=1),
        "dlogdet": a.sum(axis=1),
        "mu": mu,
    }


def _profiled_slope(rho, st: _StrataStats, extra_ss: float, weight: float, df: int):
    """Derivative in rho of :math:`L(\\rho) = \\log|\\cdot| + \\log s + df \\log(E + \\lambda r)`.

    The profiled REML deviance (up to constants) of the question-mean stratum
    when :math:`\\varphi` is profiled out (``extra_ss = 0, weight = 1``), or of
    the category-only model when :math:`\\sigma^2 = K\\varphi` is profiled out
    jointly with the within stratum (``extra_ss = SS_within, weight = K``).
    """
    t = _oneway_terms(rho, st)
    return t["dlogdet"] + t["ds"] / t["s"] + df * weight * t["dr"] / (extra_ss + weight * t["r"])


def _local_minima(st: _StrataStats, extra_ss: float, weight: float, df: int) -> list:
    """Every local minimiser over rho >= 0 of the profiled 1-D deviance.

    Sign changes of the analytic derivative on a log grid are refined with
    Brent's root finder; rho = 0 is a minimiser when the slope there is >= 0.
    """
    slope = lambda r: float(_profiled_slope(r, st, extra_ss, weight, df)[0])  # noqa: E731
    grid = np.concatenate([[0.0], np.logspace(-12, 8, 401)])
    values = _profiled_slope(grid, st, extra_ss, weight, df)
    while values[-1] < 0 and grid[-1] < 1e40:  # the deviance still falls: look further out
        more = grid[-1] * np.logspace(1, 8, 8)
        grid, values = (
            np.concatenate([grid, more]),
            np.concatenate([values, _profiled_slope(more, st, extra_ss, weight, df)]),
        )
    minima = [0.0] if values[0] >= 0 else []
    for i in np.flatnonzero((values[:-1] < 0) & (values[1:] >= 0)):
        if values[i + 1] == 0:
            minima.append(float(grid[i + 1]))
        else:
            minima.append(optimize.brentq(slope, grid[i], grid[i + 1], xtol=1e-300, rtol=1e-15))
    # No minimum at all happens in the question-mean stratum when question means do not
    # vary within categories (phi -> 0); the constraint phi >= sigma2/K then binds.
    return minima


def _strata_deviance(sigma2: float, phi: float, tau2: float, st: _StrataStats) -> float:
    """Exact :math:`-2\\ell_R` of the complete-data model from its strata.

    .. math::
        -2\\ell_R = (N-p)\\log 2\\pi
          + n_w \\log\\sigma^2 + p_w \\log(n/\\sigma^2) + SS_w/\\sigma^2
          + n\\log K + (n - C)\\log\\varphi + \\sum_c \\log(\\varphi + n_c\\tau^2)
          + \\log\\Big(x \\sum_c \\frac{n_c}{\\varphi + n_c\\tau^2}\\Big)
          + \\frac{SS_{bq}}{\\varphi} + \\sum_c \\frac{n_c(\\bar y_c - \\hat\\mu)^2}{\\varphi + n_c\\tau^2}

    with :math:`n_w = n(K-1)` within-question contrasts. It is the Gaussian
    REML log-likelihood with the :math:`\\log|X^T V^{-1} X|` term and no
    :math:`\\log|X^T X|` term, as in lme4's ``REMLcrit``.
    """
    n, k, c = st.n, st.k, st.size.size
    total_var = phi + st.size * tau2
    a = st.size / total_var
    mu = np.sum(a * st.mean) / np.sum(a)
    n_obs = n * k
    return float(
        (n_obs - st.n_fixed) * _LOG_2PI
        + n * (k - 1) * np.log(sigma2)
        + st.p_within * np.log(n / sigma2)
        + st.ss_within / sigma2
        + n * np.log(k)
        + (n - c) * np.log(phi)
        + np.sum(np.log(total_var))
        + np.log(st.x_scale * np.sum(a))
        + st.ss_between_q / phi
        + np.sum(a * (st.mean - mu) ** 2)
    )


def _exact_variances(st: _StrataStats, model_spec: str) -> dict:
    """REML estimates ``{"residual", "question", "category"}`` from the strata statistics.

    Nested model: :math:`\\hat\\sigma^2 = SS_w / df_w` and the one-way REML fit
    of the question means give the interior candidates; the boundary
    :math:`\\sigma_q^2 = 0` couples the strata (:math:`\\varphi = \\sigma^2/K`) and
    is the category-only fit. Every candidate is scored with the exact deviance
    and the smallest wins (a tie goes to the boundary).
    """
    if st.ss_within <= 0 and model_spec == "category_question":
        # Without within-question variation the question and residual variances cannot be
        # told apart; the category-only model is still defined (its residual pools both).
        raise ValueError("no within-question variation: every model scores alike on each question")
    k, n = st.k, st.n
    candidates = []
    # Boundary sigma_q^2 = 0, which is also the whole category-only model:
    # sigma^2 = (SS_w + K r(rho)) / (N - p) with rho = tau2 / phi, phi = sigma^2 / K.
    df_joint = n * k - st.n_fixed
    for rho in _local_minima(st, st.ss_within, k, df_joint):
        r = float(_oneway_terms(rho, st)["r"][0])
        sigma2 = (st.ss_within + k * r) / df_joint
        candidates.append({"residual": sigma2, "question": 0.0, "category": rho * sigma2 / k})
    if model_spec == "category_question":
        sigma2 = st.ss_within / st.df_within
        for rho in _local_minima(st, 0.0, 1.0, n - 1):
            phi = float(_oneway_terms(rho, st)["r"][0]) / (n - 1)
            if phi > sigma2 / k:
                candidates.append(
                    {"residual": sigma2, "question": phi - sigma2 / k, "category": rho * phi}
                )
    if not candidates:
        raise RuntimeError("the REML deviance has no minimum over the variance components")
    scored = [
        (v, _strata_deviance(v["residual"], v["question"] + v["residual"] / k, v["category"], st))
        for v in candidates
    ]
    best, deviance = _prefer_boundary(scored)
    return best | {"deviance": deviance}


def _prefer_boundary(candidates):
    """The ``(estimate, deviance)`` pair of smallest deviance; among near-ties, the one with
    most components exactly zero (an estimate is an array of ratios or a dict of variances)."""
    smallest = min(dev for _, dev in candidates)
    ties = [c for c in candidates if c[1] <= smallest + _DEVIANCE_TIE]

    def zeros(estimate):
        values = estimate.values() if isinstance(estimate, dict) else estimate
        return sum(float(x) == 0.0 for x in values)

    return max(ties, key=lambda c: zeros(c[0]))


def _fit_exact(scores: np.ndarray, codes: np.ndarray, model_spec: str, intercept_only=False):
    """Fixed effects, their covariance and the variance estimates on the exact path."""
    st = _strata_stats(scores, codes, intercept_only)
    est = _exact_variances(st, model_spec)
    sigma2, tau2 = est["residual"], est["category"]
    phi = est["question"] + sigma2 / st.k
    # GLS: contrasts are the column-mean contrasts (within stratum, OLS); the level is
    # the GLS mean of the question means, weighted by 1/(phi + n_c tau2) per category.
    a = st.size / (phi + st.size * tau2)
    level = np.sum(a * st.mean) / np.sum(a)
    k, n = st.k, st.n
    if intercept_only:
        return np.array([level]), np.array([[1.0 / np.sum(a)]]), est
    column_mean = scores.mean(axis=0)
    fixed = column_mean - column_mean.mean() + level
    centring = np.eye(k) - np.full((k, k), 1.0 / k)
    cov = sigma2 / n * centring + np.full((k, k), 1.0 / np.sum(a))
    return fixed, cov, est


# --------------------------------------------------------------------------------------
# General path: any missingness, exact deviance through Woodbury identities
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _GeneralData:
    """Per-question sums of a (possibly incomplete) score matrix."""

    observed: np.ndarray  # (n, K) bool, the rows of sum_{i in q} x_i
    count: np.ndarray  # (n,) observations per question, k_q
    total: np.ndarray  # (n,) sum of scores per question, t_q(y)
    codes: np.ndarray  # (n,) category code
    n_categories: int
    n_per_model: np.ndarray  # (K,) = X^T X diagonal
    sum_per_model: np.ndarray  # (K,) = X^T y
    sum_squares: float  # y^T y

    @property
    def n_obs(self) -> int:
        return int(self.count.sum())


def _general_data(scores: np.ndarray, observed: np.ndarray, codes: np.ndarray, n_cat: int):
    filled = np.where(observed, scores, 0.0)
    return _GeneralData(
        observed=observed.astype(float),
        count=observed.sum(axis=1).astype(float),
        total=filled.sum(axis=1),
        codes=codes,
        n_categories=n_cat,
        n_per_model=observed.sum(axis=0).astype(float),
        sum_per_model=filled.sum(axis=0),
        sum_squares=float(np.sum(filled**2)),
    )


def _general_pieces(gamma_q: float, gamma_c: float, d: _GeneralData):
    """REML pieces at variance ratios ``gamma_q = sigma_q2/sigma2``, ``gamma_c = tau2/sigma2``.

    :math:`V_0 = I + \\gamma_q Z_q Z_q^T + \\gamma_c Z_c Z_c^T`. Inside question q,
    :math:`B_q^{-1} = I - w_q J` with :math:`D_q = 1 + k_q\\gamma_q`,
    :math:`w_q = \\gamma_q/D_q`; over category c (Woodbury),
    :math:`V_0^{-1} = B^{-1} - g_c B^{-1}11^T B^{-1}` with
    :math:`s_c = \\sum_{q \\in c} k_q/D_q`, :math:`E_c = 1 + \\gamma_c s_c`,
    :math:`g_c = \\gamma_c/E_c`, so for any u, v:
    :math:`u^T V_0^{-1} v = u^T v - \\sum_q w_q t_q(u) t_q(v) - \\sum_c g_c T_c(u) T_c(v)`
    with :math:`t_q` the sum over question q and :math:`T_c(u) = \\sum_{q \\in c} t_q(u)/D_q`.
    """
    n_cat = d.n_categories
    big_d = 1.0 + d.count * gamma_q
    w = gamma_q / big_d
    s_c = np.bincount(d.codes, weights=d.count / big_d, minlength=n_cat)
    big_e = 1.0 + gamma_c * s_c
    g = gamma_c / big_e
    # T_c of the model indicators (C, K) and of y (C,)
    h = np.zeros((n_cat, d.observed.shape[1]))
    for m, column in enumerate((d.observed / big_d[:, None]).T):  # a loop over models only
        h[:, m] = np.bincount(d.codes, weights=column, minlength=n_cat)
    t_y = np.bincount(d.codes, weights=d.total / big_d, minlength=n_cat)
    xtvx = (
        np.diag(d.n_per_model) - (d.observed * w[:, None]).T @ d.observed - (h * g[:, None]).T @ h
    )
    xtvy = d.sum_per_model - d.observed.T @ (w * d.total) - h.T @ (g * t_y)
    ytvy = d.sum_squares - np.sum(w * d.total**2) - np.sum(g * t_y**2)
    chol = np.linalg.cholesky(xtvx)
    beta = np.linalg.solve(xtvx, xtvy)
    r = float(ytvy - beta @ xtvy)
    return {
        "big_d": big_d,
        "big_e": big_e,
        "g": g,
        "h": h,
        "s_c": s_c,
        "xtvx": xtvx,
        "logdet_v": float(np.sum(np.log(big_d)) + np.sum(np.log(big_e))),
        "logdet_x": float(2.0 * np.sum(np.log(np.diag(chol)))),
        "beta": beta,
        "r": r,
    }


def _general_profiled(gamma: np.ndarray, d: _GeneralData, spec: str):
    """Profiled REML deviance (sigma2 = r / (N - p)) and its gradient in gamma.

    :math:`d(\\gamma) = \\log|V_0| + \\log|X^T V_0^{-1} X| + (N-p)(1 + \\log(2\\pi r/(N-p)))`
    (lme4's profiled REML criterion); :math:`\\partial d/\\partial\\gamma_j =
    \\mathrm{tr}(P D_j) - (N-p)\\, (Py)^T D_j (Py) / r` with
    :math:`P = V_0^{-1} - V_0^{-1}X(X^TV_0^{-1}X)^{-1}X^TV_0^{-1}` and
    :math:`D_j = Z_j Z_j^T`.
    """
    gamma_q, gamma_c = (gamma[0], gamma[1]) if spec == "category_question" else (0.0, gamma[0])
    p = _general_pieces(gamma_q, gamma_c, d)
    n_fixed = d.observed.shape[1]
    dof = d.n_obs - n_fixed
    dev = p["logdet_v"] + p["logdet_x"] + dof * (1.0 + _LOG_2PI + np.log(p["r"] / dof))
    big_d, g, h, big_e = p["big_d"], p["g"], p["h"], p["big_e"]
    g_q = g[d.codes]
    f_inv = np.linalg.inv(p["xtvx"])
    # Py = V0^{-1} e, e = y - X beta; only its question and category sums are needed.
    e_q = d.total - d.observed @ p["beta"]  # t_q(e)
    e_c = np.bincount(d.codes, weights=e_q / big_d, minlength=d.n_categories)  # T_c(e)
    py_q = e_q / big_d - g_q * d.count / big_d * e_c[d.codes]
    py_c = e_c / big_e
    # Category gradient: 1_c'V0^{-1}1_c = s_c/E_c, 1_c'V0^{-1}X = h_c/E_c.
    hc = h / big_e[:, None]
    grad_c = np.sum(p["s_c"] / big_e) - np.sum((hc @ f_inv) * hc) - dof * np.sum(py_c**2) / p["r"]
    if spec != "category_question":
        return dev, np.array([grad_c])
    # Question gradient: 1_q'V0^{-1}1_q = k_q/D_q - g_c k_q^2/D_q^2,
    # 1_q'V0^{-1}X = x_q/D_q - g_c (k_q/D_q) h_c.
    kd = d.count / big_d
    gq = d.observed / big_d[:, None] - (g_q * kd)[:, None] * h[d.codes]
    grad_q = np.sum(kd - g_q * kd**2) - np.sum((gq @ f_inv) * gq) - dof * np.sum(py_q**2) / p["r"]
    return dev, np.array([grad_q, grad_c])


def _minimise_general(d: _GeneralData, spec: str, fixed_zero: tuple = (), start=None):
    """L-BFGS-B over the free ratios (bounds at 0); ``fixed_zero`` pins ratios at 0."""
    n_par = 2 if spec == "category_question" else 1
    free = [j for j in range(n_par) if j not in fixed_zero]

    def full(x):
        gamma = np.zeros(n_par)
        gamma[free] = x
        return gamma

    if not free:
        dev, _ = _general_profiled(np.zeros(n_par), d, spec)
        return np.zeros(n_par), dev

    def objective(x):
        dev, grad = _general_profiled(full(x), d, spec)
        return dev, grad[free]

    result = optimize.minimize(
        objective,
        x0=np.ones(len(free)) if start is None else np.maximum(np.asarray(start)[free], 1e-3),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(free),
        options={"ftol": 0.0, "gtol": 1e-10, "maxiter": 1000},
    )
    x, dev = _newton_polish(objective, result.x, float(result.fun))
    return full(x), dev


def _newton_polish(objective, x, dev, max_steps: int = 20):
    """Newton steps from an interior L-BFGS-B solution, until the gradient vanishes.

    L-BFGS-B stops where the deviance is flat to rounding, typically 1e-7 from the
    optimum in relative terms; a few Newton steps (Hessian by central differences of
    the analytic gradient) bring it to ~1e-12. Components at 0 are left to the
    boundary refits.
    """
    if np.any(x <= 0):
        return x, dev
    for _ in range(max_steps):
        _, grad = objective(x)
        if np.max(np.abs(grad)) < 1e-11:
            break
        steps = 1e-6 * np.maximum(x, 1e-4)
        hessian = np.column_stack(
            [
                (objective(x + h * e)[1] - objective(x - h * e)[1]) / (2 * h)
                for h, e in zip(steps, np.eye(x.size), strict=True)
            ]
        )
        try:
            step = np.linalg.solve((hessian + hessian.T) / 2, grad)
        except np.linalg.LinAlgError:
            break
        candidate = x - step
        if np.any(candidate <= 0):
            break
        new_dev, _ = objective(candidate)
        if new_dev > dev + 1e-10:
            break
        x, dev = candidate, new_dev
    return x, dev


def _fit_general(scores, observed, codes, n_cat, model_spec):
    d = _general_data(scores, observed, codes, n_cat)
    n_par = 2 if model_spec == "category_question" else 1
    start = _general_start(scores, observed, codes, model_spec)
    candidates = [_minimise_general(d, model_spec, start=start)]
    # Boundaries exactly: where a ratio ends up small, refit with it (and with every other
    # small one) pinned at zero, and keep the better fit.
    small = [j for j in range(n_par) if candidates[0][0][j] < 1e-2]
    pins = [c for r in range(1, len(small) + 1) for c in itertools.combinations(small, r)]
    candidates += [_minimise_general(d, model_spec, pin) for pin in pins]
    gamma, deviance = _prefer_boundary(candidates)
    gamma_q, gamma_c = (gamma[0], gamma[1]) if n_par == 2 else (0.0, gamma[0])
    pieces = _general_pieces(gamma_q, gamma_c, d)
    sigma2 = pieces["r"] / (d.n_obs - scores.shape[1])
    est = {
        "residual": sigma2,
        "question": gamma_q * sigma2,
        "category": gamma_c * sigma2,
        "deviance": deviance,
    }
    cov = sigma2 * np.linalg.inv(pieces["xtvx"])
    return pieces["beta"], cov, est


def _general_start(scores, observed, codes, model_spec):
    """Starting ratios: the exact fit on the questions every model answered.

    None (start at ratios 1, as lme4 does) when every question is complete, so that the
    general path stays an independent check of the exact path, or when the complete
    questions cannot be fitted.
    """
    complete = observed.all(axis=1)
    if complete.all():
        return None
    try:
        codes = np.unique(codes[complete], return_inverse=True)[1]
        _, _, est = _fit_exact(scores[complete], codes, model_spec)
    except (ValueError, RuntimeError, IndexError):
        return None
    ratios = [est["category"] / est["residual"]]
    if model_spec == "category_question":
        ratios.insert(0, est["question"] / est["residual"])
    return np.array(ratios)


def _general_deviance(variance: dict, d: _GeneralData) -> float:
    """:math:`-2\\ell_R` at given variances (not profiled), for fits made elsewhere."""
    sigma2 = variance["residual"]
    pieces = _general_pieces(
        variance.get("question", 0.0) / sigma2, variance["category"] / sigma2, d
    )
    n_fixed = d.observed.shape[1]
    return float(
        (d.n_obs - n_fixed) * (np.log(sigma2) + _LOG_2PI)
        + pieces["logdet_v"]
        + pieces["logdet_x"]
        + pieces["r"] / sigma2
    )


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def fit_lmm(wide: WideScores, model_spec: str, method: str = "auto") -> LmmFit:
    """Fit ``correct ~ 0 + model + (1|category) [+ (1|category:question)]`` by REML.

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores (NaN where a model has no score).
    model_spec : {"category", "category_question"}
        Random effects: ``(1|category)``, or ``(1|category) + (1|category:question)``.
    method : {"auto", "exact", "general"}
        ``auto`` takes ``exact`` for complete data and ``general`` otherwise; see
        the module docstring. ``exact`` refuses incomplete data.

    Returns
    -------
    LmmFit

    Notes
    -----
    In complete data the estimates have closed forms given the variance ratios:
    the contrast :math:`\\hat\\beta_a - \\hat\\beta_b` is the difference of column
    means (OLS = GLS within questions) with variance :math:`2\\hat\\sigma^2/n`;
    the level of :math:`\\hat\\beta` is the GLS mean
    :math:`\\hat\\mu = \\sum_c a_c \\bar y_c / \\sum_c a_c`,
    :math:`a_c = n_c/(\\varphi + n_c\\tau^2)`, which equals the grand mean only
    when categories are equal in size or :math:`\\tau^2 = 0`; so
    :math:`\\hat\\beta_m = \\bar y_{\\cdot m} - \\bar y + \\hat\\mu` and
    :math:`\\mathrm{Cov}(\\hat\\beta) = (\\hat\\sigma^2/n)(I - J/K) + J/\\sum_c a_c`.
    In the nested model with interior estimates,
    :math:`\\hat\\sigma^2 = SS_{within}/((n-1)(K-1))`, the repeated-measures
    ANOVA error mean square.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    scores, observed, codes, n_cat = _prepare(wide, model_spec)
    complete = bool(observed.all())
    if method == "auto":
        method = "exact" if complete else "general"
    if method == "exact":
        if not complete:
            raise ValueError(
                "the exact path needs every model scored on every question; "
                "use method='general' (or 'auto') for incomplete data"
            )
        fixed, cov, est = _fit_exact(scores, codes, model_spec)
    else:
        fixed, cov, est = _fit_general(scores, observed, codes, n_cat, model_spec)
    names = COMPONENTS[model_spec]
    variance = {name: float(est[name]) for name in names}
    boundary = {name: bool(variance[name] <= 0.0) for name in names}
    flagged = [n for n, b in boundary.items() if b]
    if flagged:
        log.info("%s fit is singular: %s variance at the boundary 0", model_spec, flagged)
    return LmmFit(
        model_spec=model_spec,
        method=method,
        models=list(wide.models),
        fixed=np.asarray(fixed, dtype=float),
        cov=np.asarray(cov, dtype=float),
        variance=variance,
        boundary=boundary,
        reml_criterion=float(est["deviance"]),
        n_obs=int(observed.sum()),
        n_questions=int(scores.shape[0]),
        n_categories=int(n_cat),
        order=accuracy_order(wide),
    )


def variance_components(fits) -> pd.DataFrame:
    """Tidy table of REML variance components of one or more fits.

    Returns
    -------
    DataFrame
        ``model_spec, component, variance, boundary, method``; components in the
        order ``category, question, residual``.
    """
    if isinstance(fits, LmmFit):
        fits = [fits]
    rows = [
        (fit.model_spec, name, fit.variance[name], fit.boundary[name], fit.method)
        for fit in fits
        for name in COMPONENTS[fit.model_spec]
    ]
    return pd.DataFrame(rows, columns=["model_spec", "component", "variance", "boundary", "method"])


def contrast_se(fit: LmmFit, a, b) -> np.ndarray:
    """Standard error of ``fixed[a] - fixed[b]``: :math:`\\sqrt{c^T \\hat\\Sigma c}` with
    :math:`c = e_a - e_b`, i.e. :math:`\\sqrt{\\Sigma_{aa} + \\Sigma_{bb} - 2\\Sigma_{ab}}`."""
    a, b = np.asarray(a), np.asarray(b)
    return np.sqrt(fit.cov[a, a] + fit.cov[b, b] - 2.0 * fit.cov[a, b])


def lmm_contrasts(fit: LmmFit, alpha: float = 0.05) -> pd.DataFrame:
    """All pairwise contrasts of the estimated marginal means, with Wald z-tests.

    Pairs follow :func:`evalbars.pairwise.model_pairs` over the accuracy order
    (``model_a`` the more accurate). For a pair, :math:`\\hat\\delta = \\hat\\beta_a -
    \\hat\\beta_b`, :math:`se = \\sqrt{c^T \\hat\\Sigma c}`, :math:`z = \\hat\\delta/se`,
    :math:`p = 2\\Phi(-|z|)` (emmeans with ``lmer.df = "asymptotic"``, which is
    also what emmeans falls back to above 3,000 observations).

    ``p_bonferroni`` and ``p_holm`` adjust ``p`` over the K(K-1)/2 pairs.
    ``p_tukey`` is the Tukey-type p-value
    :math:`P(Q_{K,\\infty} > \\sqrt{2}|z|)` of the studentized range with
    infinite degrees of freedom (emmeans ``adjust = "tukey"``). It is an
    APPROXIMATION: Tukey's procedure controls the family-wise error exactly only
    for independent, equally precise means with i.i.d. errors; with a mixed model
    or unbalanced data it substitutes an estimated covariance into that
    reference distribution (the paper, Section 4). Holm and Bonferroni keep an
    exact guarantee. ``ci_low``/``ci_high`` are Wald intervals at level
    ``1 - alpha``, unadjusted.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    order = fit.order or [m for _, m in sorted(zip(-fit.fixed, fit.models, strict=True))]
    pairs = model_pairs(order)
    index = {m: i for i, m in enumerate(fit.models)}
    ia = pairs["model_a"].map(index).to_numpy()
    ib = pairs["model_b"].map(index).to_numpy()
    estimate = fit.fixed[ia] - fit.fixed[ib]
    se = contrast_se(fit, ia, ib)
    z = estimate / se
    p = 2.0 * stats.norm.sf(np.abs(z))
    k = len(fit.models)
    p_tukey = stats.studentized_range.sf(np.abs(z) * np.sqrt(2.0), k, np.inf)
    half = stats.norm.isf(alpha / 2) * se
    return pd.DataFrame(
        {
            "model_spec": fit.model_spec,
            "model_a": pairs["model_a"],
            "model_b": pairs["model_b"],
            "estimate": estimate,
            "se": se,
            "z": z,
            "p": p,
            "p_bonferroni": adjust_pvalues(p, "bonferroni"),
            "p_holm": adjust_pvalues(p, "holm"),
            "p_tukey": np.minimum(1.0, p_tukey),
            "ci_low": estimate - half,
            "ci_high": estimate + half,
        }
    )
