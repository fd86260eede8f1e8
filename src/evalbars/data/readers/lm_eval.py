"""lm-evaluation-harness (0.4.x) sample logs: ``samples_<task>_<ts>.jsonl`` beside
``results_<ts>.json``.

``lm_eval --log_samples --output_path OUT`` writes, per model, a folder
(``OUT/<org>__<model>/``, the layout of the Open LLM Leaderboard's details
repositories too) holding one ``results_<timestamp>.json`` per run and, for
every (sub)task of that run, a ``samples_<task>_<timestamp>.jsonl`` with the
same timestamp: that is how samples are paired with their run here. A samples
line is one (document, filter): ``doc_id`` (the row index within the subtask),
``doc`` (the dataset row), ``target``, ``filter``, ``filtered_resps`` and one
key per metric (``"acc": 1.0``).

Names and layouts read alike:

- ``samples_<task>_<ts>.json``: lm-eval before 0.4.3 named its samples files
  ``.json`` (lm-eval PR #1930, first tag v0.4.3, renamed them), holding JSON
  lines, or a JSON list in the first tracker releases; the Open LLM Leaderboard
  v2's June 2024 runs are such files;
- the Open LLM Leaderboard v2's ``leaderboard_<benchmark>[_<subtask>]`` tasks,
  whose category is the task name after ``leaderboard_`` (``bbh_navigate``);
- lmms-eval's ``<date>_samples_<task>.jsonl`` beside ``<date>_results.json``
  (its ``loggers/evaluation_tracker.py``, date ``%Y%m%d_%H%M%S``), whose lines
  carry no ``doc``.

How the item table is read from them:

- **model**: the results file's ``model_name`` (lm-eval derives it from
  ``pretrained=`` in ``--model_args``), not ``config.model``, which names the
  model class; results files without one: ``pretrained=`` of
  ``config.model_args``, else the folder's ``<org>__<model>`` name;
- **question**: ``<task>/<doc_id>``, since ``doc_id`` repeats across the
  subtasks of a group; or ``doc[id_field]`` when the user names a dataset field;
- **category**: the subtask, or ``doc[category_field]``;
- **tasks**: every task with a samples file, or those the user names (``tasks:``,
  a group standing for its subtasks); a samples file given on its own is its task
  alone. Two tasks of one model that score the same documents (a multiple-choice
  and a generation variant of one dataset) are refused: pooled, each document
  would count twice, under two metrics;
- **score**: the user's ``metric`` in every task that logs it (refused when no
  task does); otherwise, and by default, ``acc`` for multiple-choice tasks and
  ``exact_match`` for generation tasks (``configs[task].output_type``), or the
  task's one metric when it logs only one, said in the log;
- **options**: the number of loglikelihood requests per document of a
  multiple-choice task (one per choice), else the ``doc``'s ``choices``, else
  MMLU-Pro's 10, for ``missing_prediction: random_guess``;
- **filter**: a task with several filters logs every document once per filter;
  the user's ``filter`` is kept, by default the first in the file (said in the
  log); a task with one filter keeps it;
- **missing prediction**: a generation whose filter extracted nothing
  (``filtered_resps == ["[invalid]"]``, lm-eval's fallback): the counterpart of
  MMLU-Pro's null ``pred``;
- **repeats**: a generation task run with ``repeats: K`` (each document sampled K times)
  logs the K raw responses (``resps``) but only the filter's aggregate and its score; each
  response is scored again, as one epoch, through the chosen filter list and metric as the
  results file records them (:mod:`evalbars.data.readers.lm_eval_filters`): a filter or
  metric that cannot be reproduced is refused, naming it, and so is a line whose re-scoring
  does not reproduce what the file logged (repeat 1 of a ``take_first`` list must score what
  the file scored). An answer the filter could not extract (``[invalid]``) is a missing
  prediction, as below;
- **runs**: two runs of the same model and task (an output folder re-used) are
  refused unless the user asks for the newest (``runs: newest``, by the results
  file's ``date``) or for all (``runs: all``: each results file is a run, labelled by its
  timestamp).

Record numbers in errors are 1-based line numbers of the samples file (entries,
for a samples file holding one JSON list).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers.common import (
    DEFAULT_N_OPTIONS,
    DEFAULT_RUN,
    check_question_id,
    choose_runs,
    few,
    finish_frame,
    option_hint,
)
from evalbars.data.readers.lm_eval_filters import check_rescoring, rescore_lines, task_rescorer
from evalbars.errors import InputError, plain

__all__ = [
    "RESULTS_PATTERN",
    "SAMPLES_PATTERN",
    "LMMS_RESULTS_PATTERN",
    "LMMS_SAMPLES_PATTERN",
    "is_lm_eval_name",
    "results_of",
    "model_name",
    "read_lm_eval_file",
    "read_lm_eval_runs",
]

log = logging.getLogger(__name__)

#: ``results_2026-11-30T10-52-35.545044.json``: the run's timestamp.
RESULTS_PATTERN = re.compile(r"results_(?P<stamp>.+)\.json")
#: ``samples_<task>_<timestamp>.jsonl`` (``.json`` before lm-eval 0.4.3); the task may itself
#: contain underscores, the timestamp does not.
SAMPLES_PATTERN = re.compile(r"samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl?")
#: lmms-eval: ``20240625_123456_results.json`` and ``20240625_123456_samples_<task>.jsonl``.
LMMS_RESULTS_PATTERN = re.compile(r"(?P<stamp>\d{8}_\d{6})_results\.json")
LMMS_SAMPLES_PATTERN = re.compile(r"(?P<stamp>\d{8}_\d{6})_samples_(?P<task>.+)\.jsonl")
DEFAULT_METRICS = {"multiple_choice": "acc", "generate_until": "exact_match"}
#: The Open LLM Leaderboard v2's task prefix; the rest of the name is the category.
LEADERBOARD_PREFIX = "leaderboard_"
#: What lm-eval's regex filters return when they find no answer.
INVALID = "[invalid]"
MISSING_MEANS = "filtered response [invalid] (the filter extracted no answer)"
#: Two tasks of one model whose documents overlap by more than this share are one benchmark twice.
SHARED_DOCUMENTS = 0.5
#: Per-task columns used while reading, not raw rows.
_TASK_COLUMNS = ["doc_key", "task", "metric", "output_type"]
#: The raw columns of a task's rows.
_ROW_COLUMNS = ["record", "question_id", "category", "answer", "pred", "n_options", "correct"]


def _results_stamp(path: Path):
    """``(stamp, style)`` of a results file's name, or None."""
    for pattern, style in ((RESULTS_PATTERN, "lm_eval"), (LMMS_RESULTS_PATTERN, "lmms")):
        match = pattern.fullmatch(path.name)
        if match:
            return match["stamp"], style
    return None


