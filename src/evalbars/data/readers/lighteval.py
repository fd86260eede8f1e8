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
- **samples**: a question sampled ``n`` times (``num_samples``) gives one row per sample,
  numbered by ``epoch`` (see **score**);
- **runs**: two runs of one model and task (two timestamps) are refused unless
  ``runs: newest`` (the newest is read) or ``runs: all`` (each is read as a run, labelled by
  its timestamp); tasks run at different times (the leaderboard's details) are one model's;
- **tasks**: every task with a details file, or those the user names (``tasks:``), as
  lighteval's ``--tasks`` names them: ``task|k`` (``k`` few-shot), ``suite|task|k`` (the
  older names), ``task`` (any few-shot count) or a superset (``synthmcq`` for
  ``synthmcq:arithmetic`` and ``synthmcq:geometry``); a name no details file has is refused.
  Two tasks of one model that score mostly the same questions (lighteval's multiple-choice,
  cloze and generative formulations of one benchmark) are refused, naming both: pooled,
  each question would count once per task, under different metrics. Questions are the same
  when more than half of the smaller task's are shared by: the query and choices (one prompt
  under two names: two few-shot counts, two suites); the kept ``doc.specific`` id, when both
  tasks keep one and are not two subsets of one superset (``x:a`` and ``x:b``, whose ids
  may repeat); ``doc.id`` and ``gold_index``, for tasks named as lighteval names the
  formulations of one benchmark (``mmlu_ara_mcf:anatomy``, ``mmlu_ara_cf:anatomy``,
  ``mmlu_ara_hybrid:anatomy``), whose queries and choices differ and which keep no id.

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
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from evalbars.data.readers.common import (
    DEFAULT_N_OPTIONS,
    choose_runs,
    few,
    finish_frame,
    option_hint,
)
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
#: Two tasks of one model sharing more than this share of the smaller's questions are one
#: question set read twice (as lm-eval's reader judges its tasks).
SHARED_QUESTIONS = 0.5
#: lighteval's formulations in a task name (``Formulation.name.lower()`` of its templates).
FORMULATION = re.compile(r"_(mcf|cf|hybrid)(?=:|$)")
#: What a task asks of the model, from ``doc.sampling_methods``.
SAMPLING_KINDS = {
    "LOGPROBS": "loglikelihood",
    "GENERATIVE": "generative",
    "PERPLEXITY": "perplexity",
}
#: Per-row columns used while reading, not raw rows: the task, how it is scored, and the keys
#: that recognise its questions in another task.
_TASK_COLUMNS = ["task", "scored_as", "content_key", "kept_key", "row_key"]


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


def _task_parts(name: str) -> tuple[str | None, str, str | None]:
    """``(suite, task, few-shot count)`` of a lighteval task name, as lighteval parses
    ``--tasks``: ``suite|task|k``, ``task|k``, ``suite|task`` (older) or ``task``."""
    parts = name.split("|")
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return (None, parts[0], parts[1]) if parts[1].isdigit() else (parts[0], parts[1], None)
    return None, name, None


def _selects(wanted: str, task: str) -> bool:
    """Whether the user's task name ``wanted`` stands for the details file's ``task``: the
    same task (any few-shot count and suite unless given; lighteval 0.12+ names no suite and
    ignores one given), or its superset (``mmlu`` for ``mmlu:anatomy``)."""
    suite, name, shots = _task_parts(wanted)
    task_suite, task_name, task_shots = _task_parts(task)
    return (
        (suite is None or task_suite is None or suite == task_suite)
        and (shots is None or shots == task_shots)
        and (name == task_name or (":" not in name and task_name.split(":")[0] == name))
    )


def _keep_tasks(runs: dict, wanted, paths) -> dict:
    """``runs`` (``{model: {task: {stamp: path}}}``) with only the tasks the user named."""
    if not wanted:
        return runs
    available = sorted({task for tasks in runs.values() for task in tasks})
    for name in wanted:
        if not any(_selects(name, task) for task in available):
            folder = Path(os.path.commonpath([str(Path(p).parent) for p in paths]))
            raise InputError(
                folder,
                f"no task {name!r} among the lighteval details files; they hold "
                f"{few(available, 6)}",
            )
    kept = {
        model: {t: s for t, s in tasks.items() if any(_selects(n, t) for n in wanted)}
        for model, tasks in runs.items()
    }
    return {model: tasks for model, tasks in kept.items() if tasks}


