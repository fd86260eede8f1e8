r"""The Laplace deviance of a complete grid of one 0/1 sample per cell, from its margins.

On a complete models x questions grid the predictor of the nested model
(:mod:`evalbars.stats.logistic.glmm`) is additive, :math:`\eta_{kq} = \beta_k + e_q` with
:math:`e_q = \theta_q u_q + \theta_c v_{c(q)}`, and with one 0/1 sample per cell the data enter
the likelihood only through its margins (the Rasch model's sufficient statistics):

.. math::  \sum_{kq} y_{kq} \eta_{kq} - \log(1 + e^{\eta_{kq}})
           = \sum_q L(e_q) - \sum_k \beta_k f_{k\cdot} - \sum_q e_q f_{\cdot q},
           \qquad L(e) = \sum_k \log \operatorname{logistic}(\beta_k + e),

with :math:`f = 1 - y` the failures summed by model and by question.

Every other sum over cells that PIRLS, the exact gradient and the Schur matrix need is a sum of
a fixed function of :math:`\beta_k + e_q`: over the models, :math:`F(e) = \sum_k f(\beta_k + e)`
at each question's :math:`e_q` (:math:`f = \mu, \mu(1-\mu), \mu(1-\mu)(1-2\mu), \log\mu`), or over
the questions with weights, :math:`G(b) = \sum_q g_q f(b + e_q)` at each model's :math:`\beta_k`;
and the Schur matrix's :math:`\sum_q c_q W_{kq} W_{lq}` is :math:`P M P^\top`, with :math:`M` the
same sum at pairs of nodes and :math:`P` the interpolation matrix to the models.

Each function is evaluated exactly at the nodes of a piecewise Chebyshev interpolant (panels of
width :data:`PANEL_WIDTH` aligned to multiples of it, :data:`PANEL_NODES` Chebyshev points of
the second kind each) and interpolated to the points by the barycentric formula
(:class:`PanelInterpolation`). :math:`\operatorname{logistic}(t)` and :math:`\log
\operatorname{logistic}(t)` are analytic in the strip :math:`|\operatorname{Im} t| < \pi`, so on a
panel of half-width 1 the interpolant converges like :math:`\rho^{-m}` with :math:`\rho = \pi +
\sqrt{\pi^2 + 1} = 6.4` (Trefethen 2013, Theorem 8.2): :math:`10^{-19}` relative at 24 nodes,
below rounding. An axis with fewer points than nodes is evaluated at the points themselves.

A pass over the grid (:math:`K Q` exponentials) becomes :math:`(K + Q)` times the nodes
(about 24 per unit of the range of :math:`\beta` or :math:`e`, typically 150 to 300), and the
Schur matrix's :math:`K^2 Q` product :math:`K^2` times the nodes: at 4,500 models x 21,000
questions about 300 times less work, and no matrix of the grid in memory. The estimates are
those of the cell path to rounding (tests: deviance, exact gradient and Schur matrix against
:class:`evalbars.stats.logistic.laplace._Laplace`; the fit against glmer at 100 models).

References
----------
.. [1] Trefethen, L. N. (2013). Approximation Theory and Approximation Practice. SIAM
   (Chebyshev interpolation, Theorem 8.2; the barycentric formula, Chapter 5).
.. [2] Berrut, J.-P. and Trefethen, L. N. (2004). Barycentric Lagrange interpolation. SIAM
   Review 46, 501-517.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import linalg, sparse, special

from evalbars.data.blocks import BLOCK_CELLS
from evalbars.stats.logistic.cells import _Cells, _dot, _Margins, _sum_rows
from evalbars.stats.logistic.laplace import _Laplace, _ModeState, _Params

__all__ = [
    "PANEL_WIDTH",
    "PANEL_NODES",
    "MARGIN_MAX_MISSING",
    "PanelInterpolation",
    "margin_cells",
    "use_margins",
]

#: Width of an interpolation panel (the functions' singularities lie pi off the real axis).
PANEL_WIDTH = 2.0
#: Chebyshev points per panel.
PANEL_NODES = 24

_CHEBYSHEV = np.cos(np.pi * np.arange(PANEL_NODES) / (PANEL_NODES - 1))
# Barycentric weights of Chebyshev points of the second kind: (-1)^j, halved at the ends.
_BARYCENTRIC = np.where(np.arange(PANEL_NODES) % 2 == 0, 1.0, -1.0)
_BARYCENTRIC[[0, -1]] *= 0.5


class PanelInterpolation:
    """Piecewise Chebyshev interpolation from nodes spanning ``points`` to the points.

    ``nodes`` are where the caller evaluates its functions; calling the object with their
    values (nodes on the first axis) gives the interpolants' values at ``points``. Panels are
    aligned to multiples of :data:`PANEL_WIDTH`, so nodes move only when the points' range
    crosses a multiple. With fewer points than nodes the nodes are the points themselves
    (``direct``), and the call returns the values as they are.

    Examples
    --------
    >>> points = np.linspace(-3.0, 4.0, 500)
    >>> grid = PanelInterpolation(points)
    >>> grid.direct, grid.nodes.size
    (False, 96)
    >>> error = grid(special.expit(grid.nodes)) - special.expit(points)
    >>> bool(np.max(np.abs(error)) < 1e-15)
    True
    """

    def __init__(self, points: np.ndarray):
        points = np.asarray(points, dtype=float)
        low = np.floor(points.min() / PANEL_WIDTH) * PANEL_WIDTH
        high = np.ceil(points.max() / PANEL_WIDTH) * PANEL_WIDTH
        panels = max(1, int(round((high - low) / PANEL_WIDTH)))
        self.direct = panels * PANEL_NODES >= points.size or not np.all(np.isfinite(points))
        if self.direct:
            self.nodes = points
            return
        centres = low + PANEL_WIDTH * (np.arange(panels) + 0.5)
        self.nodes = (centres[:, None] + PANEL_WIDTH / 2 * _CHEBYSHEV[None, :]).ravel()
        panel = np.clip(np.floor((points - low) / PANEL_WIDTH).astype(np.int64), 0, panels - 1)
        offset = (points - centres[panel]) / (PANEL_WIDTH / 2)
        difference = offset[:, None] - _CHEBYSHEV[None, :]
        on_node = difference == 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = _BARYCENTRIC / difference
        exact = on_node.any(axis=1)
        terms[exact] = on_node[exact]
        self.weights = terms / terms.sum(axis=1, keepdims=True)
        self.index = panel[:, None] * PANEL_NODES + np.arange(PANEL_NODES)[None, :]

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """The interpolants of ``values`` (shape ``(nodes, ...)``) at the points."""
        if self.direct:
            return values
        return np.einsum("pj,pj...->p...", self.weights, values[self.index])

    def matrix(self) -> np.ndarray:
        """The interpolation as a dense points x nodes matrix."""
        if self.direct:
            return np.eye(self.nodes.size)
        out = np.zeros((self.index.shape[0], self.nodes.size))
        np.put_along_axis(out, self.index, self.weights, axis=1)
        return out


#: Most cells not observed that :func:`use_margins` takes: each enters the sums as a correction
#: (a term subtracted), and the Schur matrix's corrections cost about K x missing operations.
MARGIN_MAX_MISSING = 2**21


def use_margins(cells: _Cells) -> bool:
    """Whether the cells are one 0/1 sample each with at most :data:`MARGIN_MAX_MISSING` cells
    of the models x question levels grid not observed."""
    if cells.margins is not None:
        return True
    if cells.trials_max != 1:
        return False
    missing = cells.n_models * cells.n_questions - cells.successes.size
    return 0 <= missing <= MARGIN_MAX_MISSING


def margin_cells(cells: _Cells) -> _Cells:
    """The cells held by their margins (:class:`evalbars.stats.logistic.cells._Margins`;
    ``successes`` and ``trials`` dropped): a complete grid, or a cell list of one 0/1 sample
    per cell."""
    if cells.margins is not None:
        return cells
    if not use_margins(cells):
        raise ValueError("margins hold one 0/1 sample per cell, with few cells missing")
    k, q = cells.n_models, cells.n_questions
    if cells.grid:
        margins = (cells.successes.sum(axis=1), cells.successes.sum(axis=0))
        missing = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
    else:
        margins = (
            np.bincount(cells.model, cells.successes, minlength=k),
            np.bincount(cells.question, cells.successes, minlength=q),
        )
        absent = np.ones(k * q, dtype=bool)
        absent[cells.model.astype(np.int64) * q + cells.question] = False
        missing = np.divmod(np.flatnonzero(absent), q)
    return replace(
        cells,
        successes=None,
        trials=None,
        model=None,
        question=None,
        grid=True,
        margins=_Margins(*margins, *missing),
    )


def _logistic_sums(beta: np.ndarray, effect: np.ndarray, with_log: bool):
    """Per effect value e: the sums over the models of mu, mu(1 - mu), mu(1 - mu)(1 - 2 mu)
    and (``with_log``) log mu, mu = logistic(beta_k + e); blocks of effects bound the
    temporaries."""
    out = np.empty((effect.size, 4 if with_log else 3))
    step = max(1, BLOCK_CELLS // max(1, beta.size))
    for s in range(0, effect.size, step):
        t = beta[:, None] + effect[None, s : s + step]
        mu, nu = special.expit(t), special.expit(-t)  # nu = 1 - mu without cancellation
        weight = mu * nu
        out[s : s + step, 0] = mu.sum(axis=0)
        out[s : s + step, 1] = weight.sum(axis=0)
        out[s : s + step, 2] = (weight * (nu - mu)).sum(axis=0)
        if with_log:  # log mu = -log(1 + exp(-t))
            out[s : s + step, 3] = -np.logaddexp(0.0, -t).sum(axis=0)
    return out


def _question_terms(nodes: np.ndarray, effect: np.ndarray):
    """``(mu, W)`` at every node b and question: mu = logistic(b + e_q), W = mu(1 - mu)."""
    return _question_terms_at(nodes[:, None] + effect[None, :])


class _MarginLaplace(_Laplace):
    """:class:`evalbars.stats.logistic.laplace._Laplace` on one 0/1 sample per cell, from the
    margins (module docstring): every sum over cells by interpolation over the whole grid, less
    the terms of the cells not observed."""

    _initial_loglik = False

    def __init__(self, cells: _Cells, max_iter: int = 100):
        cells = margin_cells(cells)
        super().__init__(cells, max_iter)
        m = cells.margins
        self._successes_model = np.asarray(m.successes_model, dtype=float)
        self._successes_question = np.asarray(m.successes_question, dtype=float)
        self._failures_model = m.observed_model(cells.n_questions) - self._successes_model
        self._failures_question = m.observed_question(cells.n_models) - self._successes_question
        self._missing = (m.missing_model, m.missing_question) if m.missing_model.size else None
        self._latest = None  # (parameters, state) of the last PIRLS solve

    def _effect(self, theta_q, theta_c, u, v) -> np.ndarray:
        return theta_q * u + theta_c * v[self.cells.question_category]

    def _missing_terms(self, beta, effect):
        """``(mu, W)`` at the cells not observed."""
        model, question = self._missing
        return _question_terms_at(beta[model] + effect[question])

    def _question_sums(self, beta, effect, with_log):
        """:func:`_logistic_sums` at every question's effect, through the interpolant, over the
        observed cells."""
        grid = PanelInterpolation(effect)
        sums = grid(_logistic_sums(beta, grid.nodes, with_log))
        if self._missing is not None:
            model, question = self._missing
            t = beta[model] + effect[question]
            mu, nu = special.expit(t), special.expit(-t)
            terms = [mu, mu * nu, mu * nu * (nu - mu)]
            if with_log:
                terms.append(-np.logaddexp(0.0, -t))
            for column, values in enumerate(terms):
                sums[:, column] -= np.bincount(question, values, minlength=effect.size)
        return sums

    def _loglik_from(self, log_sum: float, beta, effect) -> float:
        return log_sum - _dot(beta, self._failures_model) - _dot(effect, self._failures_question)

    def _state(self, theta_q, theta_c, beta, offset, u, v, with_loglik=True) -> _ModeState:
        effect = self._effect(theta_q, theta_c, u, v)
        sums = self._question_sums(beta, effect, with_loglik)
        loglik = self._loglik_from(float(sums[:, 3].sum()), beta, effect) if with_loglik else np.nan
        return self._mode_state(
            theta_q,
            theta_c,
            sums[:, 1],
            self._successes_question - sums[:, 0],
            loglik,
            u,
            v,
            beta=beta,
            curvature_q=sums[:, 2],
        )

    def _with_loglik(self, state: _ModeState, theta_q, theta_c, beta, offset) -> _ModeState:
        effect = self._effect(theta_q, theta_c, state.u, state.v)
        log_sum = float(self._question_sums(beta, effect, True)[:, 3].sum())
        loglik = self._loglik_from(log_sum, beta, effect)
        return replace(
            state,
            loglik=loglik,
            penalised=-2.0 * loglik + _dot(state.u, state.u) + _dot(state.v, state.v),
        )

    def modes(self, params: _Params) -> _ModeState:
        """:meth:`_Laplace.modes`, or the last state when it was solved for the same
        parameters (the optimiser asks for the gradient and then the Schur matrix at one
        point)."""
        key = (float(params.theta_q), float(params.theta_c), np.asarray(params.beta).tobytes())
        if self._latest is not None and self._latest[0] == key:
            return self._latest[1]
        state = super().modes(params)
        self._latest = (key, state)
        return state

    def _cell_gradient(self, st: _ModeState, theta_q, theta_c, leverage_q):
        r"""The cell terms of the gradient (as :meth:`evalbars.stats.logistic.grid_laplace.
        _GridLaplace._cell_gradient`): with :math:`A = W \circ (1 - 2M)`, question sums
        :math:`\ell_q \mathbf 1^\top A_{\cdot q} - (Gs)_q w_q` and model sums
        :math:`W(\ell - Gs) - 2 (W \circ M) \ell - 2 (y_k - M \mathbf 1)`, the latter a
        function of :math:`\beta_k` interpolated from nodes."""
        d = self.cells
        qc = d.question_category
        a_q = leverage_q * st.curvature_q
        s_q, s_cat = st.solve(
            theta_q * a_q, theta_c * np.bincount(qc, a_q, minlength=d.n_categories)
        )
        gs_q = theta_q * s_q + theta_c * s_cat[qc]
        effect = self._effect(theta_q, theta_c, st.u, st.v)
        grid = PanelInterpolation(st.beta)
        at_nodes = np.empty(grid.nodes.size)
        step = max(1, BLOCK_CELLS // max(1, effect.size))
        for s in range(0, grid.nodes.size, step):
            mu, weight = _question_terms(grid.nodes[s : s + step], effect)
            at_nodes[s : s + step] = weight @ (leverage_q - gs_q)
            at_nodes[s : s + step] -= 2.0 * ((weight * mu) @ leverage_q)
            at_nodes[s : s + step] += 2.0 * mu.sum(axis=1)
        grad_beta = grid(at_nodes) - 2.0 * self._successes_model
        if self._missing is not None:
            model, question = self._missing
            mu, weight = self._missing_terms(st.beta, effect)
            terms = weight * (leverage_q - gs_q)[question]
            terms += 2.0 * mu - 2.0 * weight * mu * leverage_q[question]
            grad_beta -= np.bincount(model, terms, minlength=d.n_models)
        return grad_beta, a_q - gs_q * st.w_q, s_q, s_cat

    def _schur(self, x) -> np.ndarray:
        r""":meth:`evalbars.stats.logistic.grid_laplace._GridLaplace._schur` from nodes: with
        :math:`P` the interpolation from nodes :math:`b_j` to the models and :math:`\Phi_{jq} =
        W(b_j + e_q)` (the whole grid's weights :math:`P \Phi`), and :math:`D` the weights of
        the cells not observed, :math:`\tilde W = P \Phi - D` and

        .. math::  S = \operatorname{diag}(\tilde W \mathbf 1) - \tilde W \Gamma \tilde W^\top
                   - Z^\top \operatorname{diag}(1/s_c) Z, \qquad Z^\top = \tilde W C,

        :math:`\Gamma = \operatorname{diag}(\theta_q^2 / h_q)`, :math:`C_{qc} = \theta_c -
        \theta_q k_q / h_q` on the question's category; :math:`\tilde W \Gamma \tilde W^\top
        = P \Phi \Gamma \Phi^\top P^\top - E P^\top - P E^\top + D \Gamma D^\top` with
        :math:`E = D \Gamma \Phi^\top` (sparse products)."""
        params = _Params.from_packed(x)
        st = self.modes(params)
        d = self.cells
        theta_q, theta_c = params.theta_q, params.theta_c
        qc = d.question_category
        effect = self._effect(theta_q, theta_c, st.u, st.v)
        grid = PanelInterpolation(st.beta)
        n_nodes = grid.nodes.size
        diagonal = np.empty(n_nodes)
        phi = np.empty((n_nodes, d.n_questions))
        z = np.empty((d.n_categories, n_nodes))
        gamma_q = theta_q**2 / st.h_q
        coefficient_q = theta_c - theta_q * st.k_q / st.h_q
        step = max(1, BLOCK_CELLS // max(1, d.n_questions))
        for s in range(0, n_nodes, step):
            weight = _question_terms(grid.nodes[s : s + step], effect)[1]
            diagonal[s : s + step] = weight.sum(axis=1)
            phi[s : s + step] = weight
            z[:, s : s + step] = _sum_rows((weight * coefficient_q).T, qc, d.n_categories)
        scaled = phi * np.sqrt(gamma_q)
        inner = scaled @ scaled.T  # nodes x nodes: sum_q gamma_q Phi Phi'
        del scaled
        to_models = None if grid.direct else grid.matrix()
        diagonal = grid(diagonal)
        self._low_rank = None
        if to_models is not None and self._missing is None:
            # S = diag(diagonal) - U U', U = [P L, Z' / sqrt(s_c)] with L L' the inner sum
            # (rank at most nodes + categories): kept for schur_inverse
            values, vectors = np.linalg.eigh(inner)
            factor = to_models @ (vectors * np.sqrt(np.clip(values, 0.0, None)))
            low_rank = np.hstack([factor, (z @ to_models.T / np.sqrt(st.s_c)[:, None]).T])
            self._low_rank = (np.asarray(x, dtype=float).tobytes(), diagonal, low_rank)
            schur = -(low_rank @ low_rank.T)
            schur[np.diag_indices_from(schur)] += diagonal
            return (schur + schur.T) / 2
        if to_models is None:
            schur, z_models = -inner, z
        else:
            schur = -(to_models @ inner @ to_models.T)
            z_models = z @ to_models.T
        if self._missing is not None:
            model, question = self._missing
            missing = sparse.csr_matrix(
                (self._missing_terms(st.beta, effect)[1], (model, question)),
                shape=(d.n_models, d.n_questions),
            )
            diagonal -= np.asarray(missing.sum(axis=1)).ravel()
            gamma_missing = missing.multiply(gamma_q[None, :]).tocsr()
            cross = np.asarray(gamma_missing @ phi.T)  # E = D Gamma Phi'
            if to_models is not None:
                cross = cross @ to_models.T
            schur += cross + cross.T
            schur -= (gamma_missing @ missing.T).toarray()
            by_category = missing.multiply(coefficient_q[None, :]).tocsr()
            z_models -= (by_category @ _indicator(qc, d.n_categories)).toarray().T
        schur[np.diag_indices_from(schur)] += diagonal
        schur -= (z_models / st.s_c[:, None]).T @ z_models
        return (schur + schur.T) / 2

    def schur_inverse(self, x) -> np.ndarray | None:
        r""":math:`S^{-1}` at ``x`` from the low-rank form :meth:`_schur` kept there
        (:math:`S = \Delta - U U^\top` on a complete grid, U of rank nodes + categories), by
        Woodbury's identity: :math:`S^{-1} = \Delta^{-1} + \Delta^{-1} U (I - U^\top \Delta^{-1}
        U)^{-1} U^\top \Delta^{-1}`, :math:`K^2 r` multiply-adds instead of :math:`K^3`. None
        when :meth:`_schur` at ``x`` kept no low-rank form, or :math:`S` is not positive
        definite (the capacitance matrix is not)."""
        kept = getattr(self, "_low_rank", None)
        if kept is None or kept[0] != np.asarray(x, dtype=float).tobytes():
            return None
        _, diagonal, low_rank = kept
        if not np.all(diagonal > 0):
            return None
        scaled = low_rank / diagonal[:, None]
        capacitance = np.eye(low_rank.shape[1]) - low_rank.T @ scaled
        try:
            factor = linalg.cholesky((capacitance + capacitance.T) / 2, lower=True)
        except linalg.LinAlgError:
            return None
        spread = linalg.solve_triangular(factor, scaled.T, lower=True).T
        inverse = spread @ spread.T
        inverse[np.diag_indices_from(inverse)] += 1.0 / diagonal
        return (inverse + inverse.T) / 2


def _question_terms_at(t: np.ndarray):
    """``(mu, W)`` at predictors ``t``."""
    mu = special.expit(t)
    return mu, mu * special.expit(-t)


def _indicator(codes: np.ndarray, n_groups: int):
    """The sparse questions x categories indicator of each question's category."""
    return sparse.csr_matrix(
        (np.ones(codes.size), (np.arange(codes.size), codes)), shape=(codes.size, n_groups)
    )