def _samples_name(path: Path):
    """``(task, stamp, style)`` of a samples file's name, or None."""
    for pattern, style in ((LMMS_SAMPLES_PATTERN, "lmms"), (SAMPLES_PATTERN, "lm_eval")):
        match = pattern.fullmatch(path.name)
        if match:
            return match["task"], match["stamp"], style
    return None


def is_lm_eval_name(path) -> bool:
    """Whether a file is named as lm-eval's (or lmms-eval's) results or samples files are."""
    path = Path(path)
    return _results_stamp(path) is not None or _samples_name(path) is not None


def results_of(path) -> Path:
    """The results file a samples file belongs to (or the results file itself)."""
    path = Path(path)
    named = _samples_name(path)
    if named is None:
        return path
    _, stamp, style = named
    results = path.parent / (
        f"results_{stamp}.json" if style == "lm_eval" else f"{stamp}_results.json"
    )
    if not results.exists():
        raise InputError(path, f"no {results.name} beside the samples file (lm-eval writes both)")
    return results


def read_lm_eval_file(path, options) -> list[pd.DataFrame]:
    """Raw rows of the run a results or samples file belongs to: a samples file reads its
    own task alone (unless ``options.tasks`` names others)."""
    path = Path(path)
    named = _samples_name(path)
    if named is not None and not options.tasks:
        options = dataclasses.replace(options, tasks=(named[0],))
    return read_lm_eval_runs([results_of(path)], options)


