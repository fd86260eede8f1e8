"""The API's readers: prediction files and harness logs to raw rows, the checked item table,
what was read, labels joined, the harnesses' standard errors audited, the score matrix
(:mod:`evalbars.api` re-exports them)."""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager

import pandas as pd

from evalbars.data.items import read_summary
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.scores import WideScores, wide_scores
from evalbars.defaults import MISSING_SEED
from evalbars.jobs import data

__all__ = [
    "read_sources",
    "read_items",
    "read_preview",
    "attach_labels",
    "stderr_audit",
    "scores",
]


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
    """Raw rows of prediction files and harness logs, one frame per file or run, unchecked.

    What each reader makes of its files before the item table joins and checks them (the
    workflow's ``items`` job reads them so too); :func:`read_items` is what analyses take.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Files, or folders walked for every log they hold.
    options : SourceOptions, optional
        The reader options (:class:`evalbars.data.readers.SourceOptions`), the same for every
        path; default the readers' defaults.

    Returns
    -------
    list of DataFrame
        Raw rows (:data:`evalbars.data.readers.common.RAW_COLUMNS`), one frame per file,
        lm-eval run or log, in the order the paths and their walks give them.

    Raises
    ------
    evalbars.errors.InputError
        A path that does not exist, or a log that cannot be read, in one line naming the file,
        the record and the problem.

    See Also
    --------
    read_items : The checked item table.
    evalbars.data.readers.read_source : One path.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> from evalbars.data.readers import SourceOptions
    >>> frames = eb.read_sources("tests/data/harness/lm_eval", SourceOptions(runs="newest"))
    >>> [(frame["model"].iloc[0], len(frame)) for frame in frames]
    [('evalbars/fake-mid', 39), ('evalbars/fake-strong', 39), ('evalbars/fake-weak', 39)]
    """
    return [frame for path in _listed(paths) for frame in read_source(path, options)]


