"""lighteval details: ``details_<task>_<ts>.parquet`` (0.11 and later, and the older layout
of the Open LLM Leaderboard v1).

lighteval 0.11+ (``--save-details``) writes
``{out}/details/{model}/{ts}/details_{task}_{ts}.parquet`` with three struct columns, ``doc``
(``query``, ``choices``, ``gold_index``, ``task_name``, ``num_samples``, ``specific``; ``id`` is
only the row index), ``model_response`` (``text``, a list of samples; ``logprobs``) and ``metric``
(one field per metric, e.g. ``acc``, ``em``, ``avg@n:n=3``), and
``{out}/results/{model}/results_{ts}.json`` (``config_general.model_name`` and per-task aggregates).
Older lighteval (before 0.11, the Open LLM Leaderboard v1 details,
``details_<org>__<model>/<ts>/details_harness|<task>|<k>_<ts>.parquet``) wrote one flat row per
example: ``example``, ``choices``, ``gold``, ``predictions`` and a ``metrics`` dict, with no id.

How the item table is read from them:

- **model**: ``config_general.model_name`` of the run's ``results_<ts>.json`` when it is
  there (``results/<model>/`` beside ``details/``, or the details folder itself), else the path:
  the folders between ``details/`` and the timestamp, or ``<org>/<model>`` of a
  ``details_<org>__<model>`` folder;
- **question**: ``<task>/<id>``, the id being ``doc.specific[id_field]`` (default ``id``) when
  the task's prompt function kept one, else a 64-bit hash of the query and the choices:
  ``doc.id`` is a row index that repeats across the subsets of a benchmark;
- **category**: the task without its suite and few-shot count (``synthmcq:arithmetic``);
- **score**: the user's ``metric`` in every task that logs it, else ``acc``, else ``em``,
  else the task's only metric. A metric that
  is "any of the n samples" (lighteval's ``em``, ``ExactMatches``, takes the best of a
  question's samples when ``num_samples`` > 1) is said to be so: by default each sample is
  scored instead, as one epoch, by ExactMatches' own rule for one sample (the stripped text
  equals a stripped gold); ``metric: em`` keeps the best-of-n score;
- **runs**: two runs of one model and task (two timestamps) are refused unless
  ``runs: newest``; tasks run at different times (the leaderboard's details) are one model's.

``_average`` and ``all`` in the results file are macro means over tasks; they are not read.
Record numbers in errors are 1-based rows of the parquet file.

References
----------
.. [1] Hugging Face, lighteval 0.13.0: ``logging/evaluation_tracker.py`` (details layout),
   ``metrics/metrics_sample.py`` (``ExactMatches``, ``AvgAtN``); lighteval 0.1.0 (commit
   1b0ba822), ``logging/info_loggers.py`` ``DetailsLogger.Detail`` (the older rows).
"""

from __future__ import annotations

import ast
import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from evalbars.data.readers.common import DEFAULT_N_OPTIONS, choose_newest, finish_frame, option_hint
from evalbars.errors import InputError

__all__ = [
    "DETAILS_PATTERN",
    "is_lighteval_details",
    "is_lighteval_results",
    "claims_details_name",
    "claims_results_name",
    "read_lighteval",
    "read_lighteval_files",
]

log = logging.getLogger(__name__)

#: ``details_<task>_<timestamp>.parquet``; the task holds ``|`` and ``:``, the stamp no ``_``.
DETAILS_PATTERN = re.compile(r"details_(?P<task>.+)_(?P<stamp>[^_]+)\.parquet")
NEW_COLUMNS = {"doc", "model_response", "metric"}
OLD_COLUMNS = {"example", "choices", "metrics"}
#: Metrics that take the best over a question's samples.
ANY_OF_N = {"em"}
MISSING_MEANS = "none (lighteval scores every example)"


