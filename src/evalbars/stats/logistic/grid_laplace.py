"""The Laplace deviance on a complete question x model grid, a block of models at a time.

:class:`_GridLaplace` is :class:`evalbars.stats.logistic.laplace._Laplace` for a grid with
every cell present: sums over cells become matrix-vector products and no per-cell buffer of
questions x models is kept (the matrix form in :mod:`evalbars.stats.logistic.glmm`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from evalbars.data.blocks import blocks
from evalbars.stats.logistic.cells import _Cells, _dot, _sum_rows
from evalbars.stats.logistic.laplace import _Laplace, _ModeState, _Params


class _GridLaplace(_Laplace):
    r""":class:`_Laplace` on a complete models x questions grid (:attr:`_Cells.grid`): every
    per-cell quantity computed a block of models at a time, in cache, and summed at once.

    On the grid the predictor is additive, :math:`\eta_{kq} = \beta_k + e_q` with
    :math:`e_q = \theta_q u_q + \theta_c v_{c(q)}`, so with :math:`a_k = e^{-\beta_k}` and
    :math:`c_q = e^{-e_q}` every :math:`\mu` is :math:`M_{kq} = c_q^{-1} / (a_k + c_q^{-1})`:
    an outer sum and a division, no exponential per cell. With :math:`N` the trials, :math:`Y`
    the successes and :math:`\circ` elementwise, a PIRLS step needs only column sums,

    .. math::  w_q = \mathbf 1^\top (N \circ M)_{\cdot q} - \mathbf 1^\top (N \circ M \circ
               M)_{\cdot q}, \qquad r_q = \textstyle\sum_k Y_{kq} - \mathbf 1^\top
               (N \circ M)_{\cdot q},

    and the log-likelihood is :math:`\sum N \circ \log M - \sum_k \beta_k F_k - \sum_q e_q F_q`
    with :math:`F = N - Y` summed by model and by question (one logarithm per cell, in the last
    state of a PIRLS solve only). The gradient's cell terms are products of
    :math:`W = N \circ M \circ (1 - M)` with vectors (:meth:`_cell_gradient`) and the Schur
    matrix a sum of products of blocks of :math:`W` (:meth:`_schur`). :math:`M` is never
    stored: each pass makes it a block of :data:`_BLOCK_CELLS` cells at a time (cheap: two
    operations a cell), so the passes run in cache rather than through memory, which two cores
    share. These are the formulas of :class:`_Laplace` summed in another order, so the
    estimates agree with the cell path to rounding (tests).
    """

    #: Cells of one block (2 MB in float64: a block and its temporaries stay in cache).
    _BLOCK_CELLS = 2**18

    def __init__(self, cells: _Cells, max_iter: int = 100):
        super().__init__(cells, max_iter)
        failures = cells.trials - cells.successes
        self._failures_model = failures.sum(axis=1)
        self._failures_question = failures.sum(axis=0)
        del failures
        self._successes_model = cells.successes.sum(axis=1)
        self._successes_question = cells.successes.sum(axis=0)
        self._model_blocks = blocks(cells.n_models, cells.n_questions, self._BLOCK_CELLS)
        self._question_blocks = blocks(cells.n_questions, cells.n_models, self._BLOCK_CELLS)
        self._latest = None  # (parameters, state) of the last PIRLS solve

    @staticmethod
    def _factors(beta: np.ndarray, effect: np.ndarray):
        """:math:`a = e^{-\\beta}` and :math:`c^{-1} = e^{e}`, whose outer sum makes :math:`M`."""
        with np.errstate(over="ignore"):
            return np.exp(-beta), np.exp(effect)

    @staticmethod
    def _mu(factors, rows=slice(None), columns=slice(None)) -> np.ndarray:
        """:math:`M` of the models ``rows`` and questions ``columns`` (a fresh block)."""
        a, inverse_c = factors
        with np.errstate(over="ignore", invalid="ignore"):
            mu = np.add.outer(a[rows], inverse_c[columns])
            np.divide(inverse_c[columns], mu, out=mu)
        return mu

    def _trials(self, rows=slice(None), columns=slice(None)):
        """The trials of a block, or None when every cell is one sample (then no product)."""
        return None if self.cells.unit_trials else self.cells.trials[rows, columns]

    def _effect(self, theta_q, theta_c, u, v) -> np.ndarray:
        return theta_q * u + theta_c * v[self.cells.question_category]

    def _loglik(self, effect: np.ndarray, beta: np.ndarray) -> float:
        """The log-likelihood at predictors ``beta_k + effect_q``, block by block."""
        total = 0.0
        factors = self._factors(beta, effect)
        with np.errstate(divide="ignore"):  # a mu of 0 (eta < -745): -inf, the cell path's case
            for rows in self._model_blocks:
                logs = np.log(self._mu(factors, rows))  # log mu = -log(1 + exp(-eta))
                trials = self._trials(rows)
                total += float(logs.sum()) if trials is None else _dot(trials, logs)
        return total - _dot(beta, self._failures_model) - _dot(effect, self._failures_question)

    _initial_loglik = False  # computed when needed (:meth:`_with_loglik`)

    def _with_loglik(self, state: _ModeState, theta_q, theta_c, beta, offset) -> _ModeState:
        if state.eta is not None:
            return super()._with_loglik(state, theta_q, theta_c, beta, offset)
        loglik = self._loglik(self._effect(theta_q, theta_c, state.u, state.v), beta)
        if not np.isfinite(loglik):
            return super()._with_loglik(state, theta_q, theta_c, beta, offset)
        return replace(
            state,
            loglik=loglik,
            penalised=-2.0 * loglik + _dot(state.u, state.u) + _dot(state.v, state.v),
        )

    def _state(self, theta_q, theta_c, beta, offset, u, v, with_loglik=True) -> _ModeState:
        d = self.cells
        effect = self._effect(theta_q, theta_c, u, v)
        fitted_q = np.zeros(d.n_questions)
        square_q = np.zeros(d.n_questions)
        cube_q = np.zeros(d.n_questions) if with_loglik else None
        log_sum = 0.0
        factors = self._factors(beta, effect)
        for rows in self._model_blocks:
            mu = self._mu(factors, rows)
            trials = self._trials(rows)
            if trials is None:
                fitted_q += mu.sum(axis=0)
                square_q += np.einsum("kq,kq->q", mu, mu)
            else:
                fitted_q += np.einsum("kq,kq->q", trials, mu)
                square_q += np.einsum("kq,kq,kq->q", trials, mu, mu)
            # the last state of a PIRLS solve (the one with the log-likelihood) is the one the
            # gradient reads: its column sums of mu^3 and logs in the same pass, in cache
            if with_loglik:
                if trials is None:
                    cube_q += np.einsum("kq,kq,kq->q", mu, mu, mu)
                else:
                    cube_q += np.einsum("kq,kq,kq,kq->q", trials, mu, mu, mu)
                with np.errstate(divide="ignore"):  # mu = 0 (eta < -745): the cell path's case
                    logs = np.log(mu, out=mu)  # log mu = -log(1 + exp(-eta))
                log_sum += float(logs.sum()) if trials is None else _dot(trials, logs)
        w_q = fitted_q - square_q
        loglik = np.nan
        if with_loglik:
            loglik = log_sum - _dot(beta, self._failures_model)
            loglik -= _dot(effect, self._failures_question)
        if not np.all(np.isfinite(w_q)) or (with_loglik and not np.isfinite(loglik)):
            # exp overflows for |eta| > 709: the cell path, which takes logs per cell
            return super()._state(theta_q, theta_c, beta, offset, u, v, with_loglik)
        return self._mode_state(
            theta_q,
            theta_c,
            w_q,
            self._successes_question - fitted_q,
            loglik,
            u,
            v,
            beta=beta,
            # 1'A = 1'(N M (1 - M)(1 - 2M)) = w - 2 (1'N M^2 - 1'N M^3)
            curvature_q=None if cube_q is None else w_q - 2.0 * (square_q - cube_q),
        )

    def modes(self, params: _Params) -> _ModeState:
        """:meth:`_Laplace.modes`, or the last state when it was solved for the same parameters
        (the optimiser asks for the gradient and then the Schur matrix at one point)."""
        key = (float(params.theta_q), float(params.theta_c), np.asarray(params.beta).tobytes())
        if self._latest is not None and self._latest[0] == key:
            return self._latest[1]
        state = super().modes(params)
        self._latest = (key, state)
        return state

    def _state_factors(self, st: _ModeState, theta_q, theta_c):
        """:meth:`_factors` at a state's fixed effects and modes."""
        return self._factors(st.beta, self._effect(theta_q, theta_c, st.u, st.v))

    def _weights(self, factors, rows=slice(None), columns=slice(None)):
        """:math:`M` and :math:`W = N \\circ M (1 - M)` of a block."""
        mu = self._mu(factors, rows, columns)
        weight = mu * (1.0 - mu)
        trials = self._trials(rows, columns)
        if trials is not None:
            weight *= trials
        return mu, weight

    def _cell_gradient(self, st: _ModeState, theta_q, theta_c, leverage_q):
        r"""The cell terms from products of :math:`W` and :math:`M` with vectors: with
        :math:`A = W \circ (1 - 2M)`, their question sums are :math:`\ell_q \mathbf 1^\top
        A_{\cdot q} - (Gs)_q w_q` and their model sums :math:`A \ell - W (Gs) - 2 (y_k -
        (N \circ M) \mathbf 1)`. :math:`s` needs :math:`\mathbf 1^\top A` of every block
        first: the state's own pass made it (``curvature_q``), else one pass more does."""
        if st.eta is not None:
            return super()._cell_gradient(st, theta_q, theta_c, leverage_q)
        d = self.cells
        qc = d.question_category
        factors = self._state_factors(st, theta_q, theta_c)
        curvature_q = st.curvature_q  # 1' A by question, from the state's pass if it made it
        if curvature_q is None:
            curvature_q = np.zeros(d.n_questions)
            for rows in self._model_blocks:
                mu, weight = self._weights(factors, rows)
                curvature_q += weight.sum(axis=0) - 2.0 * np.einsum("kq,kq->q", weight, mu)
        a_q = leverage_q * curvature_q
        s_q, s_cat = st.solve(
            theta_q * a_q, theta_c * np.bincount(qc, a_q, minlength=d.n_categories)
        )
        gs_q = theta_q * s_q + theta_c * s_cat[qc]
        grad_beta = np.empty(d.n_models)
        for rows in self._model_blocks:
            mu, weight = self._weights(factors, rows)
            trials = self._trials(rows)
            fitted = mu.sum(axis=1) if trials is None else np.einsum("kq,kq->k", trials, mu)
            grad_beta[rows] = weight @ (leverage_q - gs_q)
            grad_beta[rows] -= 2.0 * np.einsum("kq,kq,q->k", weight, mu, leverage_q)
            grad_beta[rows] -= 2.0 * (self._successes_model[rows] - fitted)
        return grad_beta, a_q - gs_q * st.w_q, s_q, s_cat

    def _schur(self, x) -> np.ndarray:
        r""":meth:`_Laplace._schur` a block of questions at a time: with :math:`w_q` the column of
        :math:`W` of question q, :math:`S = \operatorname{diag}(W \mathbf 1) - \sum_q
        (\theta_q^2 / h_q) w_q w_q^\top - Z^\top \operatorname{diag}(1/s_c) Z`,
        :math:`Z_c = \sum_{q \in c} (\theta_c - \theta_q k_q / h_q) w_q` (one symmetric
        product per block)."""
        params = _Params.from_packed(x)
        st = self.modes(params)
        if st.eta is not None:
            return super()._schur(x)
        d = self.cells
        theta_q, theta_c = params.theta_q, params.theta_c
        qc = d.question_category
        schur = np.zeros((d.n_models, d.n_models))
        diagonal = np.zeros(d.n_models)
        z = np.zeros((d.n_categories, d.n_models))
        scale_q = theta_q / np.sqrt(st.h_q)
        coefficient_q = theta_c - theta_q * st.k_q / st.h_q
        factors = self._state_factors(st, theta_q, theta_c)
        for columns in self._question_blocks:
            weight = self._weights(factors, columns=columns)[1]
            diagonal += weight.sum(axis=1)
            scaled = weight * scale_q[columns]
            schur -= scaled @ scaled.T
            z += _sum_rows((weight * coefficient_q[columns]).T, qc[columns], d.n_categories)
        schur[np.diag_indices_from(schur)] += diagonal
        schur -= (z / st.s_c[:, None]).T @ z
        return (schur + schur.T) / 2


# ---------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------
