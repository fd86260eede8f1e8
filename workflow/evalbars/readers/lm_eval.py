"""lm-evaluation-harness (0.4.x) sample logs: ``samples_<task>_<ts>.jsonl`` beside ``results_<ts>.json``.

``lm_eval --log_samples --output_path OUT`` writes, per model, a folder holding
one ``results_<timestamp>.json`` per run and, for every (sub)task of that run, a
``samples_<task>_<timestamp>.jsonl`` with the same timestamp: that is how
samples are paired with their run here. A samples line is one (document,
filter): ``doc_id`` (the row index within the subtask), ``doc`` (the dataset
row), ``target``, ``filter``, ``filtered_resps`` and one key per metric
(``"acc": 1.0``).

How the item table is read from them:

- **model**: the results file's ``model_name`` (lm-eval derives it from
  ``pretrained=`` in ``--model_args``), not ``config.model``, which names the
  model class;
- **question**: ``<task>/<doc_id>``, since ``doc_id`` repeats across the
  subtasks of a group; or ``doc[id_field]`` when the user names a dataset field;
- **category**: the subtask, or ``doc[category_field]``;
- **score**: the user's ``metric`` in every task that logs it; otherwise, and
  by default, ``acc`` for multiple-choice tasks and ``exact_match`` for
  generation tasks (``configs[task].output_type``), said in the log;
- **filter**: a task with several filters logs every document once per filter;
  the user's ``filter`` is kept, by default the first in the file (said in the
  log); a task with one filter keeps it;
- **missing prediction**: a generation whose filter extracted nothing
  (``filtered_resps == ["[invalid]"]``, lm-eval's fallback): the counterpart of
  MMLU-Pro's null ``pred``;
- **runs**: two runs of the same model and task (an output folder re-used) are
  refused unless the user asks for the newest (``runs: newest``, by the results
  file's ``date``).

Record numbers in errors are 1-based line numbers of the samples file.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pandas as pd

from ..errors import InputError, plain
from .common import check_question_id, finish_frame

__all__ = ["RESULTS_PATTERN", "SAMPLES_PATTERN", "read_lm_eval_runs"]

log = logging.getLogger(__name__)

#: ``results_2026-11-30T10-52-35.545044.json``: the run's timestamp.
RESULTS_PATTERN = re.compile(r"results_(?P<stamp>.+)\.json")
#: ``samples_<task>_<timestamp>.jsonl``; the task may itself contain underscores.
SAMPLES_PATTERN = re.compile(r"samples_(?P<task>.+)_(?P<stamp>[^_]+)\.jsonl")
DEFAULT_METRICS = {"multiple_choice": "acc", "generate_until": "exact_match"}
#: What lm-eval's regex filters return when they find no answer.
INVALID = "[invalid]"
MISSING_MEANS = "filtered response [invalid] (the filter extracted no answer)"


def _load_results(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable lm-eval results file: {exc}") from exc


def read_lm_eval_runs(results_paths, options) -> list[pd.DataFrame]:
    """Raw rows of lm-eval runs, one frame per model, from their results files.

    ``results_paths`` are ``results_<ts>.json`` files; ``options`` is a
    :class:`evalbars.readers.SourceOptions`. Two runs of one (model, task) are
    refused unless ``options.runs == "newest"``.
    """
    runs = []
    for path in sorted(Path(p) for p in results_paths):
        results = _load_results(path)
        model = results.get("model_name")
        if not isinstance(model, str) or not model:
            raise InputError(path, "the results file names no model_name")
        runs.append((path, results, model))
    chosen = _choose_runs(runs, options.runs)
    frames: dict[str, tuple] = {}
    for path, results, model, tasks in chosen:
        for task in tasks:
            frame = _read_task(path, results, model, task, options)
            frames.setdefault(model, (path, []))[1].append(frame)
    return [
        finish_frame(pd.concat(parts, ignore_index=True), results, missing_means=MISSING_MEANS)
        for results, parts in frames.values()
    ]


def _choose_runs(runs, policy: str) -> list:
    """``(path, results, model, tasks)`` per run, keeping one run per (model, task)."""
    owner: dict = {}
    for path, results, model in runs:
        for task in _sample_tasks(path, results):
            owner.setdefault((model, task), []).append((float(results.get("date", 0)), path))
    keep: dict = {}
    for (model, task), candidates in owner.items():
        if len(candidates) > 1 and policy != "newest":
            files = ", ".join(p.name for _, p in sorted(candidates))
            raise InputError(
                candidates[0][1].parent,
                f"{len(candidates)} runs of model {model!r} on task {task!r} ({files}); keep one, "
                "or set `runs: newest` on this predictions entry to use the newest",
            )
        newest = max(candidates)[1]
        keep.setdefault(newest, []).append(task)
    return [(p, r, m, sorted(keep[p])) for p, r, m in runs if p in keep]


def _sample_tasks(path: Path, results: dict) -> list:
    """Tasks of a run that have a samples file with the run's timestamp."""
    stamp = RESULTS_PATTERN.fullmatch(path.name)["stamp"]
    tasks = []
    for candidate in path.parent.glob(f"samples_*_{stamp}.jsonl"):
        match = SAMPLES_PATTERN.fullmatch(candidate.name)
        if match and match["stamp"] == stamp:
            tasks.append(match["task"])
    configured = set(results.get("configs", {}))
    unknown = sorted(set(tasks) - configured)
    if unknown:
        raise InputError(path, f"samples files for tasks the run does not configure: {unknown}")
    if not tasks:
        raise InputError(path, f"no samples_<task>_{stamp}.jsonl beside the results file")
    return sorted(tasks)


