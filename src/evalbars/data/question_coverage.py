"""Which questions each model answered, which every model answered, and what left that set.

The paired analyses compare models on the questions every model answered (the
shared question set). A question leaves that set when some model's source lacks
it, or when the ``exclude`` policy drops a model's missing prediction.
:func:`coverage_table` says, per model, how many questions left and why;
:func:`check_source_coverage` stops the run, before anything is written, when
sources disagree on more questions than the configured share, since that is
more often a mismatch of question ids (``001`` in one file, ``1`` in another)
or of model names (``'fake-mid'`` and ``'fake-mid '``, read as two models that
each lack the other's questions) than a real difference; the message says which.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars.data.codes import (
    factorize_sorted,
    first_rows,
    first_values,
    index_codes,
    mark_cells,
)
from evalbars.data.items import near_duplicates
from evalbars.data.scores import question_order
from evalbars.errors import ConfigError, plain

__all__ = [
    "check_id_spelling",
    "QuestionLayout",
    "question_layout",
    "presence",
    "shared_questions",
    "coverage_table",
    "check_source_coverage",
    "categories_by_model",
    "narrowest_models",
    "data_changes",
]


@dataclass(frozen=True)
class QuestionLayout:
    """Which models have rows for which questions, and each question's category: what the
    coverage and design checks read of an item table, from one pass over its rows
    (:func:`question_layout`), so that a table of a hundred million rows is coded once for all
    of them.

    Attributes
    ----------
    present : DataFrame
        :func:`presence`: questions (sorted ids) by models (sorted names), True where the model
        has a row for the question.
    categories : array or None
        The category of each question (its first row's), in ``present``'s row order; None for
        a table without a ``category`` column.
    """

    present: pd.DataFrame
    categories: object = None


def question_layout(items: pd.DataFrame) -> QuestionLayout:
    """The :class:`QuestionLayout` of ``items`` (``model``, ``question_id`` and, where it has one,
    ``category``).

    Examples
    --------
    >>> items = pd.DataFrame({"model": ["b", "a", "b"], "question_id": [2, 1, 1],
    ...                       "category": ["x", "y", "y"]})
    >>> layout = question_layout(items)
    >>> layout.present.index.tolist(), layout.present.columns.tolist()
    ([1, 2], ['a', 'b'])
    >>> layout.present.to_numpy().tolist()
    [[True, True], [False, True]]
    >>> list(layout.categories)
    ['y', 'x']
    """
    rows, questions = index_codes(items["question_id"])
    columns, models = factorize_sorted(items["model"])
    table = np.zeros((len(questions), len(models)), dtype=bool)
    mark_cells(table, [rows, columns])
    held = table.any(axis=1)
    categories = (
        first_values(items["category"], rows, len(questions), at=held)
        if "category" in items
        else None
    )
    if not held.all():  # ids no row holds (numbers missing from a range)
        table, questions = table[held], questions[held]
    present = pd.DataFrame(
        table,
        index=pd.Index(questions, name="question_id"),
        columns=list(models),
        copy=False,
    )
    return QuestionLayout(present, categories)


def presence(items: pd.DataFrame) -> pd.DataFrame:
    """Question-by-model table of booleans: does the model have a row for the question.

    Rows follow sorted question ids, columns sorted model names
    (:attr:`QuestionLayout.present`).
    """
    return question_layout(items[["model", "question_id"]]).present


def shared_questions(
    items: pd.DataFrame, layout: QuestionLayout | None = None
) -> tuple[pd.DataFrame, int]:
    """Questions every model in ``items`` has a row for.

    ``layout`` is :func:`question_layout` of ``items``, when the caller has it already.

    Returns
    -------
    shared : DataFrame
        ``question_id``, ``category`` in canonical order (category, question id).
    n_dropped : int
        Questions some model lacks.
    """
    layout = question_layout(items) if layout is None else layout
    answered = layout.present.to_numpy().all(axis=1)
    shared = pd.DataFrame(
        {
            "question_id": layout.present.index[answered],
            "category": layout.categories[answered],
        }
    )
    return question_order(shared).reset_index(drop=True), int((~answered).sum())


def coverage_table(
    combined: pd.DataFrame, items: pd.DataFrame, in_source: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per model: how many questions it has, how many every model has, and why others left.

    Parameters
    ----------
    combined : DataFrame
        Every row of every source, before scoring (:func:`evalbars.data.items.join_sources`).
    items : DataFrame
        The item table the analysis reads (:func:`evalbars.data.items.score_sources`): the rows of
        ``combined`` less those the ``exclude`` policy dropped, so as many rows means the same.
    in_source : DataFrame, optional
        :func:`presence` of ``combined``, when the caller has it already.

    Returns
    -------
    DataFrame
        One row per model: ``model, source_file, in_source`` (questions in its source),
        ``lacks_in_source`` (questions some other source has and this one lacks),
        ``excluded`` (missing predictions the ``exclude`` policy dropped), ``analysed``
        (its questions in the item table), ``shared`` (questions every model has in
        the item table, the same in every row), ``outside_shared`` (``analysed -
        shared``: its questions the paired analyses leave out) and ``questions``
        (distinct questions over all sources).
    """
    in_source = presence(combined) if in_source is None else in_source
    if len(items) == len(combined):  # no row dropped: the same questions
        analysed = in_source
    else:
        analysed = presence(items).reindex(index=in_source.index, fill_value=False)
    shared = int(analysed.all(axis=1).sum())
    models = list(in_source.columns)
    counts = analysed.sum(axis=0).reindex(models, fill_value=0).to_numpy()
    held = in_source.sum(axis=0).to_numpy()
    excluded = (
        np.zeros_like(held)
        if analysed is in_source
        else (in_source & ~analysed).sum(axis=0).to_numpy()
    )
    table = pd.DataFrame(
        {
            "model": models,
            "source_file": _source_files(combined, models),
            "in_source": held,
            "lacks_in_source": len(in_source) - held,
            "excluded": excluded,
            "analysed": counts,
            "shared": shared,
            "outside_shared": counts - shared,
            "questions": len(in_source),
        }
    )
    return table


def _source_files(combined: pd.DataFrame, models: list) -> np.ndarray:
    """The ``source_file`` of each of ``models`` (sorted names): that of its first row."""
    file, files = factorize_sorted(combined["source_file"])
    if len(files) == 1:
        return np.full(len(models), files[0], dtype=object)
    code, names = factorize_sorted(combined["model"])
    first = first_rows(code, len(names))
    return pd.Series(files.to_numpy()[file[first]], index=names).loc[models].to_numpy()


def _leading_zero_example(combined: pd.DataFrame, unshared) -> str:
    """`` ('001' in a.csv, '1' in b.csv)`` when two unshared ids differ only by leading zeros."""
    rows = combined.loc[combined["question_id"].isin(unshared), ["question_id", "source_file"]]
    rows = rows.drop_duplicates("question_id")
    text = rows["question_id"].astype(str)
    stripped = text.str.lstrip("0").replace("", "0")
    clashing = rows[stripped.duplicated(keep=False).to_numpy()]
    if clashing.empty:
        return ""
    first = stripped[clashing.index[0]]
    pair = clashing[stripped.loc[clashing.index] == first].iloc[:2]
    (id_a, file_a), (id_b, file_b) = pair.itertuples(index=False)
    return f" (the ids {plain(id_a)!r} in {file_a} and {plain(id_b)!r} in {file_b} differ only by leading zeros)"


def check_source_coverage(
    combined: pd.DataFrame, max_unshared_share: float, in_source: pd.DataFrame | None = None
) -> None:
    """Stop when sources disagree on more than ``max_unshared_share`` of the questions.

    A question is unshared when some source has it and another lacks it; the
    paired analyses would leave it out for every model. Raises
    :class:`~evalbars.errors.ConfigError` with one line naming the models that
    lack most questions, a hint when ids differ only by leading zeros, and the
    key that relaxes the check. ``in_source`` is :func:`presence` of ``combined``, when
    the caller has it already.
    """
    in_source = presence(combined) if in_source is None else in_source
    unshared = ~in_source.all(axis=1).to_numpy()
    share = float(unshared.mean())
    if share <= max_unshared_share:
        return
    lacking = (~in_source).sum(axis=0).sort_values(ascending=False, kind="stable")
    sources = combined.drop_duplicates("model").set_index("model")["source_file"]
    worst = ", ".join(
        f"{model} ({sources[model]}) lacks {int(n):,}" for model, n in lacking.iloc[:3].items() if n
    )
    more = (lacking > 0).sum() - min(3, int((lacking > 0).sum()))
    worst += f" and {more} more model(s)" if more else ""
    names = near_duplicates(in_source.columns, "model names")
    ids = near_duplicates(in_source.index[unshared], "question ids")
    hint = (
        f" ({names or ids})"
        if names or ids
        else _leading_zero_example(combined, in_source.index[unshared])
    )
    what = "model names" if names else "question ids"
    raise ConfigError(
        f"{int(unshared.sum()):,} of {len(in_source):,} questions ({share:.1%}) are in some "
        f"prediction sources but not all ({worst}), so the paired analyses would leave them "
        f"out{hint}; check that {what} are written alike in every file, or raise "
        f"`max_unshared_share` (now {max_unshared_share:g}) to accept the loss"
    )


def check_id_spelling(combined: pd.DataFrame, in_source: pd.DataFrame | None = None) -> None:
    """Stop when sources write the same question ids differently, whatever ``question_set``.

    Ids that some sources hold and others lack, and that differ only by leading zeros
    (``001`` and ``1``), case, surrounding whitespace or Unicode normalisation (``é`` as
    U+00E9, or as ``e`` and U+0301), are one question written two ways: the paired analyses
    would quietly compare the few ids that happen to match. Raises
    :class:`~evalbars.errors.ConfigError` naming the two ids, their files and how many
    questions are affected. (:func:`check_source_coverage` stops any large loss of shared
    questions with ``question_set: shared``; this check also covers ``question_set: all``
    and losses below ``max_unshared_share``.)
    """
    in_source = presence(combined) if in_source is None else in_source
    unshared_mask = ~in_source.all(axis=1).to_numpy()
    if not unshared_mask.any():
        return
    unshared = in_source.index[unshared_mask]
    hint = _leading_zero_example(combined, unshared).strip().strip("()")
    if not hint:
        hint = near_duplicates(unshared, "question ids")
    if not hint:
        return
    raise ConfigError(
        f"question ids are written differently in different sources: {hint}; "
        f"{int(unshared_mask.sum()):,} of {len(in_source):,} questions are in some sources but "
        "not all. Write the ids alike in every file (the same zeros, case, spaces and Unicode "
        "form)"
    )


def categories_by_model(items: pd.DataFrame) -> dict:
    """``{model: sorted categories of its questions}``."""
    return {m: sorted(g.unique()) for m, g in items.groupby("model")["category"]}


def narrowest_models(items: pd.DataFrame, category: str) -> list:
    """Models whose questions lie in ``category`` alone, else those lacking the most questions
    outside it (who keep the shared set from reaching other categories)."""
    outside = items[items["category"] != category]
    only_there = [m for m, cats in categories_by_model(items).items() if cats == [category]]
    if only_there:
        return only_there
    counts = outside.groupby("model")["question_id"].nunique()
    counts = counts.reindex(sorted(items["model"].unique()), fill_value=0)
    return list(counts.index[counts.to_numpy() == np.min(counts.to_numpy())])


def data_changes(
    missing: pd.DataFrame, coverage: pd.DataFrame, question_set: str = "shared"
) -> list[str]:
    """Plain sentences for everything that dropped or re-scored data, per model then overall.

    ``missing`` is :func:`evalbars.data.items.missing_prediction_counts`, ``coverage``
    :func:`coverage_table`, ``question_set`` what the analysis uses (with ``all``
    no question leaves the analysis; only the paired comparisons are limited to
    the questions both models answered; when no question is answered by every model,
    :func:`evalbars.data.sampling.no_shared_question` says so). The workflow prints these on
    the console and logs them; the two tables carry the same numbers into the report.
    """
    lines = []
    for row in missing.itertuples(index=False):
        if row.skipped_entries:
            lines.append(
                f"{row.model}: skipped {row.skipped_entries} entries of {row.source_file} that "
                "are not records"
            )
        if row.missing_predictions:
            lines.append(
                f"{row.model}: {row.missing_predictions:,} missing predictions "
                f"({row.missing_means}) scored as {row.scored_as}"
            )
        if row.errored_samples:
            lines.append(f"{row.model}: {row.errored_samples:,} samples errored in the harness")
    for row in coverage.itertuples(index=False):
        if row.lacks_in_source:
            lines.append(
                f"{row.model}: its source {row.source_file} lacks {row.lacks_in_source:,} of the "
                f"{row.questions:,} questions the sources hold"
            )
    total, shared = int(coverage["questions"].iloc[0]), int(coverage["shared"].iloc[0])
    if shared < total and question_set == "shared":
        lines.append(
            f"the paired analyses use the {shared:,} questions every model answered; "
            f"{total - shared:,} of {total:,} leave that set (per model: question_coverage.csv)"
        )
    elif 0 < shared < total:  # none at all: said, with what it leaves out, by the data stage
        lines.append(
            f"question_set: all keeps the {total:,} questions any model answered; {shared:,} are "
            "answered by every model (pairs use the questions both models answered)"
        )
    return lines
