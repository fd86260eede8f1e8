"""The Python front door: read results, compute the workflow's tables as DataFrames, check claims,
compare two models, write the report. For notebooks.

Every table here is the one a workflow job writes: each function calls that job's own function
(:mod:`evalbars.jobs`) on the same data, with the same checks, so a table computed here equals
the CSV the workflow writes for the same data and settings (a test holds them equal on the
default run and the shipped examples). Data are read the way ``evalbars report`` reads them:
every question any model answered (``question_set="all"``; pairs use the questions both
answered), after the checks of the workflow's item table.

Examples
--------
>>> import evalbars.api as eb
>>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
...                       category_field="category")
>>> eb.accuracy_table(items)[["model", "n", "accuracy"]].round(3)
                  model   n  accuracy
0  evalbars/fake-strong  39     0.744
1     evalbars/fake-mid  39     0.462
2    evalbars/fake-weak  39     0.462
>>> eb.pairwise_table(items)[["model_a", "model_b", "n10", "n01", "p_holm"]].round(4)
                model_a             model_b  n10  n01  p_holm
0  evalbars/fake-strong   evalbars/fake-mid   16    5   0.028
1  evalbars/fake-strong  evalbars/fake-weak   17    6   0.028
2     evalbars/fake-mid  evalbars/fake-weak   11   11   1.000
>>> verdicts = eb.check_claims(items, ["evalbars/fake-strong > evalbars/fake-weak"])
>>> verdicts.loc[verdicts["reading"] == "paired_holm", "verdict"].item()
'supported'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evalbars.data.items import read_summary
from evalbars.data.prices import price_table, read_price_file
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.scores import WideScores, wide_scores
from evalbars.defaults import ALPHA, DRAWS, LEVEL, POWER, SEED, SPLITS
from evalbars.errors import InputError
from evalbars.jobs import analysis, data, leaderboard, ranks
from evalbars.jobs import claims as claim_jobs
from evalbars.readings import gate
from evalbars.readings.leaderboard.best import TOP_K
from evalbars.stats import pairwise
from evalbars.workflow import runner, smk
from evalbars.workflow.location import snakefile

__all__ = [
    "read_items",
    "read_preview",
    "read_sources",
    "attach_labels",
    "scores",
    "accuracy_table",
    "pairwise_table",
    "omnibus_table",
    "mixed_contrasts",
    "variance_components",
    "rank_table",
    "check_claims",
    "compare_models",
    "leaderboard_table",
    "judge_corrected_table",
    "stderr_audit",
    "ReportRun",
    "report_config",
    "write_report",
    "winner_table",
    "best_set_table",
    "cost_table",
    "frontier_table",
    "cost_readings",
]

#: The stages of :func:`write_report` (config ``run.stages``): every stage that reads the data
#: (the replication check applies to the paper's data only; the simulation studies read none,
#: and are added by ``simulations=True``).
REPORT_STAGES = ("data", "analysis", "ranks", "claims", "leaderboard")


@contextmanager
def quiet_warnings():
    """Hold back the warnings evalbars' readers log while the block runs (errors still raise)."""
    logger = logging.getLogger("evalbars")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def _listed(paths) -> list:
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def read_sources(paths, options: SourceOptions | None = None) -> list[pd.DataFrame]:
    """Raw rows of every path (files, or folders walked for every log), one frame per file or run.

    ``paths`` may be one path or a sequence of them; see :func:`evalbars.data.readers.read_source`.
    """
    return [frame for path in _listed(paths) for frame in read_source(path, options)]