def _load_results(path: Path) -> dict:
    try:
        results = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable lm-eval results file: {exc}") from exc
    if not isinstance(results, dict):
        raise InputError(path, "not an lm-eval results file (not a JSON object)")
    return results


def model_name(path: Path, results: dict) -> str:
    """``model_name``; else ``pretrained=`` of ``config.model_args``; else the folder's
    ``<org>__<model>`` (the details repositories' layout)."""
    model = results.get("model_name")
    if isinstance(model, str) and model:
        return model
    args = (results.get("config") or {}).get("model_args")
    if isinstance(args, dict) and isinstance(args.get("pretrained"), str):
        return args["pretrained"]
    if isinstance(args, str):
        match = re.search(r"(?:^|,)pretrained=([^,]+)", args)
        if match:
            return match[1]
    if "__" in path.parent.name:
        return path.parent.name.replace("__", "/", 1)
    raise InputError(
        path, "the results file names no model_name (nor pretrained= in config.model_args)"
    )


def read_lm_eval_runs(results_paths, options) -> list[pd.DataFrame]:
    """Raw rows of lm-eval runs, one frame per model, from their results files.

    ``results_paths`` are results files; ``options`` is a
    :class:`evalbars.data.readers.SourceOptions`. Two runs of one (model, task) are
    refused unless ``options.runs`` is ``newest`` (the newest is read) or ``all`` (each is
    read, its rows labelled by the run's timestamp); ``options.tasks`` keeps those tasks.
    """
    runs = []
    for path in sorted(Path(p) for p in results_paths):
        results = _load_results(path)
        runs.append((path, results, model_name(path, results), _sample_files(path, results)))
    runs = _keep_tasks(runs, options.tasks)
    chosen = _choose_runs(runs, options.runs)
    tasks = [
        (path, results, model, task, files[task])
        for path, results, model, files in chosen
        for task in sorted(files)
    ]
    loaded = [(*run, list(_lines(run[-1]))) for run in tasks]
    _check_metric_is_logged(loaded, options.metric)
    frames: dict[str, tuple] = {}
    for path, results, model, task, samples, lines in loaded:
        frame = _read_task(samples, lines, results, model, task, options, results_path=path)
        frame["run"] = _results_stamp(path)[0] if options.runs == "all" else DEFAULT_RUN
        frames.setdefault(model, (path, []))[1].append(frame)
    for model, (_, parts) in frames.items():
        for run in dict.fromkeys(part["run"].iloc[0] for part in parts):
            _check_distinct_documents(model, [p for p in parts if p["run"].iloc[0] == run])
    return [
        finish_frame(
            pd.concat(parts, ignore_index=True).drop(columns=_TASK_COLUMNS),
            results,
            missing_means=MISSING_MEANS,
        )
        for results, parts in frames.values()
    ]


def _keep_tasks(runs, wanted) -> list:
    """Runs with only the tasks the user named (a group name stands for its subtasks)."""
    if not wanted:
        return runs
    available = sorted({task for *_, files in runs for task in files})
    groups: dict = {}
    for _, results, _, _ in runs:
        for group, members in (results.get("group_subtasks") or {}).items():
            groups.setdefault(group, set()).update(members)

    def tasks_of(name, seen=()) -> set:
        # A group's members may be groups themselves (mmlu -> mmlu_stem -> mmlu_physics).
        if name in groups and name not in seen:
            return set().union(*(tasks_of(m, (*seen, name)) for m in groups[name]), set())
        return {name} if name in available else set()

    chosen = set()
    for name in wanted:
        if not tasks_of(name):
            folder = runs[0][0].parent if runs else "lm-eval"
            raise InputError(
                folder,
                f"no task {name!r} among the samples files; they hold {few(available, 6)}",
            )
        chosen |= tasks_of(name)
    return [
        (path, results, model, {t: f for t, f in files.items() if t in chosen})
        for path, results, model, files in runs
        if any(t in chosen for t in files)
    ]


