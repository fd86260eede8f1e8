r"""Newton's method on an exact gradient: forward-difference Hessian, free coordinates, damping.

The logistic mixed model (:mod:`evalbars.stats.logistic.glmm`) and the general REML path
(:mod:`evalbars.stats.mixed.general`) both have an exact gradient and no cheap Hessian. Both finish
their optimisation by Newton's method with the Hessian

.. math::  \mathcal H_{\cdot j} \approx \frac{\nabla f(x + h_j e_j) - \nabla f(x)}{h_j}

(:func:`forward_difference_hessian`: one gradient per coordinate; with an exact gradient the
truncation error is of order :math:`h_j`), over a subset of the coordinates when some are held
fixed (:class:`FreeCoordinates`), with a damped step:

* :func:`chord_newton` (the GLMM): the Hessian is reused while the gradient keeps falling fast
  (chord iterations), an indefinite Hessian gives a modified Newton step (absolute eigenvalues
  plus a push along the direction of negative curvature), and the step is backtracked by an
  Armijo rule;
* :func:`interior_newton` (variance ratios, which must stay positive): a fresh Hessian every
  step, a Cholesky solve (not positive definite: give up, the caller falls back to a bounded
  quasi-Newton method), and step halving until the point is inside and the value does not rise.

References
----------
.. [1] Nocedal, J. and Wright, S. J. (2006). Numerical Optimization, 2nd ed. Springer
   (line search and the Armijo condition, Ch. 3; modified Newton with eigenvalue modification,
   Sec. 3.4; finite-difference Hessians from gradients, Sec. 8.1).
.. [2] Dennis, J. E. and Schnabel, R. B. (1996). Numerical Methods for Unconstrained
   Optimization and Nonlinear Equations. SIAM (the chord method, Sec. 5.4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

__all__ = ["FreeCoordinates", "forward_difference_hessian", "chord_newton", "interior_newton"]

#: ``f(x) -> (value, gradient)``.
Objective = Callable[[np.ndarray], tuple]


@dataclass(frozen=True)
class FreeCoordinates:
    """A parameter vector of which only the ``free`` coordinates are optimised.

    Attributes
    ----------
    base : ndarray
        The full vector; the coordinates not free keep these values.
    free : ndarray of bool
        The coordinates optimised.

    Examples
    --------
    >>> import numpy as np
    >>> space = FreeCoordinates(np.array([0.0, 5.0, 0.0]), np.array([True, False, True]))
    >>> space.embed([1.0, 2.0]).tolist()
    [1.0, 5.0, 2.0]
    >>> space.objective(lambda x: (x @ x, 2 * x))(np.array([1.0, 2.0]))[1].tolist()
    [2.0, 4.0]
    """

    base: np.ndarray
    free: np.ndarray

    @classmethod
    def pinned(cls, size: int, pinned: Iterable[int] = (), base=None) -> FreeCoordinates:
        """Every coordinate of a vector of ``size`` free but ``pinned`` (held at ``base``, by
        default 0)."""
        free = np.ones(size, dtype=bool)
        free[list(pinned)] = False
        return cls(np.zeros(size) if base is None else np.asarray(base, dtype=float), free)

    def embed(self, z) -> np.ndarray:
        """The full vector with the free coordinates set to ``z``."""
        x = self.base.copy()
        x[self.free] = z
        return x

    def restrict(self, x) -> np.ndarray:
        """The free coordinates of a full vector."""
        return np.asarray(x)[self.free]

    def block(self, matrix: np.ndarray) -> np.ndarray:
        """The free rows and columns of a full matrix."""
        return matrix[np.ix_(self.free, self.free)]

    def objective(self, fun: Objective) -> Objective:
        """``fun`` as a function of the free coordinates (its gradient restricted to them)."""

        def restricted(z):
            value, grad = fun(self.embed(z))
            return value, grad[self.free]

        return restricted


def forward_difference_hessian(gradient, x, steps, base=None, columns=None) -> np.ndarray:
    """Columns ``(gradient(x + h_j e_j) - gradient(x)) / h_j`` of the Hessian (not symmetrised).

    Parameters
    ----------
    gradient : callable
        ``gradient(x) -> ndarray`` of the same size as ``x``.
    x : ndarray
    steps : array_like
        :math:`h_j`, one per coordinate.
    base : ndarray, optional
        ``gradient(x)`` if already known.
    columns : iterable of int, optional
        The columns to compute (default all); the others are zero.

    Examples
    --------
    >>> import numpy as np
    >>> forward_difference_hessian(lambda x: np.array([2 * x[0] + x[1], x[0]]),
    ...                            np.array([1.0, 1.0]), [0.5, 0.5]).tolist()
    [[2.0, 1.0], [1.0, 0.0]]
    """
    x = np.asarray(x, dtype=float)
    base = gradient(x) if base is None else base
    steps = np.broadcast_to(np.asarray(steps, dtype=float), x.shape)
    hess = np.zeros((base.size, x.size))
    for j in range(x.size) if columns is None else columns:
        shifted = x.copy()
        shifted[j] = x[j] + steps[j]
        hess[:, j] = (gradient(shifted) - base) / steps[j]
    return hess


def chord_newton(fun: Objective, hessian, x, gtol: float, free, max_iter: int = 50):
    """Newton's method with a reused finite-difference Hessian (chord iterations), safeguarded.

    The Hessian is computed once and reused while the gradient keeps falling fast (near the
    optimum it barely changes), and recomputed when it does not. An indefinite Hessian (a saddle,
    e.g. a variance exactly 0 where the optimum is interior) gives a modified Newton step with
    ``|eigenvalues|`` plus a push along the direction of most negative curvature; steps are
    backtracked until the value decreases (Armijo with a tiny slope factor, tolerant of
    rounding).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (value, gradient)`` on the full vector.
    hessian : callable
        ``hessian(x) -> ndarray``, the full (symmetric) Hessian.
    x : ndarray
        Start.
    gtol : float
        Converged when the largest free gradient component is below this after a step below
        1e-9 with a positive definite Hessian.
    free : ndarray of bool
        The coordinates optimised.
    max_iter : int

    Returns
    -------
    x, hessian, anchor, iterations, converged
        ``hessian`` (None if it was to be recomputed) was computed at ``anchor``.
    """
    x = np.array(x, dtype=float)
    space = FreeCoordinates(np.zeros_like(x), np.asarray(free, dtype=bool))
    value, grad = fun(x)
    hess, anchor, converged = None, None, False
    for iteration in range(1, max_iter + 1):  # noqa: B007 (returned: the count)
        if hess is None:
            hess, anchor = hessian(x), x.copy()
        h, g = space.block(hess), space.restrict(grad)
        eigval, eigvec = np.linalg.eigh(h)
        scale = max(np.max(np.abs(eigval)), 1.0)
        positive = eigval[0] > 1e-10 * scale
        if positive:
            step = -np.linalg.solve(h, g)
        else:
            floor = np.maximum(np.abs(eigval), 1e-8 * scale)
            step = -eigvec @ ((eigvec.T @ g) / floor)
            if eigval[0] < 0:
                direction = eigvec[:, 0] * (-1.0 if eigvec[:, 0] @ g > 0 else 1.0)
                step = step + 0.1 * direction
        full = space.embed(step)
        t = 1.0
        for _ in range(50):
            trial_value, trial_grad = fun(x + t * full)
            if trial_value <= value + 1e-4 * t * min(g @ step, 0.0) + 1e-12 * abs(value):
                break
            t /= 2
        previous = np.max(np.abs(g))
        x, value, grad = x + t * full, trial_value, trial_grad
        small = np.max(np.abs(t * step)) < 1e-9 and np.max(np.abs(space.restrict(grad))) < gtol
        if small and positive:
            converged = True
            break
        if t < 1 or not positive or np.max(np.abs(space.restrict(grad))) > previous / 4 or small:
            hess = None  # the chord step is no longer good enough: fresh Hessian next time
    return x, hess, anchor, iteration, converged


def interior_newton(fun: Objective, x, value, grad, max_steps: int = 30):
    """Newton's method in the positive orthant, from ``x``; ``(x, value, converged)``.

    The Hessian is the forward difference of the gradient with steps ``1e-6 x`` (one gradient
    per coordinate). A step is halved until it stays inside (every coordinate > 0) and does
    not raise the value beyond rounding. Converged after a full step that moved every
    coordinate by at most 1e-6 of its value: convergence is quadratic, so the coordinates are
    then exact to about 1e-11 relative (the Hessian's own relative error, ~1e-6, times the
    step). Not converged when the Hessian is not positive definite or no step helps: the
    caller then falls back to a bounded method.
    """
    for _ in range(max_steps):
        hessian = forward_difference_hessian(lambda y: fun(y)[1], x, 1e-6 * x, base=grad)
        try:
            step = linalg.cho_solve(linalg.cho_factor((hessian + hessian.T) / 2), grad)
        except linalg.LinAlgError:
            return x, value, False
        small = bool(np.all(np.abs(step) <= 1e-6 * x))
        scale = 1.0
        while True:
            candidate = x - scale * step
            if np.all(candidate > 0):
                new_value, new_grad = fun(candidate)
                if new_value <= value + 1e-13 * abs(value):
                    break
            if small:  # the value is flat to rounding here: this is the optimum
                return x, value, True
            scale /= 2
            if scale < 1e-3:
                return x, value, False
        x, value, grad = candidate, new_value, new_grad
        if small and scale == 1.0:
            return x, value, True
    return x, value, False