def is_lighteval_details(path) -> bool:
    """Whether a Parquet file is a lighteval details file (either layout), by its columns."""
    try:
        names = set(pq.read_schema(path).names)
    except Exception:  # not Parquet, or unreadable: another reader's problem
        return False
    return NEW_COLUMNS <= names or OLD_COLUMNS <= names


def claims_details_name(path) -> bool:
    """Whether a file is named as lighteval names its details
    (``details_<task>_<timestamp>.parquet``): read as such, and refused when broken or
    empty, never skipped as "not a prediction log"."""
    return bool(DETAILS_PATTERN.fullmatch(Path(path).name))


def claims_results_name(path) -> bool:
    """Whether a ``results_<timestamp>.json`` sits where lighteval writes its results
    (``results/<model>/`` of a folder that also holds ``details/``) and no lm-eval samples
    file beside it: a broken one is then a broken lighteval results file, not lm-eval's."""
    path = Path(path)
    if not (path.name.startswith("results_") and path.suffix == ".json"):
        return False
    if any(path.parent.glob("samples_*.jsonl")):
        return False
    parts = path.parts[:-1]
    if "results" not in parts:
        return False
    root = len(parts) - 1 - parts[::-1].index("results")
    return (Path(*parts[:root]) / "details").is_dir()


