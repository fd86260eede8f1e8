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
No N x N (or cells x cells) matrix is formed; each evaluation costs a few passes
over the (questions x models) matrix and two (questions x K) by (K x K) products.
With one sample per cell and :math:`\\gamma_w = 0`, :math:`\\omega` is the 0/1
pattern of observed cells and this is the two-component model of lme4's
``(1|category) + (1|category:question)`` on one row per (model, question).

The profiled deviance (:math:`\\hat\\sigma^2 = (r + SS_{cell})/(N-p)`) and its
analytic gradient in the ratios are minimised by Newton's method from the exact
fit of the complete, balanced questions (Hessian by central differences of the
analytic gradient), or by L-BFGS-B with bounds at zero when there is no such
start or Newton leaves the interior; each small ratio is then checked by
refitting with it pinned at zero (Bates et al. 2015, Sec. 3, profile the same
criterion over the relative covariance factors).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from .common import COMPONENTS, LOG_2PI, Cells, prefer_boundary
from .exact import fit_exact

__all__ = ["RATIOS", "GeneralData", "general_data", "profiled", "general_deviance", "fit_general"]

#: The variance ratios (to the residual variance) that each specification fits, in order.
RATIOS = {spec: names[:-1] for spec, names in COMPONENTS.items()}
#: Ratios below this after the first fit are checked by a refit pinned at zero.
_SMALL_RATIO = 1e-2


@dataclass(frozen=True)
class GeneralData:
    """The cells, with questions sorted by category (the fit does not depend on the order).

    ``counts`` and ``means`` are (Q, K), 0 in empty cells; ``starts`` holds the first
    row of each category, so that :meth:`by_category` is one ``np.add.reduceat``.
    """

    counts: np.ndarray
    means: np.ndarray
    observed: np.ndarray
    codes: np.ndarray
    starts: np.ndarray
    ss_cells: float
    n_obs: int

    @property
    def n_fixed(self) -> int:
        return self.counts.shape[1]

    def by_category(self, values: np.ndarray) -> np.ndarray:
        """Sums over the questions of each category (rows of a 1-D or 2-D array)."""
        return np.add.reduceat(values, self.starts, axis=0)


