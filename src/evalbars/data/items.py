"""The canonical item table: one row per (model, question, run, sample), scored under one policy.

:func:`build_item_table` joins the raw rows of every source (:mod:`evalbars.data.readers`),
checks them against each other (one source per model unless the sources are runs, one category
per question) and scores missing predictions. Columns: :data:`ITEM_COLUMNS`.

**Samples and runs.** A question sampled several times (lm-eval ``repeats``, Inspect
``epochs``, lighteval's ``n`` samples, a table's ``epoch`` or ``sample`` column) has one row per
sample, numbered by ``epoch`` within its run; a model evaluated more than once has one ``run``
label per invocation. Two sources of one model are two runs when their entries read runs
(``runs: all``): each keeps its own run labels (a source that gives none is labelled by its
file's name), and a label two sources share is refused.

A **missing prediction** is a row whose source gives no prediction: ``pred`` null
in MMLU-Pro-style JSON (upstream's answer extractor failed), an empty
``correct`` in a long table. The item table records it once, in the boolean
column ``missing_prediction``; the ``missing_prediction`` policy decides what it
scores (:data:`MISSING_POLICIES`): ``wrong`` (0, as upstream's per-category
summaries count it), ``random_guess`` (a seeded uniform guess among the
question's ``n_options``) or ``exclude`` (the row is dropped).
:func:`rescore` applies another policy to a built table, using that column.

What is fatal and what is filled
--------------------------------
Fatal (:class:`~evalbars.errors.InputError`): a question whose category differs
between models or files (saying so when the two names differ only in case or
surrounding whitespace); a model that appears in two sources (unless both read
``runs: all``: then they are two runs); a model with no
score at all (every row a missing prediction, which would be analysed as 0%).
Fatal too: model names that differ only in case or surrounding whitespace (``'alpha'``
and ``'alpha '`` would be analysed as two models that print alike). Warned: categories that
differ only so (they are read as two categories). Fatal
(:class:`~evalbars.errors.ConfigError`): a model that the ``exclude`` policy
leaves with no question. Filled with a warning: a question that no source gives
a category is put in the category ``uncategorised``.
"""

from __future__ import annotations

import logging
import unicodedata

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from evalbars.data.codes import (
    as_category,
    code_counts,
    factorize_sorted,
    first_rows,
    index_codes,
    mark_cells,
)
from evalbars.data.readers.common import (
    DEFAULT_RUN,
    LABEL_COLUMN,
    RAW_COLUMNS,
    RUNS_ALL,
    TEXT_COLUMNS,
    check_spellings,
    option_hint,
    spelling_difference,
)
from evalbars.errors import ConfigError, InputError, plain

__all__ = [
    "ITEM_COLUMNS",
    "MISSING_POLICIES",
    "UNCATEGORISED",
    "apply_missing_policy",
    "row_order",
    "join_sources",
    "score_sources",
    "build_item_table",
    "rescore",
    "missing_prediction_counts",
    "read_summary",
    "sample_summary",
    "near_duplicates",
    "near_duplicate_pair",
    "write_item_table",
]

log = logging.getLogger(__name__)

#: Columns of the canonical item table, one row per (model, question, run, epoch). ``run`` labels
#: the invocation of the harness a row comes from (text; ``"1"`` where a model has one run),
#: ``epoch`` numbers repeated samples of a question
#: within its run (1 where there is one); ``correct`` is the score (int8 0/1, or
#: float where a source gives partial credit); ``n_options`` (how many answer options the
#: question has) is kept so that missing predictions can be re-scored as random guesses later;
#: ``missing_prediction`` says which rows had no prediction (whatever they now score). Where a
#: source or a labels file gives human labels, a last column ``human`` holds them
#: (:mod:`evalbars.data.labels`; NaN where nobody labelled the row); without labels it is absent.
ITEM_COLUMNS = [
    "model",
    "question_id",
    "run",
    "epoch",
    "category",
    "src",
    "answer",
    "pred",
    "correct",
    "source_file",
    "n_options",
    "missing_prediction",
]
MISSING_POLICIES = ("wrong", "random_guess", "exclude")
#: The category of a question no source gives one (every question, for data without categories).
UNCATEGORISED = "uncategorised"