def is_lighteval_results(document) -> bool:
    """Whether a parsed JSON document is a lighteval ``results_<ts>.json``."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("config_general"), dict)
        and isinstance(document.get("results"), dict)
    )


def _run_of(path: Path) -> tuple[str, str]:
    """``(model, stamp)`` of a details file, from its results file or its path."""
    match = DETAILS_PATTERN.fullmatch(path.name)
    if not match:
        raise InputError(path, "not named details_<task>_<timestamp>.parquet")
    stamp = match["stamp"]
    folder = path.parent  # the run's timestamp folder
    parts = folder.parts
    model = None
    if "details" in parts[:-1]:
        root = len(parts) - 1 - parts[::-1].index("details")
        model = "/".join(parts[root + 1 : -1]) or None
        candidates = [Path(*parts[:root]) / "results" / (model or "") / f"results_{stamp}.json"]
    else:
        candidates = []
    candidates += [folder.parent / f"results_{stamp}.json", folder / f"results_{stamp}.json"]
    for results in candidates:
        if results.is_file():
            try:
                document = json.loads(results.read_bytes())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise InputError(results, f"not a readable lighteval results file: {exc}") from exc
            name = (document.get("config_general") or {}).get("model_name")
            if isinstance(name, str) and name:
                return name, stamp
    if model is None:
        owner = folder.parent.name
        model = (
            owner.removeprefix("details_").replace("__", "/", 1)
            if owner.startswith("details_")
            else owner
        )
    return model, stamp


def read_lighteval(paths, options) -> list[pd.DataFrame]:
    """Raw rows of lighteval details files, one frame per model (see the module docstring)."""
    runs: dict = {}
    for path in sorted(Path(p) for p in paths):
        model, stamp = _run_of(path)
        task = DETAILS_PATTERN.fullmatch(path.name)["task"]
        runs.setdefault(model, {}).setdefault(task, {})[stamp] = path
    frames = []
    for model, tasks in runs.items():
        groups = {
            (model, task): [(stamp, stamp, path) for stamp, path in stamps.items()]
            for task, stamps in sorted(tasks.items())
        }
        chosen = choose_newest(
            groups,
            options.runs,
            "runs",
            folder=lambda candidates: min(candidates)[2].parent.parent,
            listed=", ".join,
        )
        files = list(chosen.values())
        parts = [_read_details(path, model, options) for path in files]
        combined = pd.concat(parts, ignore_index=True)
        frames.append(finish_frame(combined, files[0], missing_means=MISSING_MEANS))
    return frames


def _column(table, name):
    return table.column(name).combine_chunks()


def _field(struct, name, rows: int) -> list:
    """A struct field as a Python list (nulls when the struct lacks it)."""
    if name not in {struct.type.field(i).name for i in range(struct.type.num_fields)}:
        return [None] * rows
    return struct.field(name).to_pylist()


def _read_details(path: Path, model: str, options) -> pd.DataFrame:
    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise InputError(path, f"not a readable Parquet file: {exc}") from exc
    names = set(table.column_names)
    task = DETAILS_PATTERN.fullmatch(path.name)["task"]
    if NEW_COLUMNS <= names:
        doc, response = _column(table, "doc"), _column(table, "model_response")
        rows = len(table)
        query = _field(doc, "query", rows)
        choices = _field(doc, "choices", rows)
        gold = _field(doc, "gold_index", rows)
        samples = _field(doc, "num_samples", rows)
        specific = _field(doc, "specific", rows)
        texts = _field(response, "text", rows)
        metrics = _column(table, "metric")
        scores = {
            metrics.type.field(i).name: metrics.field(i).to_pylist()
            for i in range(metrics.type.num_fields)
        }
        task = next((t for t in _field(doc, "task_name", rows) if t), task)
    elif OLD_COLUMNS <= names:
        rows = len(table)
        query = _column(table, "example").to_pylist()
        choices = _column(table, "choices").to_pylist()
        gold = _column(table, "gold_index").to_pylist() if "gold_index" in names else [None] * rows
        texts = (
            _column(table, "predictions").to_pylist() if "predictions" in names else [None] * rows
        )
        samples = [1] * rows
        specific = [None] * rows
        scores = _old_metrics(_column(table, "metrics"), path)
    else:
        lacking = sorted(NEW_COLUMNS - names) if "doc" in names else sorted(OLD_COLUMNS - names)
        raise InputError(
            path,
            f"not a lighteval details file: no column {', '.join(map(repr, lacking))} (lighteval "
            "writes doc, model_response and metric; before 0.5, example, choices and metrics)",
        )
    if not rows:
        raise InputError(path, "the details file holds no rows")
    category = task.split("|")[1] if task.count("|") == 2 else task.split("|")[0]
    question = _question_ids(category, query, choices, specific, options.id_field, path)
    metric, per_sample = _choose_metric(scores, samples, options.metric, path, task)
    n_options = np.array([len(c) if c is not None else 0 for c in choices])
    n_options = np.where(n_options >= 2, n_options, DEFAULT_N_OPTIONS)
    record = np.arange(1, rows + 1)
    if per_sample:
        return _sample_rows(path, model, category, question, choices, gold, texts, n_options)
    try:
        values = pd.array(scores[metric], dtype="Float64")
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{metric} is not a number per row ({exc})") from exc
    if values.isna().any():
        raise InputError(
            path, f"the row has no {metric} score", int(np.flatnonzero(values.isna())[0]) + 1
        )
    return pd.DataFrame(
        {
            "record": record,
            "question_id": question,
            "epoch": np.ones(rows, dtype=np.int32),
            "category": category,
            "n_options": n_options.astype(np.int16),
            "correct": values,
            "model": model,
            "source_file": path.name,
            "source_path": str(path),
        }
    )


def _old_metrics(column, path: Path) -> dict:
    """The ``metrics`` column of older details: a struct, or the text of a dict."""
    if hasattr(column.type, "num_fields"):
        return {
            column.type.field(i).name: column.field(i).to_pylist()
            for i in range(column.type.num_fields)
        }
    parsed = []
    for record, text in enumerate(column.to_pylist(), start=1):
        try:
            value = ast.literal_eval(text) if isinstance(text, str) else text
        except (ValueError, SyntaxError) as exc:
            raise InputError(path, f"metrics {text!r} is not a dict: {exc}", record) from exc
        if not isinstance(value, dict):
            raise InputError(path, f"metrics {text!r} is not a dict", record)
        parsed.append(value)
    names = list(dict.fromkeys(k for value in parsed for k in value))
    return {name: [value.get(name) for value in parsed] for name in names}


def _question_ids(category, query, choices, specific, id_field, path) -> np.ndarray:
    """``<task>/<id>``: the dataset id the task kept in ``doc.specific``, else a hash."""
    field = id_field or "id"
    kept = [s.get(field) if isinstance(s, dict) else None for s in specific]
    if id_field and any(k is None for k in kept):
        record = next(i for i, k in enumerate(kept, start=1) if k is None)
        raise InputError(path, f"doc.specific has no field {id_field!r}", record)
    if all(k is not None for k in kept):
        return np.array([f"{category}/{k}" for k in kept], dtype=object)
    text = pd.Series(
        [
            f"{q}\x1f" + "\x1f".join(c if c is not None else [])
            for q, c in zip(query, choices, strict=True)
        ]
    )
    hashed = pd.util.hash_pandas_object(text, index=False).to_numpy()
    return np.array([f"{category}/{h:016x}" for h in hashed], dtype=object)


def _choose_metric(scores: dict, samples, wanted, path, task) -> tuple[str | None, bool]:
    """``(metric, per_sample)``: the metric to read, or per-sample scoring of an any-of-n one."""
    many = max((s or 1) for s in samples) > 1
    if wanted and wanted in scores:
        if wanted in ANY_OF_N and many:
            log.warning(
                "%s: %s of task %s is the best of %d samples per question (any of n), as asked",
                path,
                wanted,
                task,
                max(samples),
            )
        return wanted, False
    if wanted:
        log.warning(
            "%s: task %s does not log %r (it logs %s); using its default",
            path,
            task,
            wanted,
            ", ".join(scores),
        )
    if "acc" in scores:
        return "acc", False
    if not many and "em" in scores:
        return "em", False
    if many and ANY_OF_N & set(scores):
        log.warning(
            "%s: %s of task %s is the best of %d samples per question (any of n); each sample is "
            f"scored instead, as one epoch ({option_hint('metric', entry=False)} to read a metric as "
            "it is)",
            path,
            ", ".join(sorted(ANY_OF_N & set(scores))),
            task,
            max(samples),
        )
        return None, True
    if len(scores) == 1:
        return next(iter(scores)), False
    raise InputError(
        path,
        f"task {task!r} has metrics {list(scores)}: {option_hint('metric', entry=False)} to choose one",
    )


def _sample_rows(path, model, category, question, choices, gold, texts, n_options) -> pd.DataFrame:
    """One row per sample: ExactMatches' rule for one sample (stripped text equals a gold)."""
    counts = np.array([len(t) if t is not None else 0 for t in texts])
    if (counts == 0).any():
        raise InputError(
            path, "the row has no sampled text", int(np.flatnonzero(counts == 0)[0]) + 1
        )
    golds = [
        {str(c[g]).strip() for g in (gi if isinstance(gi, list) else [gi])}
        for c, gi in zip(choices, gold, strict=True)
    ]
    row = np.repeat(np.arange(len(texts)), counts)
    flat = [str(t).strip() for sample in texts for t in sample]
    correct = np.array([t in golds[r] for t, r in zip(flat, row, strict=True)], dtype=float)
    return pd.DataFrame(
        {
            "record": row + 1,
            "question_id": question[row],
            "epoch": np.concatenate([np.arange(1, c + 1) for c in counts]),
            "category": category,
            "pred": flat,
            "n_options": n_options[row].astype(np.int16),
            "correct": pd.array(correct, dtype="Float64"),
            "model": model,
            "source_file": path.name,
            "source_path": str(path),
        }
    )


def read_lighteval_files(paths, options) -> list[pd.DataFrame]:
    """Raw rows of the details files among ``paths`` (results files only name the model)."""
    details = [Path(p) for p in paths if Path(p).suffix.lower() == ".parquet"]
    if not details:
        raise InputError(
            Path(paths[0]), "a lighteval results file without its details_*.parquet files"
        )
    return read_lighteval(details, options)
