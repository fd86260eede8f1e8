"""The best model, honestly, and what it costs: the top score corrected for selection, the
confidence sets for the best and the top k, cost per question and the cost-accuracy frontier
(re-exported by :mod:`evalbars.api`)."""

from __future__ import annotations

import os

import pandas as pd

from evalbars.api._read import _listed, _scored, read_items, scores
from evalbars.data.prices import price_table, read_price_file
from evalbars.defaults import ALPHA, LEVEL, SEED, TOP_K
from evalbars.jobs import leaderboard

__all__ = [
    "winner_table",
    "best_set_table",
    "cost_readings",
    "cost_table",
    "frontier_table",
    "prices_config",
]


def prices_config(prices) -> dict:
    """The config's ``prices:`` of :func:`evalbars.api.report_config`: a file read into the
    mapping, so that the run's config.yaml records the prices themselves; ``{}`` without
    prices."""
    if prices is None:
        return {}
    if isinstance(prices, (str, os.PathLike)):
        prices = read_price_file(prices)
    price_table(prices)  # checked here: a bad price in one line, before the run
    return {
        "prices": {str(m): {k: float(v[k]) for k in ("input", "output")} for m, v in prices.items()}
    }


def winner_table(items, level: float = LEVEL, *, seed: int = SEED) -> pd.DataFrame:
    """The top model's score: naive, and corrected for being the top.

    The workflow's ``winner.csv``: naive, conditional, hybrid and zoom readings.

    The top model's score is the largest of K noisy scores, biased upward (the winner's curse).
    The hybrid reading (Andrews, Kitagawa and McCloskey 2024) is the corrected estimate and
    interval to quote; see :func:`evalbars.readings.leaderboard.best.winner_readings`, called
    through the leaderboard job (:func:`evalbars.jobs.leaderboard.best_model`).

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table (:func:`read_items`) or its score matrix.
    level : float
        Level of the intervals.
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    DataFrame
        :data:`evalbars.readings.leaderboard.best.WINNER_COLUMNS`, one row per reading, on the
        questions every model answered.

    See Also
    --------
    best_set_table : The confidence sets for the best and the top k.
    evalbars.stats.best.winners : The readings' formulas and sources.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/inspect_usage/logs")
    >>> eb.winner_table(items)[["model", "method", "estimate", "ci_low", "ci_high"]].round(3)
                  model       method  estimate  ci_low  ci_high
    0  mockllm/fake-mid        naive     0.850   0.694    1.000
    1  mockllm/fake-mid  conditional     0.766   0.260    0.995
    2  mockllm/fake-mid       hybrid     0.767   0.601    0.999
    3  mockllm/fake-mid         zoom     0.850   0.656    1.000
    """
    return leaderboard.best_model(scores(items), level=level, seed=seed)["winner"].frame


def best_set_table(
    items, alpha: float = ALPHA, *, top_k: int = TOP_K, seed: int = SEED
) -> pd.DataFrame:
    """The confidence sets for the best model and for the top k.

    The columns ``leaderboard.csv`` gains (:func:`evalbars.readings.leaderboard.best.best_sets`,
    through :func:`evalbars.jobs.leaderboard.best_model`), on the questions every model answered.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table (:func:`read_items`) or its score matrix.
    alpha : float
        Each set holds its truth with probability at least :math:`1-\\alpha`.
    top_k : int
        k of the set for the top k (config ``leaderboard.top_k``).
    seed : int
        Seed of the critical values' draws.

    Returns
    -------
    DataFrame
        ``model, in_best_set, mcb_low, mcb_high, top_k, in_top_k_set``, one row per model. A
        ``best: A`` claim is supported only when the set for the best is {A}.

    See Also
    --------
    winner_table : The top model's score, corrected for being the top.
    leaderboard_table : The same columns beside the letters and the resolution.
    evalbars.stats.best.sets : Hsu's MCB and the top-k set.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> eb.best_set_table(items, top_k=2)[["model", "in_best_set", "in_top_k_set"]]
                      model  in_best_set  in_top_k_set
    0     evalbars/fake-mid        False          True
    1  evalbars/fake-strong         True          True
    2    evalbars/fake-weak        False          True
    """
    result = leaderboard.best_model(
        scores(items), level=1 - alpha, seed=seed, alpha=alpha, top_k=top_k
    )
    return result["best_set"].frame