def read_items(
    paths,
    *,
    missing_prediction: str = "wrong",
    seed: int = 12345,
    question_set: str = "all",
    max_unshared_share: float = 0.01,
    labels=None,
    **options,
) -> pd.DataFrame:
    """The canonical item table of prediction files or harness logs, after the workflow's checks.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Files (long CSV/TSV/Parquet tables, MMLU-Pro JSON, lm-evaluation-harness samples,
        Inspect logs, HELM, lighteval, Every Eval Ever, SWE-bench) or folders walked for
        every log they hold.
    missing_prediction : {"wrong", "random_guess", "exclude"}
        What a missing prediction counts as (the config key of the same name).
    seed : int
        Seed of the ``random_guess`` policy (``missing_prediction_seed``).
    question_set : {"all", "shared"}
        Keep every question any model answered (as ``evalbars report``), or only those every
        model answered (the paper's design; more than ``max_unshared_share`` of them left out
        stops the read).
    labels : path-like, optional
        A file of human labels (``model, question_id, human`` or ``question_id, human``) of
        judge-scored predictions, joined onto the table as its ``human`` column
        (:mod:`evalbars.data.labels`; the config key ``labels``).
    **options
        Reader options, as the config's predictions entries and the command line's options:
        ``format, model, id_field, category_field, metric, filter, tasks, runs, scorer,
        allow_partial, split, perturbation, instances``
        (:class:`evalbars.data.readers.SourceOptions`).

    Returns
    -------
    DataFrame
        One row per (model, question, epoch): ``model, question_id, epoch, category, src,
        answer, pred, correct, source_file, n_options, missing_prediction``
        (:data:`evalbars.data.items.ITEM_COLUMNS`), and ``human`` where labels were given.

    Raises
    ------
    evalbars.errors.EvalbarsError
        Bad input, in one line naming the file, the record and the problem: the checks of
        the workflow's ``items`` job (:func:`evalbars.jobs.data.items`).
    """
    raw = read_sources(paths, SourceOptions(**options))
    result = data.items_from_raw(
        raw,
        policy=missing_prediction,
        seed=seed,
        max_unshared_share=max_unshared_share,
        question_set=question_set,
        labels=labels,
    )
    return result["item_table"].frame


def read_preview(
    paths, *, missing_prediction: str = "wrong", labels=None, **options
) -> pd.DataFrame:
    """Per model, what was read (the table ``evalbars read`` prints), after the same checks as
    :func:`read_items`."""
    raw = read_sources(paths, SourceOptions(**options))
    result = data.items_from_raw(raw, policy=missing_prediction, question_set="all", labels=labels)
    table = result["item_table"].frame
    return read_summary(raw, table)


def attach_labels(items: pd.DataFrame, labels) -> pd.DataFrame:
    """An item table with the labels file ``labels`` joined and checked, as :func:`read_items`
    joins it (for tables read or combined without it)."""
    return data.labelled(items, labels)


def stderr_audit(paths, **options) -> pd.DataFrame:
    """``harness_stderr.csv``: every standard error the harness published under ``paths``,
    recomputed from the items by the harness's own formula and clustered, and flagged
    (:func:`evalbars.jobs.data.harness_stderr`; each flag is also a warning line). ``options``
    are the reader options, as for :func:`read_items` (``metric``, ``filter``, ``scorer``
    choose what is audited)."""
    with quiet_warnings():  # what the read drops or re-scores is said once, by the read itself
        items = read_items(paths, missing_prediction="wrong", **options)
    chosen = {key: options.get(key) for key in ("metric", "filter", "scorer")}
    sources = [{"path": str(path)} | chosen for path in _listed(paths)]
    return data.harness_stderr(items, sources)["harness_stderr"].frame


def judge_corrected_table(items, level: float = LEVEL, alpha: float = ALPHA) -> pd.DataFrame:
    """``judge_corrected.csv``: judge-only, human-only and judge-corrected (PPI++) readings of
    every model and pair, where the scores are a judge's with human labels (empty without)."""
    return analysis.analysis_judge_corrected(scores(items), level=level, alpha=alpha)[
        "judge_corrected"
    ].frame


def scores(items) -> WideScores:
    """The question-by-model score matrix of an item table (a WideScores passes through)."""
    return items if isinstance(items, WideScores) else wide_scores(items)


def accuracy_table(items, level: float = LEVEL) -> pd.DataFrame:
    """``models.csv``: per-model accuracy, naive and clustered SEs, Wilson interval."""
    return analysis.analysis_models(scores(items), level=level)["models"].frame


