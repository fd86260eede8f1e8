r"""Prediction-powered inference (PPI++) for judge-scored evals: a few human labels correct the judge.

Data contract. Every (question, model) has a judge score :math:`\hat Y` (the ``correct`` of a
judge-scored eval); a human label :math:`Y` exists on a subset of questions, chosen
**uniformly at random** (NaN elsewhere). For one model, its n labelled questions give
:math:`(Y_i, \hat Y_i)` and its other N questions (disjoint from the labelled ones: a question
is one or the other, never both) give the judge's :math:`\tilde Y_j`. The PPI estimate with
weight :math:`\lambda` [1]_ [2]_ is

.. math::

    \hat\theta_\lambda = \lambda\,\bar{\tilde Y} + \overline{(Y - \lambda\hat Y)}, \qquad
    \widehat{SE}_\lambda^2 = \frac{\lambda^2 \hat\sigma^2(\tilde Y)}{N}
    + \frac{\hat\sigma^2(Y - \lambda\hat Y)}{n},

the judge's mean on the unlabelled questions plus a rectifier: the judge's mean error on the
labelled ones. :math:`\lambda = 0` is the human-only (classical) estimate, :math:`\lambda = 1`
plain PPI, which can be *wider* than human-only when the judge is weak (the O-PPI-2 oracle of
the tests); PPI++ [2]_ tunes :math:`\lambda` to the variance-minimising

.. math:: \hat\lambda = \mathrm{clip}_{[0, 1]}\,
    \frac{\widehat{\mathrm{Cov}}(Y, \hat Y)}{(1 + n/N)\,\widehat{\mathrm{Var}}(\hat Y)},

never worse than human-only asymptotically. The corrected reading is always PPI++, never plain
PPI. A pair of models is the same on per-question differences :math:`Y = Y_A - Y_B`,
:math:`\hat Y = \hat Y_A - \hat Y_B`, which needs the **same** labelled questions for both
models (:func:`check_same_labelled_questions`); AutoEval [3]_ applies it to LLM evaluation.

Variance conventions, those of ppi-python 0.2.3 (so its numbers are reproduced to 1e-10):
:math:`\hat\sigma^2` in the SEs and :math:`\widehat{\mathrm{Cov}}(Y, \hat Y)` over the labelled
questions divide by their counts (``ddof=0``); :math:`\widehat{\mathrm{Var}}(\hat Y)` in
:math:`\hat\lambda` is over all n + N questions with ``ddof=1``. The judge-only and human-only
SEs are ``ddof=0`` too, as in :func:`evalbars.stats.pairwise.pairwise_table`.

**Labels chosen by outcome (not uniformly at random) invalidate the inference.** The rectifier
estimates the judge's error without bias only on a uniformly random subset. Labelling the
questions the judge got wrong, or those a reviewer flagged, biases it by an amount no number
of labels removes: every interval under-covers, the human-only one too
(:mod:`evalbars.studies.ppi_coverage` shows by how much).

**Few labels.** The normal interval of ppi-python covers far below its level on a few labels:
in :mod:`evalbars.studies.ppi_coverage`'s setting 70 % at 10 labels, 82 % at 15, 91 % at 30
(95 % nominal). A t quantile does not repair it (76 % at 10): the failure is the judge errors
that 10 labels do not show. A judge that passes 12 % of answers wrongly shows none on 28 % of
10-label samples; there :math:`\hat\lambda \approx 1`, the rectifier is constant, its
variance 0, and the interval shrinks to the judge's own. The interval and test therefore add
:data:`PSEUDO_LABELS` pseudo-labels to the labelled questions, in the manner of Agresti and
Coull's "add two successes and two failures" [4]_ and Agresti and Min's half a count in each
cell of a matched pair [5]_, and of the Dirichlet prior on the judge-human table of Bayesian
PPI [6]_: two pseudo-questions whose (human, judge) scores of each model are spread evenly over
the corners :math:`\{0, 1\}^2` (weight 1/2 each); a pair's are the differences of the two
models' corners (weight 1/8 on each of the 16). With :math:`(y_k, \hat y_k, w_k)` the
pseudo-labels, :math:`m = \sum_k w_k` and :math:`r = y - \hat\lambda\hat y`,

.. math::

    \tilde r = \frac{\sum_{i \le n} r_i + \sum_k w_k r_k}{n + m}, \quad
    \tilde\theta = \hat\lambda\bar{\tilde Y} + \tilde r, \quad
    \widetilde{SE}^2 = \frac{\hat\lambda^2 \hat\sigma^2(\tilde Y)}{N}
    + \frac{\sum_i (r_i - \tilde r)^2 + \sum_k w_k (r_k - \tilde r)^2}{(n + m)(n + m - 1)},

and the interval is :math:`\tilde\theta \pm z\,\widetilde{SE}` (the ``interval_estimate``
and ``interval_se`` of :class:`PPIMeans`; the p-value of :func:`normal_p_value` uses the same
two). The estimate, its SE and :math:`\hat\lambda` stay ppi-python's; at
:math:`\hat\lambda = 0` this is the human-only interval with the same pseudo-labels, and
``pseudo_labels=0`` gives ppi-python's interval exactly. The pseudo-labels matter only where
labels are few (their weight is 2 of n + 2). Measured coverage (95 % nominal, 4,000
replicates, :mod:`evalbars.studies.ppi_coverage`) is in :doc:`/methods/judge-correction`.
Below :data:`MIN_LABELS` labels no reading decides anything (``decides`` is False): the
interval is still shown.

Arrays of shape ``(..., questions, models)`` (simulation replicates, say, before the questions)
give results of shape ``(..., models)``: nothing loops over questions, models or stacks.

References
----------
.. [1] Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. and Zrnic, T. (2023).
   Prediction-powered inference. Science 382(6671), 669-674. arXiv:2301.09633.
.. [2] Angelopoulos, A. N., Duchi, J. C. and Zrnic, T. (2023). PPI++: Efficient
   prediction-powered inference. arXiv:2311.01453.
.. [3] Boyeau, P., Angelopoulos, A. N., Li, T., Yosef, N., Malik, J. and Jordan, M. I.
   (2024). AutoEval done right: using synthetic data for model evaluation. arXiv:2403.07008.
.. [4] Agresti, A. and Coull, B. A. (1998). Approximate is better than "exact" for interval
   estimation of binomial proportions. The American Statistician 52(2), 119-126.
.. [5] Agresti, A. and Min, Y. (2005). Simple improved confidence intervals for comparing
   matched proportions. Statistics in Medicine 24(5), 729-740.
.. [6] Hofer, R. A., Maynez, J., Dhingra, B., Fisch, A., Globerson, A. and Cohen, W. W.
   (2024). Bayesian prediction-powered inference. arXiv:2405.06034.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from evalbars.defaults import ALPHA, LEVEL, POWER
from evalbars.stats.intervals import z_for_level
from evalbars.stats.pairwise import two_sided_normal_p
from evalbars.stats.planning.sample_size import questions_for_effect

__all__ = [
    "READINGS",
    "PSEUDO_LABELS",
    "MIN_LABELS",
    "PPIMeans",
    "LabelPlan",
    "ppi_means",
    "ppi_pair_means",
    "check_same_labelled_questions",
    "ppi_covariance",
    "normal_interval",
    "normal_p_value",
    "label_multiplier",
    "labels_needed",
]

#: The readings of a :class:`PPIMeans`, the corrected one first.
READINGS = ("ppi++", "human_only", "judge_only")
#: Pseudo-labels the small-sample interval adds (module docstring): two pseudo-questions.
PSEUDO_LABELS = 2.0
#: Fewest labels with which a judge-corrected (or human-only) reading decides: with fewer, its
#: interval is shown and nothing is decided on it (coverage measured down to 10 labels).
MIN_LABELS = 10


@dataclass(frozen=True, eq=False)
class PPIMeans:
    """PPI++ means (one per model or pair) beside the judge-only and human-only readings.

    Every field is an array with the stack shape ``(..., models)`` (or ``(..., pairs)``).

    Attributes
    ----------
    estimate, se : ndarray
        The PPI++ estimate :math:`\\hat\\theta_{\\hat\\lambda}` and its SE (the corrected reading).
    lambda_hat : ndarray
        The power-tuned weight in [0, 1] (or the fixed ``lam`` it was called with).
    rho : ndarray
        Pearson correlation of the human labels and the judge on the labelled questions (NaN
        where either is constant there).
    n_labelled, n_unlabelled : ndarray
        n and N (float).
    n_effective : ndarray
        Human labels that alone would give the PPI++ SE:
        :math:`n\\,\\widehat{SE}_0^2 / \\widehat{SE}_{\\hat\\lambda}^2`; asymptotically
        :math:`n` times :func:`label_multiplier` at :math:`\\hat\\rho`.
    judge_only_estimate, judge_only_se : ndarray
        The judge's mean over all n + N questions and its naive SE
        :math:`\\hat\\sigma(\\hat Y)/\\sqrt{n + N}` (``ddof=0``): biased as the judge is.
    human_only_estimate, human_only_se : ndarray
        The labelled questions alone: :math:`\\bar Y` and :math:`\\hat\\sigma(Y)/\\sqrt n`, the
        same arithmetic as the PPI estimate at :math:`\\lambda = 0`, so equal to it bit for bit.
        With fewer than 2 labels every field but the judge-only ones and the counts is NaN.
    interval_estimate, interval_se : ndarray
        Centre and SE of the PPI++ interval and test with the pseudo-labels (module docstring):
        :math:`\\tilde\\theta` and :math:`\\widetilde{SE}`; equal to ``estimate`` and ``se``
        with ``pseudo_labels=0``.
    human_only_interval_estimate, human_only_interval_se : ndarray
        The same at :math:`\\lambda = 0`: the human-only interval with the pseudo-labels.
    """

    estimate: np.ndarray
    se: np.ndarray
    lambda_hat: np.ndarray
    rho: np.ndarray
    n_labelled: np.ndarray
    n_unlabelled: np.ndarray
    n_effective: np.ndarray
    judge_only_estimate: np.ndarray
    judge_only_se: np.ndarray
    human_only_estimate: np.ndarray
    human_only_se: np.ndarray
    interval_estimate: np.ndarray
    interval_se: np.ndarray
    human_only_interval_estimate: np.ndarray
    human_only_interval_se: np.ndarray

    @property
    def decides(self) -> np.ndarray:
        """Whether the labels are enough (:data:`MIN_LABELS`) for a verdict on the reading."""
        return self.n_labelled >= MIN_LABELS

    def estimate_and_se(self, reading: str) -> tuple[np.ndarray, np.ndarray]:
        """``(estimate, se)`` of one of :data:`READINGS`."""
        if reading == "ppi++":
            return self.estimate, self.se
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
        return getattr(self, f"{reading}_estimate"), getattr(self, f"{reading}_se")

    def interval_estimate_and_se(self, reading: str) -> tuple[np.ndarray, np.ndarray]:
        """``(centre, se)`` of the interval and test of one of :data:`READINGS`: with the
        pseudo-labels for the PPI++ and human-only readings, the judge-only one as it is."""
        if reading == "ppi++":
            return self.interval_estimate, self.interval_se
        if reading == "human_only":
            return self.human_only_interval_estimate, self.human_only_interval_se
        return self.estimate_and_se(reading)

    def intervals(self, level: float = LEVEL) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{reading: (low, high)}``: two-sided normal intervals of every reading (the
        small-sample ones of :meth:`interval_estimate_and_se`), not cut to any range."""
        return {r: normal_interval(*self.interval_estimate_and_se(r), level) for r in READINGS}