def question_costs(
    paths,
    prices=None,
    *,
    missing_prediction: str = "wrong",
    items: pd.DataFrame | None = None,
    **options,
) -> pd.DataFrame:
    """The cost of every (model, question): the workflow's ``data/costs.parquet``.

    Token usage from the logs (:func:`evalbars.data.readers.usage.read_usage`) times the
    prices, or the cost a log or a ``cost`` column records, averaged over a question's samples
    (:func:`evalbars.jobs.leaderboard.costs`); what :func:`check_claims` takes for the cost
    claims.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Predictions that record token usage or a ``cost`` column.
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model (as :func:`cost_table`).
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as.
    items : DataFrame, optional
        The item table of ``paths``, when already read.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    DataFrame
        ``model, question_id, samples, input_tokens, output_tokens, cost`` (dollars), one row
        per (model, question) with a cost.

    See Also
    --------
    cost_table : Cost per question and accuracy per dollar, per model.
    check_claims : The cost claims.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> logs = "tests/data/harness/inspect_usage/logs"
    >>> costs = eb.question_costs(logs, "tests/data/harness/inspect_usage/prices.csv")
    >>> costs.groupby("model")["cost"].mean().round(6)
    model
    mockllm/fake-mid       0.000026
    mockllm/fake-strong    0.000292
    mockllm/fake-weak      0.000005
    Name: cost, dtype: float64
    >>> items = eb.read_items(logs)
    >>> claims = ["mockllm/fake-mid >= mockllm/fake-strong - 10 at <= 0.5 cost"]
    >>> verdicts = eb.check_claims(items, claims, costs=costs)
    >>> verdicts.loc[verdicts["verdict"] != "n/a", ["reading", "adjustment", "verdict"]]
      reading adjustment        verdict
    1  paired       none  not supported
    4  paired       holm  not supported
    """
    listed = _listed(paths)
    if items is None:
        items = read_items(listed, missing_prediction=missing_prediction, **options)
    given = {key: value for key, value in options.items() if value is not None}
    sources = [dict(path=str(path), **given) for path in listed]
    if isinstance(prices, (str, os.PathLike)):
        prices = read_price_file(prices)
    return leaderboard.costs(items, sources=sources, prices=prices)["costs"].frame


def cost_readings(
    paths,
    prices=None,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
    missing_prediction: str = "wrong",
    score: str = "mean",
    items: pd.DataFrame | None = None,
    **options,
) -> dict:
    """``cost.csv`` and ``frontier.csv`` from one read of the data.

    The items are read as :func:`read_items` reads them (or given as ``items``, the item
    table of ``paths`` already read), the costs as the workflow's ``costs`` job computes them
    (:func:`evalbars.jobs.leaderboard.costs`), then its ``cost_table`` job.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Predictions that record token usage or a ``cost`` column (as :func:`cost_table`).
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model (as :func:`cost_table`).
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Error rate of the frontier set.
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the intervals.
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the frontier's critical value.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as.
    score : str, default "mean"
        The item score accuracy is read on (config ``score``; :func:`score_matrix`): the
        workflow's cost table in a run with ``score: pass@5`` is this function's with
        ``score="pass@5"``.
    items : DataFrame, optional
        The item table of ``paths``, when already read.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    dict
        ``{"cost": DataFrame, "frontier": DataFrame}``: :func:`cost_table`'s and
        :func:`frontier_table`'s tables.

    See Also
    --------
    cost_table, frontier_table : Each table alone.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> tables = eb.cost_readings("tests/data/harness/inspect_usage/logs",
    ...                           "tests/data/harness/inspect_usage/prices.csv")
    >>> tables["frontier"][["model", "on_frontier"]]
                     model  on_frontier
    0     mockllm/fake-mid         True
    1  mockllm/fake-strong        False
    2    mockllm/fake-weak         True
    """
    listed = _listed(paths)
    if items is None:
        items = read_items(listed, missing_prediction=missing_prediction, **options)
    costs = question_costs(listed, prices, items=items, **options)
    wide = _scored(items, score)
    result = leaderboard.cost_table(wide, costs, alpha=alpha, level=level, seed=seed)
    return {name: table.frame for name, table in result.items()}