def pairwise_table(items, alpha: float = ALPHA) -> pd.DataFrame:
    """``pairwise.csv``: every pair's unpaired and paired z, exact McNemar, Bonferroni, Holm."""
    wide = scores(items)
    tests = pairwise.pair_tests(wide)
    return analysis.pairwise_tests(tests, alpha=alpha, wide=wide)["pairwise"].frame


def omnibus_table(items) -> pd.DataFrame:
    """``omnibus.csv``: RM-ANOVA (Greenhouse-Geisser), one-way ANOVA, Friedman, Cochran's Q."""
    return analysis.analysis_omnibus(scores(items))["omnibus"].frame


def mixed_contrasts(items, alpha: float = ALPHA, method: str = "auto") -> pd.DataFrame:
    """``mixed_contrasts.csv``: the mixed models' pairwise contrasts (rows of a specification
    the data cannot identify are empty, with the reason on the console)."""
    result = analysis.analysis_mixed(scores(items), method=method, alpha=alpha)
    return result["mixed_contrasts"].frame


def variance_components(items, method: str = "auto") -> pd.DataFrame:
    """``variance_components.csv``: the mixed models' REML variance components."""
    result = analysis.analysis_mixed(scores(items), method=method, alpha=ALPHA)
    return result["variance_components"].frame


def rank_table(
    items,
    level: float = LEVEL,
    *,
    draws: int = DRAWS,
    replicates: int = DRAWS,
    seed: int = SEED,
    stratify: bool = True,
) -> pd.DataFrame:
    """``ranks.csv``: score intervals, gaps, tiers, P(first) and rank ranges, both readings."""
    result = ranks.ranks_table(
        scores(items),
        level=level,
        draws=draws,
        replicates=replicates,
        seed=seed,
        stratify=stratify,
    )
    return result["ranks"].frame


def check_claims(
    items,
    claims_made: Sequence[str],
    alpha: float = ALPHA,
    *,
    family: str = "claims",
    adjust: str = "holm",
    power: float = POWER,
    replicates: int = DRAWS,
    seed: int = SEED,
) -> pd.DataFrame:
    """``claims.csv``: each claim's verdict under every reading (see
    :func:`evalbars.readings.claims.evaluate_claims` for the claim forms and readings).

    A claim naming a model or category the data do not hold, or comparing two models that share
    no question, is refused, as the workflow's ``claims_check`` job refuses it
    (:func:`evalbars.jobs.claims.checked_claims`).
    """
    wide = scores(items)
    answered = np.isfinite(wide.scores)
    accuracy = pd.Series(
        np.where(answered, wide.scores, 0.0).sum(axis=0) / answered.sum(axis=0), index=wide.models
    )
    checked = claim_jobs.checked_claims(
        accuracy, set(wide.categories), claims=list(claims_made), notes=[]
    )["checked"]
    table = claim_jobs.claims_table(
        wide,
        yaml.safe_load(checked.text),
        alpha=alpha,
        family=family,
        power=power,
        replicates=replicates,
        seed=seed,
        adjust=adjust,
    )
    return table["claims"].frame


def compare_models(
    items,
    baseline: str,
    candidate: str,
    *,
    margin: float = 0.0,
    better_by: float = 0.0,
    alpha: float = ALPHA,
    power: float = POWER,
    by_category: bool = False,
    sequential: bool = False,
    arrival=None,
) -> gate.Comparison:
    """The release gate of ``evalbars compare``: the candidate against the baseline on their
    shared questions (:func:`evalbars.readings.gate.compare_models`; ``margin``, the
    non-inferiority margin, and ``better_by``, the superiority margin, as proportions, 0.01 =
    1 point). Its ``summary`` holds the verdict and the exit code,
    ``flips`` the questions that changed.

    ``arrival`` is the order the questions arrived in, for ``sequential``: by default the
    order of the candidate's rows in the item table ``items`` (the order its source lists
    them, as ``evalbars compare --sequential`` takes it); for a score matrix, its own order.
    """
    wide = scores(items)
    for name in (baseline, candidate):
        if name not in wide.models:
            raise InputError("compare", f"unknown model {name!r}; the data hold {wide.models}")
    if arrival is None and isinstance(items, pd.DataFrame):
        arrival = items.loc[items["model"] == candidate, "question_id"].to_numpy()
    try:
        return gate.compare_models(
            wide.columns([baseline, candidate]),
            baseline,
            candidate,
            margin=margin,
            better_by=better_by,
            alpha=alpha,
            power=power,
            by_category=by_category,
            sequential=sequential,
            arrival=arrival,
        )
    except ValueError as exc:
        raise InputError("compare", str(exc)) from exc