def read_lighteval(paths, options) -> list[pd.DataFrame]:
    """Raw rows of lighteval details files, one frame per model (see the module docstring).

    Fatal: a task of ``options.tasks`` that no details file has; two runs of one model and
    task (unless ``options.runs`` is ``newest``); two tasks of one model that score the same
    questions; a details file that is not lighteval's or holds no rows. Skipped: the details
    files of tasks ``options.tasks`` does not name.
    """
    runs: dict = {}
    for path in sorted(Path(p) for p in paths):
        model, stamp = _run_of(path)
        task = DETAILS_PATTERN.fullmatch(path.name)["task"]
        runs.setdefault(model, {}).setdefault(task, {})[stamp] = path
    runs = _keep_tasks(runs, options.tasks, paths)
    every_task = sorted({task for tasks in runs.values() for task in tasks})
    frames = []
    for model, tasks in runs.items():
        groups = {
            (model, task): [(stamp, stamp, path) for stamp, path in stamps.items()]
            for task, stamps in sorted(tasks.items())
        }
        chosen = choose_runs(
            groups,
            options.runs,
            "runs",
            folder=lambda candidates: min(candidates)[2].parent.parent,
            listed=", ".join,
        )
        files = [path for paths in chosen.values() for path in paths]
        parts = [_read_details(path, model, options) for path in files]
        stamps = [DETAILS_PATTERN.fullmatch(path.name)["stamp"] for path in files]
        for stamp in dict.fromkeys(stamps):  # a task read in two runs is not two tasks
            run = [part for part, s in zip(parts, stamps, strict=True) if s == stamp]
            _check_distinct_questions(model, run, every_task, options.id_field)
        if options.runs == "all":
            parts = [part.assign(run=s) for part, s in zip(parts, stamps, strict=True)]
        combined = pd.concat(parts, ignore_index=True).drop(columns=_TASK_COLUMNS)
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
    """Raw rows of one details file, with :data:`_TASK_COLUMNS` (its task, how it is scored
    and the keys that recognise its questions in another task)."""
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
        rows_of_dataset = _field(doc, "id", rows)
        kinds = {m for methods in _field(doc, "sampling_methods", rows) for m in methods or []}
        kind = ", ".join(SAMPLING_KINDS.get(str(m), str(m).lower()) for m in sorted(kinds))
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
        rows_of_dataset = [None] * rows
        kind = ""
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
    content, kept = _question_keys(query, choices, specific, options.id_field, path)
    question = np.array([f"{category}/{k}" for k in (content if kept is None else kept)], object)
    metric, per_sample = _choose_metric(scores, samples, options.metric, path, task)
    n_options = np.array([len(c) if c is not None else 0 for c in choices])
    n_options = np.where(n_options >= 2, n_options, DEFAULT_N_OPTIONS)
    keys = {
        "task": task,
        "scored_as": ", ".join(
            filter(None, [kind, f"{metric or 'em'} per sample" if per_sample else metric])
        ),
        "content_key": content,
        "kept_key": kept if kept is not None else np.full(rows, None, dtype=object),
        "row_key": np.array(
            [
                None if r is None else f"{r}\x1f{g}"
                for r, g in zip(rows_of_dataset, gold, strict=True)
            ],
            dtype=object,
        ),
    }
    if per_sample:
        frame = _sample_rows(path, model, category, question, choices, gold, texts, n_options)
    else:
        frame = _metric_rows(path, model, category, question, scores[metric], metric, n_options)
    row = frame["record"].to_numpy() - 1
    for column, values in keys.items():
        frame[column] = values if isinstance(values, str) else values[row]
    return frame