def apply_missing_policy(frame: pd.DataFrame, policy: str, seed: int) -> pd.DataFrame:
    """Score the rows marked ``missing_prediction``, according to ``policy``.

    ``wrong`` scores them 0 (upstream's per-category summaries do this);
    ``exclude`` drops them, so the question drops out of the shared set;
    ``random_guess`` draws a uniform guess among the question's ``n_options``
    options, independently per (model, question, epoch), from a generator seeded
    by ``seed`` over the missing rows sorted by model, question and epoch, so the
    order of the sources' rows does not matter. Rows keep their order. (Upstream's
    ``compute_accuracy.py`` reseeds inside its loop, so every failed extraction
    gets the same letter; we do not copy that.) Scores stay int8 when every one
    is 0 or 1, and become float64 when a source gives partial credit.
    """
    if policy not in MISSING_POLICIES:
        raise ValueError(f"missing_prediction must be one of {MISSING_POLICIES}, got {policy!r}")
    missing = frame["missing_prediction"].to_numpy(dtype=bool)
    if policy == "exclude":
        kept = frame.loc[~missing].reset_index(drop=True)
        lost = frame["question_id"].nunique() - kept["question_id"].nunique()
        log.warning(
            "missing_prediction=exclude: dropped %d rows with no extracted answer; "
            "%d questions lost every model's answer",
            int(missing.sum()),
            lost,
        )
        return kept
    if not missing.any() and frame["correct"].dtype == np.int8:
        return frame.reset_index(drop=True)  # 0/1 scores, none to fill: as they are
    correct = frame["correct"].to_numpy(dtype=float, na_value=np.nan, copy=True)
    if policy == "wrong":
        correct[missing] = 0.0
    else:
        rng = np.random.default_rng(seed)
        rows = np.flatnonzero(missing)
        # Guesses follow (model, question, run, epoch) order, whatever order the sources' rows
        # are in (one run: the (model, question, epoch) order).
        key = ["model", "question_id"] + [c for c in ("run", "epoch") if c in frame.columns]
        rows = rows[row_order(frame.iloc[rows], key)]
        n_options = frame["n_options"].to_numpy(dtype=float)[rows]
        # A guess is right with probability 1/n_options; draw all guesses at once.
        correct[rows] = rng.random(len(rows)) * n_options < 1.0
    binary = ((correct == 0.0) | (correct == 1.0)).all()
    return frame.assign(correct=correct.astype(np.int8) if binary else correct).reset_index(
        drop=True
    )


def row_order(frame: pd.DataFrame, columns) -> np.ndarray:
    """Positions that sort ``frame`` by ``columns`` (as ``sort_values``, ties kept in order).

    Sorts one integer key built from each column's sorted codes, much faster
    than sorting the columns themselves on millions of rows. Categorical columns
    sort by their categories' order (sorted names,
    :func:`evalbars.data.codes.as_category`).
    """
    codes = [factorize_sorted(frame[column], nulls="code")[0] for column in columns]
    key = np.ravel_multi_index(codes, [int(c.max()) + 1 if len(c) else 1 for c in codes])
    return np.argsort(key, kind="stable")