def leaderboard_table(
    items,
    alpha: float = ALPHA,
    *,
    level: float = LEVEL,
    power: float = POWER,
    splits: int = SPLITS,
    seed: int = SEED,
    top_k: int = TOP_K,
) -> pd.DataFrame:
    """``leaderboard.csv``: per system its letters, split-half stability and the resolution of
    the adjacent pair below it (:func:`evalbars.readings.leaderboard.table.leaderboard_table`),
    and its place in the confidence sets for the best and the top ``top_k``."""
    result = leaderboard.leaderboard_table(
        scores(items),
        alpha=alpha,
        level=level,
        power=power,
        splits=splits,
        seed=seed,
        top_k=top_k,
    )
    return result["leaderboard"].frame


# --- The report: the workflow itself, on the user's files ------------------------------------


@dataclass(frozen=True)
class ReportRun:
    """What :func:`write_report` made.

    Attributes
    ----------
    directory : Path
        The run directory (its ``results/`` holds every table and figure).
    report : Path
        The self-contained HTML report (``report.html`` in the run directory).
    config : Path
        The configuration the run used, which records what the run makes (``run:``): rerun or
        edit it with ``evalbars run --directory DIRECTORY --configfile CONFIG``.
    claims : DataFrame
        ``claims.csv`` (empty without claims).
    """

    directory: Path
    report: Path
    config: Path
    claims: pd.DataFrame


def report_config(
    paths,
    *,
    claims: Sequence[str] = (),
    missing_prediction: str = "wrong",
    simulations: bool = False,
    labels=None,
    prices=None,
    **options,
) -> dict:
    """The workflow configuration of :func:`write_report`: the given files as ``predictions``,
    no MMLU-Pro archives, settings fitted to the data (every question; no paper replication),
    one job per stage (``jobs: per_stage``), the labels file, if any, as ``labels``, and what
    the run makes (``run``): the stages :data:`REPORT_STAGES` (and the simulation studies with
    ``simulations``), the report at ``report.html`` in the run directory."""
    # Only what differs from the readers' defaults, so the written config reads as it was meant.
    defaults = SourceOptions()
    given = {
        key: value
        for key, value in options.items()
        if value is not None and value != getattr(defaults, key, None)
    }
    entries = [dict(path=str(Path(path).resolve()), **given) for path in _listed(paths)]
    return (
        {
            "models": [],
            "predictions": entries,
            "missing_prediction": missing_prediction,
            "question_set": "all",
            "subsample": {"n": "all"},
            "claims": list(claims),
            # one job per stage: on the data of one report, start-ups are most of the work
            "jobs": "per_stage",
            "run": {
                "stages": [*REPORT_STAGES, *(["simulations"] if simulations else [])],
                "report": "report.html",
            },
        }
        | ({"labels": str(Path(labels).resolve())} if labels else {})
        | _prices_config(prices)
    )