def _metric_rows(path, model, category, question, values, metric, n_options) -> pd.DataFrame:
    """One row per question: the metric's value as lighteval logged it."""
    rows = len(question)
    try:
        values = pd.array(values, dtype="Float64")
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{metric} is not a number per row ({exc})") from exc
    if values.isna().any():
        raise InputError(
            path, f"the row has no {metric} score", int(np.flatnonzero(values.isna())[0]) + 1
        )
    return pd.DataFrame(
        {
            "record": np.arange(1, rows + 1),
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


def _question_keys(
    query, choices, specific, id_field, path
) -> tuple[np.ndarray, np.ndarray | None]:
    """``(content, kept)`` per row: a 64-bit hash of the query and the choices (``doc.id`` is a
    row index that repeats across the subsets of a benchmark), and the dataset id the task kept
    in ``doc.specific[id_field]`` (default ``id``), None when some row has none."""
    field = id_field or "id"
    kept = [s.get(field) if isinstance(s, dict) else None for s in specific]
    if id_field and any(k is None for k in kept):
        record = next(i for i, k in enumerate(kept, start=1) if k is None)
        raise InputError(path, f"doc.specific has no field {id_field!r}", record)
    text = pd.Series(
        [
            f"{q}\x1f" + "\x1f".join(c if c is not None else [])
            for q, c in zip(query, choices, strict=True)
        ]
    )
    hashed = pd.util.hash_pandas_object(text, index=False).to_numpy()
    content = np.array([f"{h:016x}" for h in hashed], dtype=object)
    if all(k is not None for k in kept):
        return content, np.array([str(k) for k in kept], dtype=object)
    return content, None


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


def _bare_name(task: str) -> str:
    """The task without its suite and few-shot count (``synthmcq:arithmetic``)."""
    return _task_parts(task)[1]


def _formulation_family(task: str) -> str | None:
    """The benchmark a task formulates, when named as lighteval names its formulations
    (``mmlu_ara_mcf:anatomy`` -> ``mmlu_ara_{}:anatomy``), else None."""
    name = _bare_name(task)
    return FORMULATION.sub("_{}", name) if FORMULATION.search(name) else None


def _subsets_of_one_superset(task_a: str, task_b: str) -> bool:
    """Whether two tasks are subsets of one superset (``x:a`` and ``x:b``): different subsets
    of a dataset, whose kept ids may repeat."""
    a, b = _bare_name(task_a), _bare_name(task_b)
    return ":" in a and ":" in b and a.split(":")[0] == b.split(":")[0] and a != b


#: The keys that recognise one question in two tasks, and what the message calls them.
_KEY_EVIDENCE = {
    "content_key": "equal query and choices",
    "kept_key": "equal doc.specific {field!r}",
    "row_key": "equal doc.id and gold_index of two formulations",
}


def _question_sets(part: pd.DataFrame) -> dict:
    """``{key column: set of keys}`` of one task's rows (a column it lacks gives no set)."""
    return {column: set(part[column].dropna()) for column in _KEY_EVIDENCE}


def _shared_questions(task_a: str, task_b: str, keys_a: dict, keys_b: dict, id_field):
    """``(shared, evidence)`` when two tasks score mostly the same questions, else None (by
    the rules of the module docstring); ``keys_*`` are :func:`_question_sets`."""
    columns = ["content_key"]
    if not _subsets_of_one_superset(task_a, task_b):
        columns.append("kept_key")
    family = _formulation_family(task_a)
    if family is not None and family == _formulation_family(task_b):
        columns.append("row_key")
    for column in columns:
        a, b = keys_a[column], keys_b[column]
        shared = len(a & b)
        if a and b and shared > SHARED_QUESTIONS * min(len(a), len(b)):
            return shared, _KEY_EVIDENCE[column].format(field=id_field or "id")
    return None


def _choosing_name(task: str, tasks) -> str:
    """The shortest name that selects ``task`` alone among ``tasks`` (every task read, of
    every model: ``synthq_mc`` for ``synthq_mc|0`` when no other few-shot count of it was
    read): what the remedy suggests, without a shell's ``|`` where it can."""
    bare = _bare_name(task)
    return bare if [t for t in tasks if _selects(bare, t)] == [task] else task


def _check_distinct_questions(model: str, parts, tasks, id_field) -> None:
    """Refuse two tasks of one model that score mostly the same questions (one question set
    read twice, e.g. its multiple-choice and its generative formulation), naming both."""
    parts = [(part, _question_sets(part)) for part in parts if len(part)]
    for i, (a, keys_a) in enumerate(parts):
        for b, keys_b in parts[i + 1 :]:
            task_a, task_b = a["task"].iloc[0], b["task"].iloc[0]
            found = _shared_questions(task_a, task_b, keys_a, keys_b, id_field)
            if found is None:
                continue
            shared, evidence = found
            choose = _choosing_name(task_a, tasks)
            raise InputError(
                b["source_path"].iloc[0],
                f"tasks {task_a!r} ({a['scored_as'].iloc[0]}) and {task_b!r} "
                f"({b['scored_as'].iloc[0]}) of model {model!r} score the same {shared} "
                f"questions ({evidence}); pooled, each would count twice: choose the tasks to "
                f"read ({option_hint('tasks', [choose])} reads {task_a!r} alone)",
            )


def read_lighteval_files(paths, options) -> list[pd.DataFrame]:
    """Raw rows of the details files among ``paths`` (results files only name the model)."""
    details = [Path(p) for p in paths if Path(p).suffix.lower() == ".parquet"]
    if not details:
        raise InputError(
            Path(paths[0]), "a lighteval results file without its details_*.parquet files"
        )
    return read_lighteval(details, options)
