"""The Laplace-approximated deviance of the nested logistic mixed model, on any cell layout.

:class:`_Laplace` evaluates the deviance, its exact gradient and the block system of the
modes (PIRLS) for cells in any pattern; :class:`evalbars.stats.logistic.grid_laplace._GridLaplace`
specialises it to a complete question x model grid. The model, the notation and the algebra
are in :mod:`evalbars.stats.logistic.glmm`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from evalbars.stats.logistic.cells import (
    _category_sum,
    _Cells,
    _dot,
    _grid_logistic,
    _logistic_terms,
    _sum_rows,
)
from evalbars.stats.optimize import forward_difference_hessian

#: Positions of the variance parameters and of the fixed effects in the packed vector
#: ``(theta_question, theta_category, beta)`` (of :meth:`_Params.pack`, ``GlmmFit.hessian``
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
