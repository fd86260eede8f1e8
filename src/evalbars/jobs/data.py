"""The data stage's jobs (``workflow/rules/items.smk``, ``subsample.smk``): the canonical item
table, the audit of the harnesses' standard errors, and the seeded subsample.

:func:`items_from_raw` is what every entry point reads data through (the workflow's ``items``
job, :func:`evalbars.api.read_items` and every command of the command line), so that each
applies the same checks: sources against each other (ids, categories, coverage, with the hint
when ids differ only by leading zeros) and the design the analysis will compare.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalbars import __version__
from evalbars.data.items import (
    join_sources,
    missing_prediction_counts,
    rescore,
    score_sources,
    write_item_table,
)
from evalbars.data.labels import (
    attach_labels,
    check_same_labelled_questions,
    has_labels,
    label_summary,
    read_labels,
)
from evalbars.data.question_coverage import (
    check_id_spelling,
    check_source_coverage,
    coverage_table,
    data_changes,
    question_layout,
)
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.readers.common import LABEL_COLUMN
from evalbars.data.sampling import (
    check_design,
    design_notes,
    keep_questions,
    no_shared_question,
    stratified_subsample,
)
from evalbars.data.scores import WideScores, read_score_columns, write_wide_scores
from evalbars.defaults import MISSING_SEED
from evalbars.errors import ConfigError
from evalbars.jobs.inputs import file_name, parquet, reads
from evalbars.jobs.outputs import Table, Text
from evalbars.readings.stderr_audit import (
    AUDIT_COLUMNS,
    audit_lines,
    audit_stderr,
    published_stderr,
)
from evalbars.stats.repeats.score_matrix import score_matrix

__all__ = [
    "ItemTable",
    "DrawnItems",
    "ScoreMatrix",
    "read_raw",
    "chosen_scores",
    "items",
    "items_from_raw",
    "labelled",
    "harness_stderr",
    "subsample",
]

log = logging.getLogger("evalbars")


@dataclass(frozen=True)
class ItemTable:
    """An item table a job writes as Parquet (:func:`evalbars.data.items.write_item_table`)."""

    frame: pd.DataFrame

    suffixes = ("",)

    def write(self, path) -> None:
        write_item_table(self.frame, path)


@dataclass(frozen=True)
class DrawnItems:
    """The item table's rows of the drawn questions, written from the item table's file: a
    copy of it, byte for byte, when every question is kept (``subsample.n: all``)."""

    source: str
    questions: pd.DataFrame
    every_question: bool

    suffixes = ("",)

    def write(self, path) -> None:
        if self.every_question:
            shutil.copyfile(self.source, path)
        else:
            write_item_table(keep_questions(pd.read_parquet(self.source), self.questions), path)


@dataclass(frozen=True)
class ScoreMatrix:
    """The question x model score matrix every analysis job reads (``scores.npz``)."""

    wide: WideScores

    suffixes = ("",)

    def write(self, path) -> None:
        write_wide_scores(self.wide, path)


def chosen_scores(
    items: pd.DataFrame, score: str = "mean", question_set: str = "all"
) -> WideScores:
    """The score matrix of the item score ``score`` (``score:``, ``--score``) of an item table.

    ``mean`` is :func:`evalbars.data.scores.wide_scores`, as it always was. ``pass@K``,
    ``pass^K`` and ``maj@K`` are computed over each (model, question)'s samples pooled over
    its runs (:func:`evalbars.stats.repeats.score_matrix.score_matrix`); a cell with fewer
    than K samples is left out, said on the console with the count and the first of them,
    and with ``question_set: shared`` its question is left out for every model (the models
    are compared on the same questions). Bad choices are one line
    (:class:`evalbars.errors.ConfigError`): an unknown score, K beyond every cell's samples,
    scores that are not 0/1, or human labels (their corrected readings are of the mean).
    """
    if score != "mean" and LABEL_COLUMN in items.columns and items[LABEL_COLUMN].notna().any():
        raise ConfigError(
            f"score: {score} with human labels: the judge-corrected readings are of the mean "
            "score; use score: mean"
        )
    try:
        chosen = score_matrix(items, score)
    except ValueError as error:
        raise ConfigError(f"score: {error}") from None
    wide = chosen.wide
    message = chosen.short_message()
    if message:
        log.warning("%s", message)
        if question_set == "shared":
            complete = np.isfinite(wide.scores).all(axis=1)
            log.warning(
                "question_set: shared: %d question(s) left out for every model, %d kept",
                int((~complete).sum()),
                int(complete.sum()),
            )
            wide = wide.rows(complete)
    answered = np.isfinite(wide.scores).any(axis=0)
    if score != "mean" and wide.scores.size and not answered.all():
        empty = [wide.models[i] for i in np.flatnonzero(~answered)]
        raise ConfigError(
            f"score: {wide.score} leaves model(s) {', '.join(empty)} no question with "
            f"{chosen.k} samples; choose a smaller k or read more samples"
        )
    return wide


def read_raw(archives=None, sources=()) -> list[pd.DataFrame]:
    """Raw rows of every source: ``archives`` maps MMLU-Pro archive paths to their models,
    ``sources`` are predictions entries (a path and its reader options, as the config writes
    them)."""
    raw = [
        frame
        for path, model in (archives or {}).items()
        for frame in read_source(path, SourceOptions(model=model))
    ]
    raw += [
        frame
        for source in sources
        for frame in read_source(source["path"], SourceOptions.from_entry(source))
    ]
    return raw


@reads(archives=file_name)
def items(
    archives=(),
    *,
    archive_models: dict,
    sources: list,
    policy: str,
    seed: int,
    max_unshared_share: float,
    subsample_n,
    question_set: str,
    labels,
) -> dict:
    """``items``: the item table of every source (the MMLU-Pro ``archives``, whose models
    ``archive_models`` names by file name, and the predictions entries ``sources``), checked
    by :func:`items_from_raw`; the console also says what the shape of the data leaves out.
    The labels file ``labels`` is joined (:func:`labelled`)."""
    models = {path: archive_models[path.rsplit("/", 1)[-1]] for path in archives}
    return items_from_raw(
        read_raw(models, sources),
        policy=policy,
        seed=seed,
        max_unshared_share=max_unshared_share,
        subsample_n=subsample_n,
        question_set=question_set,
        design=True,
        labels=labels,
    )


def items_from_raw(
    raw: list[pd.DataFrame],
    *,
    policy: str = "wrong",
    seed: int = MISSING_SEED,
    max_unshared_share: float = 0.01,
    subsample_n="all",
    question_set: str = "shared",
    design: bool = False,
    labels=None,
) -> dict:
    """The item table of the raw rows, after every check (the ``items`` job's work).

    Everything that can make the run fail is checked before anything is returned: the
    sources against each other (:func:`evalbars.data.question_coverage.check_source_coverage`,
    with ``question_set: shared``) and the design (:func:`evalbars.data.sampling.check_design`).
    What dropped or re-scored data, what no question answered by every model leaves out
    (``question_set: all``), and (with ``design``) what else the shape of the data leaves out
    (no categories, one model), is logged as a warning: the console shows it. ``labels`` is a
    labels file (:func:`evalbars.data.labels.read_labels`) joined onto the table; labels, from
    it or from the predictions, are checked (:mod:`evalbars.data.labels`) and counted.

    Returns
    -------
    dict
        ``item_table`` (:class:`ItemTable`), ``missing`` and ``coverage`` (:class:`Table`).
    """
    combined = join_sources(raw)
    # Which questions each model's source holds, coded once for every check below.
    sources_layout = question_layout(combined)
    in_source = sources_layout.present
    if question_set == "shared":
        check_source_coverage(combined, max_unshared_share, in_source)
    check_id_spelling(combined, in_source)
    table = labelled(score_sources(combined, policy, seed), labels)
    # The item table holds every row of the sources unless the exclude policy dropped some.
    layout = sources_layout if len(table) == len(combined) else question_layout(table)
    check_design(table, subsample_n, question_set, layout)
    missing = missing_prediction_counts(raw, policy)
    coverage = coverage_table(combined, table, in_source)
    # What no question every model answered leaves out is said whatever the caller.
    if design:
        notes = design_notes(table, question_set, layout)
    else:
        notes = no_shared_question(table, layout) if not coverage["shared"].iloc[0] else []
    if has_labels(table):
        counted = label_summary(table)
        log.warning(
            "judge scores with human labels: %d questions labelled (%d answers of %d models); "
            "the judge-corrected (PPI++) readings assume the labelled questions were chosen "
            "uniformly at random",
            counted["questions"],
            counted["answers"],
            counted["models"],
        )
    for line in data_changes(missing, coverage, question_set) + notes:
        log.warning("%s", line)
    return {
        "item_table": ItemTable(table),
        "missing": Table(missing),
        "coverage": Table(coverage),
    }


def labelled(table: pd.DataFrame, labels=None) -> pd.DataFrame:
    """The item table with the labels file ``labels`` joined (:func:`evalbars.data.labels.attach_labels`),
    its labels, from that file or from the predictions, checked for a paired reading
    (:func:`evalbars.data.labels.check_same_labelled_questions`)."""
    if labels:
        table = attach_labels(table, read_labels(labels), labels)
    check_same_labelled_questions(table, labels or "the predictions' human column")
    return table


@reads(item_table=parquet())
def harness_stderr(item_table: pd.DataFrame, sources) -> dict:
    """``harness_stderr``: every standard error the sources' harnesses published,
    recomputed from the items and flagged (:func:`evalbars.readings.stderr_audit.audit_stderr`),
    each flag also a warning line.

    ``item_table`` is the item table; its missing predictions are scored 0 for the audit whatever
    the run's policy, as lm-eval and Inspect score them. ``sources`` are the predictions
    entries (their ``metric``/``filter``, Inspect's ``scorer``, choose what is audited).
    """
    if item_table["missing_prediction"].any():
        item_table = rescore(item_table, "wrong", 0)
    tables = []
    for source in sources:
        published = published_stderr(source["path"])
        if len(published):
            metric = source.get("metric") or source.get("scorer")
            tables.append(
                audit_stderr(published, item_table, metric=metric, filter=source.get("filter"))
            )
    table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=AUDIT_COLUMNS)
    for line in audit_lines(table):
        log.warning("published stderr: %s", line)
    flagged = int((table["flag"] != "ok").sum())
    return {
        "harness_stderr": Table(
            table,
            caption=f"Standard errors the harnesses published, recomputed from the items by the "
            f"harness's own formula (recomputed_stderr) and clustered by category (CR2); "
            f"{flagged} of {len(table)} flagged.",
        )
    }


@reads(item_table=file_name)
def subsample(item_table: str, *, n, seed: int, question_set: str, score: str = "mean") -> dict:
    """``subsample``: the seeded category-stratified subsample of the item table in
    the file ``item_table``, and its score matrix of the item score ``score``
    (:func:`chosen_scores`).

    Returns
    -------
    dict
        ``item_table`` (:class:`DrawnItems`), ``questions``, ``scores``
        (:class:`ScoreMatrix`), ``allocation`` and ``manifest``.
    """
    # The draw needs only the score columns; the whole table is read only if questions drop out.
    scores = read_score_columns(item_table)
    drawn = stratified_subsample(scores, n, seed, question_set)
    wide = chosen_scores(drawn.items, score, question_set)
    manifest = {
        "n": n,
        "seed": seed,
        "question_set": question_set,
        "questions": len(drawn.questions),
        "models": wide.models,  # sorted names
        "not_eligible": drawn.n_dropped,
        "evalbars_version": __version__,
    } | (
        {"score": wide.score, "scored_questions": len(wide.question_ids)} if score != "mean" else {}
    )
    return {
        "item_table": DrawnItems(
            str(item_table), drawn.questions, every_question=len(drawn.items) == len(scores)
        ),
        "questions": Table(drawn.questions),
        "scores": ScoreMatrix(wide),
        "allocation": Table(drawn.allocation),
        "manifest": Text(json.dumps(manifest, indent=2)),
    }
