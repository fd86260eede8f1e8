r"""Linear mixed models for K models answering clustered questions, fitted by REML.

Three specifications, all with model as a fixed effect in the cell-means
parametrisation (lme4's ``correct ~ 0 + model``):

``category``
    :math:`y_{qmi} = \beta_m + u_{c(q)} + e_{qmi}`, i.e. ``(1|category)``;
``category_question``
    :math:`y_{qmi} = \beta_m + u_{c(q)} + v_q + e_{qmi}`, i.e.
    ``(1|category) + (1|category:question)``, the paper's Eq. (3);
``category_question_model``
    :math:`y_{qmi} = \beta_m + u_{c(q)} + v_q + w_{qm} + e_{qmi}`, i.e. the same
    ``+ (1|category:question:model)``: how much a model's skill varies from question
    to question beyond the question's difficulty. Identifiable only with repeated
    samples (epochs) of some (question, model) cell; :func:`model_specs` says which
    specifications a data set supports;

with :math:`u_c \sim N(0, \tau^2)`, :math:`v_q \sim N(0, \sigma_q^2)`,
:math:`w_{qm} \sim N(0, \sigma_w^2)` (component ``question_model``),
:math:`e_{qmi} \sim N(0, \sigma^2)`, all independent; i indexes the samples of a
cell (one per cell in the usual case). A cell reduces to its mean and its
within-cell sum of squares (:class:`evalbars.data.scores.WideScores` holds both).

Two ways to fit them (``method`` of :func:`fit_lmm`):

``exact``
    Complete, balanced data only (every model scored on every question, the same
    number of times). Orthonormal changes of basis split the data into independent
    strata: within cells (:math:`\sigma^2`), within questions (the model contrasts
    and :math:`\sigma_w^2 + \sigma^2/n`) and question means (the rest, a one-way
    model of question means nested in categories). The REML likelihood is a
    closed-form function of per-category sufficient statistics, maximised by
    one-dimensional root finding on its analytic derivative (to machine precision),
    with every boundary handled exactly (:mod:`evalbars.stats.mixed.exact`). Cost: one
    pass over the score matrix.
``general``
    Any missingness pattern and any number of samples per cell. The exact REML
    deviance and its analytic gradient are computed through the Woodbury identity
    from per-cell weights and per-question and per-category sums (no N x N matrix;
    questions with the same category and samples per cell share their weights), and
    minimised over the variance ratios by Newton's method from the exact fit of
    the complete questions, or by L-BFGS-B with bounds at zero; each boundary is
    checked by refitting with that component fixed at zero
    (:mod:`evalbars.stats.mixed.general`).

``auto`` uses ``exact`` for complete, balanced data and ``general`` otherwise.

Notation
--------
Variances are reported as variances (not standard deviations or ratios); the general path
optimises the ratios :math:`\gamma = \text{variance} / \sigma^2` (:mod:`evalbars.stats.mixed.general`).

==========================================  ========================================
symbol                                      :class:`LmmFit` attribute
==========================================  ========================================
:math:`\beta_m`, model m's mean             ``params[m]``, in the order of ``names``
:math:`\hat\sigma^2 (X^T V_0^{-1} X)^{-1}`  ``cov``
:math:`\tau^2`                              ``variance["category"]``
:math:`\sigma_q^2`                          ``variance["question"]``
:math:`\sigma_w^2`                          ``variance["question_model"]``
:math:`\sigma^2`                            ``variance["residual"]``
an estimate exactly 0                       ``boundary[component]``
:math:`-2\,\ell_R`                          ``reml_criterion``
==========================================  ========================================

Not implemented / limits
------------------------
* Random intercepts only, nested (question within category; model within question): no random
  slopes, no crossed factors, no correlated random effects.
* REML only (no ML criterion), and Wald (asymptotic) contrasts: no Satterthwaite or
  Kenward-Roger degrees of freedom (emmeans' ``lmer.df = "asymptotic"``).
* A linear model of 0/1 scores: for the logistic scale see :mod:`evalbars.stats.logistic.glmm` and
  :mod:`evalbars.stats.logistic.gee`.

References
----------
.. [1] Bates, D., Maechler, M., Bolker, B. and Walker, S. (2015). Fitting
   linear mixed-effects models using lme4. J Stat Softw 67(1), 1-48
   (the REML criterion, Eq. 42, and the cell-means fixed effects).
.. [2] Searle, S. R., Casella, G. and McCulloch, C. E. (1992). Variance
   Components. Wiley (REML, Ch. 6; the unbalanced one-way model, Ch. 3;
   balanced data and their strata, Ch. 4).
.. [3] Harville, D. A. (1977). Maximum likelihood approaches to variance
   component estimation and to related problems. JASA 72, 320-338.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores, accuracy_order, repeated_text, text_column
from evalbars.defaults import ALPHA
from evalbars.stats.fits import contrast_se
from evalbars.stats.mixed.common import (
    BLOCKED_SPECS,
    COMPONENTS,
    EPOCH_SPECS,
    FORMULAS,
    MODEL_SPECS,
    QUESTION_EPOCH_SPECS,
    QUESTION_SPECS,
    prepare,
)
from evalbars.stats.mixed.exact import fit_exact, strata_stats
from evalbars.stats.mixed.general import fit_general
from evalbars.stats.pairwise import adjust_pvalues, tukey_p

__all__ = [
    "MODEL_SPECS",
    "EPOCH_SPECS",
    "QUESTION_SPECS",
    "QUESTION_EPOCH_SPECS",
    "BLOCKED_SPECS",
    "blocked_spec",
    "METHODS",
    "COMPONENTS",
    "FORMULAS",
    "LmmFit",
    "model_specs",
    "fit_obstacle",
    "fit_lmm",
    "fit_lmms",
    "variance_components",
    "lmm_contrasts",
    "unfitted_contrasts",
    "contrast_table",
    "CONTRAST_COLUMNS",
]

log = logging.getLogger(__name__)

METHODS = ("auto", "exact", "general")


@dataclass(frozen=True)
class LmmFit:
    """A fitted mixed model.

    Attributes
    ----------
    model_spec : str
        ``"category"``, ``"category_question"`` or ``"category_question_model"``
        (:data:`FORMULAS` gives each one's lme4 formula).
    method : str
        The path that ran: ``"exact"`` or ``"general"``.
    names : list of str
        Order of the fixed effects (the column order of the input).
    params : ndarray, shape (K,)
        REML/GLS estimates of the per-model means :math:`\\beta_m`.
    cov : ndarray, shape (K, K)
        Their covariance, :math:`\\hat\\sigma^2 (X^T V_0^{-1} X)^{-1}` at the
        REML estimates (lme4's ``vcov``).
    variance : dict
        Component -> variance, for the components :data:`COMPONENTS` lists for the
        specification: ``category`` :math:`\\tau^2`, ``question`` :math:`\\sigma_q^2`,
        ``question_model`` :math:`\\sigma_w^2`, ``residual`` :math:`\\sigma^2`.
    boundary : dict
        Component -> True when its estimate is exactly zero (a singular fit).
    reml_criterion : float
        :math:`-2\\,\\ell_R` at the estimates, constants included (lme4's
        ``REMLcrit``).
    n_obs, n_questions, n_categories : int
        Observations (samples), questions and categories that entered the fit.
    order : list of str
        Models by observed accuracy, highest first
        (:func:`evalbars.stats.pairwise.accuracy_order`); contrasts follow it.
    converged : bool
        Whether the REML optimisation met its tolerances (always, on the exact path, whose
        root finding is to machine precision).

    Satisfies :class:`evalbars.stats.fits.Fit` (``names``, ``params``, ``cov``, ``converged``).
    """

    model_spec: str
    method: str
    names: list
    params: np.ndarray
    cov: np.ndarray
    variance: dict
    boundary: dict
    reml_criterion: float
    n_obs: int
    n_questions: int
    n_categories: int
    order: list = field(default_factory=list)
    converged: bool = True


def model_specs(wide: WideScores) -> tuple:
    """The specifications ``wide`` supports: :data:`MODEL_SPECS` on two or more categories
    (:data:`QUESTION_SPECS`, the question-only model, on one: a category variance cannot be
    estimated from a single category), and :data:`EPOCH_SPECS` (or
    :data:`QUESTION_EPOCH_SPECS`) when some (question, model) cell holds repeated samples
    (``wide.has_repeats``) that differ: with every cell's samples alike the residual variance
    is zero and the question-by-model variance cannot be separated from it.

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> wide = WideScores(np.eye(2), ["a", "b"], np.arange(2), np.array(["x", "y"]))
    >>> model_specs(wide)
    ('category', 'category_question')
    >>> model_specs(WideScores(np.eye(2), ["a", "b"], np.arange(2), np.array(["x", "y"]),
    ...                        samples=np.full((2, 2), 3), within_ss=np.full((2, 2), 0.5)))
    ('category', 'category_question', 'category_question_model')
    >>> model_specs(WideScores(np.eye(2), ["a", "b"], np.arange(2), np.array(["x", "x"])))
    ('question',)
    """
    varied = wide.has_repeats and wide.within_squares.sum() > 0
    if np.unique(np.asarray(wide.categories)).size < 2:
        return QUESTION_SPECS + QUESTION_EPOCH_SPECS if varied else QUESTION_SPECS
    return MODEL_SPECS + EPOCH_SPECS if varied else MODEL_SPECS


def blocked_spec(wide: WideScores) -> str:
    """The specification of the blocked reading of a pair on ``wide`` (:data:`BLOCKED_SPECS`):
    the paper's nested model ``category_question``, or ``question`` on data with fewer than
    two categories."""
    return BLOCKED_SPECS[0] if np.unique(np.asarray(wide.categories)).size > 1 else BLOCKED_SPECS[1]


def fit_obstacle(wide: WideScores, model_spec: str) -> str | None:
    """Why ``model_spec`` cannot be fitted to ``wide``, in one sentence naming the models, or None.

    A specification with a question effect needs variation within some question:
    two models' cell means differing on some question, or a cell's samples differing
    (``wide.within_squares``).
    Without it (every model scores alike on each question) the question and residual
    variances cannot be told apart: the REML criterion has no minimum (it falls without
    bound as the residual variance goes to 0). The ``category`` model pools both and is
    always defined.

    Examples
    --------
    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> alike = WideScores(np.array([[1.0, 1.0], [0.0, 0.0]]), ["a", "b"], np.arange(2),
    ...                    np.array(["x", "x"]))
    >>> fit_obstacle(alike, "category") is None
    True
    >>> fit_obstacle(alike, "category_question")
    'a and b score alike on every question (no within-question variation to separate the question variance from the residual)'
    >>> apart = WideScores(np.array([[1.0, np.nan], [np.nan, 0.0]]), ["a", "b"], np.arange(2),
    ...                    np.array(["x", "x"]))
    >>> fit_obstacle(apart, "category_question")[:45]
    'no question has more than one score (no two m'
    """
    scores = np.asarray(wide.scores, dtype=float)
    if int(np.isfinite(scores).any(axis=1).sum()) < 2:
        return "one question: no question or residual variance can be estimated from it"
    if model_spec == "category":
        return None
    # Rows in blocks (no copy of the matrix); the first question with variation settles it.
    for rows in blocks(*scores.shape):
        block = scores[rows]
        answered = np.isfinite(block)
        highest = np.where(answered, block, -np.inf).max(axis=1, initial=-np.inf)
        lowest = np.where(answered, block, np.inf).min(axis=1, initial=np.inf)
        if not ((highest == lowest) | ~answered.any(axis=1)).all():
            return None
    if wide.within_ss is not None and np.any(np.asarray(wide.within_ss) > 0):
        return None
    if int((np.isfinite(scores).sum(axis=1) > 1).sum()) == 0:
        # Not one question with two scores: nothing within questions, whoever answered what.
        return (
            "no question has more than one score (no two models answered the same question), so "
            "no within-question variation separates the question variance from the residual"
        )
    names = list(wide.models)
    listed = (
        " and ".join([", ".join(names[:-1]), names[-1]])
        if len(names) <= 6
        else f"{', '.join(names[:5])} and {len(names) - 5} more models"
    )
    return (
        f"{listed} score alike on every question (no within-question variation to separate the "
        "question variance from the residual)"
    )


def fit_lmm(wide: WideScores, model_spec: str, method: str = "auto") -> LmmFit:
    """Fit one of the :data:`FORMULAS` by REML.

    Parameters
    ----------
    wide : WideScores
        Question-by-model cell means (NaN where a model has no score), with their
        sample counts and within-cell sums of squares when cells hold several samples.
    model_spec : {"category", "category_question", "category_question_model"}
        Random effects: ``(1|category)``; ``(1|category) + (1|category:question)``; the
        same ``+ (1|category:question:model)`` (needs repeated samples).
    method : {"auto", "exact", "general"}
        ``auto`` takes ``exact`` for complete, balanced data and ``general`` otherwise;
        see the module docstring. ``exact`` refuses other data.

    Returns
    -------
    LmmFit

    Notes
    -----
    In complete, balanced data the estimates have closed forms given the variance
    ratios: the contrast :math:`\\hat\\beta_a - \\hat\\beta_b` is the difference of
    column means (OLS = GLS within questions) with variance :math:`2\\hat\\sigma_e^2/Q`,
    :math:`\\sigma_e^2 = \\sigma_w^2 + \\sigma^2/n` the variance of a cell mean about
    its question's level; the level of :math:`\\hat\\beta` is the GLS mean
    :math:`\\hat\\mu = \\sum_c a_c \\bar y_c / \\sum_c a_c`,
    :math:`a_c = n_c/(\\varphi + n_c\\tau^2)`, :math:`\\varphi = \\sigma_q^2 + \\sigma_e^2/K`,
    which equals the grand mean only when categories are equal in size or
    :math:`\\tau^2 = 0`; so :math:`\\hat\\beta_m = \\bar y_{\\cdot m} - \\bar y + \\hat\\mu` and
    :math:`\\mathrm{Cov}(\\hat\\beta) = (\\hat\\sigma_e^2/Q)(I - J/K) + J/\\sum_c a_c`.
    In the nested model with one sample per cell and interior estimates,
    :math:`\\hat\\sigma^2 = SS_{within}/((Q-1)(K-1))`, the repeated-measures
    ANOVA error mean square; in the three-term model with interior estimates,
    :math:`\\hat\\sigma^2` is the within-cell mean square and :math:`\\hat\\sigma_e^2`
    the cell means' RM-ANOVA error mean square.
    """
    return fit_lmms(wide, [model_spec], method)[0]


def fit_lmms(wide: WideScores, model_specs, method: str = "auto") -> list:
    """:func:`fit_lmm` of each of ``model_specs`` to the same data, in order.

    The passes over the score matrix that do not depend on the specification (the cells and
    their checks, the strata of the exact path, the accuracy order) are made once for all.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    shared, strata, order, fits = None, None, None, []
    for model_spec in model_specs:
        cells = prepare(wide, model_spec, shared)
        shared = cells
        chosen = ("exact" if cells.balanced else "general") if method == "auto" else method
        if chosen == "exact":
            if not cells.balanced:
                raise ValueError(
                    "the exact path needs every model scored on every question, the same number "
                    "of times; use method='general' (or 'auto') for incomplete or unbalanced data"
                )
            n_rep = int(cells.counts.flat[0])
            if strata is None:
                strata = strata_stats(
                    cells.means, cells.codes, n_rep=n_rep, ss_cells=cells.ss_cells
                )
            fixed, cov, est = fit_exact(
                cells.means,
                cells.codes,
                model_spec,
                n_rep=n_rep,
                ss_cells=cells.ss_cells,
                st=strata,
            )
            converged = True
        else:
            fixed, cov, est, converged = fit_general(cells, model_spec)
            if not converged:
                log.warning(
                    "%s fit (general path) did not converge: its estimates may be off", model_spec
                )
        names = COMPONENTS[model_spec]
        variance = {name: float(est[name]) for name in names}
        boundary = {name: bool(variance[name] <= 0.0) for name in names}
        flagged = [n for n, b in boundary.items() if b]
        if flagged:
            log.info("%s fit is singular: %s variance at the boundary 0", model_spec, flagged)
        order = accuracy_order(wide) if order is None else order
        fits.append(
            LmmFit(
                model_spec=model_spec,
                method=chosen,
                names=list(wide.models),
                params=np.asarray(fixed, dtype=float),
                cov=np.asarray(cov, dtype=float),
                variance=variance,
                boundary=boundary,
                reml_criterion=float(est["deviance"]),
                n_obs=cells.n_obs,
                n_questions=int(cells.means.shape[0]),
                n_categories=cells.n_categories,
                order=list(order),
                converged=bool(converged),
            )
        )
    return fits


def variance_components(fits) -> pd.DataFrame:
    """Tidy table of REML variance components of one or more fits.

    Returns
    -------
    DataFrame
        ``model_spec, component, variance, boundary, method``; components in the
        order of :data:`COMPONENTS` (``category, question, question_model, residual``).
    """
    if isinstance(fits, LmmFit):
        fits = [fits]
    rows = [
        (fit.model_spec, name, fit.variance[name], fit.boundary[name], fit.method)
        for fit in fits
        for name in COMPONENTS[fit.model_spec]
    ]
    return pd.DataFrame(rows, columns=["model_spec", "component", "variance", "boundary", "method"])


def lmm_contrasts(fit: LmmFit, alpha: float = ALPHA) -> pd.DataFrame:
    """All pairwise contrasts of the estimated marginal means, with Wald z-tests.

    Pairs follow :func:`evalbars.stats.pairwise.model_pairs` over the accuracy order
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
    return contrast_table([fit], alpha=alpha)


#: Columns of :func:`lmm_contrasts` and :func:`contrast_table`, in order.
CONTRAST_COLUMNS = [
    "model_spec",
    "model_a",
    "model_b",
    "estimate",
    "se",
    "z",
    "p",
    "p_bonferroni",
    "p_holm",
    "p_tukey",
    "ci_low",
    "ci_high",
]


def _contrast_statistics(fit: LmmFit, alpha: float, order: list, first, second) -> dict:
    """The statistics of :func:`lmm_contrasts` (every column after ``model_b``) of the pairs
    ``(order[first[i]], order[second[i]])``."""
    # Fixed-effect index of each pair's models, from the models' positions (mapped once per
    # model, not once per pair).
    position = pd.Index(fit.names).get_indexer(order)
    ia, ib = position[first], position[second]
    estimate = fit.params[ia] - fit.params[ib]
    se = contrast_se(fit, ia, ib)
    del ia, ib
    z = estimate / se
    # the normal tail by ndtr and its quantile by ndtri, as scipy.stats.norm computes them
    # (whose import costs half a second a job)
    p = 2.0 * special.ndtr(-np.abs(z))
    half = -special.ndtri(alpha / 2) * se
    return {
        "estimate": estimate,
        "se": se,
        "z": z,
        "p": p,
        "p_bonferroni": adjust_pvalues(p, "bonferroni"),
        "p_holm": adjust_pvalues(p, "holm"),
        "p_tukey": tukey_p(z, len(fit.names)),
        # A difference of two mean scores in [0, 1] lies in [-1, 1]: so does its interval.
        "ci_low": np.clip(estimate - half, -1.0, 1.0),
        "ci_high": np.clip(estimate + half, -1.0, 1.0),
    }


def contrast_table(fits, skipped=(), alpha: float = ALPHA, order=None) -> pd.DataFrame:
    """:func:`lmm_contrasts` of each fit, then :func:`unfitted_contrasts` of each skipped
    specification, in one table: the rows ``pd.concat`` of those tables gives (index 0, 1, ...
    through each of them), with every column allocated once at its full length and the model
    names gathered in Arrow, so that at thousands of models (ten million pairs a fit) no table
    is held twice and no Python object is made per pair; the score matrix is not needed (the
    caller may have let it go).

    Pairs follow :func:`evalbars.stats.pairwise.model_pairs` over each fit's accuracy order; the
    skipped specifications' pairs follow ``order`` (default: the first fit's accuracy order,
    :attr:`LmmFit.order`, which is that of the data).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    orders = [
        fit.order or [m for _, m in sorted(zip(-fit.params, fit.names, strict=True))]
        for fit in fits
    ]
    if skipped:
        orders += [list(order) if order is not None else fits[0].order] * len(skipped)
    specs = [fit.model_spec for fit in fits] + list(skipped)
    sizes = [len(order) * (len(order) - 1) // 2 for order in orders]
    total = sum(sizes)
    numbers = {column: np.empty(total) for column in CONTRAST_COLUMNS[3:]}
    model_a, model_b = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    start = offset = 0
    for i, (order, size) in enumerate(zip(orders, sizes, strict=True)):
        rows = slice(start, start + size)
        first, second = np.triu_indices(len(order), k=1)
        model_a[rows], model_b[rows] = first + offset, second + offset
        if i < len(fits):
            for column, values in _contrast_statistics(
                fits[i], alpha, order, first, second
            ).items():
                numbers[column][rows] = values
        else:
            for values in numbers.values():
                values[rows] = np.nan
        start, offset = start + size, offset + len(order)
    labels = [name for order in orders for name in order]
    table = pd.DataFrame(
        {
            "model_spec": repeated_text(specs, sizes),
            "model_a": text_column(labels, model_a),
            "model_b": text_column(labels, model_b),
        }
        | numbers,
        columns=CONTRAST_COLUMNS,
        copy=False,
    )
    if len(sizes) > 1:
        table.index = np.concatenate([np.arange(size) for size in sizes])
    return table


def unfitted_contrasts(wide: WideScores, model_spec: str) -> pd.DataFrame:
    """The rows :func:`lmm_contrasts` would give for a specification that was not fitted.

    Same columns and pairs (:func:`evalbars.stats.pairwise.model_pairs` over the accuracy
    order), every statistic NaN, so that the tables built on the contrasts keep
    one row per pair and show the fit as missing (see :func:`fit_obstacle`).
    """
    return contrast_table([], [model_spec], order=accuracy_order(wide))
