"""Every Eval Ever (schema 0.3.0) instance files: ``<uuid>_samples.jsonl`` beside ``<uuid>.json``.

The ``every-eval-ever`` converters (from Inspect, HELM and lm-eval logs) write per evaluation an
aggregate ``<uuid>.json`` (``model_info``, ``evaluation_results[]`` with
``evaluation_result_id``, ``score_details.score`` and its ``num_samples``) and, with instance
data, ``<uuid>_samples.jsonl``: one line per sample *and per aggregate result*
(``evaluation_result_id``), holding ``model_id``, ``evaluation_name``, ``sample_id``,
``sample_hash`` (SHA-256 of the input and reference), ``evaluation.score`` and
``evaluation.is_correct``, ``error`` and a free ``metadata``.

How the item table is read from them:

- **model**: ``model_id``;
- **result**: each sample is listed once per aggregate result (lm-eval's ``acc`` and
  ``acc_norm``, each filter, HELM's metric x split); the user's ``metric`` (an
  ``evaluation_result_id``) is read where a file has it, by default the first result of the
  aggregate file that names the ``test`` split (``exact_match:test``; ``split:`` chooses), else
  its first;
- **question**: ``<evaluation_name>/<sample_id>``, or ``sample_hash`` with
  ``id_field: sample_hash``: the schema's own cross-model join, needed when ids repeat
  (the HELM converter names every MMLU subject ``mmlu`` and keeps HELM's positional
  ``id5``...);
- **category**: ``evaluation_name``;
- **epoch**: ``metadata.epoch`` (the Inspect converter writes it, as text), else 1; when
  every epoch line of a question carries the same fractional score (that converter writes the
  question's epoch mean on each), one sample per question is read, said in the log;
- **score**: ``evaluation.score``; a sample with an ``error`` is a missing prediction;
- **incomplete evaluations**: a result whose samples are fewer than the aggregate's
  ``num_samples`` is skipped with a message when they are exactly the samples (by
  ``sample_hash``) of another evaluation of the model read with it (the lm-eval converter
  gives a task group the samples of one of its subtasks), and refused otherwise (a cut file);
- **runs**: two evaluations of one model and ``evaluation_name`` are refused unless
  ``runs: newest`` (by ``evaluation_timestamp``, then ``retrieved_timestamp``).

Record numbers in errors are 1-based line numbers of the samples file.

References
----------
.. [1] EvalEval Coalition, "Every Eval Ever", arXiv:2606.14516; ``every-eval-ever`` 0.3.0,
   ``schemas/instance_level_eval.schema.json`` and ``schemas/eval.schema.json``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers.common import finish_frame, newest_remedy, option_hint
from evalbars.errors import InputError, plain

__all__ = [
    "SAMPLES_SUFFIX",
    "is_eee_samples",
    "is_eee_aggregate",
    "beside_samples",
    "read_every_eval_ever",
    "read_eee_files",
]

log = logging.getLogger(__name__)

SAMPLES_SUFFIX = "_samples.jsonl"
_SAMPLE_KEYS = {"schema_version", "evaluation_id", "model_id", "sample_id", "evaluation"}
ID_FIELDS = ("sample_id", "sample_hash")
MISSING_MEANS = "sample with an error (the converter logged one, no score)"


def is_eee_samples(path) -> bool:
    """Whether a file is an EEE instance file: named ``*_samples.jsonl``, first line a sample."""
    path = Path(path)
    if not path.name.endswith(SAMPLES_SUFFIX):
        return False
    with open(path, "rb") as fh:
        first = fh.readline()
    try:
        record = json.loads(first)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(record, dict) and _SAMPLE_KEYS <= set(record)


def beside_samples(path) -> bool:
    """Whether a ``<uuid>.json`` has its ``<uuid>_samples.jsonl`` beside it: it is then that
    evaluation's aggregate, read (and refused when broken), never skipped."""
    path = Path(path)
    return path.suffix == ".json" and path.with_name(path.stem + SAMPLES_SUFFIX).is_file()


def is_eee_aggregate(document) -> bool:
    """Whether a parsed JSON document is an EEE aggregate (``<uuid>.json``)."""
    return (
        isinstance(document, dict)
        and "schema_version" in document
        and isinstance(document.get("evaluation_results"), list)
        and isinstance(document.get("model_info"), dict)
    )


def _aggregate(samples: Path) -> dict:
    path = samples.with_name(samples.name[: -len(SAMPLES_SUFFIX)] + ".json")
    if not path.is_file():
        return {}
    try:
        document = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable EEE aggregate file: {exc}") from exc
    return document if is_eee_aggregate(document) else {}


def _lines(path: Path) -> list:
    lines = []
    with open(path, encoding="utf-8-sig") as fh:  # a UTF-8 BOM (Windows editors) is read past
        for number, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    lines.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"not valid JSON: {exc}", number) from exc
    if not lines:
        raise InputError(path, "the samples file holds no lines")
    return lines