def _check_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill categories a long table left empty from other sources; refuse conflicts.

    Works on (question, category) code pairs, so a question's millions of repeats
    across models cost one hash each.
    """
    question, question_ids = index_codes(frame["question_id"])
    category = frame["category"].array.codes
    width = len(frame["category"].cat.categories) + 1
    known = category >= 0
    # Mark the (question, category) pairs seen: one pass, no hashing of every row (and no
    # pair number per row: mark_cells).
    seen = np.zeros((len(question_ids), width), dtype=bool)
    if known.all():
        mark_cells(seen, [question, category])
    else:
        mark_cells(seen, [question[known], category[known]])
    pairs = np.flatnonzero(seen)
    del seen
    per_question = np.bincount(pairs // width, minlength=len(question_ids))
    if (per_question > 1).any():
        _raise_category_conflict(frame, question_ids[per_question > 1])
    categories = frame["category"].cat.categories
    if known.all():
        alike = near_duplicates(categories, "categories")
        if alike:
            log.warning("%s; they are read as two categories", alike)
        return frame
    category_of = np.full(len(question_ids), -1, dtype=np.int64)
    category_of[pairs // width] = pairs % width
    filled = np.where(known, category, category_of[question])
    if (filled < 0).any():
        if known.any():  # data with no category at all are said so once, by design_notes
            log.warning(
                "%d rows have no category in any source; they are put in the category %r",
                int((filled < 0).sum()),
                UNCATEGORISED,
            )
        categories = categories.append(pd.Index([UNCATEGORISED], dtype="str"))
        filled = np.where(filled < 0, len(categories) - 1, filled)
    frame["category"] = as_category(pd.Categorical.from_codes(filled, categories=categories))
    alike = near_duplicates(categories, "categories")
    if alike:
        log.warning("%s; they are read as two categories", alike)
    return frame


def _difference(a: str, b: str) -> str:
    """What two names that are equal up to case, surrounding whitespace and Unicode
    normalisation differ in."""
    normal_a, normal_b = unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)
    if normal_a == normal_b:
        return spelling_difference(a, b).split(" differ only in ", 1)[1]
    if (normal_a, normal_b) != (a, b):
        return _difference(normal_a, normal_b) + " and Unicode normalisation"
    if a.strip() == b.strip():
        if a.rstrip() == b.rstrip():
            return "trailing whitespace"
        if a.lstrip() == b.lstrip():
            return "leading whitespace"
        return "surrounding whitespace"
    return "case" if a.casefold() == b.casefold() else "case and surrounding whitespace"


def near_duplicate_pair(names) -> tuple[str, str] | None:
    """The first two ``names`` that differ only in case, surrounding whitespace or Unicode
    normalisation (NFC), sorted, or None when there are none."""
    text = pd.Series(pd.unique(pd.Series(list(names), dtype=object).dropna().astype(str)))
    folded = text.str.normalize("NFC").str.strip().str.casefold()
    clashing = text[folded.duplicated(keep=False).to_numpy()]
    if clashing.empty:
        return None
    first = clashing[folded[clashing.index] == folded[clashing.index[0]]]
    a, b = sorted(first.iloc[:2])
    return a, b


def near_duplicates(names, what: str) -> str:
    """A sentence naming the first two ``names`` that differ only in case, surrounding
    whitespace or Unicode normalisation, or ``""`` when there are none.

    >>> near_duplicates(["fake-mid", "other", "fake-mid "], "model names")
    "model names 'fake-mid' and 'fake-mid ' differ only in trailing whitespace"
    >>> near_duplicates(["Math", "math"], "categories")
    "categories 'Math' and 'math' differ only in case"
    >>> near_duplicates(["q\\u00e9", "qe\\u0301"], "question ids").split(" differ ")[1]
    'only in Unicode normalisation (U+0065 U+0301 against U+00E9)'
    """
    pair = near_duplicate_pair(names)
    if pair is None:
        return ""
    a, b = pair
    return f"{what} {a!r} and {b!r} differ only in {_difference(a, b)}"


def _raise_category_conflict(frame: pd.DataFrame, conflicting) -> None:
    """The InputError for questions given different categories, naming the first of them."""
    qid = plain(min(conflicting))
    rows = frame.loc[
        (frame["question_id"] == qid) & frame["category"].notna(),
        ["model", "category", "source_path", "record"],
    ]
    first = rows.drop_duplicates("category").iloc[:2]
    a, b = first.iloc[0], first.iloc[1]
    alike = near_duplicates([a["category"], b["category"]], "the names")
    raise InputError(
        b["source_path"],
        f"question {qid!r} has category {b['category']!r} for model {b['model']!r} but "
        f"{a['category']!r} for model {a['model']!r} ({a['source_path']}); "
        f"{len(conflicting)} question(s) conflict in all" + (f" ({alike})" if alike else ""),
        int(b["record"]),
    )


def _check_some_scores(frame: pd.DataFrame) -> None:
    """Refuse a model of a source whose every row is a missing prediction (no score at all)."""
    missing = frame["correct"].isna().to_numpy()
    if not missing.any():
        return
    # Counted over model codes: a groupby of a board's millions of rows costs seconds.
    code, models = factorize_sorted(frame["model"])
    if (code < 0).any():  # rows with no model name belong to no model
        code, missing = code[code >= 0], missing[code >= 0]
    rows_of = code_counts(code, len(models))
    unscored = code_counts(code[missing], len(models)) == rows_of
    if unscored.any():
        model = models[int(unscored.argmax())]
        rows = int(rows_of[unscored.argmax()])
        means = frame.attrs.get("missing_means") or "no score"
        raise InputError(
            frame["source_path"].iloc[0],
            f"model {model!r} has no score: all {rows:,} of its rows are missing predictions "
            f"({means}), which would be analysed as 0%; fix its source or leave it out",
        )


def join_sources(frames) -> pd.DataFrame:
    """Concatenate raw prediction frames into one table, before any scoring.

    Checks that no model comes from two sources and that every question has one
    category across sources (filling a category a long table left empty), and
    marks each row's ``missing_prediction``. Every row of every source is kept.
    """
    frames = list(frames)
    if not frames:
        raise ValueError("no prediction sources were given")
    seen: dict[str, str] = {}
    as_runs: dict[str, bool] = {}
    check_spellings(frames)  # two spellings of one name, NFC-normalised alike by the readers
    models_of = [_models_of(frame) for frame in frames]
    frames = _label_runs(frames, models_of)
    for frame, models in zip(frames, models_of, strict=True):
        _check_some_scores(frame)
        source = frame["source_path"].iloc[0]
        runs_all = bool(frame.attrs.get(RUNS_ALL))
        for model in models:
            if model in seen and not (runs_all and as_runs[model]):
                raise InputError(
                    source,
                    f"model {model!r} also comes from {seen[model]}; each model needs one source "
                    f"({option_hint('runs', 'all', entry=False)} to read each as a run)",
                )
            seen.setdefault(model, source)
            as_runs[model] = as_runs.get(model, True) and runs_all
    pair = near_duplicate_pair(seen)
    if pair is not None:
        # Two spellings of one name would be analysed as two models that print alike.
        where = " and ".join(dict.fromkeys(seen[name] for name in pair))
        raise InputError(
            where,
            f"{near_duplicates(pair, 'model names')}: they would be analysed as two models that "
            "print alike; write the name alike in every file (or rename one if they are two)",
        )
    ids_are_int = [pd.api.types.is_integer_dtype(f["question_id"]) for f in frames]
    # Human labels travel with the rows where some source gives them (NaN in the others).
    columns = RAW_COLUMNS + ([LABEL_COLUMN] if any(LABEL_COLUMN in f for f in frames) else [])
    if len(frames) == 1:
        combined = frames[0][columns].copy(deep=False)  # the reader's columns, not a copy
    else:
        combined = pd.concat([f.drop(columns=TEXT_COLUMNS) for f in frames], ignore_index=True)
        for column in TEXT_COLUMNS:
            # Categoricals with different categories would concatenate to plain objects.
            combined[column] = union_categoricals(
                [as_category(f[column]) for f in frames], sort_categories=True
            )
        combined = combined[columns]
    if not all(ids_are_int):
        combined["question_id"] = combined["question_id"].astype(str)
    combined = _check_categories(combined)
    combined["missing_prediction"] = combined["correct"].isna()
    return combined


def _models_of(frame: pd.DataFrame) -> list:
    """A frame's model names in the order its rows first give them (nulls left out)."""
    return pd.Series(frame["model"].unique()).dropna().tolist()