def general_data(cells: Cells) -> GeneralData:
    """:class:`GeneralData` of the cells that enter a fit."""
    order = np.argsort(cells.codes, kind="stable")
    codes = cells.codes[order]
    counts = cells.counts[order].astype(float)
    observed = counts > 0
    return GeneralData(
        counts=counts,
        means=np.where(observed, cells.means[order], 0.0),
        observed=observed,
        codes=codes,
        starts=np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]),
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

    Returns the weights and sums named as in the module docstring (``omega``, ``w``
    for :math:`W_q`, ``big_d``, ``a``, ``s_c``, ``big_e``, ``g``, ``h`` for
    :math:`T_c` of the model indicators, (C, K)), :math:`X^T V_0^{-1} X` and its
    Cholesky factor ``chol``, the GLS ``beta``, ``r`` and the two log-determinants.
    """
    gamma_c, gamma_q, gamma_w = ratios["category"], ratios["question"], ratios["question_model"]
    omega = d.counts / (1.0 + d.counts * gamma_w) if gamma_w else d.counts
    w = omega.sum(axis=1)
    big_d = 1.0 + gamma_q * w
    a = gamma_q / big_d
    weighted_y = omega * d.means
    t_y = weighted_y.sum(axis=1)
    s_c = d.by_category(w / big_d)
    big_e = 1.0 + gamma_c * s_c
    g = gamma_c / big_e
    h = d.by_category(omega / big_d[:, None])
    t_cy = d.by_category(t_y / big_d)
    xtvx = np.diag(omega.sum(axis=0)) - (omega * a[:, None]).T @ omega - (h * g[:, None]).T @ h
    xtvy = weighted_y.sum(axis=0) - omega.T @ (a * t_y) - h.T @ (g * t_cy)
    ytvy = np.sum(weighted_y * d.means) - np.sum(a * t_y**2) - np.sum(g * t_cy**2)
    chol = linalg.cho_factor(xtvx, lower=True)
    beta = linalg.cho_solve(chol, xtvy)
    logdet_v = np.sum(np.log(big_d)) + np.sum(np.log(big_e))
    if gamma_w:
        logdet_v += np.sum(np.log1p(d.counts[d.observed] * gamma_w))
    return {
        "omega": omega,
        "w": w,
        "big_d": big_d,
        "a": a,
        "t_y": t_y,
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
    and, for :math:`D_w`, the rows :math:`\\omega_{qm}(e_m - u_q)` of :math:`V_0^{-1}X` with
    :math:`u_q = a_q\\omega_q + (g_c/D_q) h_c`.
    """
    ratios = _ratios(gamma, spec)
    p = _pieces(ratios, d)
    dof = d.n_obs - d.n_fixed
    total = p["r"] + d.ss_cells
    dev = p["logdet_v"] + p["logdet_x"] + dof * (1.0 + LOG_2PI + np.log(total / dof))
    omega, big_d, big_e, g, h = p["omega"], p["big_d"], p["big_e"], p["g"], p["h"]
    f_inv = linalg.cho_solve(p["chol"], np.eye(d.n_fixed))
    # P y = V0^{-1} e with e = y - X beta; its question sums t_q(e) and category sums T_c(e)
    e_q = p["t_y"] - omega @ p["beta"]
    e_c = d.by_category(e_q / big_d)
    grad = {}
    hc = h / big_e[:, None]
    grad["category"] = (
        np.sum(p["s_c"] / big_e)
        - np.sum((hc @ f_inv) * hc)
        - dof * np.sum((e_c / big_e) ** 2) / total
    )
    if spec == "category":
        return float(dev), np.array([grad["category"]])
    g_q, h_q, e_cq = g[d.codes], h[d.codes], e_c[d.codes]  # category values, per question
    wd = p["w"] / big_d
    gq = omega / big_d[:, None] - (g_q * wd)[:, None] * h_q
    py_q = e_q / big_d - g_q * wd * e_cq
    grad["question"] = (
        np.sum(wd - g_q * wd**2) - np.sum((gq @ f_inv) * gq) - dof * np.sum(py_q**2) / total
    )
    if "question_model" in RATIOS[spec]:
        omega2 = omega**2
        s2 = omega2.sum(axis=1)
        trace_v = np.sum(p["w"]) - np.sum(p["a"] * s2) - np.sum(g_q * s2 / big_d**2)
        u = p["a"][:, None] * omega + (g_q / big_d)[:, None] * h_q
        uf = u @ f_inv
        # tr(F^{-1} X' V0^{-2} X), X' V0^{-2} X = diag(sum_q omega^2) - O'U - U'O + U' diag(s2) U
        trace_x = (
            np.sum(np.diag(f_inv) * omega2.sum(axis=0))
            - 2.0 * np.sum(omega2 * uf)
            + np.sum(s2 * np.sum(u * uf, axis=1))
        )
        py = omega * (d.means - p["beta"][None, :] - (p["a"] * e_q + g_q * e_cq / big_d)[:, None])
        grad["question_model"] = trace_v - trace_x - dof * np.sum(py**2) / total
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