def _choose_runs(runs, policy: str) -> list:
    """``(path, results, model, files)`` per run, keeping one run per (model, task)."""
    owner: dict = {}
    for path, results, model, files in runs:
        for task in files:
            owner.setdefault((model, task), []).append(
                ((_run_date(results), path.name), path.name, path)
            )
    keep: dict = {}
    for (_, task), paths in choose_runs(owner, policy, "runs").items():
        for path in paths:
            keep.setdefault(path, set()).add(task)
    return [
        (path, results, model, {t: f for t, f in files.items() if t in keep[path]})
        for path, results, model, files in runs
        if path in keep
    ]


def _run_date(results: dict) -> float:
    try:
        return float(results.get("date", 0))
    except (TypeError, ValueError):
        return 0.0


def _sample_files(path: Path, results: dict) -> dict:
    """``{task: samples file}`` of a run: the samples files with the run's timestamp."""
    named = _results_stamp(path)
    if named is None:
        raise InputError(path, "not named as lm-eval results are (results_<timestamp>.json)")
    stamp, style = named
    glob = f"samples_*_{stamp}.json*" if style == "lm_eval" else f"{stamp}_samples_*.jsonl"
    files: dict = {}
    for candidate in sorted(path.parent.glob(glob)):
        match = _samples_name(candidate)
        if match and match[1] == stamp and match[2] == style:
            if match[0] in files:
                raise InputError(
                    candidate, f"task {match[0]!r} also has {files[match[0]].name}; keep one"
                )
            files[match[0]] = candidate
    configured = results.get("configs")
    if isinstance(configured, dict):
        unknown = sorted(set(files) - set(configured))
        if unknown:
            raise InputError(
                path, f"samples files for tasks the run does not configure: {few(unknown)}"
            )
    if not files:
        expected = (
            f"samples_<task>_{stamp}.jsonl"
            if style == "lm_eval"
            else f"{stamp}_samples_<task>.jsonl"
        )
        raise InputError(path, f"no {expected} beside the results file")
    return files


