"""The API's repeated samples and runs: the item score every reading reads, pass@k curves and
their differences over k, run-to-run noise and the sampling plan (:mod:`evalbars.api`
re-exports them). Each calls its workflow job (:mod:`evalbars.jobs.repeats`,
:func:`evalbars.jobs.data.chosen_scores`) on the same data."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, DRAWS, LEVEL, POWER, SEED
from evalbars.jobs import data, repeats

__all__ = [
    "score_matrix",
    "pass_at_k_table",
    "passk_curve_table",
    "run_variance_table",
    "sampling_plan",
]


def score_matrix(items, score: str = "mean") -> WideScores:
    """The question-by-model matrix of the item score every reading reads.

    The config key ``score`` and ``--score``, as the workflow's subsample job builds it
    (:func:`evalbars.jobs.data.chosen_scores`).

    Parameters
    ----------
    items : DataFrame
        An item table (:func:`read_items`): one row per sample.
    score : str, default "mean"
        ``mean`` (the mean of each question's samples over every run), ``pass@K``, ``pass^K``
        or ``maj@K`` over each question's samples pooled over the model's runs
        (:mod:`evalbars.stats.repeats.score_matrix`). A cell with fewer than K samples is left
        out, said on the console.

    Returns
    -------
    WideScores
        Every table function of this module takes it in place of an item table:
        ``leaderboard_table(score_matrix(items, "pass@5"))`` ranks by pass@5.

    See Also
    --------
    evalbars.stats.repeats.pass_at_k.item_score : The item scores and their formulas.
    check_claims : Takes ``score=`` (and claims ``at pass@K``) from an item table.

    Examples
    --------
    Two models, two runs of three samples each (pooled: six per question):

    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/inspect_epochs_runs/logs", runs="all")
    >>> wide = eb.score_matrix(items, "pass@5")
    >>> wide.score, wide.scores.shape, round(float(wide.scores.mean(axis=0)[0]), 4)
    ('pass@5', (20, 2), 1.0)
    """
    return data.chosen_scores(items, score, "all")


def pass_at_k_table(items, level: float = LEVEL) -> pd.DataFrame:
    """Each model's pass@k for every k, with its interval (``pass_at_k.csv``).

    k runs from 1 to the model's most samples of a question, pooled over its runs; the
    interval is CR2's (:func:`evalbars.jobs.repeats.repeats_pass_at_k`).

    Parameters
    ----------
    items : DataFrame
        An item table with repeated samples (:func:`read_items`).
    level : float, default :data:`evalbars.defaults.LEVEL`
        Confidence level.

    Returns
    -------
    DataFrame
        ``model, k, estimate, ci_low, ci_high, questions, se, df, clusters, clustered_by``, one
        row per (model, k).

    See Also
    --------
    evalbars.stats.repeats.pass_at_k.pass_at_k_curve : The estimator and its interval.
    passk_curve_table : Two models' pass@k compared at every k.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval_repeats/logs", runs="all",
    ...                    id_field="id", category_field="category")
    >>> table = eb.pass_at_k_table(items)
    >>> table.loc[table["k"].isin([1, 5]), ["model", "k", "estimate", "questions"]].round(4)
                       model  k  estimate  questions
    0   evalbars/fake-strong  1    0.4861         24
    4   evalbars/fake-strong  5    0.9375         24
    6     evalbars/fake-weak  1    0.4306         24
    10    evalbars/fake-weak  5    0.8403         24
    """
    return repeats.repeats_pass_at_k(items, level=level)["pass_at_k"].frame


def passk_curve_table(
    items,
    claims_made: Sequence[str] = (),
    *,
    baseline: str | None = None,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = SEED,
) -> pd.DataFrame:
    """Each compared pair's pass@k difference at every k, with a band (``passk_curve.csv``).

    The pointwise intervals hold at each k; the band over every k at once
    (:func:`evalbars.jobs.repeats.repeats_passk_curve`).

    Parameters
    ----------
    items : DataFrame
        An item table with repeated samples.
    claims_made : sequence of str, optional
        Claims whose pairs are compared (``"A > B"``; ``best: A`` compares A with every
        other model).
    baseline : str, optional
        Every other model against this one (config ``repeats.baseline``); without claims or
        a baseline, each model against the next best.
    level : float, default :data:`evalbars.defaults.LEVEL`
        The pointwise intervals' and the band's level.
    draws : int, default :data:`evalbars.defaults.DRAWS`
        Gaussian multiplier draws of the sup-t band (config ``repeats.draws``).
    seed : int, default :data:`evalbars.defaults.SEED`
        Their seed (config ``repeats.seed``).

    Returns
    -------
    DataFrame
        ``model_a, model_b, k, difference, pointwise_low, pointwise_high, band_low, band_high,
        sign, ...`` (:data:`evalbars.jobs.repeats.PASSK_CURVE_COLUMNS`), one row per (pair, k).

    See Also
    --------
    evalbars.stats.repeats.passk_band.passk_band : The band and its measured coverage.
    pass_at_k_table : Each model's own curve.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/inspect_epochs_runs/logs", runs="all")
    >>> curve = eb.passk_curve_table(items, ["mockllm/fake-strong > mockllm/fake-weak"])
    >>> curve[["k", "difference", "band", "sign"]].head(2).round(4)
       k  difference        band  sign
    0  1        0.40  bonferroni     0
    1  2        0.36  bonferroni     0
    """
    checked = {"claims": list(claims_made)}
    result = repeats.repeats_passk_curve(
        items, checked, level=level, baseline=baseline, draws=draws, seed=seed
    )
    return result["passk_curve"].frame


def run_variance_table(
    items,
    claims_made: Sequence[str] = (),
    *,
    baseline: str | None = None,
    alpha: float = ALPHA,
    power: float = POWER,
    level: float = LEVEL,
) -> dict:
    """Run-to-run noise: ``run_variance.csv``, ``run_aware.csv`` and ``run_signs.csv``.

    Each model's score variance split into questions, runs and samples; each compared pair's
    gap with runs as a random effect; and its sign in every run
    (:func:`evalbars.jobs.repeats.repeats_run_variance`).

    Parameters
    ----------
    items : DataFrame
        An item table read with ``runs="all"``.
    claims_made : sequence of str, optional
        Claims whose pairs are compared, as :func:`passk_curve_table`.
    baseline : str, optional
        A model every other is compared with, as :func:`passk_curve_table`.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of the detectable gap's test.
    power : float, default :data:`evalbars.defaults.POWER`
        Its power.
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the run-aware interval.

    Returns
    -------
    dict of DataFrame
        ``run_variance`` (one row per model), ``run_aware`` (one per pair) and ``run_signs``
        (one per pair of runs compared).

    See Also
    --------
    evalbars.stats.repeats.run_variance.run_variance_table : The variance components.
    check_claims : The same run-aware reading of each claim (``reading == "runs"``).

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/inspect_epochs_runs/logs", runs="all")
    >>> tables = eb.run_variance_table(items, ["mockllm/fake-strong > mockllm/fake-weak"])
    >>> tables["run_variance"][["model", "runs", "sd_run_points", "flaky_share"]].round(2)
                     model  runs  sd_run_points  flaky_share
    0  mockllm/fake-strong     2           7.93         0.65
    1    mockllm/fake-weak     2           0.00         0.90
    >>> tables["run_aware"][["difference", "survives_rerun", "holds_in_every_run"]].round(2)
       difference  survives_rerun  holds_in_every_run
    0         0.4            True                True
    """
    result = repeats.repeats_run_variance(
        items,
        {"claims": list(claims_made)},
        alpha=alpha,
        power=power,
        level=level,
        baseline=baseline,
    )
    return {name: table.frame for name, table in result.items()}


def sampling_plan(items, target_se: float = 1.0) -> pd.DataFrame:
    """More questions or more samples? The sampling plan (``sampling_plan.csv``).

    Per model, the questions, samples per question or runs that reach a standard error of
    ``target_se`` accuracy points (Miller's question;
    :func:`evalbars.jobs.repeats.repeats_sampling_plan`).

    Parameters
    ----------
    items : DataFrame
        An item table with repeated samples (and, for the run term, runs).
    target_se : float, default 1.0
        The SE wanted, in accuracy points (config ``repeats.target_se``).

    Returns
    -------
    DataFrame
        ``model, se_points, target_se_points, questions, samples_per_question, runs,
        questions_needed, samples_needed, runs_needed, floor_with_samples_points, advice``.

    See Also
    --------
    evalbars.stats.planning.samples.plan_samples : Miller's variance, solved for each route.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval_repeats/logs", runs="all",
    ...                    id_field="id", category_field="category")
    >>> eb.sampling_plan(items, 5)[["model", "se_points", "questions_needed", "advice"]].round(2)
                      model  se_points  questions_needed     advice
    0  evalbars/fake-strong       4.48              20.0    reached
    1    evalbars/fake-weak       7.65             144.0  questions
    """
    return repeats.repeats_sampling_plan(items, target_se=target_se)["sampling_plan"].frame
