"""Newton steps with the Schur-form Hessian of the Laplace deviance, and the linear algebra
they need: the logistic GLMM's optimiser above
:data:`evalbars.stats.logistic.glmm.FULL_HESSIAN_MAX_MODELS` models (the model and the
Hessian are in :mod:`evalbars.stats.logistic.glmm`).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from evalbars.stats.optimize import FreeCoordinates

__all__ = ["schur_newton", "two_loop", "shifted_cholesky", "spd_inverse", "block_covariances"]


def schur_newton(objective, x, free, gtol: float, step: float, max_iter: int):
    r"""Minimise the Laplace deviance by Newton steps with the Schur-form Hessian.

    The matrix of :meth:`evalbars.stats.logistic.laplace._Laplace.schur_hessian` (exact in the
    theta rows and columns to the forward difference, :math:`2 S` in the beta block: the
    log-determinant's curvature in beta left out) is factored by Cholesky once and reused, corrected by the L-BFGS secant pairs of
    the steps since ([2]_ Alg. 7.4), while each step is taken in full (chord iterations, [1]_
    Sec. 5.4); after a backtracked step it is computed afresh. A matrix that is
    not positive definite (far from the optimum, in theta) is shifted by a multiple of the
    identity until it is (Levenberg). Each step is backtracked to an Armijo decrease, as
    :func:`evalbars.stats.optimize.chord_newton`. Because the beta block is not the exact Hessian the
    convergence is linear, with a rate of the size of the left-out curvature relative to
    :math:`2 S` (small: a few iterations to 1e-9 on the fixtures), and the optimum is the
    exact one, the stationary point of :math:`D`: the estimates are glmer's.

    Returns ``(x, iterations, converged)``: converged when the largest free gradient component
    is below ``gtol`` and the step the matrix asks for is below 1e-9 (then not taken).

    References
    ----------
    .. [1] Dennis, J. E. and Schnabel, R. B. (1996). Numerical Methods for Unconstrained
       Optimization and Nonlinear Equations. SIAM.
    .. [2] Nocedal, J. and Wright, S. J. (2006). Numerical Optimization, 2nd ed. Springer.
    """
    space = FreeCoordinates(np.zeros_like(x), np.asarray(free, dtype=bool))
    x = np.array(x, dtype=float)
    value, grad = objective.deviance_and_gradient(x)
    factor, converged, pairs = None, False, []
    for iteration in range(1, max_iter + 1):  # noqa: B007 (returned: the count)
        if factor is None:
            hess = space.block(objective.schur_hessian(x, step)[0])
            factor, shifted = shifted_cholesky(hess)
            pairs = []
        g = space.restrict(grad)
        direction = -two_loop(factor, pairs, g)
        # converged when the gradient is below gtol and the step it asks for below 1e-9 (the
        # estimates are then within ~1e-9 of the stationary point without taking it)
        if np.max(np.abs(g)) < gtol and np.max(np.abs(direction)) < 1e-9 and not shifted:
            converged = True
            break
        full = space.embed(direction)
        t = 1.0
        for _ in range(50):
            trial_value, trial_grad = objective.deviance_and_gradient(x + t * full)
            if trial_value <= value + 1e-4 * t * min(g @ direction, 0.0) + 1e-12 * abs(value):
                break
            t /= 2
        x, value, grad = x + t * full, trial_value, trial_grad
        if t < 1 or shifted:
            factor = None  # fresh matrix next time
        else:  # the curvature met along the step corrects the matrix (L-BFGS pair)
            change = space.restrict(grad) - g
            if (t * direction) @ change > 0:
                pairs = [*pairs[-9:], (t * direction, change)]
    return x, iteration, converged


def two_loop(factor, pairs, g: np.ndarray) -> np.ndarray:
    """:math:`H^{-1} g` for the BFGS update of the factored matrix by the secant pairs
    ``(s, y)`` (the two-loop recursion of L-BFGS, [1]_ Alg. 7.4, with the factored matrix as
    the initial Hessian).

    References
    ----------
    .. [1] Nocedal, J. and Wright, S. J. (2006). Numerical Optimization, 2nd ed. Springer.
    """
    q = g.copy()
    coefficients = []
    for s, y in reversed(pairs):
        a = (s @ q) / (s @ y)
        q -= a * y
        coefficients.append(a)
    r = linalg.cho_solve(factor, q, check_finite=False)
    for (s, y), a in zip(pairs, reversed(coefficients), strict=True):
        r += s * (a - (y @ r) / (s @ y))
    return r


def shifted_cholesky(matrix: np.ndarray):
    """Cholesky factor of ``matrix + tau I`` for the smallest tau in 0, 1e-6 s, 1e-5 s, ...
    (s the largest diagonal entry) that is positive definite; ``(factor, tau > 0)``."""
    scale = np.max(np.abs(np.diag(matrix)))
    for tau in [0.0, *(scale * 10.0 ** np.arange(-6, 3))]:
        try:
            shifted = matrix + tau * np.eye(matrix.shape[0]) if tau else matrix
            return linalg.cho_factor(shifted, lower=True, check_finite=False), tau > 0
        except linalg.LinAlgError:
            continue
    raise RuntimeError("no positive definite shift of the Hessian")


def spd_inverse(matrix: np.ndarray) -> np.ndarray | None:
    """Inverse of a symmetric positive definite matrix by Cholesky (LAPACK ``potrf`` and
    ``potri``: :math:`K^3` multiply-adds in all, a third of a solve against the identity);
    None if not positive definite."""
    try:
        factor = linalg.cho_factor(matrix, lower=True, check_finite=False)[0]
    except linalg.LinAlgError:
        return None
    inverse, info = linalg.lapack.dpotri(factor, lower=1)
    if info != 0:
        return None
    lower = np.tril(inverse)
    return lower + np.tril(lower, -1).T


def block_covariances(hess: np.ndarray, schur: np.ndarray, free_theta, schur_inverse=None):
    r"""``(cov_rx, cov_full)`` of the Schur path: :math:`S^{-1}` and :math:`2 \mathcal H^{-1}`
    over the free coordinates (theta where ``free_theta``, and beta), each None where its
    matrix is not positive definite.

    The Schur-form :math:`\mathcal H = [[A, B], [B^\top, 2S]]` (A the free theta block) is
    inverted by its blocks from :math:`S^{-1}` alone: with :math:`D^{-1} = S^{-1}/2` and the
    theta block's Schur complement :math:`\Sigma = A - B D^{-1} B^\top` (at most 2 x 2),

    .. math::  \mathcal H^{-1} = \begin{pmatrix} \Sigma^{-1} & -\Sigma^{-1} B D^{-1} \\
               -D^{-1} B^\top \Sigma^{-1} & D^{-1} + D^{-1} B^\top \Sigma^{-1} B D^{-1}
               \end{pmatrix},

    positive definite exactly when :math:`S` and :math:`\Sigma` are: one :math:`K^3` inverse
    (:func:`spd_inverse`; ``schur_inverse``, :math:`S^{-1}`, when the caller has it) and
    :math:`K^2` besides, instead of two.
    """
    cov_rx = spd_inverse(schur) if schur_inverse is None else schur_inverse
    if cov_rx is None:
        return None, None
    theta = np.flatnonzero(np.asarray(free_theta, dtype=bool))
    d_inverse = cov_rx / 2.0
    b_d = hess[np.ix_(theta, np.arange(2, hess.shape[0]))] @ d_inverse
    sigma = hess[np.ix_(theta, theta)] - b_d @ hess[np.ix_(theta, np.arange(2, hess.shape[0]))].T
    sigma_inverse = spd_inverse(sigma) if theta.size else np.zeros((0, 0))
    if sigma_inverse is None:
        return cov_rx, None
    corner = sigma_inverse @ b_d
    cov_full = np.zeros_like(hess)
    cov_full[np.ix_(theta, theta)] = 2.0 * sigma_inverse
    cov_full[np.ix_(theta, np.arange(2, hess.shape[0]))] = -2.0 * corner
    cov_full[np.ix_(np.arange(2, hess.shape[0]), theta)] = -2.0 * corner.T
    cov_full[2:, 2:] = 2.0 * (d_inverse + b_d.T @ corner)
    return cov_rx, cov_full