def _lines(path: Path):
    """``(record, sample)`` of a samples file: JSON lines or one JSON list (early 0.4 ``.json``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read the samples file: {exc}") from exc
    if text.lstrip().startswith("["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON: {exc}") from exc
        yield from enumerate(document, start=1)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, f"not valid JSON: {exc}", number) from exc


def _logged_metrics(sample) -> list:
    """The metrics a sample logs: its ``metrics`` list, else (before 0.4.3) its numeric keys."""
    if not isinstance(sample, dict):
        return []
    if isinstance(sample.get("metrics"), list):
        return [str(m) for m in sample["metrics"]]
    return [
        k
        for k, v in sample.items()
        if k != "doc_id" and isinstance(v, (int, float)) and not isinstance(v, bool)
    ]


def _check_metric_is_logged(loaded, metric) -> None:
    """Refuse a ``metric`` that no task logs, naming the metrics the tasks do log."""
    if not metric or not loaded:
        return
    logged = sorted({m for *_, lines in loaded if lines for m in _logged_metrics(lines[0][1])})
    if metric not in logged:
        where = loaded[0][0].parent if len(loaded) > 1 else loaded[0][4]
        raise InputError(
            where, f"no task logs metric {metric!r}; the tasks log {', '.join(logged) or 'none'}"
        )


def _output_type(results: dict, task: str) -> str:
    config = (results.get("configs") or {}).get(task)
    return str(config.get("output_type", "")) if isinstance(config, dict) else ""


def _repeats(results: dict, task: str) -> int:
    """``configs[task].repeats``: how many times each document was sampled (1 when not said)."""
    config = (results.get("configs") or {}).get(task)
    value = config.get("repeats") if isinstance(config, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def _read_task(
    path: Path, lines, results: dict, model: str, task: str, options, *, results_path=None
) -> pd.DataFrame:
    if not lines:
        raise InputError(path, "the samples file holds no lines")
    output_type = _output_type(results, task)
    metric = _choose_metric(lines, output_type, task, path, options)
    filters = list(dict.fromkeys(_filter_of(line) for _, line in lines))
    # A task with one filter keeps it; the user's `filter` chooses among several.
    chosen = filters[0] if len(filters) == 1 else options.filter or filters[0]
    if chosen not in filters:
        raise InputError(path, f"no filter {chosen!r} in the file; it has {filters}")
    if len(filters) > 1 and not options.filter:
        log.warning(
            "%s: task %s logs %d filters (%s); using %r (%s to choose)",
            path,
            task,
            len(filters),
            ", ".join(filters),
            chosen,
            option_hint("filter", entry=False),
        )
    kept = [(number, line) for number, line in lines if _filter_of(line) == chosen]
    rows = [_row(line, number, path, task, metric, output_type, options) for number, line in kept]
    frame = pd.DataFrame(rows, columns=[*_ROW_COLUMNS, "doc_key"])
    if _repeats(results, task) > 1:
        frame = _each_repeat(frame, kept, results, task, chosen, metric, path, results_path)
    frame["model"] = model
    frame["correct"] = frame["correct"].astype("Float64")
    frame["question_id"] = [
        check_question_id(q, path, r)
        for q, r in zip(frame["question_id"], frame["record"], strict=True)
    ]
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    frame["task"] = task
    frame["metric"] = metric
    frame["output_type"] = output_type or "unknown type"
    return frame


def _each_repeat(frame, kept, results, task, chosen, metric, path, results_path) -> pd.DataFrame:
    """The rows of a task run with ``repeats``: one per (document, repeat), each response
    re-scored through the filter list ``chosen`` and ``metric``
    (:func:`evalbars.data.readers.lm_eval_filters.rescore_lines`, checked against the file by
    :func:`~evalbars.data.readers.lm_eval_filters.check_rescoring`), numbered by ``epoch``."""
    rescorer = task_rescorer(results, task, results_path or path, filter_name=chosen, metric=metric)
    table = rescore_lines(rescorer, kept, path)
    check_rescoring(table, path)
    line = frame.set_index("record").loc[table["record"].to_numpy()].reset_index()
    answers = table["answer"].to_numpy(dtype=object)
    invalid = pd.Series(answers).map(lambda a: isinstance(a, str) and a == INVALID).to_numpy()
    scores = table["score"].to_numpy(dtype=float)
    return line.assign(
        pred=[a if isinstance(a, str) else str(a) for a in answers],
        correct=pd.array(np.where(invalid, np.nan, scores), dtype="Float64"),
        epoch=table["repeat"].to_numpy(dtype=np.int64),
    )


def _filter_of(line) -> str:
    return line.get("filter", "none") if isinstance(line, dict) else "none"


def _choose_metric(lines, output_type: str, task: str, path: Path, options) -> str:
    """The user's metric where the task logs it, else the task type's default, else the task's
    one metric (said in the log)."""
    logged = _logged_metrics(lines[0][1])
    if options.metric and options.metric in logged:
        return options.metric
    default = DEFAULT_METRICS.get(output_type)
    if default not in logged and len(logged) == 1:
        if not options.metric:
            log.warning("%s: task %s logs one metric, %r; using it", path, task, logged[0])
        default = logged[0]
    if default is None or (logged and default not in logged):
        kind = f"{output_type!r}" if output_type else "of no known type"
        raise InputError(
            path,
            f"task {task!r} is {kind} and logs {', '.join(logged) or 'no metric'}: "
            f"{option_hint('metric')} to choose its score",
        )
    if options.metric:
        log.warning(
            "%s: task %s does not log %r (it logs %s); using %r",
            path,
            task,
            options.metric,
            ", ".join(logged),
            default,
        )
    return default


def _n_options(line: dict, output_type: str) -> int:
    """One loglikelihood request per choice of a multiple-choice document, else ``doc.choices``."""
    if output_type == "multiple_choice":
        for key in ("arguments", "filtered_resps"):
            requests = line.get(key)
            if isinstance(requests, (list, dict)) and len(requests) > 1:
                return len(requests)
    choices = (line.get("doc") or {}).get("choices")
    if isinstance(choices, list) and len(choices) > 1:
        return len(choices)
    return DEFAULT_N_OPTIONS


def _doc_key(line: dict, question) -> str:
    """What identifies a document across tasks: lm-eval's ``doc_hash``, else a hash of ``doc``."""
    if isinstance(line.get("doc_hash"), str):
        return line["doc_hash"]
    if isinstance(line.get("doc"), dict):
        text = json.dumps(line["doc"], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()
    return f"id:{question}"


def _row(line, number: int, path: Path, task: str, metric: str, output_type: str, options):
    if not isinstance(line, dict) or "doc_id" not in line:
        raise InputError(path, "not an lm-eval sample (no doc_id)", number)
    doc = line.get("doc")
    if doc is not None and not isinstance(doc, dict):
        raise InputError(path, f"the sample's doc is not a record, got {plain(doc)!r:.40}", number)
    if metric not in line:
        available = _logged_metrics(line)
        raise InputError(path, f"no metric {metric!r} in the sample; it has {available}", number)
    question = f"{task}/{line['doc_id']}"
    if options.id_field:
        question = _doc_field(doc, options.id_field, path, number)
    category = task.removeprefix(LEADERBOARD_PREFIX)
    if options.category_field:
        category = str(_doc_field(doc, options.category_field, path, number))
    value = line[metric]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"{metric} must be a number, got {plain(value)!r:.60}", number)
    response = line.get("filtered_resps")
    pred = (
        response[0]
        if isinstance(response, list) and response and isinstance(response[0], str)
        else None
    )
    score = None if pred == INVALID else float(value)
    key = f"id:{question}" if options.id_field else _doc_key(line, question)
    n_options = _n_options(line, output_type)
    return (number, question, category, str(line.get("target")), pred, n_options, score, key)