def _label_runs(frames: list, models_of: list) -> list:
    """Frames whose models another frame also holds, as runs: those whose entries read every
    run (``runs: all``) keep their run labels, or take their file's name where the source gave
    none; a run label two frames give one model is refused. Frames of other models are
    returned as they are. ``models_of`` are each frame's models (:func:`_models_of`)."""
    owners: dict = {}
    for position, models in enumerate(models_of):
        for model in models:
            owners.setdefault(model, []).append(position)
    shared = {p for places in owners.values() if len(places) > 1 for p in places}
    if not shared or not all(frames[p].attrs.get(RUNS_ALL) for p in shared):
        return frames  # one source per model, or a refusal join_sources words
    frames = list(frames)
    for position in sorted(shared):
        frame = frames[position]
        if set(frame["run"].cat.categories) == {DEFAULT_RUN}:
            relabelled = frame.copy(deep=False)
            name = str(frame["source_file"].iloc[0])
            relabelled["run"] = pd.Categorical.from_codes(
                np.zeros(len(frame), dtype=np.int8), categories=[name]
            )
            relabelled.attrs.update(frame.attrs)
            frames[position] = relabelled
    for model, places in owners.items():
        labels: dict = {}
        for position in places:
            frame = frames[position]
            runs = frame.loc[frame["model"] == model, "run"].astype(str).unique()
            for run in runs:
                if run in labels:
                    raise InputError(
                        frame["source_path"].iloc[0],
                        f"model {model!r} has run {run!r} here and in {labels[run]}: two runs "
                        "need two labels (a run column, or a file per run)",
                    )
                labels[run] = frame["source_path"].iloc[0]
    return frames