def write_report(
    paths,
    output="evalbars-report",
    *,
    claims: Sequence[str] = (),
    missing_prediction: str = "wrong",
    simulations: bool = False,
    cores: int | str = "all",
    unlock: bool = False,
    progress: Callable[[str], None] | None = None,
    hint_style: str = "config",
    labels=None,
    prices=None,
    **options,
) -> ReportRun:
    """Run the evalbars workflow on prediction files and write its HTML report.

    The same Snakemake workflow as ``snakemake`` in a clone (same rules, same outputs; the
    copy the wheel ships when evalbars is installed), in the run directory ``output``, with
    the configuration of :func:`report_config`.

    Before anything is written the data are read and checked in this process, as the
    workflow's item-table job checks them, and the claims against the models and categories
    they hold, so that bad input stops the run with its one-line reason and leaves nothing
    behind. The run is then :func:`evalbars.workflow.runner.run_workflow`, the path of
    ``evalbars run`` too: the run directory is locked (a second run into it is refused, naming
    the first), the configuration is written to ``output/config.yaml``, recording what the run
    makes (its stages and its report, ``run:``), so that ``evalbars run --directory OUTPUT
    --configfile OUTPUT/config.yaml`` reruns exactly this run. A run refused before the
    workflow starts removes a run directory it made itself; once the workflow has started the
    directory stays, failed or interrupted, with its logs and the configuration that resumes it.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Prediction files or folders of harness logs.
    output : path-like
        The run directory (created if needed).
    claims : sequence of str
        Claims to test (``"A > B"``, ``"best: A"``, ...).
    simulations : bool
        Also run the simulation studies (they do not read the data).
    unlock : bool
        First remove a Snakemake lock left in the run directory by a run that was killed.
    progress : callable, optional
        Called with each progress line of the run, and each warning a job prints (e.g.
        ``print``).
    hint_style : {"config", "cli"}
        How messages word a remedy: as a config key, or as a command-line flag.
    labels : path-like, optional
        Human labels of judge-scored predictions, as for :func:`read_items`.
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model, as for :func:`cost_table`: the
        run then adds ``cost.csv``, ``frontier.csv`` and the frontier figure.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    ReportRun
        The run directory, the report, the configuration and the claims' verdicts.

    Raises
    ------
    EvalbarsError
        With the one-line reason when the run fails on bad input.
    KeyboardInterrupt
        :class:`evalbars.workflow.runner.RunInterrupted` on Ctrl-C, whose ``resume`` is the
        command that finishes the run.
    """
    listed = _listed(paths)
    if isinstance(prices, (str, os.PathLike)):  # a bad price file in one line, before the run
        prices = read_price_file(prices)
    for path in [*listed, *([labels] if labels else [])]:
        if not Path(path).exists():  # before Snakemake, which would only say an input is missing
            raise InputError(path, "file does not exist")
    snakefile()  # a broken install says so before anything is written
    directory = Path(output).resolve()
    if directory.exists() and not directory.is_dir():
        raise InputError(directory, "is a file, not a run directory; give another --output")
    config = report_config(
        listed,
        claims=claims,
        missing_prediction=missing_prediction,
        simulations=simulations,
        labels=labels,
        prices=prices,
        **options,
    )
    smk.source_files(config["predictions"])  # a name Snakemake cannot take, in one line
    # The workflow's own checks, here first: one line, and nothing written. The item-table job
    # reads the data again (on the data of one report that costs little) and prints what it
    # drops or re-scores: this read keeps quiet, so that the console says each thing once.
    with quiet_warnings():
        table = read_items(listed, missing_prediction=missing_prediction, labels=labels, **options)
    claim_jobs.checked_claims(
        claim_jobs.model_accuracy(table), table["category"].unique(), claims=list(claims), notes=[]
    )
    if config.get("prices"):  # the costs job's checks too: a model's usage without its price
        with quiet_warnings():
            leaderboard.costs(table, sources=config["predictions"], prices=config["prices"])
    report = runner.run_workflow(
        directory,
        config=config,
        cores=cores,
        unlock=unlock,
        progress=progress,
        hint_style=hint_style,
        unlock_remedy="add --unlock (write_report(..., unlock=True))",
    )
    claims_path = directory / "results" / "tables" / "claims.parquet"
    table = pd.read_parquet(claims_path) if claims_path.exists() else pd.DataFrame()
    return ReportRun(
        directory=directory, report=report, config=directory / "config.yaml", claims=table
    )