def _doc_field(doc, field: str, path: Path, number: int):
    if doc is None:
        raise InputError(
            path, f"the sample has no doc to take {field!r} from (lmms-eval drops it)", number
        )
    if field not in doc:
        raise InputError(path, f"the document has no field {field!r}", number)
    return doc[field]


def _check_distinct_documents(model: str, parts) -> None:
    """Refuse two tasks of one model that score mostly the same documents (one benchmark read
    twice, e.g. its multiple-choice and its generation variant)."""
    keys = {
        part["source_file"].iloc[0]: (part, set(part["doc_key"])) for part in parts if len(part)
    }
    names = list(keys)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            (a, docs_a), (b, docs_b) = keys[first], keys[second]
            shared = len(docs_a & docs_b)
            if shared <= SHARED_DOCUMENTS * min(len(docs_a), len(docs_b)):
                continue
            task_a, task_b = a["task"].iloc[0], b["task"].iloc[0]
            raise InputError(
                b["source_path"].iloc[0],
                f"tasks {task_a!r} ({a['output_type'].iloc[0]}, {a['metric'].iloc[0]}) and "
                f"{task_b!r} ({b['output_type'].iloc[0]}, {b['metric'].iloc[0]}) of model "
                f"{model!r} score the same {shared} documents; pooled, each would count twice: "
                f"choose the tasks to read ({option_hint('tasks', [task_a])} reads {task_a!r} alone)",
            )
