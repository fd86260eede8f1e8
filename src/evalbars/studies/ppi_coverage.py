"""Coverage of PPI++ intervals for a judge-scored eval, under random and outcome-chosen labels.

Each replicate draws a fresh benchmark of questions on which two models have human-true 0/1
scores and a biased judge scores both, then has humans label some of the questions, the same
ones for both models, chosen either

- ``random_labels``: uniformly at random, as PPI requires; or
- ``judge_errors_oversampled``: by outcome, a question where the judge got either model wrong
  ``error_odds`` times as likely to be labelled (humans reviewing the judge's mistakes).

It reports how often the 95 % intervals of :func:`evalbars.stats.ppi.ppi_means` (model 0) and
:func:`evalbars.stats.ppi.ppi_pair_means` (model 0 minus model 1) cover the true human mean:
the PPI++ reading (near nominal under random labels, far below when labels follow the outcome,
however many there are), the human-only reading (likewise), and the judge-only reading (far
below in both: the judge is biased, and no labels enter it). The intervals are those the
readings show: the small-sample ones with two pseudo-labels (:mod:`evalbars.stats.ppi`).
:func:`coverage_by_labels` runs it at several label counts (10, 15, 30 and 200 in the
benchmark), flagging those below :data:`evalbars.stats.ppi.MIN_LABELS` where nothing is decided.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.defaults import LEVEL
from evalbars.seeding import setting_rng, share_and_se
from evalbars.stats.ppi import (
    MIN_LABELS,
    PSEUDO_LABELS,
    READINGS,
    normal_interval,
    ppi_means,
    ppi_pair_means,
)

__all__ = [
    "SCENARIOS",
    "LABEL_COUNTS",
    "draw_judged_questions",
    "choose_labelled",
    "simulate_ppi_coverage",
    "coverage_by_labels",
]

#: Labelling schemes, the valid one first.
SCENARIOS = ("random_labels", "judge_errors_oversampled")
#: The study's key in :data:`evalbars.seeding.STUDY_CODES`.
STUDY = "ppi_coverage"
#: Label counts of :func:`coverage_by_labels`: the few-label settings users meet, and 200.
LABEL_COUNTS = (10, 15, 30, 200)


def draw_judged_questions(
    rng: np.random.Generator,
    replicates: int,
    questions: int,
    *,
    accuracy=(0.6, 0.5),
    shared: float = 0.5,
    false_positive=(0.3, 0.1),
    false_negative=(0.05, 0.05),
) -> tuple[np.ndarray, np.ndarray]:
    """Human-true scores and judge scores, each of shape ``(replicates, questions, models)``.

    Model k answers question i correctly when :math:`u_{ik} < p_k` (``accuracy``), with
    :math:`u_{ik}` uniform, one value shared by every model on the share ``shared`` of
    questions (a common difficulty, so the models' scores correlate) and drawn per model on
    the others; so model k's true mean is exactly :math:`p_k`. The judge passes a wrong answer
    with probability ``false_positive`` and fails a right one with probability
    ``false_negative`` (per model: a judge lenient to one model biases their gap too).
    """
    accuracy, fp, fn = (
        np.asarray(v, dtype=float) for v in (accuracy, false_positive, false_negative)
    )
    models = accuracy.size
    common = rng.random((replicates, questions, 1))
    own = rng.random((replicates, questions, models))
    is_shared = rng.random((replicates, questions, 1)) < shared
    truth = np.where(is_shared, common, own) < accuracy
    flip = rng.random((replicates, questions, models))
    judge = np.where(truth, flip >= fn, flip < fp)
    return truth.astype(float), judge.astype(float)


def choose_labelled(rng: np.random.Generator, weights, labels: int) -> np.ndarray:
    """Mask of ``labels`` questions per replicate, drawn without replacement by ``weights``.

    ``weights`` has shape ``(replicates, questions)``; equal weights give a uniformly random
    subset. Efraimidis and Spirakis' keys :math:`\\log(u)/w` (u uniform): the ``labels``
    largest keys are a weighted sample without replacement, for all replicates at once.

    References
    ----------
    .. [1] Efraimidis, P. S. and Spirakis, P. G. (2006). Weighted random sampling with a
       reservoir. Information Processing Letters 97(5), 181-185.
    """
    weights = np.asarray(weights, dtype=float)
    keys = np.log(rng.random(weights.shape)) / weights
    chosen = np.argpartition(-keys, labels - 1, axis=-1)[..., :labels]
    mask = np.zeros(weights.shape, dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=-1)
    return mask


def _coverage_rows(result, truth, level: float) -> list[dict]:
    # The weight each reading gives the judge: tuned, none, or all of it (no labels at all).
    weight = {"ppi++": float(np.mean(result.lambda_hat)), "human_only": 0.0, "judge_only": np.nan}
    rows = []
    for reading in READINGS:
        estimate = result.estimate_and_se(reading)[0]
        low, high = normal_interval(*result.interval_estimate_and_se(reading), level)
        coverage, mc_se = share_and_se((low <= truth) & (truth <= high))
        rows.append(
            {
                "reading": reading,
                "coverage": coverage,
                "mc_se": mc_se,
                "mean_width": float(np.mean(high - low)),
                "bias": float(np.mean(estimate) - truth),
                "mean_lambda_hat": weight[reading],
            }
        )
    return rows


def simulate_ppi_coverage(
    *,
    questions: int = 800,
    labels: int = 200,
    replicates: int = 4000,
    level: float = LEVEL,
    error_odds: float = 3.0,
    accuracy=(0.6, 0.5),
    shared: float = 0.5,
    false_positive=(0.3, 0.1),
    false_negative=(0.05, 0.05),
    seed: int = 0,
    rng: np.random.Generator | None = None,
    pseudo_labels: float = PSEUDO_LABELS,
) -> pd.DataFrame:
    """Coverage of the PPI++, human-only and judge-only intervals, one model and one pair.

    Parameters
    ----------
    questions, labels : int
        Questions per benchmark and human labels on them (the same for both models).
    replicates : int
        Monte Carlo replicates.
    level : float
        Nominal coverage of the intervals.
    error_odds : float
        In ``judge_errors_oversampled``, how much likelier a question on which the judge
        is wrong (about either model) is to be labelled.
    accuracy, shared, false_positive, false_negative
        The data-generating process of :func:`draw_judged_questions` (two models).
    seed : int
        Root seed; the stream is :func:`evalbars.seeding.setting_rng` ``(seed,
        "ppi_coverage", questions, labels, error_odds, shared, *accuracy, *false_positive,
        *false_negative)``.
    rng : numpy.random.Generator, optional
        A generator to use instead of that stream.
    pseudo_labels : float
        Of the intervals (:func:`evalbars.stats.ppi.ppi_means`); 0 gives ppi-python's normal
        interval, for comparison.

    Returns
    -------
    DataFrame
        One row per scenario (:data:`SCENARIOS`), target (``model``: model 0's mean;
        ``pair``: model 0 minus model 1) and reading (``ppi++``, ``human_only``,
        ``judge_only``), with ``truth`` (the true human mean or gap), ``coverage``, ``mc_se``
        (:math:`\\sqrt{c(1-c)/R}`), ``mean_width``, ``bias`` (mean estimate minus truth),
        ``mean_lambda_hat`` (PPI++; 0 for human-only, NaN for judge-only), ``replicates``,
        ``questions``, ``labels``, ``level``.

    Notes
    -----
    Both scenarios label the same benchmarks (common random numbers), so their difference
    is the labelling alone. Every replicate is computed at once: about two seconds for the
    defaults.
    """
    if not 2 <= labels < questions:
        raise ValueError(f"need 2 <= labels < questions, got {labels} of {questions}")
    if rng is None:
        parameters = (questions, labels, error_odds, shared, *accuracy)
        rng = setting_rng(seed, STUDY, *parameters, *false_positive, *false_negative)
    truth, judge = draw_judged_questions(
        rng,
        replicates,
        questions,
        accuracy=accuracy,
        shared=shared,
        false_positive=false_positive,
        false_negative=false_negative,
    )
    judge_wrong = (truth != judge).any(axis=-1)
    weights = {
        "random_labels": np.ones(judge_wrong.shape),
        "judge_errors_oversampled": np.where(judge_wrong, float(error_odds), 1.0),
    }
    true_mean = float(accuracy[0])
    true_gap = float(accuracy[0] - accuracy[1])
    rows = []
    for scenario in SCENARIOS:
        labelled = choose_labelled(rng, weights[scenario], labels)
        human = np.where(labelled[..., None], truth, np.nan)
        readings = {
            "model": (
                ppi_means(judge[..., :1], human[..., :1], pseudo_labels=pseudo_labels),
                true_mean,
            ),
            "pair": (
                ppi_pair_means(
                    judge[..., :2], human[..., :2], ([0], [1]), pseudo_labels=pseudo_labels
                ),
                true_gap,
            ),
        }
        for target, (result, value) in readings.items():
            for row in _coverage_rows(result, value, level):
                rows.append({"scenario": scenario, "target": target, "truth": value} | row)
    table = pd.DataFrame(rows)
    setting = {"replicates": replicates, "questions": questions, "labels": labels, "level": level}
    return table.assign(**setting)


def coverage_by_labels(label_counts=LABEL_COUNTS, **settings) -> pd.DataFrame:
    """:func:`simulate_ppi_coverage` at each label count, one table.

    Parameters
    ----------
    label_counts : sequence of int
        Human labels per benchmark (each its own seeded stream).
    **settings
        The other arguments of :func:`simulate_ppi_coverage` (not ``rng``).

    Returns
    -------
    DataFrame
        Its rows for every label count, with ``decides``: whether the reading decides at that
        count (:data:`evalbars.stats.ppi.MIN_LABELS`).

    Examples
    --------
    >>> table = coverage_by_labels((10, 30), questions=200, replicates=200)
    >>> sorted(set(table["labels"])), bool(table["decides"].all())
    ([10, 30], True)
    """
    tables = [simulate_ppi_coverage(labels=int(n), **settings) for n in label_counts]
    table = pd.concat(tables, ignore_index=True)
    return table.assign(decides=table["labels"] >= MIN_LABELS)