def _lines(path: Path):
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"not valid JSON: {exc}", number) from exc


def _read_task(results_path: Path, results: dict, model: str, task: str, options) -> pd.DataFrame:
    stamp = RESULTS_PATTERN.fullmatch(results_path.name)["stamp"]
    path = results_path.parent / f"samples_{task}_{stamp}.jsonl"
    lines = list(_lines(path))
    if not lines:
        raise InputError(path, "the samples file holds no lines")
    metric = _choose_metric(
        lines, results["configs"][task].get("output_type", ""), task, path, options
    )
    filters = list(dict.fromkeys(line.get("filter", "none") for _, line in lines))
    # A task with one filter keeps it; the user's `filter` chooses among several.
    chosen = filters[0] if len(filters) == 1 else options.filter or filters[0]
    if chosen not in filters:
        raise InputError(path, f"no filter {chosen!r} in the file; it has {filters}")
    if len(filters) > 1 and not options.filter:
        log.warning(
            "%s: task %s logs %d filters (%s); using %r (set `filter:` to choose)",
            path,
            task,
            len(filters),
            ", ".join(filters),
            chosen,
        )
    rows = [_row(line, number, path, task, metric, options) for number, line in lines]
    rows = [
        row
        for row, (_, line) in zip(rows, lines, strict=True)
        if line.get("filter", "none") == chosen
    ]
    frame = pd.DataFrame(
        rows, columns=["record", "question_id", "category", "answer", "pred", "correct"]
    )
    frame["model"] = model
    frame["correct"] = frame["correct"].astype("Float64")
    frame["question_id"] = [
        check_question_id(q, path, r)
        for q, r in zip(frame["question_id"], frame["record"], strict=True)
    ]
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    return frame


def _choose_metric(lines, output_type: str, task: str, path: Path, options) -> str:
    """The user's metric where the task logs it, else the task type's default (said in the log)."""
    logged = lines[0][1].get("metrics") or []
    default = DEFAULT_METRICS.get(output_type)
    if options.metric and options.metric in logged:
        return options.metric
    if default is None:
        raise InputError(
            path, f"task {task!r} is {output_type!r}: set `metric:` to choose its score"
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


def _row(line: dict, number: int, path: Path, task: str, metric: str, options) -> tuple:
    if "doc_id" not in line or not isinstance(line.get("doc"), dict):
        raise InputError(path, "not an lm-eval sample (no doc_id or doc)", number)
    if metric not in line:
        available = line.get("metrics") or [k for k in line if isinstance(line[k], (int, float))]
        raise InputError(path, f"no metric {metric!r} in the sample; it has {available}", number)
    doc = line["doc"]
    question = f"{task}/{line['doc_id']}"
    if options.id_field:
        if options.id_field not in doc:
            raise InputError(path, f"the document has no field {options.id_field!r}", number)
        question = doc[options.id_field]
    category = task
    if options.category_field:
        if options.category_field not in doc:
            raise InputError(path, f"the document has no field {options.category_field!r}", number)
        category = str(doc[options.category_field])
    value = line[metric]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"{metric} must be a number, got {plain(value)!r}", number)
    response = line.get("filtered_resps")
    pred = (
        response[0]
        if isinstance(response, list) and response and isinstance(response[0], str)
        else None
    )
    score = None if pred == INVALID else float(value)
    return (number, question, category, str(line.get("target")), pred, score)
