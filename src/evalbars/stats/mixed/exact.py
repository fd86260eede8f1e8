"""Exact path: complete, balanced data (every cell holds the same number n of samples).

Orthonormal changes of basis split the data into three independent strata
(Searle, Casella & McCulloch 1992, Ch. 4 and 6):

1. inside each cell, the :math:`n-1` contrasts of its samples carry only
   :math:`\\sigma^2` (sum of squares :math:`SS_{cell}` on :math:`df_{cell} = QK(n-1)`);
2. inside each question, the :math:`K-1` contrasts of its cell means carry the
   model contrasts and the cell-mean residual
   :math:`\\sigma_e^2 = \\sigma_w^2 + \\sigma^2/n` (:math:`SS_w`, the RM-ANOVA error
   sum of squares of the cell means, on :math:`df_w = (Q-1)(K-1)`);
3. the question means carry :math:`\\varphi = \\sigma_q^2 + \\sigma_e^2/K` and
   :math:`\\tau^2` through a one-way random-effects model of question means nested
   in categories.

The REML deviance is a closed-form function of per-category sufficient statistics.
Interior estimates separate (:math:`\\hat\\sigma^2 = SS_{cell}/df_{cell}`,
:math:`\\hat\\sigma_e^2 = SS_w/df_w`, and a one-dimensional REML fit of the
question means); each boundary couples strata: :math:`\\sigma_w^2 = 0` pools
strata 1 and 2 (:math:`\\sigma_e^2 = \\sigma^2/n`), :math:`\\sigma_q^2 = 0` pools
strata 2 and 3 (:math:`\\varphi = \\sigma_e^2/K`). Every face of the parameter
space is profiled to one dimension (the ratio :math:`\\rho = \\tau^2/\\varphi`) and
solved by root finding on the analytic derivative to machine precision; the
candidates are scored with the exact deviance and the smallest wins (a tie goes
to the boundary). With one sample per cell (:math:`n = 1`) stratum 1 is empty and
:math:`\\sigma_w^2` is not part of any fitted model, so this is the two-strata
fit of the category and nested models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalbars.data.blocks import blocks
from evalbars.stats.mixed.common import COMPONENTS, LOG_2PI, prefer_boundary

__all__ = ["StrataStats", "strata_stats", "strata_deviance", "fit_exact"]


@dataclass(frozen=True)
class StrataStats:
    """Sufficient statistics of complete, balanced data for the three REML strata.

    Attributes
    ----------
    ss_within : float
        :math:`SS_w = \\sum_{q,m} (\\bar y_{qm} - \\bar y_{q\\cdot} - \\bar y_{\\cdot m} + \\bar y)^2`,
        the RM-ANOVA error sum of squares of the cell means, on ``df_within``.
    size, mean : ndarray, shape (C,)
        Questions per category and the category means of the question means.
    ss_between_q : float
        :math:`\\sum_c \\sum_{q \\in c} (\\bar y_{q\\cdot} - \\bar y_c)^2`.
    k : int
        Cells per question (models).
    p_within : int
        Fixed effects in the within-question stratum (K-1 for cell means, 0 for an
        intercept-only model).
    x_scale : float
        :math:`X^T V^{-1} X` of the between-stratum fixed effect is
        ``x_scale * sum_c n_c / (phi + n_c tau2)``.
    n_rep : int
        Samples per cell, n.
    ss_cells : float
        Within-cell sum of squares :math:`SS_{cell}` (0 when n = 1).
    """

    ss_within: float
    df_within: int
    size: np.ndarray
    mean: np.ndarray
    ss_between_q: float
    k: int
    p_within: int
    x_scale: float
    n_rep: int = 1
    ss_cells: float = 0.0

    @property
    def n(self) -> int:
        """Questions, Q."""
        return int(self.size.sum())

    @property
    def n_fixed(self) -> int:
        return self.p_within + 1

    @property
    def df_cells(self) -> int:
        return self.n * self.k * (self.n_rep - 1)


def strata_stats(
    means: np.ndarray, codes: np.ndarray, intercept_only=False, n_rep: int = 1, ss_cells=0.0
) -> StrataStats:
    """Sufficient statistics of a complete (Q, K) matrix of cell means, n samples per cell.

    Cell-means fixed effects (one mean per column) by default; ``intercept_only``
    gives the model with a single mean, where the K columns are exchangeable
    replicates (e.g. lme4's ``Pastes``: two tests per cask).
    """
    n, k = means.shape
    question_mean = means.mean(axis=1)
    column_mean, grand = means.mean(axis=0), means.mean()
    # SS_w in blocks of questions (:func:`evalbars.data.blocks.blocks`), never a Q x K temporary.
    ss_within = 0.0
    for rows in blocks(n, k):
        residual = means[rows] - question_mean[rows, None]
        if not intercept_only:
            residual = residual - column_mean[None, :] + grand
        ss_within += np.sum(residual**2)
    p_within = 0 if intercept_only else k - 1
    size = np.bincount(codes).astype(float)
    mean = np.bincount(codes, weights=question_mean) / size
    return StrataStats(
        ss_within=float(ss_within),
        df_within=n * (k - 1) - p_within,
        size=size,
        mean=mean,
        ss_between_q=float(np.sum((question_mean - mean[codes]) ** 2)),
        k=k,
        p_within=p_within,
        x_scale=1.0 if intercept_only else 1.0 / k,
        n_rep=int(n_rep),
        ss_cells=float(ss_cells),
    )


def _oneway_terms(rho: np.ndarray, st: StrataStats):
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


def _profiled_slope(rho, st: StrataStats, extra_ss: float, weight: float, df: int):
    """Derivative in rho of :math:`L(\\rho) = \\log|\\cdot| + \\log s + df \\log(E + \\lambda r)`.

    The profiled REML deviance (up to constants) of the question-mean stratum
    when :math:`\\varphi` is profiled out (``extra_ss = 0, weight = 1``), or of
    a fit where :math:`\\varphi` is tied to a variance pooled with other strata,
    :math:`v = \\lambda\\varphi`, profiled out jointly (``extra_ss`` the pooled
    strata's sum of squares in units of v, ``weight`` :math:`= \\lambda`).
    """
    t = _oneway_terms(rho, st)
    return t["dlogdet"] + t["ds"] / t["s"] + df * weight * t["dr"] / (extra_ss + weight * t["r"])


def _local_minima(st: StrataStats, extra_ss: float, weight: float, df: int) -> list:
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
    # imported here: scipy.optimize is a tenth of a second of start-up, and the jobs that only
    # read the mixed models' tables import this package without fitting
    from scipy import optimize  # noqa: PLC0415

    for i in np.flatnonzero((values[:-1] < 0) & (values[1:] >= 0)):
        if values[i + 1] == 0:
            minima.append(float(grid[i + 1]))
        else:
            minima.append(optimize.brentq(slope, grid[i], grid[i + 1], xtol=1e-300, rtol=1e-15))
    # No minimum at all happens in the question-mean stratum when question means do not
    # vary within categories (phi -> 0); the constraint phi >= sigma_e^2/K then binds.
    return minima


def _residual_ss(rho: float, st: StrataStats) -> float:
    return float(_oneway_terms(rho, st)["r"][0])


def strata_deviance(variance: dict, st: StrataStats) -> float:
    """Exact :math:`-2\\ell_R` of the complete, balanced model from its strata.

    With :math:`\\sigma_e^2 = \\sigma_w^2 + \\sigma^2/n` and
    :math:`\\varphi = \\sigma_q^2 + \\sigma_e^2/K`,

    .. math::
        -2\\ell_R = (N-p)\\log 2\\pi
          + df_{cell} \\log\\sigma^2 + SS_{cell}/\\sigma^2 + QK\\log n
          + n_w \\log\\sigma_e^2 + p_w \\log(Q/\\sigma_e^2) + SS_w/\\sigma_e^2
          + Q\\log K + (Q - C)\\log\\varphi + \\sum_c \\log(\\varphi + n_c\\tau^2)
          + \\log\\Big(x \\sum_c \\frac{n_c}{\\varphi + n_c\\tau^2}\\Big)
          + \\frac{SS_{bq}}{\\varphi} + \\sum_c \\frac{n_c(\\bar y_c - \\hat\\mu)^2}{\\varphi + n_c\\tau^2}

    with :math:`N = QKn` samples and :math:`n_w = Q(K-1)` within-question
    contrasts. It is the Gaussian REML log-likelihood with the
    :math:`\\log|X^T V^{-1} X|` term and no :math:`\\log|X^T X|` term, as in lme4's
    ``REMLcrit`` (Bates et al. 2015, Eq. 42).
    """
    n, k, c, n_rep = st.n, st.k, st.size.size, st.n_rep
    sigma2 = variance["residual"]
    cell = variance.get("question_model", 0.0) + sigma2 / n_rep
    phi = variance.get("question", 0.0) + cell / k
    total_var = phi + st.size * variance["category"]
    a = st.size / total_var
    mu = np.sum(a * st.mean) / np.sum(a)
    deviance = (
        (n * k - st.n_fixed) * LOG_2PI
        + n * (k - 1) * np.log(cell)
        + st.p_within * np.log(n / cell)
        + st.ss_within / cell
        + n * np.log(k)
        + (n - c) * np.log(phi)
        + np.sum(np.log(total_var))
        + np.log(st.x_scale * np.sum(a))
        + st.ss_between_q / phi
        + np.sum(a * (st.mean - mu) ** 2)
    )
    if n_rep > 1:  # the within-cell stratum and the Jacobian of the cell means
        deviance += (
            st.df_cells * (LOG_2PI + np.log(sigma2)) + st.ss_cells / sigma2 + n * k * np.log(n_rep)
        )
    return float(deviance)


def _pooled_df(st, q) -> float:
    """Degrees of freedom of the pooled residual variance; refused when there are none (one
    question: nothing is left to estimate a variance from)."""
    df = st.df_cells + st.df_within + q - 1
    if df <= 0:
        raise ValueError("too few questions for a mixed model: no residual degrees of freedom")
    return df


def _candidates(st: StrataStats, model_spec: str) -> list:
    """Stationary points of the REML deviance on every face the specification allows.

    Faces by which of :math:`\\sigma_w^2` (``question_model``) and :math:`\\sigma_q^2`
    (``question``) are free; the category ratio is profiled on each face.
    """
    k, q, n_rep = st.k, st.n, st.n_rep
    components = COMPONENTS[model_spec]
    found = []
    # Without a category component the category ratio is pinned at 0 (the question-only
    # models): the same faces, each at rho = 0.
    minima = _local_minima if "category" in components else lambda *_: [0.0]

    def add(residual, question_model, question, category):
        found.append(
            {
                "residual": residual,
                "question_model": question_model,
                "question": question,
                "category": category,
            }
        )

    # sigma_w^2 = sigma_q^2 = 0 (the whole category-only model): one residual variance
    # for all three strata, v = sigma^2 = n K phi.
    pooled_ss = st.ss_cells + n_rep * st.ss_within
    weight, df = n_rep * k, _pooled_df(st, q)
    for rho in minima(st, pooled_ss, weight, df):
        sigma2 = (pooled_ss + weight * _residual_ss(rho, st)) / df
        add(sigma2, 0.0, 0.0, rho * sigma2 / weight)
    if "question" in components:
        # sigma_w^2 = 0, sigma_q^2 > 0: sigma^2 pools the within-cell and within-question
        # strata; the question means have phi of their own.
        sigma2 = pooled_ss / (st.df_cells + st.df_within)
        for rho in minima(st, 0.0, 1.0, q - 1):
            phi = _residual_ss(rho, st) / (q - 1)
            if phi > sigma2 / weight:
                add(sigma2, 0.0, phi - sigma2 / weight, rho * phi)
    if "question_model" in components:
        sigma2 = st.ss_cells / st.df_cells
        # sigma_q^2 = 0, sigma_w^2 > 0: the cell means' category-only fit, sigma_e^2 = K phi.
        for rho in minima(st, st.ss_within, k, st.df_within + q - 1):
            cell = (st.ss_within + k * _residual_ss(rho, st)) / (st.df_within + q - 1)
            if cell > sigma2 / n_rep:
                add(sigma2, cell - sigma2 / n_rep, 0.0, rho * cell / k)
        # every component interior: the three strata separate.
        cell = st.ss_within / st.df_within
        if cell > sigma2 / n_rep:
            for rho in minima(st, 0.0, 1.0, q - 1):
                phi = _residual_ss(rho, st) / (q - 1)
                if phi > cell / k:
                    add(sigma2, cell - sigma2 / n_rep, phi - cell / k, rho * phi)
    return found


def exact_variances(st: StrataStats, model_spec: str) -> dict:
    """REML estimates ``{"residual", "question_model", "question", "category", "deviance"}``.

    Components the specification does not have are 0. See the module docstring.
    """
    if "question" in COMPONENTS[model_spec] and st.ss_within + st.ss_cells <= 0:
        # Without within-question variation the question and residual variances cannot be
        # told apart; the category-only model is still defined (its residual pools both).
        raise ValueError("no within-question variation: every model scores alike on each question")
    candidates = _candidates(st, model_spec)
    if not candidates:
        raise RuntimeError("the REML deviance has no minimum over the variance components")
    best, deviance = prefer_boundary([(v, strata_deviance(v, st)) for v in candidates])
    return best | {"deviance": deviance}


def fit_exact(
    means: np.ndarray,
    codes: np.ndarray,
    model_spec: str,
    intercept_only=False,
    n_rep: int = 1,
    ss_cells: float = 0.0,
    st: StrataStats | None = None,
):
    """Fixed effects, their covariance and the variance estimates on the exact path.

    Parameters
    ----------
    means : ndarray, shape (Q, K)
        Complete cell means, ``n_rep`` samples in every cell.
    codes : ndarray of int, shape (Q,)
        Category codes 0 .. C-1, every code present.
    model_spec : str
    intercept_only : bool
        One common mean instead of one mean per column.
    n_rep : int
        Samples per cell.
    ss_cells : float
        Pooled within-cell sum of squares.
    st : StrataStats, optional
        :func:`strata_stats` of these arguments, when the caller has it (another
        specification fitted to the same data).

    Returns
    -------
    fixed, cov, est
        GLS fixed effects, their covariance and :func:`exact_variances`. The contrasts
        are the column-mean contrasts (OLS = GLS within questions) with covariance
        :math:`(\\hat\\sigma_e^2/Q)(I - J/K)`; the level is the GLS mean of the
        question means, :math:`\\hat\\mu = \\sum_c a_c \\bar y_c / \\sum_c a_c`,
        :math:`a_c = n_c/(\\varphi + n_c\\tau^2)`, with variance :math:`1/\\sum_c a_c`.
    """
    st = strata_stats(means, codes, intercept_only, n_rep, ss_cells) if st is None else st
    est = exact_variances(st, model_spec)
    cell = est["question_model"] + est["residual"] / n_rep
    phi = est["question"] + cell / st.k
    a = st.size / (phi + st.size * est["category"])
    level = np.sum(a * st.mean) / np.sum(a)
    k, n = st.k, st.n
    if intercept_only:
        return np.array([level]), np.array([[1.0 / np.sum(a)]]), est
    column_mean = means.mean(axis=0)
    fixed = column_mean - column_mean.mean() + level
    # (cell / n) (I - J/K) + J / sum(a), element by element (no K x K temporaries).
    scale, common = cell / n, 1.0 / np.sum(a)
    cov = np.full((k, k), scale * (0.0 - 1.0 / k) + common)
    np.fill_diagonal(cov, scale * (1.0 - 1.0 / k) + common)
    return fixed, cov, est
