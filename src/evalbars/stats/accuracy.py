"""Per-model accuracy with its uncertainty: the paper's Table 1, extended to repeated samples.

One row per model: accuracy over all its samples, the naive (CLT) standard
error, the standard error that treats a question's samples as one cluster, the
Wilson score interval and the category-clustered standard error, each over the
questions the model answered. :func:`sampling_variance_table` splits the score
variance into between-question and within-question (sampling) parts and says
what more samples per question (epochs) would buy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores, accuracy_order
from evalbars.defaults import LEVEL
from evalbars.stats.bayes import beta_interval
from evalbars.stats.intervals import clustered_se, wilson_interval

__all__ = ["accuracy_table", "sampling_variance_table"]


def _model_blocks(wide: WideScores):
    """Yield ``(columns, scores, counts, within)`` for blocks of models (:func:`evalbars.data.blocks.
    blocks`): the block's scores, sample counts (float) and within-cell sums of squares, so that
    the temporaries of the per-model sums are a block's, not the whole matrix's."""
    n_questions, n_models = wide.scores.shape
    for columns in blocks(n_models, n_questions):
        scores = wide.scores[:, columns]
        if wide.samples is None:
            counts = np.isfinite(scores).astype(float)
        else:
            counts = np.asarray(wide.samples)[:, columns].astype(float)
        if wide.within_ss is None:
            within = np.zeros(scores.shape)
        else:
            within = np.asarray(wide.within_ss, dtype=float)[:, columns]
        yield columns, scores, counts, within


def _per_model(scores, counts, within):
    """Samples, score sums, means and squared deviations per model (models on the last axis)."""
    means = np.where(counts > 0, scores, 0.0)
    samples = counts.sum(axis=0)
    total = (counts * means).sum(axis=0)
    accuracy = total / samples
    # Sum of squares of every sample around the model's mean: within cells plus between them.
    squares = within.sum(axis=0) + (counts * (means - accuracy) ** 2).sum(axis=0)
    return samples, total, accuracy, squares


def accuracy_table(wide: WideScores, level: float = LEVEL) -> pd.DataFrame:
    """Per-model accuracy with naive, question-clustered, Wilson and category-clustered uncertainty.

    Parameters
    ----------
    wide : WideScores
        Question-by-model cell means, with their sample counts (epochs); a cell
        without samples is left out of that model's counts.
    level : float
        Confidence level of the Wilson interval.

    Returns
    -------
    DataFrame
        ``model, n, samples, correct, accuracy, se_naive, se_questions, n_effective,
        ci_low, ci_high, se_clustered, jeffreys_low, jeffreys_high``, one row per model, sorted by
        :func:`accuracy_order` (best first). ``n`` counts questions, ``samples``
        samples (question × epoch), ``correct`` the sum of scores, ``n_effective``
        the independent 0/1 answers the samples are worth.

    Notes
    -----
    ``accuracy`` :math:`\\hat p` is the mean over all the model's samples.
    ``se_naive`` is the CLT standard error that treats every sample as
    independent, with the population variance (``ddof=0``):
    :math:`\\sqrt{\\hat v / N}` over N samples, the Bernoulli SE
    :math:`\\sqrt{\\hat p(1-\\hat p)/N}` for 0/1 scores (Miller 2024, Eq. 1-2).
    ``se_questions`` treats a question's samples as one cluster (Miller 2024,
    Eq. 4 with questions as clusters); with one sample per question it equals
    ``se_naive``. ``se_clustered`` takes the question's category as the cluster
    (Eq. 4, no small-sample factor C/(C-1); :func:`evalbars.stats.intervals.clustered_se`).
    ``ci_low, ci_high`` is the Wilson score interval
    (:func:`evalbars.stats.intervals.wilson_interval`) at the effective sample size
    :math:`n_{eff} = \\hat p(1-\\hat p)/SE_{questions}^2` (Kish's design effect),
    which is the number of questions for one 0/1 sample each and shrinks the
    samples of repeated epochs to what they are worth (never above their count).
    ``jeffreys_low, jeffreys_high`` is the equal-tailed Jeffreys interval, the
    :math:`\\mathrm{Beta}(k + 1/2, n - k + 1/2)` posterior's, at the same effective size
    (:func:`evalbars.stats.bayes.beta_interval`, the one home of the Jeffreys posterior, which
    the rank reading draws from too); below a few hundred questions it keeps its coverage
    where the z intervals do not (Bowyer, Aitchison and Ivanova 2025, arXiv:2503.01747;
    exact coverage in :mod:`evalbars.stats.coverage`). ``se_clustered`` is CR0, the paper's
    Table 1 column; the readings that decide use CR2 (:mod:`evalbars.stats.cluster_robust`).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to
       language model evaluations. arXiv:2411.00640.
    .. [2] Kish, L. (1965). Survey Sampling. Wiley (the design effect).
    """
    n_models = wide.scores.shape[1]
    samples, total, accuracy, squares, se_questions, se_clustered, n = (
        np.empty(n_models) for _ in range(7)
    )
    questions = np.arange(wide.scores.shape[0])
    categories = wide.category_codes
    for columns, scores, counts, within in _model_blocks(wide):
        parts = _per_model(scores, counts, within)
        samples[columns], total[columns], accuracy[columns], squares[columns] = parts
        se_questions[columns] = clustered_se(scores.T, questions, counts.T)
        se_clustered[columns] = clustered_se(scores.T, categories, counts.T)
        n[columns] = (counts > 0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        design = accuracy * (1 - accuracy) / se_questions**2
    # One sample per question: exactly the number of questions (no round-off). Repeated samples
    # are worth at most as many independent answers as there are samples.
    effective = np.where((samples == n) | ~(se_questions > 0), n, np.minimum(design, samples))
    low, high = wilson_interval(accuracy * effective, effective, level)
    with np.errstate(invalid="ignore"):
        jeffreys = beta_interval(np.clip(accuracy * effective, 0, effective), effective, level)
    table = pd.DataFrame(
        {
            "model": wide.models,
            "n": n.astype(int),
            "samples": samples.astype(int),
            "correct": total,
            "accuracy": accuracy,
            "se_naive": np.sqrt(squares / samples) / np.sqrt(samples),
            "se_questions": se_questions,
            "n_effective": effective,
            "ci_low": low,
            "ci_high": high,
            "se_clustered": se_clustered,
            # The Jeffreys Beta(1/2, 1/2) posterior interval at the same effective size: its
            # coverage holds at small n, where the Wilson and Wald intervals' can fall short.
            "jeffreys_low": jeffreys.low,
            "jeffreys_high": jeffreys.high,
        }
    )
    if np.all(total == np.round(total)):
        table["correct"] = total.astype(int)
    order = accuracy_order(wide)
    return table.set_index("model").loc[order].reset_index()


def sampling_variance_table(wide: WideScores, accuracy: pd.DataFrame | None = None) -> pd.DataFrame:
    """What repeated samples (epochs) tell about each model's score, and what more would buy.

    ``accuracy`` is :func:`accuracy_table` of ``wide`` when the caller has it: its
    ``se_questions`` is ``se_observed`` here, the same numbers, not computed twice.

    Returns
    -------
    DataFrame
        One row per model (accuracy order): ``model, n, mean_epochs, var_between,
        var_within, se_one_epoch, se_observed, se_double_epochs``. The variances
        are missing, and only ``se_observed`` given, when no question has two
        samples (the within-question part cannot be told apart then).

    Notes
    -----
    With :math:`x_i` the true mean score of question i and :math:`\\sigma_i^2` the
    variance of one sample of it, the mean of :math:`K` samples per question over
    n questions has variance (Miller 2024, section 4, "resampling")

    .. math:: \\mathrm{Var}(\\bar s) = \\frac{1}{n}\\Big(\\mathrm{Var}(x) + \\frac{E[\\sigma_i^2]}{K}\\Big).

    ``var_within`` :math:`\\hat\\sigma^2_w` pools the within-question sample
    variances, :math:`\\sum_i SS_i / \\sum_i (K_i - 1)` over questions with
    :math:`K_i \\ge 2`; ``var_between`` is the variance of the question means
    (``ddof=1``) minus :math:`\\hat\\sigma^2_w \\cdot \\overline{1/K_i}`, clipped at 0.
    ``se_one_epoch``, ``se_double_epochs``: the formula at K = 1 and at twice the
    mean number of samples per question; ``se_observed`` is ``se_questions`` of
    :func:`accuracy_table`.
    """
    n_models = wide.scores.shape[1]
    n, repeats, squares, inverse_sum, variance, sample_sum, se_observed = (
        np.empty(n_models) for _ in range(7)
    )
    questions = np.arange(wide.scores.shape[0])
    for columns, scores, counts, block_within in _model_blocks(wide):
        answered = counts > 0
        n[columns] = answered.sum(axis=0)
        repeats[columns] = np.where(counts >= 2, counts - 1, 0.0).sum(axis=0)
        squares[columns] = block_within.sum(axis=0)
        inverse_sum[columns] = np.where(answered, 1.0 / np.where(answered, counts, 1.0), 0.0).sum(
            axis=0
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            variance[columns] = np.nanvar(np.where(answered, scores, np.nan), axis=0, ddof=1)
            if accuracy is None:
                se_observed[columns] = clustered_se(scores.T, questions, counts.T)
        sample_sum[columns] = counts.sum(axis=0)
    if accuracy is not None:
        se_observed = accuracy.set_index("model")["se_questions"].loc[wide.models].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        within = np.where(repeats > 0, squares / repeats, np.nan)
        inverse_k = inverse_sum / n
        between = np.maximum(variance - within * inverse_k, 0.0)
        mean_epochs = sample_sum / n
        se = lambda k: np.sqrt((between + within / k) / n)  # noqa: E731
        table = pd.DataFrame(
            {
                "model": wide.models,
                "n": n.astype(int),
                "mean_epochs": mean_epochs,
                "var_between": between,
                "var_within": within,
                "se_one_epoch": se(1.0),
                "se_observed": se_observed,
                "se_double_epochs": se(2.0 * mean_epochs),
            }
        )
    order = accuracy_order(wide)
    return table.set_index("model").loc[order].reset_index()