def score_sources(combined: pd.DataFrame, policy: str = "wrong", seed: int = 0) -> pd.DataFrame:
    """The canonical item table from :func:`join_sources`' table, missing predictions scored.

    Returns
    -------
    DataFrame
        :data:`ITEM_COLUMNS`, rows in the order of the sources' rows.
    """
    scored = apply_missing_policy(combined, policy, seed)
    # Only dropped rows (exclude) can lose a model.
    lost = (
        sorted(set(combined["model"].unique()) - set(scored["model"].unique()))
        if len(scored) < len(combined)
        else []
    )
    if lost:
        sources = combined.drop_duplicates("model").set_index("model")["source_path"]
        named = ", ".join(f"{m} ({sources[m]})" for m in lost)
        raise ConfigError(
            f"missing_prediction=exclude leaves no scored question for model(s) {named}: "
            "none of their answers could be extracted; use `wrong` or `random_guess`, or drop them"
        )
    items = scored[ITEM_COLUMNS + ([LABEL_COLUMN] if LABEL_COLUMN in scored else [])]
    items["epoch"] = items["epoch"].astype("int32")
    items["n_options"] = items["n_options"].astype("int16")
    return items.reset_index(drop=True)


def write_item_table(items: pd.DataFrame, path) -> None:
    """Write an item table to ``path`` as Parquet (pandas' ``to_parquet`` with Arrow, Snappy),
    with the min/max statistics of its numeric and boolean columns only.

    Arrow's statistics of a dictionary column (the model, the category, the texts) cost it more
    than encoding the column: at 4,500 models x 21,000 questions (94.5 M rows) the table took
    8.9 s to write with them and 7.1 s without (pyarrow's own writer, 15.2 s and 6.7 s). No
    reader of evalbars filters an item table by them; a reader elsewhere that filters on a text
    column still gets its rows, reading every row group. The values, types and metadata are
    the same.

    Examples
    --------
    >>> import tempfile
    >>> items = pd.DataFrame({"model": pd.Categorical(["a", "b"]), "correct": [1, 0]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_item_table(items, f"{folder}/items.parquet")
    ...     pd.read_parquet(f"{folder}/items.parquet").equals(items)
    True
    """
    statistics = [
        str(name)
        for name, dtype in items.dtypes.items()
        if not isinstance(dtype, pd.CategoricalDtype)
    ]
    items.to_parquet(path, index=False, write_statistics=statistics)