def _newton(objective, x, dev, grad, max_steps: int = 30):
    """Newton's method in the interior, from ``x``; ``(x, dev, converged)``.

    The Hessian is the forward difference of the analytic gradient (one gradient per
    ratio). A step is halved until it stays inside (all ratios > 0) and does not
    raise the deviance beyond rounding. Converged after a full step that moved every
    ratio by at most 1e-6 of its value: convergence is quadratic, so the ratios are
    then exact to about 1e-11 relative (the Hessian's own relative error, ~1e-6,
    times the step). Not converged when the Hessian is not positive definite or no
    step helps: the caller then falls back to L-BFGS-B.
    """
    for _ in range(max_steps):
        steps = 1e-6 * x
        hessian = np.column_stack(
            [
                (objective(x + h * e)[1] - grad) / h
                for h, e in zip(steps, np.eye(x.size), strict=True)
            ]
        )
        try:
            step = linalg.cho_solve(linalg.cho_factor((hessian + hessian.T) / 2), grad)
        except linalg.LinAlgError:
            return x, dev, False
        small = bool(np.all(np.abs(step) <= 1e-6 * x))
        scale = 1.0
        while True:
            candidate = x - scale * step
            if np.all(candidate > 0):
                new_dev, new_grad = objective(candidate)
                if new_dev <= dev + 1e-13 * abs(dev):
                    break
            if small:  # the deviance is flat to rounding here: this is the optimum
                return x, dev, True
            scale /= 2
            if scale < 1e-3:
                return x, dev, False
        x, dev, grad = candidate, new_dev, new_grad
        if small and scale == 1.0:
            return x, dev, True
    return x, dev, False


def _minimise(d: GeneralData, spec: str, fixed_zero: tuple = (), start=None):
    """Minimise the profiled deviance over the free ratios; ``fixed_zero`` pins ratios at 0.

    Newton from ``start`` when it is given; else, or when Newton does not converge,
    L-BFGS-B with bounds at 0 from ``start`` (or ratios 1, as lme4 starts), stopped once an
    iteration gains less than 1e-10 of the deviance, followed by Newton steps on the ratios
    it leaves above zero (the others pinned at zero).
    """
    n_par = len(RATIOS[spec])
    free = [j for j in range(n_par) if j not in fixed_zero]

    def full(x):
        gamma = np.zeros(n_par)
        gamma[free] = x
        return gamma

    if not free:
        return np.zeros(n_par), profiled(np.zeros(n_par), d, spec)[0]

    def objective(x):
        dev, grad = profiled(full(x), d, spec)
        return dev, grad[free]

    x0 = np.ones(len(free)) if start is None else np.maximum(np.asarray(start)[free], 1e-3)
    if start is not None:
        x, dev, converged = _newton(objective, x0, *objective(x0))
        if converged:
            return full(x), dev
    result = optimize.minimize(
        objective,
        x0=x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(free),
        options={"ftol": 1e-10, "gtol": 1e-10, "maxiter": 1000},
    )
    x, dev = result.x, float(result.fun)
    if np.all(x > 0):
        x, dev, _ = _newton(objective, x, *objective(x))
        return full(x), dev
    # ratios at the bound: Newton on the others, with these pinned at zero
    at_zero = tuple(j for j, value in zip(free, x, strict=True) if value <= 0)
    return _minimise(d, spec, tuple(fixed_zero) + at_zero, start=full(x))


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
    """Fixed effects, their covariance and the variance estimates on the general path."""
    d = general_data(cells)
    n_par = len(RATIOS[model_spec])
    candidates = [_minimise(d, model_spec, start=_start(cells, model_spec))]
    # Boundaries exactly: where a ratio ends up small, refit with it (and with every other
    # small one) pinned at zero, and keep the better fit.
    first = candidates[0][0]
    small = [j for j in range(n_par) if first[j] < _SMALL_RATIO]
    pins = [c for r in range(1, len(small) + 1) for c in itertools.combinations(small, r)]
    candidates += [_minimise(d, model_spec, pin, start=first) for pin in pins]
    gamma, deviance = prefer_boundary(candidates)
    ratios = _ratios(gamma, model_spec)
    pieces = _pieces(ratios, d)
    sigma2 = (pieces["r"] + d.ss_cells) / (d.n_obs - d.n_fixed)
    est = {name: ratio * sigma2 for name, ratio in ratios.items()}
    est |= {"residual": sigma2, "deviance": deviance}
    cov = sigma2 * linalg.cho_solve(pieces["chol"], np.eye(d.n_fixed))
    return pieces["beta"], cov, est
