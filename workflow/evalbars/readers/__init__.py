"""Readers of prediction files and harness logs: each turns its input into validated raw rows.

Formats (``format:`` of a predictions entry; ``auto``, the default, recognises
each by content, never only by name):

``mmlu_pro``
    A JSON list of records, plain or the one file of a zip (:mod:`.mmlu_pro`).
``table``
    A long CSV, TSV or Parquet table (:mod:`.tables`).
``lm_eval``
    lm-evaluation-harness 0.4 ``samples_*.jsonl`` with their ``results_*.json``
    (:mod:`.lm_eval`).
``inspect``
    Inspect 0.3 ``.eval`` and ``.json`` logs (:mod:`.inspect_logs`).
``helm``, ``lighteval``, ``every_eval_ever``, ``swe_bench``
    HELM run folders (:mod:`.helm`), lighteval details parquet (:mod:`.lighteval`), Every
    Eval Ever instance files (:mod:`.every_eval_ever`), SWE-bench ``results.json``
    (:mod:`.swe_bench`): the public corpora, read through :data:`CORPUS_READERS`.

An entry may name a file or a directory; a directory is walked for every log
it holds. Every reader raises :class:`~evalbars.errors.InputError`, whose
message names the file, the record and the problem; raw rows have the layout of
:mod:`.common`. :class:`SourceOptions` holds what a user may say about an entry.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from ..errors import InputError
from . import every_eval_ever, helm, lighteval, swe_bench
from .archives import MAX_MEMBER_BYTES, ZIP_SIGNATURES, is_zip_archive, member_names, open_archive
from .common import DEFAULT_N_OPTIONS, RAW_COLUMNS
from .inspect_logs import is_inspect_log, log_identity, read_inspect_log
from .lm_eval import RESULTS_PATTERN, SAMPLES_PATTERN, read_lm_eval_runs
from .mmlu_pro import read_json_document, read_mmlu_pro
from .tables import TABLE_SUFFIXES, read_long_table

# --- the public corpora: each reader takes every file of its format that a walk found ---------
CORPUS_READERS = {
    "helm": helm.read_helm_files,
    "lighteval": lighteval.read_lighteval_files,
    "every_eval_ever": every_eval_ever.read_eee_files,
    "swe_bench": swe_bench.read_swe_bench_files,
}
CORPUS_FORMATS = tuple(CORPUS_READERS)


def _corpus_format(path: Path, document) -> str | None:
    """The corpus format of one file by its content (``document``: its JSON, or None)."""
    if path.suffix.lower() == ".parquet":
        return "lighteval" if lighteval.is_lighteval_details(path) else None
    if path.name.endswith(every_eval_ever.SAMPLES_SUFFIX):
        return "every_eval_ever" if every_eval_ever.is_eee_samples(path) else None
    if helm.is_helm_document(document) or helm.in_helm_run(path):
        return "helm"
    if lighteval.is_lighteval_results(document):
        return "lighteval"
    if every_eval_ever.is_eee_aggregate(document):
        return "every_eval_ever"
    return "swe_bench" if swe_bench.is_swe_bench_results(path, document) else None


__all__ = [
    "FORMATS",
    "RAW_COLUMNS",
    "DEFAULT_N_OPTIONS",
    "MAX_MEMBER_BYTES",
    "ZIP_SIGNATURES",
    "SourceOptions",
    "detect_format",
    "read_source",
    "read_predictions",
    "read_mmlu_pro",
    "read_long_table",
    "read_json_document",
    "is_zip_archive",
]

log = logging.getLogger(__name__)

FORMATS = ("auto", "mmlu_pro", "table", "lm_eval", "inspect", *CORPUS_FORMATS)


@dataclass(frozen=True)
class SourceOptions:
    """What a user may say about one predictions entry (each key of the config entry).

    Attributes
    ----------
    format : str
        One of :data:`FORMATS`; ``auto`` recognises the format by content.
    model : str, optional
        The model's name, for an MMLU-Pro-style file (else taken from its name).
    id_field, category_field : str, optional
        lm-eval: dataset fields of ``doc`` giving the question id and category
        (defaults: ``<task>/<doc_id>`` and the subtask). Inspect: the metadata key
        of the category (default ``category``, then ``subject``).
    metric, filter : str, optional
        lm-eval: the per-sample metric and the filter to read (defaults: ``acc``
        or ``exact_match`` by task type; the first filter).
    runs : str
        ``only`` (refuse two runs of one model and task) or ``newest``.
    scorer : str, optional
        Inspect: the scorer whose value is the score (default: the only one).
    allow_partial : bool
        Inspect: accept logs whose status is ``error`` or ``cancelled``.
    split, perturbation : str, optional
        HELM: the split read (default ``test``) and a perturbation whose copies are read
        instead of the originals (default none: perturbed copies are left out).
    instances : list of str or str, optional
        SWE-bench: the split's instance ids (a list, or a file of ids one a line); default
        the union of the ids the submissions name.
    """

    format: str = "auto"
    model: str | None = None
    id_field: str | None = None
    category_field: str | None = None
    metric: str | None = None
    filter: str | None = None
    runs: str = "only"
    scorer: str | None = None
    allow_partial: bool = False
    split: str | None = None
    perturbation: str | None = None
    instances: tuple | str | None = None

    @classmethod
    def from_entry(cls, entry: dict) -> SourceOptions:
        """Options from a config entry (``path`` and unknown keys left out)."""
        names = {f.name for f in fields(cls)}
        chosen = {k: v for k, v in entry.items() if k in names and v is not None}
        if isinstance(chosen.get("instances"), list):
            chosen["instances"] = tuple(chosen["instances"])
        return cls(**chosen)


def _peek_json(path: Path):
    """The parsed JSON document of a text file, or None when it is not one JSON value."""
    with open(path, "rb") as fh:
        head = fh.read(64).lstrip()
    if head[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def detect_format(path) -> str:
    """The format of one file, recognised by its content (see the module docstring).

    Raises :class:`~evalbars.errors.InputError` naming the file when no format fits.
    """
    path = Path(path)
    if is_zip_archive(path):
        with open_archive(path) as archive:
            names = member_names(archive)
        return "inspect" if "header.json" in names else "mmlu_pro"
    document = _peek_json(path) if path.suffix.lower() == ".json" else None
    corpus = _corpus_format(path, document)
    if corpus:
        return corpus
    if RESULTS_PATTERN.fullmatch(path.name) or SAMPLES_PATTERN.fullmatch(path.name):
        return "lm_eval"
    with open(path, "rb") as fh:
        if fh.read(4) == b"PAR1":
            return "table"
    document = document if document is not None else _peek_json(path)
    if isinstance(document, list):
        return "mmlu_pro"
    if is_inspect_log(document):
        return "inspect"
    if path.suffix.lower() in TABLE_SUFFIXES:
        return "table"
    if path.suffix.lower() in (".json", ".zip"):  # named like JSON, but not valid JSON
        return "mmlu_pro"
    raise InputError(
        path,
        "not a recognised prediction file (an MMLU-Pro JSON list or zip, a CSV/TSV/Parquet "
        "table, lm-eval samples and results, an Inspect .eval/.json log, a HELM run, lighteval "
        "details, Every Eval Ever samples or a SWE-bench results.json)",
    )


def _results_of(path: Path) -> Path:
    """The ``results_<ts>.json`` a samples file belongs to (or the results file itself)."""
    match = SAMPLES_PATTERN.fullmatch(path.name)
    if not match:
        return path
    results = path.parent / f"results_{match['stamp']}.json"
    if not results.exists():
        raise InputError(path, f"no {results.name} beside the samples file (lm-eval writes both)")
    return results


def _walk(directory: Path) -> dict:
    """Every log under ``directory``, by format: ``{format: [paths]}``; lm-eval as results files."""
    found: dict = {"lm_eval": set(), "inspect": [], "mmlu_pro": [], "table": []}
    found.update({kind: [] for kind in CORPUS_FORMATS})
    ignored = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        try:
            kind = detect_format(path)
        except InputError:
            ignored.append(path.name)
            continue
        if kind == "lm_eval":
            found["lm_eval"].add(_results_of(path))
        else:
            found[kind].append(path)
    if ignored:
        log.warning(
            "%s: ignored %d files that are not prediction logs: %s",
            directory,
            len(ignored),
            ", ".join(ignored[:5]),
        )
    found["lm_eval"] = sorted(found["lm_eval"])
    return found


def _newest_inspect_logs(paths, runs: str) -> list:
    """One log per (model, task): all of them, or the newest when ``runs`` is ``newest``."""
    by_run: dict = {}
    for path in paths:
        model, task, created = log_identity(path)
        by_run.setdefault((model, task), []).append((created, path))
    chosen = []
    for (model, task), logs in by_run.items():
        if len(logs) > 1 and runs != "newest":
            names = ", ".join(p.name for _, p in sorted(logs))
            raise InputError(
                logs[0][1].parent,
                f"{len(logs)} logs of model {model!r} on task {task!r} ({names}); keep one, or "
                "set `runs: newest` on this predictions entry to use the newest",
            )
        chosen.append(max(logs)[1])
    return sorted(chosen)


def read_source(path, options: SourceOptions | None = None) -> list[pd.DataFrame]:
    """Raw rows of one predictions entry, one frame per file or run.

    Parameters
    ----------
    path : path-like
        A file, or a directory walked for every log it holds.
    options : SourceOptions, optional
        What the user said about the entry.

    Returns
    -------
    list of DataFrame
        Raw rows (:data:`RAW_COLUMNS`), one frame per file, lm-eval run or log.
    """
    options = options or SourceOptions()
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file does not exist")
    if options.format not in FORMATS:
        raise InputError(path, f"unknown format {options.format!r}; use one of {FORMATS}")
    if path.is_dir():
        found = _walk(path)
        if options.format != "auto":
            found = {k: v for k, v in found.items() if k == options.format}
        if not any(found.values()):
            raise InputError(path, "the directory holds no prediction file or log evalbars reads")
        frames = (
            read_lm_eval_runs(found.get("lm_eval", []), options) if found.get("lm_eval") else []
        )
        frames += [
            read_inspect_log(p, options)
            for p in _newest_inspect_logs(found.get("inspect", []), options.runs)
        ]
        frames += [read_mmlu_pro(p, options.model) for p in found.get("mmlu_pro", [])]
        frames += [read_long_table(p) for p in found.get("table", [])]
        for kind, read in CORPUS_READERS.items():
            frames += read(found[kind], options) if found.get(kind) else []
        return frames
    kind = detect_format(path) if options.format == "auto" else options.format
    if options.model is not None and kind != "mmlu_pro":
        raise InputError(
            path,
            "a 'model' name is only used with MMLU-Pro-style JSON files; other formats name their models",
        )
    if kind == "mmlu_pro":
        return [read_mmlu_pro(path, options.model)]
    if kind == "table":
        return [read_long_table(path)]
    if kind == "lm_eval":
        return read_lm_eval_runs([_results_of(path)], options)
    if kind in CORPUS_READERS:
        return CORPUS_READERS[kind]([path], options)
    return [read_inspect_log(path, options)]


def read_predictions(path, model: str | None = None) -> pd.DataFrame:
    """One file's raw rows (a single-model file: an MMLU-Pro JSON, a table or an Inspect log)."""
    frames = read_source(path, SourceOptions(model=model))
    if len(frames) != 1:
        raise InputError(path, f"holds {len(frames)} runs; read it with read_source")
    return frames[0]