def build_item_table(frames, policy: str = "wrong", seed: int = 0) -> pd.DataFrame:
    """:func:`join_sources` then :func:`score_sources`: raw frames to the canonical item table."""
    return score_sources(join_sources(frames), policy, seed)


#: What a missing prediction is scored as under each policy.
_SCORED_AS = {
    "wrong": "0 (missing_prediction: wrong)",
    "random_guess": "a seeded guess among the options (missing_prediction: random_guess)",
    "exclude": "dropped (missing_prediction: exclude)",
}


def missing_prediction_counts(raw_frames, policy: str = "wrong") -> pd.DataFrame:
    """Per model: samples read, predictions missing, their share, and what they count as.

    Returns
    -------
    DataFrame
        ``model, samples, missing_predictions, missing_share, missing_means, scored_as,
        errored_samples, skipped_entries, source_file``: ``samples`` counts rows
        (question × epoch), ``missing_means`` says what made a row a missing
        prediction in that format (the reader's ``attrs``), ``scored_as`` what the
        policy made of it, ``errored_samples`` how many the harness logged as
        errored and ``skipped_entries`` how many entries were not records at all.
    """
    tables = []
    for frame in raw_frames:
        # Counted over integer codes: a groupby of a board's hundred million rows costs GBs.
        model, models = factorize_sorted(frame["model"])
        samples = code_counts(model, len(models))
        missing = code_counts(model[frame["correct"].isna().to_numpy()], len(models))
        tables.append(
            pd.DataFrame(
                {
                    "model": models.astype(str),
                    "samples": samples,
                    "missing_predictions": missing,
                    "missing_share": missing / samples,
                    "missing_means": frame.attrs.get("missing_means", ""),
                    "scored_as": np.where(missing > 0, _SCORED_AS[policy], ""),
                    "errored_samples": int(frame.attrs.get("errored_samples", 0)),
                    "skipped_entries": int(frame.attrs.get("skipped_entries", 0)),
                    "source_file": _files_of_models(frame, model, len(models)),
                }
            )
        )
    return pd.concat(tables, ignore_index=True).sort_values("model").reset_index(drop=True)


def _files_of_models(frame: pd.DataFrame, model: np.ndarray, n_models: int) -> np.ndarray:
    """For each model code, its source files joined by ", " in the order the rows name them."""
    file, files = factorize_sorted(frame["source_file"])
    if len(files) == 1:  # one file (a table, a log): every model's
        return np.full(n_models, files[0], dtype=object)
    pair = model.astype(np.int64) * len(files) + file
    first = first_rows(pair, n_models * len(files))
    seen = np.flatnonzero(first < len(pair))
    pairs = pd.DataFrame(
        {
            "model": seen // len(files),
            "file": files.to_numpy()[seen % len(files)],
            "first": first[seen],
        }
    ).sort_values(["model", "first"])
    return pairs.groupby("model")["file"].agg(", ".join).to_numpy()


def rescore(items: pd.DataFrame, policy: str, seed: int) -> pd.DataFrame:
    """The item table scored under another ``missing_prediction`` policy.

    The rows marked ``missing_prediction`` are scored again by
    :func:`apply_missing_policy`; every other row keeps its score. A table built
    with ``exclude`` holds no missing predictions, so nothing changes there.
    """
    frame = items.copy()
    frame["correct"] = frame["correct"].astype(float).mask(frame["missing_prediction"])
    scored = apply_missing_policy(frame, policy, seed)
    return scored[list(items.columns)].reset_index(drop=True)