class LabelPlan(NamedTuple):
    """Labels a PPI++ reading needs (:func:`labels_needed`), not rounded."""

    labels: np.ndarray
    human_only_labels: np.ndarray
    multiplier: np.ndarray


def normal_interval(estimate, se, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided normal interval :math:`\\hat\\theta \\pm z_{1/2 + \\text{level}/2}\\,SE`.

    Examples
    --------
    >>> low, high = normal_interval(0.4, 0.0346410, 0.95)
    >>> round(float(low), 6), round(float(high), 6)
    (0.332105, 0.467895)
    """
    z = z_for_level(level)
    estimate, se = np.asarray(estimate, dtype=float), np.asarray(se, dtype=float)
    return estimate - z * se, estimate + z * se


def normal_p_value(estimate, se, null=0.0) -> np.ndarray:
    """Two-sided p-value of :math:`H_0: \\theta = \\text{null}`, :math:`2\\Phi(-|z|)`.

    :func:`evalbars.stats.pairwise.two_sided_normal_p` on ``estimate - null``: a zero
    difference with zero SE gives p = 1.
    """
    diff = np.asarray(estimate, dtype=float) - np.asarray(null, dtype=float)
    return two_sided_normal_p(diff, np.asarray(se, dtype=float))[1]


def _judge_and_human(judge, human) -> tuple[np.ndarray, np.ndarray]:
    judge = np.asarray(judge, dtype=float)
    human = np.asarray(human, dtype=float)
    if judge.ndim < 2 or judge.shape != human.shape:
        raise ValueError(
            "judge and human must have one shape (..., questions, models), got "
            f"{judge.shape} and {human.shape}"
        )
    if not np.isfinite(judge).all():
        raise ValueError("every (question, model) needs a finite judge score; found NaN or inf")
    if np.isinf(human).any():
        raise ValueError("human labels must be finite, or NaN where a question is unlabelled")
    return judge, human


def _masked_mean_and_var(values, mask, count) -> tuple[np.ndarray, np.ndarray]:
    """Mean and ``ddof=0`` variance over the questions (axis -2) where ``mask``; two passes,
    so that round-off does not grow with the mean."""
    mean = np.where(mask, values, 0.0).sum(axis=-2) / count
    deviation = np.where(mask, values - mean[..., None, :], 0.0)
    return mean, (deviation**2).sum(axis=-2) / count


#: One model's pseudo-labels: (human, judge, share of the weight) at the corners of [0, 1]^2.
_MODEL_CORNERS = (np.array([0.0, 0.0, 1.0, 1.0]), np.array([0.0, 1.0, 0.0, 1.0]), np.full(4, 0.25))
#: A pair's: the differences of the two models' corners, 1/16 of the weight on each of the 16.
_PAIR_CORNERS = tuple((v[:, None] - v[None, :]).ravel() for v in _MODEL_CORNERS[:2]) + (
    (_MODEL_CORNERS[2][:, None] * _MODEL_CORNERS[2][None, :]).ravel(),
)


def _with_pseudo_labels(
    judge, human, labelled, n, big_n, unlabelled_mean, unlabelled_var, lam, weight, corners
):
    """``(centre, se)`` of the small-sample interval at weight ``lam``: the rectifier's mean and
    variance (``ddof=1``: of n + m weighted points, n + m - 1) over the labelled questions and
    ``weight`` pseudo-labels at ``corners``."""
    corner_human, corner_judge, share = corners
    pseudo = corner_human - lam[..., None] * corner_judge  # (..., models, corners)
    pseudo_weight = weight * share
    total = n + weight
    rectifier = human - lam[..., None, :] * judge
    mean = (np.where(labelled, rectifier, 0.0).sum(axis=-2) + pseudo @ pseudo_weight) / total
    squares = np.where(labelled, (rectifier - mean[..., None, :]) ** 2, 0.0).sum(axis=-2)
    squares = squares + ((pseudo - mean[..., None]) ** 2) @ pseudo_weight
    imputed_mean = np.where(big_n > 0, lam * unlabelled_mean, 0.0)
    imputed_var = np.where(big_n > 0, lam**2 * unlabelled_var / big_n, 0.0)
    return imputed_mean + mean, np.sqrt(imputed_var + squares / (total * (total - 1)))


def _rectified_mean(judge, human, labelled, n, big_n, unlabelled_mean, unlabelled_var, lam):
    """``(estimate, se)`` of PPI at weight ``lam``: one arithmetic path for every lambda, so that
    lambda = 0 is the human-only reading to the last bit (``0 * judge`` is an exact zero, and so
    is the imputed term)."""
    rectifier = np.where(labelled, human - lam[..., None, :] * judge, 0.0)
    rectifier_mean, rectifier_var = _masked_mean_and_var(rectifier, labelled, n)
    # No unlabelled questions: nothing to impute (lambda_hat is 0 there too).
    imputed_mean = np.where(big_n > 0, lam * unlabelled_mean, 0.0)
    imputed_var = np.where(big_n > 0, lam**2 * unlabelled_var / big_n, 0.0)
    return imputed_mean + rectifier_mean, np.sqrt(imputed_var + rectifier_var / n)


def ppi_means(judge, human, *, lam=None, pseudo_labels: float = PSEUDO_LABELS) -> PPIMeans:
    """PPI++ mean of each model's human score, with the judge-only and human-only readings.

    Parameters
    ----------
    judge : array_like, shape (..., questions, models)
        Judge scores (0/1 or continuous), finite everywhere.
    human : array_like, shape (..., questions, models)
        Human labels on a uniformly random subset of questions, NaN elsewhere. Each model
        (column) may have its own labelled set; for pairs use :func:`ppi_pair_means`.
    lam : array_like, optional
        None (the default, and the only reading to report): the power-tuned
        :math:`\\hat\\lambda` of the module docstring. A number (or array broadcasting to the
        result) fixes :math:`\\lambda` for checks: 0 gives the human-only reading exactly, 1
        plain PPI.
    pseudo_labels : float
        Weight of the pseudo-labels of the small-sample interval (module docstring), spread
        over the corners of [0, 1]^2; 0 gives ppi-python's normal interval.

    Returns
    -------
    PPIMeans
        Fields of shape ``(..., models)``.

    Notes
    -----
    With :math:`\\hat\\sigma^2` the ``ddof=0`` variance over the labelled (or unlabelled)
    questions and :math:`s^2_{\\hat Y}` the ``ddof=1`` variance of the judge over all n + N,

    .. math::

        \\hat\\lambda = \\mathrm{clip}_{[0,1]} \\frac{\\frac1n\\sum_{i \\le n}
        (Y_i - \\bar Y)(\\hat Y_i - \\bar{\\hat Y})}{(1 + n/N)\\, s^2_{\\hat Y}}, \\quad
        \\hat\\theta = \\hat\\lambda\\bar{\\tilde Y} + \\overline{(Y - \\hat\\lambda\\hat Y)}, \\quad
        SE^2 = \\frac{\\hat\\lambda^2\\hat\\sigma^2(\\tilde Y)}{N}
        + \\frac{\\hat\\sigma^2(Y - \\hat\\lambda\\hat Y)}{n}.

    :math:`\\hat\\lambda = 0` where N = 0 (every question labelled: the human-only reading) or
    the judge is constant (it carries no information). ppi-python's ``ppi_mean_ci`` clips
    likewise, its ``ppi_mean_pval`` does not; here the p-value of :func:`normal_p_value` uses
    the clipped :math:`\\hat\\lambda`, so interval and test agree. Valid only under uniformly
    random labelling. After "Prediction-powered inference" (arXiv:2301.09633) and "PPI++:
    Efficient prediction-powered inference" (arXiv:2311.01453), as the module docstring cites.

    Examples
    --------
    The O-PPI-1 oracle: 200 labelled questions, (Y, judge) counts (1,1) 70, (1,0) 10,
    (0,1) 20, (0,0) 100, and 2,000 unlabelled ones the judge passed half of.

    >>> y = np.r_[np.ones(80), np.zeros(120), np.full(2000, np.nan)]
    >>> judge = np.r_[np.ones(70), np.zeros(10), np.ones(20), np.zeros(100), np.ones(1000),
    ...               np.zeros(1000)]
    >>> result = ppi_means(judge[:, None], y[:, None], pseudo_labels=0)
    >>> low, high = result.intervals(0.95)["ppi++"]
    >>> [round(float(v[0]), 6) for v in (result.estimate, low, high, result.lambda_hat)]
    [0.430898, 0.380174, 0.481621, 0.617952]

    With the two pseudo-labels (the default) the interval moves by a hair on 200 labels:

    >>> low, high = ppi_means(judge[:, None], y[:, None]).intervals(0.95)["ppi++"]
    >>> round(float(low[0]), 6), round(float(high[0]), 6)
    (0.380555, 0.482609)
    """
    return _ppi(judge, human, lam, pseudo_labels, _MODEL_CORNERS)


def _ppi(judge, human, lam, pseudo_labels, corners) -> PPIMeans:
    """:func:`ppi_means` with the pseudo-labels at ``corners`` (a model's, or a pair's)."""
    judge, human = _judge_and_human(judge, human)
    labelled = np.isfinite(human)
    questions = judge.shape[-2]
    n = labelled.sum(axis=-2).astype(float)
    big_n = questions - n
    with np.errstate(divide="ignore", invalid="ignore"):
        judge_mean, judge_var = _masked_mean_and_var(judge, np.True_, questions)
        human_mean, human_var = _masked_mean_and_var(human, labelled, n)
        judged_mean, judged_var = _masked_mean_and_var(judge, labelled, n)
        unlabelled_mean, unlabelled_var = _masked_mean_and_var(judge, ~labelled, big_n)
        products = (human - human_mean[..., None, :]) * (judge - judged_mean[..., None, :])
        covariance = np.where(labelled, products, 0.0).sum(axis=-2) / n
        rho = covariance / np.sqrt(human_var * judged_var)
        # ppi-python's pooled variance: np.cov (ddof=1) of the judge over all n + N questions.
        pooled_var = judge_var * questions / (questions - 1)
        tuned = np.clip(covariance / ((1 + n / big_n) * pooled_var), 0.0, 1.0)
        tuned = np.where((big_n > 0) & (pooled_var > 0), tuned, 0.0)
        if lam is None:
            lam = tuned
        lam = np.broadcast_to(np.asarray(lam, dtype=float), n.shape)
        moments = (judge, human, labelled, n, big_n, unlabelled_mean, unlabelled_var)
        estimate, se = _rectified_mean(*moments, lam)
        human_only, human_only_se = _rectified_mean(*moments, np.zeros(n.shape))
        n_effective = n * human_only_se**2 / se**2
        if pseudo_labels:
            smoothed = (float(pseudo_labels), corners)
            centre, centre_se = _with_pseudo_labels(*moments, lam, *smoothed)
            human_centre, human_centre_se = _with_pseudo_labels(
                *moments, np.zeros(n.shape), *smoothed
            )
        else:
            centre, centre_se, human_centre, human_centre_se = (
                estimate,
                se,
                human_only,
                human_only_se,
            )
    few = n < 2
    return PPIMeans(
        estimate=np.where(few, np.nan, estimate),
        se=np.where(few, np.nan, se),
        lambda_hat=np.where(few, np.nan, lam),
        rho=np.where(few, np.nan, rho),
        n_labelled=n,
        n_unlabelled=big_n,
        n_effective=np.where(few, np.nan, n_effective),
        judge_only_estimate=judge_mean,
        judge_only_se=np.sqrt(judge_var / questions),
        human_only_estimate=np.where(few, np.nan, human_only),
        human_only_se=np.where(few, np.nan, human_only_se),
        interval_estimate=np.where(few, np.nan, centre),
        interval_se=np.where(few, np.nan, centre_se),
        human_only_interval_estimate=np.where(few, np.nan, human_centre),
        human_only_interval_se=np.where(few, np.nan, human_centre_se),
    )


def _pair_indices(n_models: int, pairs) -> tuple[np.ndarray, np.ndarray]:
    if pairs is None:
        return np.triu_indices(n_models, k=1)
    first, second = (np.asarray(p, dtype=int).ravel() for p in pairs)
    if first.shape != second.shape:
        raise ValueError("pairs must be two index arrays of one length (first, second)")
    return first, second


def check_same_labelled_questions(human, models=None, pairs=None) -> None:
    """Raise ValueError unless both models of every pair have the same labelled questions.

    Parameters
    ----------
    human : array_like, shape (..., questions, models)
        Human labels, NaN where unlabelled (every stack is checked).
    models : sequence of str, optional
        Model names for the message; default ``model 0``, ``model 1``, ...
    pairs : (array_like, array_like), optional
        Model positions ``(first, second)`` of the pairs; default every pair in
        :func:`numpy.triu_indices` order.

    Raises
    ------
    ValueError
        Naming the first pair (in pair order) whose labelled sets differ, and the first
        question position where they do.

    Examples
    --------
    >>> check_same_labelled_questions([[1.0, np.nan], [0.0, 1.0]], ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: models 'a' and 'b' are labelled on different questions (first at question 0); ...
    """
    labelled = np.isfinite(np.asarray(human, dtype=float))
    if labelled.ndim < 2:
        raise ValueError(f"human must have shape (..., questions, models), got {labelled.shape}")
    questions, n_models = labelled.shape[-2:]
    names = [f"model {k}" for k in range(n_models)] if models is None else list(models)
    if len(names) != n_models:
        raise ValueError(f"{len(names)} model names for {n_models} columns")
    if pairs is None:
        # Equality of sets is transitive: the first differing triu pair is (0, j) for the first
        # model j whose set differs from model 0's, so one comparison per model suffices.
        first, second = np.zeros(n_models - 1, dtype=int), np.arange(1, n_models)
    else:
        first, second = _pair_indices(n_models, pairs)
    if not len(first):  # one model: no pair to check
        return
    differs = labelled[..., first] != labelled[..., second]
    per_pair = differs.reshape(-1, questions, len(first)).any(axis=(0, 1))
    if per_pair.any():
        p = int(np.argmax(per_pair))
        where = differs[..., p].reshape(-1, questions).any(axis=0)
        raise ValueError(
            f"models {names[first[p]]!r} and {names[second[p]]!r} are labelled on different "
            f"questions (first at question {int(np.argmax(where))}); a paired PPI reading needs "
            "human labels for both models on the same uniformly random questions"
        )


def ppi_pair_means(
    judge, human, pairs=None, *, models=None, lam=None, pseudo_labels: float = PSEUDO_LABELS
) -> PPIMeans:
    """PPI++ mean of the per-question difference of each pair of models.

    Parameters
    ----------
    judge, human : array_like, shape (..., questions, models)
        As :func:`ppi_means`; both models of a pair must have the same labelled questions.
    pairs : (array_like, array_like), optional
        Model positions ``(first, second)``; default every pair in :func:`numpy.triu_indices`
        order (the rows of :func:`evalbars.stats.pairwise.pairwise_table`).
    models : sequence of str, optional
        Names for the error of :func:`check_same_labelled_questions`.
    lam, pseudo_labels : optional
        As :func:`ppi_means`; the pseudo-labels of a pair are the differences of the two
        models' (module docstring).

    Returns
    -------
    PPIMeans
        Fields of shape ``(..., pairs)``: the reading of :math:`\\theta_A - \\theta_B` from
        :math:`Y = Y_A - Y_B` and :math:`\\hat Y = \\hat Y_A - \\hat Y_B`. ``rho`` is the
        correlation of the differences (not of either model's scores); the judge-only SE is the
        paired one.

    Raises
    ------
    ValueError
        When the two models of a pair are labelled on different questions.
    """
    judge, human = _judge_and_human(judge, human)
    check_same_labelled_questions(human, models, pairs)
    first, second = _pair_indices(judge.shape[-1], pairs)
    return _ppi(
        judge[..., first] - judge[..., second],
        human[..., first] - human[..., second],
        lam,
        pseudo_labels,
        _PAIR_CORNERS,
    )


def ppi_covariance(judge, human, lam) -> np.ndarray:
    """Covariance matrix of the models' PPI estimates at weights ``lam`` (plug-in, ``ddof=0``).

    Parameters
    ----------
    judge, human : array_like, shape (questions, models)
        As :func:`ppi_means`, every model labelled on the **same** questions.
    lam : array_like, shape (models,)
        Each model's weight (the ``lambda_hat`` of :func:`ppi_means`).

    Returns
    -------
    ndarray, shape (models, models)
        :math:`\\Sigma_{ab} = \\lambda_a\\lambda_b\\,\\hat\\sigma(\\tilde Y_a, \\tilde Y_b)/N +
        \\hat\\sigma(Y_a - \\lambda_a\\hat Y_a,\\, Y_b - \\lambda_b\\hat Y_b)/n`: the unlabelled
        and labelled questions are independent samples, so their terms add (Angelopoulos et
        al. 2023, arXiv:2311.01453, the variance of the PPI++ mean, taken per pair of
        coordinates). The diagonal is the square of :func:`ppi_means`' ``se`` exactly; the
        weights are treated as fixed, as that SE does.
    """
    judge, human = _judge_and_human(judge, human)
    if judge.ndim != 2:
        raise ValueError(f"judge must have shape (questions, models), got {judge.shape}")
    labelled = np.isfinite(human)
    check_same_labelled_questions(human)
    rows = labelled[:, 0] if labelled.shape[1] else np.zeros(len(judge), dtype=bool)
    lam = np.asarray(lam, dtype=float)
    n, big_n = float(rows.sum()), float((~rows).sum())

    def covariance(values):
        centred = values - values.mean(axis=0)
        return centred.T @ centred / len(values)

    rectifier = human[rows] - lam * judge[rows]
    total = covariance(rectifier) / n
    if big_n > 0:
        total = total + np.outer(lam, lam) * covariance(judge[~rows]) / big_n
    return total


def label_multiplier(rho, labels=0.0, questions=np.inf) -> np.ndarray:
    """Effective-sample-size multiplier of PPI++: :math:`1 / (1 - \\rho^2 (1 - n/N))`.

    Parameters
    ----------
    rho : array_like
        Correlation of the human label and the judge score (of the per-question differences,
        for a pair).
    labels, questions : array_like
        n labelled questions out of N questions in all (labelled and unlabelled); the
        default N = inf is the limit N >> n.

    Returns
    -------
    ndarray
        How many human labels one label is worth under PPI++ with the optimal weight.

    Notes
    -----
    With the optimal :math:`\\lambda^* = \\mathrm{Cov}(Y, \\hat Y) / ((1 + n/U)\\,\\mathrm{Var}
    (\\hat Y))` and U = N - n unlabelled questions, the PPI variance is
    :math:`\\frac{\\sigma_Y^2}{n}(1 - \\rho^2 \\frac{U}{U + n})`, against :math:`\\sigma_Y^2/n`
    for the labels alone, and :math:`U/(U + n) = 1 - n/N`: with N counting every question the
    rule is the exact asymptotic variance ratio (with N the unlabelled count, it agrees to first
    order in n/N). It assumes random labels and the tuned weight; plain PPI can lose.

    Examples
    --------
    >>> [round(float(label_multiplier(r)), 4) for r in (0.7, 0.375)]
    [1.9608, 1.1636]
    """
    rho = np.asarray(rho, dtype=float)
    share_unlabelled = 1 - np.asarray(labels, dtype=float) / np.asarray(questions, dtype=float)
    return 1 / (1 - rho**2 * share_unlabelled)


def labels_needed(
    variance,
    rho,
    *,
    gap=None,
    target_se=None,
    alpha: float = ALPHA,
    power: float = POWER,
    questions=np.inf,
) -> LabelPlan:
    """Human labels for a PPI++ reading to reach ``target_se``, or to find ``gap`` with ``power``.

    Parameters
    ----------
    variance : array_like
        Variance of one human label: :math:`p(1-p)` for one model's 0/1 scores,
        :math:`\\delta - g^2` for a pair's per-question difference (disagreement rate
        :math:`\\delta`, gap g).
    rho : array_like
        Judge-human correlation (of the differences, for a pair).
    gap, target_se : array_like
        Exactly one: the true gap (proportion) a two-sided z-test at ``alpha`` must find with
        ``power``, or the standard error to reach.
    alpha, power : float
        Two-sided level and power (with ``gap``).
    questions : array_like
        N, every question the judge scored (labelled or not); default inf (N >> n).

    Returns
    -------
    LabelPlan
        ``human_only_labels`` :math:`n_0` (:math:`\\sigma^2/SE^2`, or
        :func:`evalbars.stats.planning.sample_size.questions_for_effect`:
        :math:`(z_{1-\\alpha/2} + z_{1-\\beta})^2\\sigma^2/g^2`), ``labels`` n solving
        :math:`n \\cdot` :func:`label_multiplier` :math:`(\\rho, n, N) = n_0`, that is

        .. math:: n = \\frac{n_0 (1 - \\rho^2)}{1 - n_0\\rho^2/N},

        and the ``multiplier`` :math:`n_0/n`. Not rounded (take the ceiling); infinite where
        :math:`n_0 > N` (labelling every question would not do: the reading is then the
        human-only one on N questions).

    Examples
    --------
    A 5-point gap between models that disagree on 30 % of questions, judge-difference
    correlation 0.7, 80 % power at 5 %: 934 human-only labels, 477 with PPI++ on a large
    benchmark, 618 on one of 2,000 questions.

    >>> plan = labels_needed(0.30 - 0.05**2, 0.7, gap=0.05)
    >>> [round(float(v), 2) for v in plan]
    [476.35, 934.02, 1.96]
    >>> round(float(labels_needed(0.30 - 0.05**2, 0.7, gap=0.05, questions=2000).labels), 1)
    617.7
    """
    if (gap is None) == (target_se is None):
        raise ValueError("give exactly one of gap and target_se")
    variance = np.asarray(variance, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if gap is None:
            human_only = variance / np.asarray(target_se, dtype=float) ** 2
        else:
            effect = np.abs(np.asarray(gap, dtype=float))
            human_only = questions_for_effect(effect, variance, alpha=alpha, power=power)
        rho_squared = np.asarray(rho, dtype=float) ** 2
        questions = np.asarray(questions, dtype=float)
        labels = human_only * (1 - rho_squared) / (1 - human_only * rho_squared / questions)
        labels = np.where(human_only > questions, np.inf, labels)
        multiplier = human_only / labels
    return LabelPlan(labels, human_only, multiplier)