def _stamp(aggregate: dict) -> tuple:
    def number(key):
        try:
            return float(aggregate.get(key))
        except (TypeError, ValueError):
            return 0.0

    return number("evaluation_timestamp"), number("retrieved_timestamp")


def read_every_eval_ever(paths, options) -> list[pd.DataFrame]:
    """Raw rows of EEE instance files, one frame per model (see the module docstring)."""
    if options.id_field and options.id_field not in ID_FIELDS:
        raise InputError(
            Path(next(iter(paths))),
            f"id_field must be one of {ID_FIELDS}, not {options.id_field!r}",
        )
    parts = [_read_samples(Path(p), options) for p in sorted(paths)]
    by_model: dict = {}
    for stamp, frame in _without_groups(parts):
        by_model.setdefault(frame["model"].iloc[0], []).append((stamp, frame))
    frames = []
    for model, runs in by_model.items():
        pieces = _one_run_per_question(model, runs, options)
        combined = pd.concat(pieces, ignore_index=True)
        path = combined["source_path"].iloc[0]
        frames.append(finish_frame(combined, path, missing_means=MISSING_MEANS))
    return frames


def _one_run_per_question(model: str, runs: list, options) -> list:
    """The evaluations of one model, newest first, refusing (or, with ``runs: newest``,
    dropping) an older one that holds the same questions: a second run."""
    kept, seen = [], set()
    for _, frame in sorted(runs, key=lambda run: run[0], reverse=True):
        keys = set(zip(frame["question_id"], frame["epoch"], strict=True))
        if keys & seen:
            if options.runs != "newest":
                other = next(
                    f for f in kept if keys & set(zip(f["question_id"], f["epoch"], strict=True))
                )
                hint = (
                    ""
                    if options.id_field == "sample_hash"
                    else "; or, if they are different questions under the same sample ids, "
                    + option_hint("id_field", "sample_hash", entry=False)
                )
                raise InputError(
                    frame["source_path"].iloc[0],
                    f"holds questions of model {model!r} that {other['source_file'].iloc[0]} "
                    f"also holds (two runs); {newest_remedy(all_runs=False)}{hint}",
                )
            continue
        kept.append(frame)
        seen |= keys
    return kept


def _read_samples(path: Path, options) -> tuple:
    """``(stamp, frame, sample hashes, short)`` of one samples file; ``short`` is ``(result,
    samples, num_samples)`` when it holds fewer samples than its aggregate counts, else None."""
    aggregate = _aggregate(path)
    lines = _lines(path)
    for number, line in lines:
        missing = sorted(_SAMPLE_KEYS - set(line)) if isinstance(line, dict) else ["all"]
        if missing:
            raise InputError(path, f"not an EEE sample (no {', '.join(missing)})", number)
    results = list(dict.fromkeys(line.get("evaluation_result_id") for _, line in lines))
    declared = [r.get("evaluation_result_id") for r in aggregate.get("evaluation_results", [])]
    present = [r for r in declared if r in results] or results
    split = f":{options.split or 'test'}"  # HELM's converter names results <metric>:<split>
    wanted = next((r for r in present if str(r).endswith(split)), present[0])
    if options.metric in results:
        wanted = options.metric
    elif options.metric:
        log.warning(
            "%s: no evaluation_result_id %r (it has %s); using %r",
            path,
            options.metric,
            ", ".join(map(str, results[:6])),
            wanted,
            option_hint("metric", entry=False),
        )
    if len(results) > 1 and options.metric not in results:
        log.info(
            "%s: %d results per sample (%s); reading %r (%s to choose)",
            path,
            len(results),
            ", ".join(map(str, results[:6])),
            wanted,
            option_hint("metric", entry=False),
        )
    chosen = [(n, line) for n, line in lines if line.get("evaluation_result_id") == wanted]
    expected = next(
        (
            ((r.get("score_details") or {}).get("uncertainty") or {}).get("num_samples")
            for r in aggregate.get("evaluation_results", [])
            if r.get("evaluation_result_id") == wanted
        ),
        None,
    )
    hashes = frozenset(line.get("sample_hash") for _, line in chosen)
    short = (
        (wanted, len(chosen), expected)
        if isinstance(expected, int) and len(chosen) < expected
        else None
    )
    return _stamp(aggregate), _frame(path, chosen, options), hashes, short