def read_items(
    paths,
    *,
    missing_prediction: str = "wrong",
    seed: int = MISSING_SEED,
    question_set: str = "all",
    max_unshared_share: float = 0.01,
    labels=None,
    **options,
) -> pd.DataFrame:
    """The canonical item table of prediction files or harness logs, after the workflow's checks.

    The table of the workflow's ``items`` job (``data/items.parquet``,
    :func:`evalbars.jobs.data.items_from_raw`): the readers' rows of every path joined (one source per
    model, one category per question), missing predictions scored by the policy, and, with
    ``labels``, the human labels joined and checked.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Files (long CSV/TSV/Parquet tables, MMLU-Pro JSON, lm-evaluation-harness samples,
        Inspect logs, HELM, lighteval, Every Eval Ever, SWE-bench) or folders walked for
        every log they hold.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as (config ``missing_prediction``): 0, a seeded
        uniform guess among the question's options, or nothing (the row is dropped).
    seed : int, default :data:`evalbars.defaults.MISSING_SEED`
        Seed of the ``random_guess`` policy (config ``missing_prediction_seed``).
    question_set : {"all", "shared"}, default "all"
        Keep every question any model answered (as ``evalbars report``), or only those every
        model answered (the paper's design).
    max_unshared_share : float, default 0.01
        With ``question_set="shared"``: the largest share of questions that may be left out
        for not being answered by every model before the read stops.
    labels : path-like, optional
        A file of human labels (``model, question_id, human`` or ``question_id, human``) of
        judge-scored predictions, joined onto the table as its ``human`` column
        (:mod:`evalbars.data.labels`; config ``labels``).
    **options
        Reader options, as the config's predictions entries and the command line's options:
        ``format, model, id_field, category_field, metric, filter, tasks, runs, scorer,
        allow_partial, split, perturbation, instances``
        (:class:`evalbars.data.readers.SourceOptions`).

    Returns
    -------
    DataFrame
        One row per (model, question, epoch), :data:`evalbars.data.items.ITEM_COLUMNS`:
        ``model``; ``question_id``; ``epoch`` (1 unless a question was sampled repeatedly);
        ``category``; ``src`` (the source's own id of the question); ``answer`` and ``pred``
        (the reference and the prediction, where the format has them); ``correct`` (the
        score, 0/1 or a fraction); ``source_file``; ``n_options`` (answer options, for the
        ``random_guess`` policy); ``missing_prediction`` (the row had no prediction); and
        ``human`` (the label, NaN where none) with ``labels``.

    Raises
    ------
    evalbars.errors.InputError
        Bad input, in one line naming the file, the record and the problem: a missing file,
        an unreadable log, a question in two categories, a model in two sources, labels the
        data do not match (the checks of :func:`evalbars.jobs.data.items_from_raw`).
    evalbars.errors.ConfigError
        Settings the data cannot meet: ``exclude`` leaving a model no question, too many
        unshared questions for ``question_set="shared"``, two sources of labels.
    ValueError
        An unknown ``missing_prediction`` or ``question_set``.
    TypeError
        An unknown reader option.

    See Also
    --------
    read_preview : What was read, per model.
    attach_labels : Labels joined onto a table read without them.
    scores : The question-by-model matrix the analyses read.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> items[["model", "question_id", "category", "correct"]].head(3)
                   model question_id  category  correct
    0  evalbars/fake-mid   arith-001  addition        0
    1  evalbars/fake-mid   arith-002  addition        0
    2  evalbars/fake-mid   arith-003  addition        0
    >>> items.groupby("model")["missing_prediction"].sum().to_dict()
    {'evalbars/fake-mid': 6, 'evalbars/fake-strong': 1, 'evalbars/fake-weak': 1}
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
    """Per model, what was read: the table ``evalbars read`` prints.

    The files are read and checked as :func:`read_items` reads them (every question), then
    summarised by :func:`evalbars.data.items.read_summary`.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Prediction files or folders of harness logs, as for :func:`read_items`.
    missing_prediction : {"wrong", "random_guess", "exclude"}, default "wrong"
        What a missing prediction counts as in ``accuracy``.
    labels : path-like, optional
        Human labels, checked as :func:`read_items` checks them.
    **options
        Reader options, as for :func:`read_items`.

    Returns
    -------
    DataFrame
        One row per model: ``model``, ``questions``, ``categories``, ``epochs`` (the most
        samples of one question), ``samples``, ``missing_predictions``, ``errored_samples``
        (samples the harness logged as errors), ``accuracy`` (mean score over the samples)
        and ``sources`` (the files the rows came from).

    Raises
    ------
    evalbars.errors.EvalbarsError
        Bad input, as for :func:`read_items`.

    See Also
    --------
    read_items : The rows themselves.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> preview = eb.read_preview("tests/data/harness/lm_eval", runs="newest", id_field="id")
    >>> preview[["model", "questions", "missing_predictions", "accuracy"]].round(3)
                      model  questions  missing_predictions  accuracy
    0     evalbars/fake-mid         39                    6     0.462
    1  evalbars/fake-strong         39                    1     0.744
    2    evalbars/fake-weak         39                    1     0.462
    """
    raw = read_sources(paths, SourceOptions(**options))
    result = data.items_from_raw(raw, policy=missing_prediction, question_set="all", labels=labels)
    table = result["item_table"].frame
    return read_summary(raw, table)


def attach_labels(items: pd.DataFrame, labels) -> pd.DataFrame:
    """An item table with a labels file joined and checked, as :func:`read_items` joins it.

    For tables read or combined without labels (the workflow's ``items`` job joins them with
    :func:`evalbars.jobs.data.labelled`).

    Parameters
    ----------
    items : DataFrame
        An item table without a ``human`` column.
    labels : path-like
        CSV, TSV or Parquet with ``question_id``, ``human`` (0/1 or a score in [0, 1]; empty
        where not yet labelled) and optionally ``model`` (without it a label holds for every
        model's answer to the question).

    Returns
    -------
    DataFrame
        ``items`` with a float ``human`` column (NaN where nobody labelled the answer); the
        argument itself is not modified.

    Raises
    ------
    evalbars.errors.InputError
        Naming the labels file and record: no such file, a missing column, a label that is not
        a number in [0, 1], a question or model the data do not hold, models labelled on
        different questions.
    evalbars.errors.ConfigError
        ``items`` already holds a ``human`` column.

    See Also
    --------
    judge_corrected_table : What the labels are for.
    evalbars.data.labels.read_labels : The labels file's checks.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> judged = eb.read_items("tests/data/judged/judged_scores.csv")
    >>> labelled = eb.attach_labels(judged, "tests/data/judged/labels.csv")
    >>> labelled.groupby("model")["human"].count().to_dict()
    {'model-a': 70, 'model-b': 70, 'model-c': 70}
    """
    return data.labelled(items, labels)


def stderr_audit(paths, **options) -> pd.DataFrame:
    """Every standard error a harness published, recomputed from its items and flagged.

    The workflow's ``harness_stderr.csv`` (:func:`evalbars.jobs.data.harness_stderr`): each
    value lm-eval, Inspect or HELM published under ``paths`` is recomputed from the item
    table by the harness's own formula and clustered by category, and flagged where it
    differs (each flag is also a warning line). Missing predictions are scored 0, as the
    harnesses score them.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        Harness output files or folders.
    **options
        Reader options, as for :func:`read_items`; ``metric``, ``filter`` and ``scorer``
        choose what is audited.

    Returns
    -------
    DataFrame
        One row per published value (:data:`evalbars.readings.stderr_audit.AUDIT_COLUMNS`):
        ``model, task, harness, metric, filter``; ``published_stderr``; ``recomputed_stderr``
        (the harness's formula on the items); ``clustered_stderr`` (CR2 by category);
        ``question_stderr`` (over per-question means); ``n`` and ``clusters``;
        ``relative_difference`` and ``tolerance``; ``flag`` (``ok``, ``differs``, ``estimate
        differs``, ``zero while the scores vary`` or ``no items``); ``published_estimate``,
        ``recomputed_estimate``, ``published_n``; ``convention`` (the formula used);
        ``note``; ``source_file``.

    Raises
    ------
    evalbars.errors.EvalbarsError
        Bad input, as for :func:`read_items`.

    See Also
    --------
    evalbars.readings.stderr_audit : The formulas of each harness.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> audit = eb.stderr_audit("tests/data/harness/lm_eval", runs="newest", id_field="id")
    >>> audit["flag"].value_counts().to_dict()
    {'ok': 12, 'no items': 4}
    """
    with quiet_warnings():  # what the read drops or re-scores is said once, by the read itself
        items = read_items(paths, missing_prediction="wrong", **options)
    chosen = {key: options.get(key) for key in ("metric", "filter", "scorer")}
    sources = [{"path": str(path)} | chosen for path in _listed(paths)]
    return data.harness_stderr(items, sources)["harness_stderr"].frame


def scores(items: pd.DataFrame | WideScores) -> WideScores:
    """The question-by-model score matrix of an item table, which every analysis reads.

    Each cell is one model on one question, the mean of its samples (epochs). Computing it
    once and passing it to the table functions saves a pivot per call.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table (:func:`read_items`); a WideScores passes through unchanged.

    Returns
    -------
    WideScores
        ``scores`` (questions x models, NaN where a model has no score), ``models``,
        ``question_ids`` (by category, then id), ``categories``, the samples per cell and,
        with labels, ``human`` (:class:`evalbars.data.scores.WideScores`).

    See Also
    --------
    evalbars.data.scores.wide_scores : The pivot.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> wide = eb.scores(eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id"))
    >>> wide.models, wide.scores.shape
    (['evalbars/fake-mid', 'evalbars/fake-strong', 'evalbars/fake-weak'], (39, 3))
    """
    return items if isinstance(items, WideScores) else wide_scores(items)


def _scored(items: pd.DataFrame | WideScores, score: str = "mean") -> WideScores:
    """The matrix of the item score ``score`` (:func:`scores` for ``mean``; else the pass@K,
    pass^K or maj@K matrix of an item table's samples, :func:`evalbars.jobs.data.chosen_scores`).
    A score matrix holds no samples to score another way: ``score`` other than ``mean`` with one
    is a ValueError."""
    if score == "mean":
        return scores(items)
    if not isinstance(items, pd.DataFrame):
        raise ValueError(
            f"score={score!r} needs an item table (each question's samples), not a score matrix"
        )
    return data.chosen_scores(items, score, "all")
