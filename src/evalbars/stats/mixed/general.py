"""General path: any missingness and any number of samples per cell.

The REML deviance is computed from the cells: a cell (question q, model m) with
:math:`n_{qm}` samples reduces to its mean :math:`\\bar y_{qm}` and its
within-cell sum of squares. An orthonormal basis inside each cell (Helmert)
splits the samples into the scaled mean :math:`\\sqrt{n_{qm}}\\,\\bar y_{qm}` and
:math:`n_{qm} - 1` contrasts that carry :math:`\\sigma^2` alone (their fixed and
random effects are constant within the cell). REML is invariant under the
orthonormal change and under the rescaling back to :math:`\\bar y_{qm}` (up to
:math:`\\sum \\log n_{qm}`), so

.. math::
    -2\\ell_R = (N - p)\\log(2\\pi\\sigma^2) + \\log|V_0| + \\sum_{qm}\\log n_{qm}
      + \\log|X^T V_0^{-1} X| + (r + SS_{cell})/\\sigma^2,

with :math:`\\sigma^2 V_0` the covariance of the cell means,

.. math::
    V_0 = \\Omega^{-1} + \\gamma_q Z_q Z_q^T + \\gamma_c Z_c Z_c^T, \\qquad
    \\Omega = \\mathrm{diag}(\\omega_{qm}), \\quad
    \\omega_{qm} = \\frac{1}{\\gamma_w + 1/n_{qm}} = \\frac{n_{qm}}{1 + n_{qm}\\gamma_w},

:math:`\\gamma_c = \\tau^2/\\sigma^2`, :math:`\\gamma_q = \\sigma_q^2/\\sigma^2`,
:math:`\\gamma_w = \\sigma_w^2/\\sigma^2` (0 in the specifications without a
model-by-question term), :math:`r = \\bar y^T P \\bar y` the GLS residual
quadratic form, :math:`N` the number of samples and :math:`p = K`. So
:math:`\\log|V_0| + \\sum\\log n_{qm} = \\sum_{qm}\\log(1 + n_{qm}\\gamma_w) +
\\sum_q \\log D_q + \\sum_c \\log E_c` below.

Everything is computed from per-question and per-category sums through the
Woodbury identity (Harville 1977; Searle, Casella & McCulloch 1992, Ch. 6):
inside question q, :math:`A_q^{-1} = \\Omega_q - a_q\\,\\omega_q\\omega_q^T` with
:math:`W_q = \\sum_m \\omega_{qm}`, :math:`D_q = 1 + \\gamma_q W_q`,
:math:`a_q = \\gamma_q/D_q`; over category c,
:math:`s_c = \\sum_{q \\in c} W_q/D_q`, :math:`E_c = 1 + \\gamma_c s_c`,
:math:`g_c = \\gamma_c/E_c`, and for any cell vectors u, v

.. math::
    u^T V_0^{-1} v = \\sum_{qm} \\omega_{qm} u_{qm} v_{qm} - \\sum_q a_q t_q(u) t_q(v)
        - \\sum_c g_c T_c(u) T_c(v),

:math:`t_q(u) = \\sum_m \\omega_{qm} u_{qm}`, :math:`T_c(u) = \\sum_{q \\in c} t_q(u)/D_q`.
No N x N (or cells x cells) matrix is formed. Questions of one category whose cells
hold the same numbers of samples (a *pattern*, :class:`GeneralData`) share every
weight, so an evaluation costs a few (patterns x K) by (K x K) products and a few
passes over per-question vectors, whatever the number of models: all 29 MMLU-Pro
archives (12,032 questions) have 36 patterns. With one sample per cell and
:math:`\\gamma_w = 0`, :math:`\\omega` is the 0/1 pattern of observed cells and this is
the two-component model of lme4's ``(1|category) + (1|category:question)`` on one row
per (model, question).

The profiled deviance (:math:`\\hat\\sigma^2 = (r + SS_{cell})/(N-p)`) and its
analytic gradient in the ratios are minimised by Newton's method from the exact
fit of the complete, balanced questions (Hessian by forward differences of the
analytic gradient), or by L-BFGS-B with bounds at zero when there is no such
start or Newton leaves the interior; each small ratio is then checked by
refitting with it pinned at zero. (lme4 minimises the same profiled criterion over
the relative covariance factors with a derivative-free optimiser; Bates et al. 2015,
Sec. 3.)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from evalbars.stats.mixed.common import COMPONENTS, LOG_2PI, Cells, prefer_boundary
from evalbars.stats.mixed.exact import fit_exact
from evalbars.stats.optimize import FreeCoordinates, interior_newton

__all__ = ["RATIOS", "GeneralData", "general_data", "profiled", "general_deviance", "fit_general"]

#: The variance ratios (to the residual variance) that each specification fits, in order.
RATIOS = {spec: names[:-1] for spec, names in COMPONENTS.items()}
#: Ratios below this after the first fit are checked by a refit pinned at zero.
_SMALL_RATIO = 1e-2


@dataclass(frozen=True)
class GeneralData:
    """The cells, summarised by pattern and by sample count.

    A *pattern* is a category and a row of sample counts: questions of one pattern share
    every weight (:math:`\\omega_q`, :math:`W_q`, :math:`D_q`, :math:`a_q`), so the weights
    are computed per pattern and the data enter through per-question weighted sums
    :math:`t_q(\\bar y) = \\sum_m \\omega_{qm}\\bar y_{qm}`. Since :math:`\\omega_{qm}` depends on
    the cell only through :math:`n_{qm}`, :math:`t_q = \\sum_l \\omega(l)\\, S_{ql}` with
    :math:`S_{ql}` the sum of question q's cell means with l samples.

    Attributes
    ----------
    pattern : ndarray of int, shape (Q,)
        Pattern of each question.
    counts : ndarray, shape (P, K)
        Samples per cell of each pattern (0 in empty cells).
    size : ndarray, shape (P,)
        Questions per pattern, :math:`N_p`.
    codes : ndarray of int, shape (P,)
        Category of each pattern (patterns sorted by category; ``starts`` holds the first
        pattern of each category, so that :meth:`by_category` is one ``np.add.reduceat``).
    levels : ndarray, shape (L,)
        The distinct numbers of samples in a cell, l.
    level_sums : ndarray, shape (Q, L)
        :math:`S_{ql}`.
    level_model_sums : ndarray, shape (L, K)
        Sum of model m's cell means with l samples.
    level_squares : ndarray, shape (L,)
        Sum of the squared cell means with l samples.
    ss_cells : float
        Within-cell sum of squares.
    n_obs : int
        Samples, N.
    """

    pattern: np.ndarray
    counts: np.ndarray
    size: np.ndarray
    codes: np.ndarray
    starts: np.ndarray
    levels: np.ndarray
    level_sums: np.ndarray
    level_model_sums: np.ndarray
    level_squares: np.ndarray
    ss_cells: float
    n_obs: int

    @property
    def n_fixed(self) -> int:
        return self.counts.shape[1]

    def by_category(self, values: np.ndarray) -> np.ndarray:
        """Sums over the patterns of each category (rows of a 1-D or 2-D array)."""
        return np.add.reduceat(values, self.starts, axis=0)

    def by_pattern(self, values: np.ndarray) -> np.ndarray:
        """Sums over the questions of each pattern of a per-question vector."""
        return np.bincount(self.pattern, weights=values, minlength=self.size.size)


def _distinct_rows(key: np.ndarray):
    """Distinct rows of an integer matrix in lexicographic order, the row of each input row
    among them, and how often each occurs (``np.unique(axis=0)``, by one ``lexsort``)."""
    order = np.lexsort(key.T[::-1])
    ordered = key[order]
    first = np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)]
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse, np.bincount(inverse)


def general_data(cells: Cells) -> GeneralData:
    """:class:`GeneralData` of the cells that enter a fit."""
    keys, pattern, size = _distinct_rows(np.column_stack([cells.codes, cells.counts]))
    codes = keys[:, 0]  # rows sort by category first
    levels = np.unique(cells.counts[cells.observed])
    n_questions, n_models = cells.counts.shape
    q, m = np.nonzero(cells.observed)
    level = np.searchsorted(levels, cells.counts[q, m])
    y = cells.means[q, m]
    return GeneralData(
        pattern=pattern,
        counts=keys[:, 1:].astype(float),
        size=size.astype(float),
        codes=codes,
        starts=np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]),
        levels=levels.astype(float),
        level_sums=np.bincount(
            q * levels.size + level, weights=y, minlength=n_questions * levels.size
        ).reshape(n_questions, levels.size),
        level_model_sums=np.bincount(
            level * n_models + m, weights=y, minlength=levels.size * n_models
        ).reshape(levels.size, n_models),
        level_squares=np.bincount(level, weights=y**2, minlength=levels.size),
        ss_cells=cells.ss_cells,
        n_obs=cells.n_obs,
    )


def _ratios(gamma, spec: str) -> dict:
    """``{"category", "question", "question_model"}`` ratios, 0 where the spec has none."""
    values = dict.fromkeys(("category", "question", "question_model"), 0.0)
    values.update(zip(RATIOS[spec], np.asarray(gamma, dtype=float), strict=True))
    return values


def _pieces(ratios: dict, d: GeneralData) -> dict:
    """Woodbury pieces of the REML deviance at the given ratios (see the module docstring).

    Per pattern: ``omega`` (P, K), ``w`` :math:`W`, ``big_d``, ``a``; per category:
    ``s_c``, ``big_e``, ``g`` and ``h``, :math:`T_c` of the model indicators (C, K); per
    question ``t_y`` :math:`t_q(\\bar y)` and per pattern its sums ``t_p`` and ``tt_p``
    (of squares); :math:`X^T V_0^{-1} X` by its Cholesky factor ``chol``, the GLS
    ``beta``, ``r`` and the two log-determinants. Sums over questions of per-pattern
    terms are sums over patterns weighted by ``d.size``.
    """
    gamma_c, gamma_q, gamma_w = ratios["category"], ratios["question"], ratios["question_model"]
    size = d.size
    omega = d.counts / (1.0 + d.counts * gamma_w)
    omega_level = d.levels / (1.0 + d.levels * gamma_w)
    w = omega.sum(axis=1)
    big_d = 1.0 + gamma_q * w
    a = gamma_q / big_d
    t_y = d.level_sums @ omega_level
    t_p, tt_p = d.by_pattern(t_y), d.by_pattern(t_y**2)
    s_c = d.by_category(size * w / big_d)
    big_e = 1.0 + gamma_c * s_c
    g = gamma_c / big_e
    h = d.by_category((size / big_d)[:, None] * omega)
    t_cy = d.by_category(t_p / big_d)
    xtvx = np.diag(size @ omega) - (omega * (size * a)[:, None]).T @ omega - (h * g[:, None]).T @ h
    xtvy = omega_level @ d.level_model_sums - omega.T @ (a * t_p) - h.T @ (g * t_cy)
    ytvy = omega_level @ d.level_squares - np.sum(a * tt_p) - np.sum(g * t_cy**2)
    chol = linalg.cho_factor(xtvx, lower=True)
    beta = linalg.cho_solve(chol, xtvy)
    logdet_v = (
        size @ np.log(big_d)
        + np.sum(np.log(big_e))
        + size @ np.log1p(d.counts * gamma_w).sum(axis=1)
    )
    return {
        "omega": omega,
        "omega_level": omega_level,
        "w": w,
        "big_d": big_d,
        "a": a,
        "t_y": t_y,
        "t_p": t_p,
        "tt_p": tt_p,
        "s_c": s_c,
        "big_e": big_e,
        "g": g,
        "h": h,
        "chol": chol,
        "beta": beta,
        "r": float(ytvy - beta @ xtvy),
        "logdet_v": float(logdet_v),
        "logdet_x": float(2.0 * np.sum(np.log(np.diag(chol[0])))),
    }


def profiled(gamma: np.ndarray, d: GeneralData, spec: str):
    """Profiled REML deviance (:math:`\\sigma^2 = R/(N-p)`) and its gradient in ``gamma``.

    :math:`d(\\gamma) = \\log|V_0| + \\sum\\log n_{qm} + \\log|X^T V_0^{-1} X| + (N-p)(1 +
    \\log(2\\pi R/(N-p)))` with :math:`R = r + SS_{cell}` (lme4's profiled REML criterion);
    :math:`\\partial d/\\partial\\gamma_j = \\mathrm{tr}(P D_j) - (N-p)\\, (Py)^T D_j (Py) / R`
    (Harville 1977) with :math:`P = V_0^{-1} - V_0^{-1}X(X^TV_0^{-1}X)^{-1}X^TV_0^{-1}`,
    :math:`D_c = Z_c Z_c^T`, :math:`D_q = Z_q Z_q^T` and :math:`D_w = I` (the cells).
    The traces and quadratic forms use :math:`\\mathbf 1_c^T V_0^{-1}\\mathbf 1_c = s_c/E_c`,
    :math:`\\mathbf 1_c^T V_0^{-1}X = h_c/E_c`, :math:`\\mathbf 1_q^T V_0^{-1}\\mathbf 1_q =
    W_q/D_q - g_c W_q^2/D_q^2`, :math:`\\mathbf 1_q^T V_0^{-1}X = \\omega_q/D_q - g_c (W_q/D_q) h_c`,
    :math:`\\mathbf 1_c^T Py = T_c(e)/E_c`, :math:`\\mathbf 1_q^T Py = t_q(e)/D_q - g_c
    (W_q/D_q) T_c(e)` with :math:`e = \\bar y - X\\hat\\beta`; for :math:`D_w`, the rows
    :math:`\\omega_{qm}(e_m - u_q)` of :math:`V_0^{-1}X` with :math:`u_q = a_q\\omega_q +
    (g_c/D_q) h_c`, and :math:`(Py)_{qm} = \\omega_{qm}(e_{qm} - c_q)` with
    :math:`c_q = a_q t_q(e) + (g_c/D_q) T_c(e)`.
    """
    ratios = _ratios(gamma, spec)
    p = _pieces(ratios, d)
    dof = d.n_obs - d.n_fixed
    total = p["r"] + d.ss_cells
    dev = p["logdet_v"] + p["logdet_x"] + dof * (1.0 + LOG_2PI + np.log(total / dof))
    size, omega, big_d, big_e, g, h = d.size, p["omega"], p["big_d"], p["big_e"], p["g"], p["h"]
    f_inv = linalg.cho_solve(p["chol"], np.eye(d.n_fixed))
    # t_q(e) = t_q(y) - omega_q . beta, summed per pattern (e_p) and as squares (ee_p)
    fitted = omega @ p["beta"]
    e_p = p["t_p"] - size * fitted
    ee_p = p["tt_p"] - 2.0 * fitted * p["t_p"] + size * fitted**2
    e_c = d.by_category(e_p / big_d)  # T_c(e)
    grad = {}
    hc = h / big_e[:, None]
    grad["category"] = (
        np.sum(p["s_c"] / big_e)
        - np.sum((hc @ f_inv) * hc)
        - dof * np.sum((e_c / big_e) ** 2) / total
    )
    if spec == "category":
        return float(dev), np.array([grad["category"]])
    g_p, h_p, e_cp = g[d.codes], h[d.codes], e_c[d.codes]  # category values, per pattern
    wd = p["w"] / big_d
    gq = omega / big_d[:, None] - (g_p * wd)[:, None] * h_p
    shift = g_p * wd * e_cp  # 1_q' P y = t_q(e) / D_q - shift
    py_q = ee_p / big_d**2 - 2.0 * shift * e_p / big_d + size * shift**2
    grad["question"] = (
        size @ (wd - g_p * wd**2)
        - size @ np.sum((gq @ f_inv) * gq, axis=1)
        - dof * np.sum(py_q) / total
    )
    if "question_model" in RATIOS[spec]:
        a = p["a"]
        omega2 = omega**2
        s2 = omega2.sum(axis=1)
        trace_v = size @ (p["w"] - a * s2 - g_p * s2 / big_d**2)
        u = a[:, None] * omega + (g_p / big_d)[:, None] * h_p
        uf = u @ f_inv
        # tr(F^{-1} X' V0^{-2} X), X' V0^{-2} X = diag(sum_q omega^2) - O'U - U'O + U' diag(s2) U
        trace_x = (
            np.diag(f_inv) @ (size @ omega2)
            - 2.0 * size @ np.sum(omega2 * uf, axis=1)
            + size @ (s2 * np.sum(u * uf, axis=1))
        )
        # |Py|^2 = sum_qm omega^2 (y - beta)^2 - 2 sum_q c_q sum_m omega^2 (y - beta) + c_q^2 s2
        level2 = p["omega_level"] ** 2
        beta = p["beta"]
        square = (
            level2 @ d.level_squares
            - 2.0 * level2 @ (d.level_model_sums @ beta)
            + size @ (omega2 @ beta**2)
        )
        q = d.pattern
        c_q = a[q] * (p["t_y"] - fitted[q]) + (g_p / big_d)[q] * e_cp[q]
        cross = d.level_sums @ level2 - (omega2 @ beta)[q]
        py2 = square - 2.0 * c_q @ cross + (c_q**2) @ s2[q]
        grad["question_model"] = trace_v - trace_x - dof * py2 / total
    return float(dev), np.array([grad[name] for name in RATIOS[spec]])


def general_deviance(variance: dict, d: GeneralData) -> float:
    """:math:`-2\\ell_R` at given variances (not profiled), for fits made elsewhere."""
    sigma2 = variance["residual"]
    ratios = {
        name: variance.get(name, 0.0) / sigma2
        for name in ("category", "question", "question_model")
    }
    p = _pieces(ratios, d)
    return float(
        (d.n_obs - d.n_fixed) * (np.log(sigma2) + LOG_2PI)
        + p["logdet_v"]
        + p["logdet_x"]
        + (p["r"] + d.ss_cells) / sigma2
    )


# --------------------------------------------------------------------------------------
# Minimisation
# --------------------------------------------------------------------------------------


def _minimise(d: GeneralData, spec: str, fixed_zero: tuple = (), start=None):
    """Minimise the profiled deviance over the free ratios; ``fixed_zero`` pins ratios at 0.

    Newton from ``start`` when it is given; else, or when Newton does not converge,
    L-BFGS-B with bounds at 0 from ``start`` (or ratios 1, as lme4 starts), stopped once an
    iteration gains less than 1e-10 of the deviance, followed by Newton steps on the ratios
    it leaves above zero (the others pinned at zero). Returns ``(gamma, deviance, converged)``.
    """
    n_par = len(RATIOS[spec])
    space = FreeCoordinates.pinned(n_par, fixed_zero)
    if not space.free.any():
        return np.zeros(n_par), profiled(np.zeros(n_par), d, spec)[0], True
    objective = space.objective(lambda gamma: profiled(gamma, d, spec))

    x0 = (
        np.ones(int(space.free.sum())) if start is None else np.maximum(space.restrict(start), 1e-3)
    )
    if start is not None:
        x, dev, converged = interior_newton(objective, x0, *objective(x0))
        if converged:
            return space.embed(x), dev, True
    # imported here: scipy.optimize is a tenth of a second of start-up, and the jobs that only
    # read the mixed models' tables import this package without fitting
    from scipy import optimize  # noqa: PLC0415

    result = optimize.minimize(
        objective,
        x0=x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * x0.size,
        options={"ftol": 1e-10, "gtol": 1e-10, "maxiter": 1000},
    )
    x, dev = result.x, float(result.fun)
    if np.all(x > 0):
        x, dev, converged = interior_newton(objective, x, *objective(x))
        return space.embed(x), dev, converged or bool(result.success)
    # ratios at the bound: Newton on the others, with these pinned at zero
    free = np.flatnonzero(space.free)
    at_zero = tuple(int(j) for j, value in zip(free, x, strict=True) if value <= 0)
    return _minimise(d, spec, tuple(fixed_zero) + at_zero, start=space.embed(x))


def _start(cells: Cells, spec: str):
    """Starting ratios: the exact fit on the questions whose cells are complete and balanced.

    Those are the questions whose every cell holds the most common number of samples.
    None (start at ratios 1, as lme4 does) when that is every question, so that the general
    path stays an independent check of the exact path, or when they cannot be fitted.
    """
    n_rep = int(np.bincount(cells.counts[cells.observed]).argmax())
    chosen = (cells.counts == n_rep).all(axis=1)
    if chosen.all() or not chosen.any() or (n_rep == 1 and "question_model" in RATIOS[spec]):
        return None
    try:
        codes = np.unique(cells.codes[chosen], return_inverse=True)[1]
        ss_cells = float(cells.within[chosen].sum())
        _, _, est = fit_exact(cells.means[chosen], codes, spec, n_rep=n_rep, ss_cells=ss_cells)
    except (ValueError, RuntimeError, IndexError):
        return None
    return np.array([est[name] / est["residual"] for name in RATIOS[spec]])


def fit_general(cells: Cells, model_spec: str):
    """Fixed effects, their covariance, the variance estimates and whether the chosen fit
    converged, on the general path."""
    d = general_data(cells)
    n_par = len(RATIOS[model_spec])
    fits = [_minimise(d, model_spec, start=_start(cells, model_spec))]
    # Boundaries exactly: where a ratio ends up small, refit with it (and with every other
    # small one) pinned at zero, and keep the better fit.
    first = fits[0][0]
    small = [j for j in range(n_par) if first[j] < _SMALL_RATIO]
    pins = [c for r in range(1, len(small) + 1) for c in itertools.combinations(small, r)]
    fits += [_minimise(d, model_spec, pin, start=first) for pin in pins]
    candidates = [(gamma, deviance) for gamma, deviance, _ in fits]
    chosen = prefer_boundary(candidates)
    gamma, deviance = chosen
    converged = next(fit[2] for fit, c in zip(fits, candidates, strict=True) if c is chosen)
    ratios = _ratios(gamma, model_spec)
    pieces = _pieces(ratios, d)
    sigma2 = (pieces["r"] + d.ss_cells) / (d.n_obs - d.n_fixed)
    est = {name: ratio * sigma2 for name, ratio in ratios.items()}
    est |= {"residual": sigma2, "deviance": deviance}
    cov = sigma2 * linalg.cho_solve(pieces["chol"], np.eye(d.n_fixed))
    return pieces["beta"], cov, est, bool(converged)