def _without_groups(parts) -> list:
    """``(stamp, frame)`` of every evaluation, leaving out a task group's and refusing a cut one.

    An evaluation whose samples file holds fewer samples than its aggregate's ``num_samples``
    is a task group when those samples (by ``sample_hash``) are exactly the samples of another
    complete evaluation of the same model read with it: lm-eval's converter gives a group one
    subtask's samples. It is skipped with a message. Otherwise the file is cut short (a partial
    copy, a truncated download) and refused: reading it would drop questions unnoticed.
    """
    complete: dict = {}
    for _, frame, hashes, short in parts:
        if short is None:
            complete.setdefault(frame["model"].iloc[0], []).append((hashes, frame))
    kept = []
    for stamp, frame, hashes, short in parts:
        if short is None:
            kept.append((stamp, frame))
            continue
        wanted, count, expected = short
        path = frame["source_path"].iloc[0]
        subtask = next(
            (f for h, f in complete.get(frame["model"].iloc[0], []) if h == hashes), None
        )
        if subtask is None:
            raise InputError(
                path,
                f"holds {count} samples of {wanted!r}, but its aggregate counts {expected}: the "
                "file is cut short (they are not the samples of another evaluation of this "
                "model read with it, as a task group's would be); give the whole file",
            )
        log.warning(
            "%s: skipped: %d samples of %r, but the aggregate counts %d (a task group: they "
            "are the samples of %s)",
            path,
            count,
            wanted,
            expected,
            subtask["source_file"].iloc[0],
        )
    return kept


def _frame(path: Path, chosen: list, options) -> pd.DataFrame:
    field = options.id_field or "sample_id"
    records = np.array([n for n, _ in chosen])
    rows = []
    for number, line in chosen:
        evaluation = line.get("evaluation")
        if not isinstance(evaluation, dict) or "score" not in evaluation:
            raise InputError(path, "the sample has no evaluation.score", number)
        score = evaluation["score"]
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise InputError(
                path, f"evaluation.score must be a number, got {plain(score)!r}", number
            )
        key = line.get(field)
        if not isinstance(key, str) or not key:
            raise InputError(path, f"the sample has no {field}", number)
        metadata = line.get("metadata") if isinstance(line.get("metadata"), dict) else {}
        epoch = metadata.get("epoch", 1)
        if not re.fullmatch(r"[1-9][0-9]*", str(epoch)):
            raise InputError(
                path, f"metadata.epoch must be a positive whole number, got {epoch!r}", number
            )
        output = (line.get("output") or {}).get("raw") or [None]
        reference = (line.get("input") or {}).get("reference") or [None]
        rows.append(
            (
                key,
                int(epoch),
                str(line["evaluation_name"]),
                line["model_id"],
                reference[0],
                output[0],
                None if line.get("error") or score is None else float(score),
            )
        )
    frame = pd.DataFrame(
        rows, columns=["key", "epoch", "category", "model", "answer", "pred", "correct"]
    )
    if frame["model"].nunique() != 1:
        raise InputError(
            path, f"the file holds several model_id values: {sorted(frame['model'].unique())}"
        )
    prefix = "" if field == "sample_hash" else frame["category"] + "/"
    frame["question_id"] = prefix + frame.pop("key")
    frame["record"] = records
    frame = _reduced_epochs(frame, path)
    frame["correct"] = frame["correct"].astype("Float64")
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    return frame


def read_eee_files(paths, options) -> list[pd.DataFrame]:
    """Raw rows of the instance files among ``paths`` (an aggregate stands for its samples)."""
    samples, bare = set(), []
    for path in map(Path, paths):
        if path.name.endswith(SAMPLES_SUFFIX):
            samples.add(path)
            continue
        beside = path.with_name(path.stem + SAMPLES_SUFFIX)
        (samples.add(beside) if beside.is_file() else bare.append(path))
    if bare:
        log.warning(
            "%s: %d EEE aggregate files have no instance file beside them (aggregates only): %s",
            bare[0].parent,
            len(bare),
            ", ".join(p.name for p in bare[:3]),
        )
    if not samples:
        raise InputError(bare[0], "an EEE aggregate without its <uuid>_samples.jsonl")
    return read_every_eval_ever(sorted(samples), options)


def _reduced_epochs(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """One row per question when every epoch line carries the question's epoch mean.

    every-eval-ever 0.3.0's Inspect converter writes the epoch-reduced score (e.g. 1/3) on
    each epoch's line; read as epochs, they would hide the within-question variance.
    Recognised when questions have several epochs, every question's epochs agree, and some
    score is a fraction.
    """
    if frame["epoch"].max() <= 1:
        return frame
    scores = frame["correct"].astype(float)
    groups = scores.groupby(frame["question_id"].to_numpy())
    agree = (groups.transform("max") == groups.transform("min")) | scores.isna()
    fractional = ((scores % 1) != 0) & scores.notna()
    if not (agree.all() and fractional.any()):
        return frame
    log.warning(
        "%s: every epoch of a question carries the same fractional score (the question's "
        "epoch mean, as every-eval-ever's Inspect converter writes it): read as one sample "
        "per question; the per-epoch scores are not in the file",
        path,
    )
    first = frame["epoch"] == frame.groupby("question_id")["epoch"].transform("min")
    return frame[first.to_numpy()].assign(epoch=1).reset_index(drop=True)