def cost_table(
    paths,
    prices=None,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
    missing_prediction: str = "wrong",
    score: str = "mean",
    **options,
) -> pd.DataFrame:
    """Per model: accuracy, mean cost per question and accuracy per dollar, with intervals.

    The workflow's ``cost.csv`` (:func:`evalbars.jobs.leaderboard.cost_table`, which calls
    :func:`evalbars.readings.leaderboard.cost.cost_readings`).

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Predictions that record token usage (Inspect logs, HELM runs, tables with
        ``input_tokens`` and ``output_tokens``) or a ``cost`` column.
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model, as the config's ``prices:``
        (``{model: {"input": ..., "output": ...}}``) or a file of them
        (:func:`evalbars.data.prices.read_price_file`); none: the costs the logs record.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Error rate of the frontier set (:func:`frontier_table`).
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the accuracy, cost and accuracy-per-dollar intervals.
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the frontier's critical value.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as, as for :func:`read_items`.
    score : str, default "mean"
        The item score accuracy is read on (config ``score``; :func:`score_matrix`): the
        workflow's cost table in a run with ``score: pass@5`` is this function's with
        ``score="pass@5"``.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    DataFrame
        :data:`evalbars.readings.leaderboard.cost.COST_COLUMNS`, one row per model with a
        cost, most accurate first, on the questions every such model has a cost for.

    Raises
    ------
    evalbars.errors.ConfigError
        A model with token usage, no price and no recorded cost (no price is ever guessed),
        or no usage at all in ``paths``.

    See Also
    --------
    frontier_table : The cost-accuracy frontier.
    cost_readings : Both tables from one read.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> logs = "tests/data/harness/inspect_usage/logs"
    >>> prices = "tests/data/harness/inspect_usage/prices.csv"
    >>> table = eb.cost_table(logs, prices)
    >>> table[["model", "accuracy", "mean_cost", "accuracy_per_dollar"]].round(6)
                     model  accuracy  mean_cost  accuracy_per_dollar
    0     mockllm/fake-mid      0.85   0.000026         32945.736434
    1  mockllm/fake-strong      0.80   0.000292          2743.484225
    2    mockllm/fake-weak      0.60   0.000005        126382.306477
    """
    return cost_readings(
        paths,
        prices,
        alpha=alpha,
        level=level,
        seed=seed,
        missing_prediction=missing_prediction,
        score=score,
        **options,
    )["cost"]


def frontier_table(
    paths,
    prices=None,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
    missing_prediction: str = "wrong",
    score: str = "mean",
    **options,
) -> pd.DataFrame:
    """The cost-accuracy frontier, and the set that covers the true frontier.

    The workflow's ``frontier.csv``: the observed Pareto frontier and the set that holds every
    model of the true one at :math:`1-\\alpha` (:func:`evalbars.stats.cost.frontier_set`).

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Predictions that record token usage or a ``cost`` column (as :func:`cost_table`).
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model (as :func:`cost_table`).
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        The set holds every model of the true frontier with probability at least
        :math:`1-\\alpha`.
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the intervals (of :func:`cost_table`, computed alongside).
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the simultaneous critical value.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as.
    score : str, default "mean"
        The item score accuracy is read on (config ``score``; :func:`score_matrix`): the
        workflow's cost table in a run with ``score: pass@5`` is this function's with
        ``score="pass@5"``.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    DataFrame
        :data:`evalbars.readings.leaderboard.cost.FRONTIER_COLUMNS`, one row per model with a
        cost, most accurate first: ``on_frontier`` (observed), ``in_frontier_set`` (the
        confidence set), ``dominated_by``.

    See Also
    --------
    cost_table : Cost per question and accuracy per dollar.
    evalbars.stats.cost.frontier_set : The set's construction.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> logs = "tests/data/harness/inspect_usage/logs"
    >>> prices = {"mockllm/fake-strong": {"input": 3.0, "output": 15.0},
    ...           "mockllm/fake-mid": {"input": 0.5, "output": 1.5},
    ...           "mockllm/fake-weak": {"input": 0.15, "output": 0.6}}
    >>> eb.frontier_table(logs, prices)[["model", "on_frontier", "in_frontier_set"]]
                     model  on_frontier  in_frontier_set
    0     mockllm/fake-mid         True             True
    1  mockllm/fake-strong        False             True
    2    mockllm/fake-weak         True             True
    """
    return cost_readings(
        paths,
        prices,
        alpha=alpha,
        level=level,
        seed=seed,
        missing_prediction=missing_prediction,
        score=score,
        **options,
    )["frontier"]