def sample_summary(items: pd.DataFrame) -> pd.DataFrame:
    """Per model: its runs, the samples of its questions (over every run) and how many
    questions' samples disagree.

    Parameters
    ----------
    items : DataFrame
        An item table (:data:`ITEM_COLUMNS`; without ``run``, one run).

    Returns
    -------
    DataFrame
        ``model, runs, fewest_samples, most_samples, repeated_questions, disagreeing,
        disagreeing_share``, one row per model in sorted order: ``runs`` the run labels,
        ``fewest_samples``/``most_samples`` the fewest and most samples of one question
        (pooled over runs), ``repeated_questions`` the questions with two or more samples and
        ``disagreeing`` those whose samples do not all score alike (NaN scores left out),
        ``disagreeing_share`` their share of the repeated questions (NaN when none is).

    Examples
    --------
    >>> rows = pd.DataFrame({"model": "m", "question_id": ["a", "a", "b", "b", "c"],
    ...                      "run": ["1", "2", "1", "2", "1"], "correct": [1, 0, 1, 1, 0]})
    >>> sample_summary(rows)[["runs", "fewest_samples", "most_samples", "disagreeing_share"]]
       runs  fewest_samples  most_samples  disagreeing_share
    0     2               1             2                0.5
    """
    runs = items["run"] if "run" in items.columns else pd.Series(DEFAULT_RUN, index=items.index)
    frame = pd.DataFrame(
        {
            "model": items["model"].astype(str).to_numpy(),
            "question_id": items["question_id"].to_numpy(),
            "correct": items["correct"].to_numpy(dtype=float, na_value=np.nan),
        }
    )
    cells = frame.groupby(["model", "question_id"], sort=False)["correct"].agg(
        ["size", "min", "max"]
    )
    cells = cells.reset_index()
    repeated = cells["size"] >= 2
    cells = cells.assign(repeated=repeated, disagreeing=repeated & (cells["min"] != cells["max"]))
    per_model = cells.groupby("model", sort=True).agg(
        fewest_samples=("size", "min"),
        most_samples=("size", "max"),
        repeated_questions=("repeated", "sum"),
        disagreeing=("disagreeing", "sum"),
    )
    per_model.insert(0, "runs", runs.astype(str).groupby(frame["model"].to_numpy()).nunique())
    with np.errstate(invalid="ignore", divide="ignore"):
        share = per_model["disagreeing"] / per_model["repeated_questions"].where(
            per_model["repeated_questions"] > 0
        )
    per_model["disagreeing_share"] = share.astype(float)
    table = per_model.rename_axis("model").reset_index()
    integers = ["runs", "fewest_samples", "most_samples", "repeated_questions", "disagreeing"]
    return table.astype(dict.fromkeys(integers, "int64"))


def read_summary(raw_frames, items: pd.DataFrame) -> pd.DataFrame:
    """What was read, per model: the table ``evalbars read`` prints before a workflow run.

    Returns
    -------
    DataFrame
        ``model, questions, categories, runs, samples_per_question, samples,
        disagreeing_share, missing_predictions, errored_samples, accuracy, sources``:
        ``runs`` the runs read (:func:`sample_summary`), ``samples_per_question`` the fewest
        and most samples of one question over every run (``"3"``, or ``"3-6"``),
        ``disagreeing_share`` the share of questions with several samples whose samples
        disagree (NaN when no question has two), ``accuracy`` the mean score over the
        model's samples in ``items`` (missing predictions scored by its policy), ``sources``
        the files the rows came from.
    """
    counted = missing_prediction_counts(raw_frames)
    # A model read as several runs from several sources has a row per source: add them up.
    missing = counted.groupby("model")[["missing_predictions", "errored_samples"]].sum()
    samples = sample_summary(items).set_index("model")
    grouped = items.assign(model=items["model"].astype(str)).groupby("model")
    spread = [
        f"{low}" if low == high else f"{low}-{high}"
        for low, high in zip(samples["fewest_samples"], samples["most_samples"], strict=True)
    ]
    table = pd.DataFrame(
        {
            "questions": grouped["question_id"].nunique(),
            "categories": grouped["category"].nunique(),
            "runs": samples["runs"],
            "samples_per_question": pd.Series(spread, index=samples.index),
            "samples": grouped.size(),
            "disagreeing_share": samples["disagreeing_share"],
            "missing_predictions": missing["missing_predictions"],
            "errored_samples": missing["errored_samples"],
            "accuracy": grouped["correct"].mean(),
            "sources": grouped["source_file"].agg(lambda files: ", ".join(sorted(set(files)))),
        }
    )
    return table.rename_axis("model").reset_index()