# --- The best model, honestly, and what it costs ---------------------------------------------


def _prices_config(prices) -> dict:
    """The config's ``prices:`` of :func:`report_config`: a file read into the mapping, so
    that the run's config.yaml records the prices themselves."""
    if prices is None:
        return {}
    if isinstance(prices, (str, os.PathLike)):
        prices = read_price_file(prices)
    price_table(prices)  # checked here: a bad price in one line, before the run
    return {
        "prices": {str(m): {k: float(v[k]) for k in ("input", "output")} for m, v in prices.items()}
    }


def winner_table(items, level: float = LEVEL, *, seed: int = SEED) -> pd.DataFrame:
    """``winner.csv``: the top model's score naive, conditional, hybrid and zoom.

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
    """The confidence sets for the best model and the top k: the columns ``leaderboard.csv``
    gains (:func:`evalbars.readings.leaderboard.best.best_sets`, through
    :func:`evalbars.jobs.leaderboard.best_model`).

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


def cost_readings(
    paths,
    prices=None,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
    missing_prediction: str = "wrong",
    items: pd.DataFrame | None = None,
    **options,
) -> dict:
    """``cost.csv`` and ``frontier.csv`` in one read: ``{"cost": ..., "frontier": ...}``.

    The items are read as :func:`read_items` reads them (or given as ``items``, the item
    table of ``paths`` already read), the costs as the workflow's ``costs`` job computes them
    (:func:`evalbars.jobs.leaderboard.costs`), then its ``cost_table`` job; arguments as
    :func:`cost_table`.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> tables = eb.cost_readings("tests/data/harness/inspect_usage/logs",
    ...                           "tests/data/harness/inspect_usage/prices.csv")
    >>> sorted(tables)
    ['cost', 'frontier']
    """
    listed = _listed(paths)
    if items is None:
        items = read_items(listed, missing_prediction=missing_prediction, **options)
    given = {key: value for key, value in options.items() if value is not None}
    sources = [dict(path=str(path), **given) for path in listed]
    if isinstance(prices, (str, os.PathLike)):
        prices = read_price_file(prices)
    costs = leaderboard.costs(items, sources=sources, prices=prices)["costs"].frame
    result = leaderboard.cost_table(scores(items), costs, alpha=alpha, level=level, seed=seed)
    return {name: table.frame for name, table in result.items()}


def cost_table(
    paths,
    prices=None,
    *,
    alpha: float = ALPHA,
    level: float = LEVEL,
    seed: int = SEED,
    missing_prediction: str = "wrong",
    **options,
) -> pd.DataFrame:
    """``cost.csv``: per model, accuracy, mean cost per question and accuracy per dollar, with
    intervals (:func:`evalbars.readings.leaderboard.cost.cost_readings`).

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Predictions that record token usage (Inspect logs, HELM runs, tables with
        ``input_tokens`` and ``output_tokens``) or a ``cost`` column.
    prices : mapping or path-like, optional
        Dollars per million input and output tokens per model, as the config's ``prices:``
        (``{model: {"input": ..., "output": ...}}``) or a file of them
        (:func:`evalbars.data.prices.read_price_file`); none: the costs the logs record.
    alpha, level : float
        Error rate of the frontier set; level of the intervals.
    seed : int
        Seed of the frontier's critical value.
    missing_prediction : str
        As for :func:`read_items`.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    DataFrame
        :data:`evalbars.readings.leaderboard.cost.COST_COLUMNS`, most accurate first.

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
    **options,
) -> pd.DataFrame:
    """``frontier.csv``: the observed cost-accuracy frontier and the set that covers the true
    one at :math:`1-\\alpha` (:func:`evalbars.stats.cost.frontier_set`); arguments as
    :func:`cost_table`.

    Returns
    -------
    DataFrame
        :data:`evalbars.readings.leaderboard.cost.FRONTIER_COLUMNS`, most accurate first.

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
        **options,
    )["frontier"]
