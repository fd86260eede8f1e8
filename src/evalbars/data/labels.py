"""Human labels beside a judge's scores: the data contract of the judge-corrected readings.

A judge-scored eval gives every (model, question) a ``correct`` (the judge's score); a person
labels a **uniformly random** subset of questions with the gold score ``human`` (in [0, 1];
NaN elsewhere). The labels reach the item table one of two ways:

- a ``human`` column in a long table of predictions
  (:mod:`evalbars.data.readers.long_tables`), or
- a labels file (:func:`read_labels`, joined by :func:`attach_labels`): a CSV, TSV or Parquet
  table of ``model, question_id, human`` (one label per model's answer), or of
  ``question_id, human`` (one label per question, for every model: the model answered the
  question right or wrong whoever answered, as on a multiple-choice or exact-answer task).

Every label is checked in one line naming the file and the record: a label on a question
(or model) the data do not hold, a value outside [0, 1] (or a cell that says ``nan``), one
answer labelled twice with two values, a ``category`` that contradicts the data's (the labels
are then likely of other data, whose ids happen to match), and a file with no label filled in
(the unfilled template of ``evalbars labels sample``). A paired reading needs both models labelled on the **same** questions
(:func:`check_same_labelled_questions`; :func:`evalbars.stats.ppi.check_same_labelled_questions`
is the same rule on a matrix).

Labels chosen by outcome (the questions the judge got wrong, those a reviewer flagged)
invalidate every corrected reading: only a uniformly random subset estimates the judge's error
without bias. :func:`questions_to_label` draws one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evalbars.data.readers.common import LABEL_COLUMN
from evalbars.data.readers.long_tables import TABLE_SUFFIXES, label_values, load_table
from evalbars.data.sampling import draw_questions, eligible_questions
from evalbars.data.scores import question_order
from evalbars.errors import ConfigError, InputError
from evalbars.seeding import setting_rng

__all__ = [
    "LABEL_COLUMN",
    "has_labels",
    "table_header",
    "tables_carry_labels",
    "read_labels",
    "attach_labels",
    "check_same_labelled_questions",
    "label_summary",
    "questions_to_label",
]

#: Column names a labels file may use (any case, surrounding spaces ignored).
_LABEL_FILE_COLUMNS = {"model", "question_id", "category", LABEL_COLUMN}


def has_labels(items: pd.DataFrame) -> bool:
    """True when the item table holds at least one human label."""
    return LABEL_COLUMN in items.columns and bool(items[LABEL_COLUMN].notna().any())


def table_header(name) -> list[str]:
    """The column names of a long table (CSV, TSV or Parquet), from its header (or Parquet
    schema) alone, stripped and case-folded; none for another file, or one that cannot be
    read (the items job reads it and says what is wrong with it)."""
    path = Path(name)
    if path.suffix.lower() not in TABLE_SUFFIXES or not path.is_file():
        return []
    try:
        with open(path, "rb") as handle:
            parquet = handle.read(4) == b"PAR1"
        if parquet:
            columns = pq.read_schema(path).names
        else:
            sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                columns = handle.readline().rstrip("\r\n").split(sep)
    except (OSError, ValueError, pa.ArrowException):
        return []
    return [str(c).strip().strip('"').casefold() for c in columns]


def tables_carry_labels(paths) -> bool:
    """Whether any long table among ``paths`` (CSV, TSV or Parquet) has a ``human`` column,
    from its header (or Parquet schema) alone (:func:`table_header`); other files cannot carry
    labels."""
    return any(LABEL_COLUMN in table_header(path) for path in paths)


def read_labels(path) -> pd.DataFrame:
    """The labels of a labels file, checked.

    Parameters
    ----------
    path : str or Path
        CSV, TSV or Parquet with ``question_id`` and ``human`` and, optionally, ``model``
        (and any other columns, ignored: a ``category`` written by ``evalbars labels sample``).

    Returns
    -------
    DataFrame
        ``question_id`` (text, as written, surrounding spaces removed), ``human`` (float in
        [0, 1]), ``record`` (the 1-based data row), and ``model`` and ``category`` (text; empty
        cells as NA) when the file has them; the rows with an empty ``human`` (not yet
        labelled) left out.

    Raises
    ------
    InputError
        Naming the file (and the record): no such file, a missing column, an empty id or model, a label
        that is not a number in [0, 1] (``nan`` included), one answer labelled twice with
        different values, no label filled in at all.
    """
    path = Path(path)
    if not path.is_file():  # a traceback otherwise (pandas' FileNotFoundError)
        raise InputError(path, "file does not exist" if not path.exists() else "is not a file")
    frame = load_table(path, known=_LABEL_FILE_COLUMNS)
    missing = [c for c in ("question_id", LABEL_COLUMN) if c not in frame.columns]
    if missing:
        raise InputError(
            path,
            f"a labels file needs the column(s) {', '.join(missing)} (and model, for labels "
            f"of one model's answers); found {[c for c in frame.columns if c != 'record']}",
        )
    frame[LABEL_COLUMN] = label_values(frame, path)
    keys = ["model", "question_id"] if "model" in frame.columns else ["question_id"]
    for key in keys:
        text = frame[key].astype("string").str.strip()
        blank = text.isna() | (text == "")
        if blank.any():
            raise InputError(path, f"empty {key}", int(frame["record"][blank].iloc[0]))
        frame[key] = text.astype(object)
    if frame[LABEL_COLUMN].isna().all():
        raise InputError(
            path,
            f"no labels filled in: the {LABEL_COLUMN} column is empty on all {len(frame):,} "
            f"rows; fill it in (0/1 or a score in [0, 1]) before passing the file as --labels",
        )
    extra = ["category"] if "category" in frame.columns else []
    if extra:
        frame["category"] = frame["category"].astype("string").str.strip().replace("", pd.NA)
    labelled = frame[frame[LABEL_COLUMN].notna()][[*keys, LABEL_COLUMN, *extra, "record"]]
    repeated = labelled.duplicated(keys, keep=False)
    if repeated.any():
        values = labelled[repeated].groupby(keys, sort=False)[LABEL_COLUMN].nunique()
        if (values > 1).any():
            key = values.index[int(np.argmax(values.to_numpy() > 1))]
            key = key if isinstance(key, tuple) else (key,)
            clash = labelled[(labelled[keys] == pd.Series(key, index=keys)).all(axis=1)]
            what = " ".join(f"{k} {v!r}" for k, v in zip(keys, key, strict=True))
            raise InputError(
                path,
                f"{what} is labelled twice with different values "
                f"({clash[LABEL_COLUMN].iloc[0]:g} at record {clash['record'].iloc[0]}, "
                f"{clash[LABEL_COLUMN].iloc[1]:g} here); keep one label per answer",
                int(clash["record"].iloc[1]),
            )
        labelled = labelled.drop_duplicates(keys)
    return labelled.reset_index(drop=True)


def _ids_as_in(items_ids: pd.Series, label_ids: pd.Series) -> pd.Series:
    """The labels' text ids in the item table's id type (NaN where no id of that type)."""
    if pd.api.types.is_integer_dtype(items_ids):
        whole = label_ids.str.fullmatch(r"-?(0|[1-9]\d*)")
        return pd.Series(
            np.where(whole, pd.to_numeric(label_ids.where(whole), errors="coerce"), np.nan),
            index=label_ids.index,
        )
    return label_ids


def attach_labels(items: pd.DataFrame, labels: pd.DataFrame, source) -> pd.DataFrame:
    """The item table with the labels of ``labels`` (:func:`read_labels`) in its ``human`` column.

    Parameters
    ----------
    items : DataFrame
        The canonical item table (:data:`evalbars.data.items.ITEM_COLUMNS`), without labels.
    labels : DataFrame
        What :func:`read_labels` returned for the file ``source``.
    source : str or Path
        The labels file, for messages.

    Returns
    -------
    DataFrame
        ``items`` with a float ``human`` column: a label on every epoch of each labelled
        answer, NaN elsewhere. ``items`` itself is not modified.

    Raises
    ------
    InputError
        Naming the labels file and record: a question (or model) the data do not hold, or a
        ``category`` other than the data's for that question.
    ConfigError
        When the data already carry a ``human`` column (two sources of labels).
    """
    if LABEL_COLUMN in items.columns:
        raise ConfigError(
            f"{source}: the predictions already carry a {LABEL_COLUMN!r} column; give human "
            "labels one way, in the predictions or in a labels file"
        )
    ids = _ids_as_in(items["question_id"], labels["question_id"])
    known = ids.isin(pd.unique(items["question_id"]))
    if not known.all():
        row = labels[~known.to_numpy()].iloc[0]
        example = items["question_id"].iloc[0]
        raise InputError(
            source,
            f"question {row['question_id']!r} is not in the data (ids there look like "
            f"{str(example)!r}); a label must name a question the predictions hold",
            int(row["record"]),
        )
    if "category" in labels.columns:
        _check_categories(items, labels, ids, source)
    # Keys compared in one type: integer ids as int64, any other ids (and models) as text.
    integer = pd.api.types.is_integer_dtype(items["question_id"])
    item_ids = items["question_id"].to_numpy(dtype=np.int64 if integer else object)
    if not integer:
        item_ids = item_ids.astype(str).astype(object)
    label_ids = ids.to_numpy(dtype=np.int64 if integer else object)
    item_keys = pd.DataFrame({"question_id": item_ids})
    label_keys = pd.DataFrame({"question_id": label_ids})
    if "model" in labels.columns:
        models = pd.unique(items["model"].astype(str))
        unknown = ~labels["model"].isin(models)
        if unknown.any():
            row = labels[unknown.to_numpy()].iloc[0]
            raise InputError(
                source,
                f"model {row['model']!r} is not in the data (models: {', '.join(sorted(models))})",
                int(row["record"]),
            )
        item_keys.insert(0, "model", items["model"].astype(str).to_numpy(dtype=object))
        label_keys.insert(0, "model", labels["model"].to_numpy(dtype=object))
        absent = ~pd.MultiIndex.from_frame(label_keys).isin(pd.MultiIndex.from_frame(item_keys))
        if absent.any():
            row = labels[absent].iloc[0]
            raise InputError(
                source,
                f"model {row['model']!r} has no answer to question {row['question_id']!r}",
                int(row["record"]),
            )
    position = pd.MultiIndex.from_frame(label_keys).get_indexer(pd.MultiIndex.from_frame(item_keys))
    human = np.where(position >= 0, labels[LABEL_COLUMN].to_numpy()[position], np.nan)
    return items.assign(**{LABEL_COLUMN: human})


def _check_categories(items: pd.DataFrame, labels: pd.DataFrame, ids: pd.Series, source) -> None:
    """Refuse a labels file whose ``category`` of a question contradicts the data's: its labels
    are likely of other data whose ids match, and would correct the wrong questions."""
    given = labels["category"].notna().to_numpy()
    if not given.any():
        return
    data = (
        pd.DataFrame({"question_id": items["question_id"], "data": items["category"].astype(str)})
        .drop_duplicates("question_id")
        .set_index("question_id")["data"]
    )
    theirs = data.reindex(ids.to_numpy()).to_numpy(dtype=object)
    mine = labels["category"].astype(object).to_numpy()
    clash = given & (theirs != mine)
    if clash.any():
        i = int(np.argmax(clash))
        row = labels.iloc[i]
        raise InputError(
            source,
            f"question {row['question_id']!r} is in category {theirs[i]!r} in the data but "
            f"{mine[i]!r} here; are these labels of other data? (drop the category column to "
            "join by question id alone)",
            int(row["record"]),
        )


def check_same_labelled_questions(items: pd.DataFrame, source) -> None:
    """Refuse labels that differ between models on questions they both answered.

    A paired (and any multi-model) judge-corrected reading estimates the judge's error on the
    per-question difference of two models, which needs a human label of both answers to every
    labelled question (:func:`evalbars.stats.ppi.check_same_labelled_questions`).

    Raises
    ------
    InputError
        Naming ``source``, the two models and the first question labelled for one and not the
        other.
    """
    if not has_labels(items):
        return
    cells = (
        items.assign(_labelled=items[LABEL_COLUMN].notna())
        .groupby(["question_id", "model"], observed=True, sort=True)["_labelled"]
        .any()
        .unstack("model")
    )
    answered = cells.notna().to_numpy()
    labelled = cells.fillna(False).to_numpy(dtype=bool)
    models = [str(m) for m in cells.columns]
    # One comparison per model against the first model that answered each question.
    first = np.argmax(answered, axis=1)
    reference = labelled[np.arange(len(cells)), first]
    differs = answered & (labelled != reference[:, None])
    if differs.any():
        row, column = np.argwhere(differs)[0]
        a, b = models[first[row]], models[column]
        if labelled[row, column]:
            a, b = b, a
        raise InputError(
            source,
            f"models {a!r} and {b!r} are labelled on different questions (question "
            f"{str(cells.index[row])!r} is labelled for {a!r} only); a paired judge-corrected "
            "reading needs human labels of every model's answers to the same questions",
        )


def label_summary(items: pd.DataFrame) -> dict:
    """How many answers and questions carry a human label: ``answers, questions, models``."""
    if not has_labels(items):
        return {"answers": 0, "questions": 0, "models": 0}
    labelled = items[items[LABEL_COLUMN].notna()]
    return {
        "answers": int(len(labelled.drop_duplicates(["model", "question_id"]))),
        "questions": int(labelled["question_id"].nunique()),
        "models": int(labelled["model"].nunique()),
    }


def questions_to_label(
    items: pd.DataFrame, n: int, seed: int, *, stratify: bool = False
) -> pd.DataFrame:
    """A seeded, uniformly random list of questions for people to label, the same for every model.

    Parameters
    ----------
    items : DataFrame
        The item table; the questions are those every model answered
        (:func:`evalbars.data.sampling.eligible_questions`, ``shared``).
    n : int
        Questions to draw (at most the questions there are).
    seed : int
        Seed of the draw: the same data and seed give the same list.
    stratify : bool
        Allocate the n questions to categories in proportion to their sizes (largest
        remainders) and draw within each, as the workflow's subsample does
        (:func:`evalbars.data.sampling.draw_questions`); default a simple random sample.

    Returns
    -------
    DataFrame
        ``question_id, category, human`` in canonical question order, ``human`` empty: the
        labels file to fill in (``question_id, human`` labels every model's answer alike; add a
        ``model`` column, one row per model and question, to label answers one by one).

    Notes
    -----
    A simple random sample draws ``n`` of the N questions with equal probability, by the n
    smallest of N uniform keys from :func:`evalbars.seeding.setting_rng` ``(seed,
    "label_sample", N)``: every question is equally likely to be labelled, which is what the
    PPI++ rectifier needs (Angelopoulos et al. 2023, arXiv:2301.09633). Stratifying keeps that
    within each category; the estimate is then unbiased when the categories' label shares are
    equal, which proportional allocation makes them up to rounding.
    """
    questions, _ = eligible_questions(items, "shared")
    if not 1 <= n <= len(questions):
        raise ConfigError(
            f"--n must be between 1 and the {len(questions)} questions every model answered, "
            f"got {n}"
        )
    if stratify:
        drawn, _ = draw_questions(questions, n, seed)
        drawn = question_order(drawn)
    else:
        keys = setting_rng(seed, "label_sample", len(questions)).random(len(questions))
        drawn = questions.iloc[np.sort(np.argsort(keys, kind="stable")[:n])]
    drawn = drawn[["question_id", "category"]].reset_index(drop=True)
    return drawn.assign(**{LABEL_COLUMN: pd.Series([pd.NA] * len(drawn), dtype="Float64")})
