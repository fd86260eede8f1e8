r"""The vocabulary every fitted model shares, and the one standard error of a contrast.

The linear mixed model (:class:`evalbars.stats.mixed.LmmFit`), the logistic mixed model
(:class:`evalbars.stats.logistic.glmm.GlmmFit`) and GEE (:class:`evalbars.stats.logistic.gee.GeeFit`) name the same things the
same way, as statsmodels' results do (``params``, ``cov_params()``):

==============  ===========================================================================
attribute       meaning
==============  ===========================================================================
``names``       the models, in the order of the fixed effects
``params``      the fixed effects :math:`\hat\beta` (one per model), on the model's own scale
``cov``         their covariance :math:`\hat\Sigma = \widehat{\mathrm{Cov}}(\hat\beta)`
``converged``   whether the optimiser met its tolerances
==============  ===========================================================================

:class:`Fit` is that protocol; :func:`contrast_se` gives the standard error of
:math:`\hat\beta_a - \hat\beta_b` for any of them, and :func:`difference_se` the delta-method
standard error of :math:`g_a(\vartheta) - g_b(\vartheta)` for smooth functions of the
parameters (the logistic fits' accuracies),

.. math::  \mathrm{SE} = \sqrt{d^\top C d}, \qquad d = \nabla g_a - \nabla g_b,

which with :math:`g = \beta` (the identity Jacobian) is
:math:`\sqrt{\Sigma_{aa} + \Sigma_{bb} - 2\Sigma_{ab}}`.

References
----------
.. [1] Casella, G. and Berger, R. L. (2002). Statistical Inference, 2nd ed. Duxbury
   (the delta method, Section 5.5.4).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Fit", "contrast_se", "difference_se", "structured_difference_se"]


@runtime_checkable
class Fit(Protocol):
    """What :func:`contrast_se` and the contrast tables read from a fitted model."""

    @property
    def names(self) -> tuple | list: ...

    @property
    def params(self) -> np.ndarray: ...

    @property
    def cov(self) -> np.ndarray: ...

    @property
    def converged(self) -> bool: ...


def difference_se(cov, first, second, jacobian=None) -> np.ndarray:
    r"""Delta-method SE of ``g[first] - g[second]``: :math:`\sqrt{d^\top C d}`, ``d = J[a] - J[b]``.

    Parameters
    ----------
    cov : ndarray, shape (p, p)
        Covariance :math:`C` of the parameters.
    first, second : array_like of int
        Indices a and b of each difference.
    jacobian : ndarray, shape (K, p), optional
        :math:`\partial g_k / \partial \vartheta`; default the identity (``g`` the parameters
        themselves), then :math:`\sqrt{C_{aa} + C_{bb} - 2C_{ab}}` by indexing.

    Returns
    -------
    ndarray
        One SE per pair.

    Examples
    --------
    >>> import numpy as np
    >>> cov = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> difference_se(cov, [0], [1]).tolist()
    [2.23606797749979]
    >>> difference_se(cov, [0], [1], np.eye(2)).tolist()
    [2.23606797749979]
    """
    if jacobian is None:
        a, b = np.asarray(first), np.asarray(second)
        variance = _diagonal(cov)
        return np.sqrt(variance[a] + variance[b] - 2.0 * cov[a, b])
    d = jacobian[first] - jacobian[second]
    return np.sqrt(np.einsum("ij,jk,ik->i", d, cov, d))


def _diagonal(cov: np.ndarray) -> np.ndarray:
    """The diagonal of ``cov`` as a contiguous copy: indexed once per pair, ``cov[a, a]`` would
    touch a row of the matrix per pair (ten million cache misses at 4,500 models, a third of a
    second), the copy a few kilobytes. The same values, so the same SEs to the bit."""
    return np.diagonal(cov).copy()


def structured_difference_se(cov, first, second, diagonal, leading=None) -> np.ndarray:
    r""":func:`difference_se` for a Jacobian that is diagonal in the models but for ``p``
    leading parameters, without forming it (memory O(pairs), not O(pairs x K)).

    The parameters are :math:`(\lambda_1, \dots, \lambda_p, \beta_1, \dots, \beta_K)` and
    :math:`\partial g_k / \partial \beta_j = \delta_{jk} a_k`,
    :math:`\partial g_k / \partial \lambda = L_k`; with :math:`l = L_a - L_b`,

    .. math::  d^\top C d = l^\top C_{\lambda\lambda} l
               + 2\, l^\top (a_a C_{\lambda a} - a_b C_{\lambda b})
               + a_a^2 C_{aa} + a_b^2 C_{bb} - 2 a_a a_b C_{ab}.

    Parameters
    ----------
    cov : ndarray, shape (p + K, p + K)
    first, second : array_like of int
        Model indices a and b (0-based among the K models).
    diagonal : ndarray, shape (K,)
        :math:`a_k`.
    leading : ndarray, shape (K, p), optional
        :math:`L_k`; default none (p = 0).

    Examples
    --------
    >>> import numpy as np
    >>> cov = np.array([[2.0, 0.5, 0.1], [0.5, 4.0, 1.0], [0.1, 1.0, 3.0]])
    >>> jac = np.array([[0.3, 2.0, 0.0], [0.7, 0.0, 0.5]])
    >>> bool(np.isclose(structured_difference_se(cov, [0], [1], np.array([2.0, 0.5]),
    ...                                          jac[:, :1])[0],
    ...                 difference_se(cov, [0], [1], jac)[0]))
    True
    """
    a, b = np.asarray(first), np.asarray(second)
    p = 0 if leading is None else leading.shape[1]
    beta = cov[p:, p:]
    da, db = diagonal[a], diagonal[b]
    variance = _diagonal(beta)
    value = da * da * variance[a] + db * db * variance[b] - 2.0 * da * db * beta[a, b]
    if p:
        lead = leading[a] - leading[b]
        cross = cov[:p, p:]  # (p, K)
        value = value + np.einsum("ij,jk,ik->i", lead, cov[:p, :p], lead)
        value = value + 2.0 * np.einsum("ij,ji->i", lead, cross[:, a] * da - cross[:, b] * db)
    return np.sqrt(value)


def contrast_se(fit: Fit, a, b) -> np.ndarray:
    r"""Standard error of ``fit.params[a] - fit.params[b]``, :math:`\sqrt{c^\top \hat\Sigma c}`
    with :math:`c = e_a - e_b` (:func:`difference_se` on ``fit.cov``)."""
    return difference_se(fit.cov, a, b)
