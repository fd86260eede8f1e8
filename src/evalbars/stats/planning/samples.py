"""More questions or more samples? Miller's variance of a mean of repeated samples, solved for
the target SE.

With :math:`n` questions, :math:`K` samples of each per run and :math:`R` runs, a mean score
has variance (Miller 2024, section 4, with the run term of
:mod:`evalbars.stats.repeats.run_variance`)

.. math::

    \\mathrm{Var}(\\bar s) = \\frac{\\sigma^2_q}{n} + \\frac{\\sigma^2_r}{R}
    + \\frac{\\sigma^2_w}{nKR},

where :math:`\\sigma^2_q = \\mathrm{Var}(x)` is the between-question variance of the true
question means, :math:`\\sigma^2_w = E[\\sigma_i^2]` the mean within-question sampling variance
and :math:`\\sigma^2_r` the run shift's variance (Miller's formula is :math:`R = 1,
\\sigma^2_r = 0`: :math:`(\\sigma^2_q + \\sigma^2_w/K)/n`). More samples shrink only the last
term: however many, the SE stays above :math:`\\sqrt{\\sigma^2_q/n + \\sigma^2_r/R}`. More
questions shrink the first and the last: the SE stays above :math:`\\sqrt{\\sigma^2_r/R}`, which
only more runs lower. So for the same number of answers, more questions always beat more
samples (:math:`\\sigma^2_q/n` falls too), and samples are worth taking when questions are
fixed (a benchmark of 30 problems) or expensive. With a question costing :math:`c_q` and a
sample :math:`c_s`, the cost of a target variance is smallest at

.. math:: K^* = \\sqrt{\\frac{\\sigma^2_w}{\\sigma^2_q}\\,\\frac{c_q}{c_s}}

samples per question (two-stage sampling, Cochran 1977, section 10.6). The variance one
answer per question leaves that K samples remove is
:math:`1 - (\\sigma^2_q + \\sigma^2_w/K)/(\\sigma^2_q + \\sigma^2_w)`
(:func:`variance_reduction`; gsma-labs/evals#8's "Find-K").
These are the same variance components the sampling-variance table reports
(:func:`evalbars.stats.accuracy.sampling_variance_table`, ``var_between`` and ``var_within``)
and the run-variance table (:func:`evalbars.stats.repeats.run_variance.run_variance_table`).

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640, section 4.
.. [2] Cochran, W. G. (1977). Sampling Techniques, 3rd ed. Wiley, section 10.6 (optimum
   sampling and subsampling sizes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ADVICE",
    "SamplingPlan",
    "mean_variance",
    "variance_reduction",
    "optimal_samples",
    "plan_samples",
    "sampling_plan_table",
]

#: What :func:`plan_samples` can advise: the target is met; add questions; add samples per
#: question; add runs; or none of the three alone reaches it (the other terms exceed the
#: target: more of two at once is needed).
ADVICE = ("reached", "questions", "samples", "runs", "none alone")


def mean_variance(var_question, var_within, questions, samples, var_run=0.0, runs=1):
    """Variance of a mean score: :math:`\\sigma^2_q/n + \\sigma^2_r/R + \\sigma^2_w/(nKR)`.

    Parameters
    ----------
    var_question, var_within : array_like
        :math:`\\sigma^2_q` and :math:`\\sigma^2_w`.
    questions, samples : array_like
        :math:`n` and :math:`K` (samples per question in each run).
    var_run : array_like
        :math:`\\sigma^2_r`, the run shift's variance (0: no run effect).
    runs : array_like
        :math:`R`.

    Returns
    -------
    ndarray

    Examples
    --------
    Miller's form (one run): between-question variance 0.05, within 0.15, 200 questions, 3
    samples each: :math:`(0.05 + 0.15/3)/200 = 0.0005`.

    >>> float(mean_variance(0.05, 0.15, 200, 3))
    0.0005
    """
    n, k, r = (np.asarray(v, float) for v in (questions, samples, runs))
    return (
        np.asarray(var_question, float) / n
        + np.asarray(var_run, float) / r
        + np.asarray(var_within, float) / (n * k * r)
    )


def variance_reduction(var_question, var_within, samples):
    """Share of the one-sample variance that K samples per question remove.

    Parameters
    ----------
    var_question, var_within : array_like
        :math:`\\sigma^2_q` and :math:`\\sigma^2_w`.
    samples : array_like
        K.

    Returns
    -------
    ndarray
        :math:`1 - (\\sigma^2_q + \\sigma^2_w/K)/(\\sigma^2_q + \\sigma^2_w)`.

    Examples
    --------
    A within-question share of 2/3 gives gsma-labs/evals#8's 33/44/50/53 % at K = 2 to 5:

    >>> variance_reduction(1.0, 2.0, [2, 3, 4, 5]).round(4).tolist()
    [0.3333, 0.4444, 0.5, 0.5333]
    """
    q, w = np.asarray(var_question, float), np.asarray(var_within, float)
    return 1.0 - (q + w / np.asarray(samples, float)) / (q + w)


def optimal_samples(var_question, var_within, cost_question=1.0, cost_sample=1.0):
    """Cost-optimal samples per question :math:`K^* = \\sqrt{(\\sigma^2_w/\\sigma^2_q)(c_q/c_s)}`.

    Parameters
    ----------
    var_question, var_within : array_like
        :math:`\\sigma^2_q` and :math:`\\sigma^2_w`.
    cost_question, cost_sample : array_like
        Cost of adding a question (beyond its samples: writing, checking) and of one sample.

    Returns
    -------
    ndarray
        :math:`K^*`, at least 1 (inf where :math:`\\sigma^2_q = 0`).

    Notes
    -----
    Minimising the cost :math:`n(c_q + K c_s)` at a fixed :math:`(\\sigma^2_q +
    \\sigma^2_w/K)/n` gives :math:`K^*` (Cochran 1977, section 10.6); it is the continuous
    optimum, so round it to a neighbouring whole number.

    Examples
    --------
    A question costing 9 samples, within-question variance 4 times the between-question one:

    >>> float(optimal_samples(0.05, 0.2, cost_question=9))
    6.0
    """
    q, w = np.asarray(var_question, float), np.asarray(var_within, float)
    with np.errstate(divide="ignore"):
        ratio = (w / q) * (np.asarray(cost_question, float) / np.asarray(cost_sample, float))
    return np.maximum(np.sqrt(ratio), 1.0)


@dataclass(frozen=True)
class SamplingPlan:
    """What reaches a target SE: more questions, more samples per question or more runs.

    Every field is an array with the broadcast shape of the inputs.

    Attributes
    ----------
    se : ndarray
        The SE of the design as it is.
    target_se : ndarray
        The target.
    questions_needed : ndarray
        Questions at the current samples and runs (inf when the run term alone exceeds it).
    samples_needed : ndarray
        Samples per question at the current questions and runs (inf when the question and run
        terms alone exceed the target).
    runs_needed : ndarray
        Runs at the current questions and samples (inf when the question term alone exceeds it).
    floor_with_samples : ndarray
        The SE with infinitely many samples at the current questions and runs.
    extra_answers : ndarray, shape (..., 3)
        Answers (samples) each route adds, in the order questions, samples, runs (inf where
        it cannot reach the target; new questions also cost ``cost_question`` each).
    advice : ndarray of str
        ``reached``, or the cheapest route: ``questions``, ``samples`` or ``runs``; ``none
        alone`` when no route on its own reaches the target.
    """

    se: np.ndarray
    target_se: np.ndarray
    questions_needed: np.ndarray
    samples_needed: np.ndarray
    runs_needed: np.ndarray
    floor_with_samples: np.ndarray
    extra_answers: np.ndarray
    advice: np.ndarray


def plan_samples(
    var_question,
    var_within,
    target_se,
    questions,
    samples,
    *,
    var_run=0.0,
    runs=1,
    cost_question=0.0,
) -> SamplingPlan:
    """For a target SE of a mean score: how many questions, samples or runs reach it.

    Parameters
    ----------
    var_question, var_within : array_like
        :math:`\\sigma^2_q` and :math:`\\sigma^2_w` (e.g. from
        :func:`evalbars.stats.repeats.run_variance.run_variance_table`).
    target_se : array_like
        The SE wanted, in the score's units (0.01 for one accuracy point).
    questions, samples : array_like
        The current :math:`n` and :math:`K` (samples per question per run).
    var_run : array_like
        :math:`\\sigma^2_r` (0: no run effect).
    runs : array_like
        The current :math:`R`.
    cost_question : array_like
        Cost of a new question beyond its answers, in samples (0: answers are all that
        cost; a large value when the question pool is fixed).

    Returns
    -------
    SamplingPlan

    Notes
    -----
    Each route solves :func:`mean_variance` ``= target_se**2`` for one of n, K, R with the
    others held:

    .. math::

        n = \\frac{\\sigma^2_q + \\sigma^2_w/(KR)}{T^2 - \\sigma^2_r/R}, \\quad
        K = \\frac{\\sigma^2_w/(nR)}{T^2 - \\sigma^2_q/n - \\sigma^2_r/R}, \\quad
        R = \\frac{\\sigma^2_r + \\sigma^2_w/(nK)}{T^2 - \\sigma^2_q/n},

    each rounded up and infinite where its denominator is not positive. The advice is the
    route adding the fewest answers (new questions count ``cost_question`` more each).

    Examples
    --------
    AIME-like: 30 questions, 4 samples, :math:`\\sigma^2_q = 0.1`, :math:`\\sigma^2_w = 0.12`:
    the SE is :math:`\\sqrt{(0.1 + 0.12/4)/30} = 0.0658`; a 4-point SE needs
    :math:`0.13/0.04^2 = 81.25`, so 82 questions at 4 samples, and no number of samples reaches
    it (their floor is :math:`\\sqrt{0.1/30} = 0.0577`):

    >>> plan = plan_samples(0.1, 0.12, 0.04, 30, 4)
    >>> round(float(plan.se), 4), float(plan.questions_needed), float(plan.samples_needed)
    (0.0658, 82.0, inf)
    >>> round(float(plan.floor_with_samples), 4), str(plan.advice)
    (0.0577, 'questions')
    """
    q, w, target, n, k, r, vr, cost = np.broadcast_arrays(
        *(
            np.asarray(v, float)
            for v in (var_question, var_within, target_se, questions, samples, runs, var_run)
        ),
        np.asarray(cost_question, float),
    )
    t2 = target**2
    se = np.sqrt(mean_variance(q, w, n, k, vr, r))

    def solve(numerator, denominator):
        with np.errstate(divide="ignore", invalid="ignore"):
            needed = np.ceil(numerator / denominator - 1e-9)
        return np.where(denominator > 0, np.maximum(needed, 1.0), np.inf)

    questions_needed = solve(q + w / (k * r), t2 - vr / r)
    samples_needed = solve(w / (n * r), t2 - q / n - vr / r)
    runs_needed = solve(vr + w / (n * k), t2 - q / n)
    with np.errstate(invalid="ignore"):
        extra = np.stack(
            [
                np.maximum(questions_needed - n, 0) * (k * r + cost),
                n * np.maximum(samples_needed - k, 0) * r,
                n * k * np.maximum(runs_needed - r, 0),
            ],
            axis=-1,
        )
    routes = np.array(ADVICE[1:4])
    advice = np.where(se <= target, "reached", routes[np.argmin(extra, axis=-1)])
    advice = np.where((se > target) & np.isinf(extra).all(axis=-1), ADVICE[4], advice)
    return SamplingPlan(
        se=se,
        target_se=target.copy(),
        questions_needed=questions_needed,
        samples_needed=samples_needed,
        runs_needed=runs_needed,
        floor_with_samples=np.sqrt(q / n + vr / r),
        extra_answers=extra,
        advice=advice,
    )


def sampling_plan_table(
    components: pd.DataFrame, target_se: float, *, cost_question: float = 0.0
) -> pd.DataFrame:
    """:func:`plan_samples` for each model of a run-variance table.

    Parameters
    ----------
    components : DataFrame
        :func:`evalbars.stats.repeats.run_variance.run_variance_table`: ``model, questions,
        runs, samples, var_question, var_run, var_within`` (a missing ``var_run``, one run,
        counts as 0).
    target_se : float
        The SE wanted, in the score's units.
    cost_question : float
        As in :func:`plan_samples`.

    Returns
    -------
    DataFrame
        ``model, se, target_se, questions, samples_per_question, runs, questions_needed,
        samples_needed, runs_needed, floor_with_samples, advice``.

    Examples
    --------
    >>> components = pd.DataFrame({"model": ["m"], "questions": [30], "runs": [2],
    ...     "samples": [240], "var_question": [0.1], "var_run": [0.0], "var_within": [0.12]})
    >>> sampling_plan_table(components, 0.05)[["samples_per_question", "advice"]].values.tolist()
    [[4.0, 'questions']]
    """
    n, r = components["questions"].to_numpy(float), components["runs"].to_numpy(float)
    k = components["samples"].to_numpy(float) / (n * r)
    plan = plan_samples(
        components["var_question"].to_numpy(float),
        components["var_within"].to_numpy(float),
        target_se,
        n,
        k,
        var_run=np.nan_to_num(components["var_run"].to_numpy(float)),
        runs=r,
        cost_question=cost_question,
    )
    return pd.DataFrame(
        {
            "model": components["model"].to_numpy(),
            "se": plan.se,
            "target_se": plan.target_se,
            "questions": n,
            "samples_per_question": k,
            "runs": r,
            "questions_needed": plan.questions_needed,
            "samples_needed": plan.samples_needed,
            "runs_needed": plan.runs_needed,
            "floor_with_samples": plan.floor_with_samples,
            "advice": plan.advice,
        }
    )
