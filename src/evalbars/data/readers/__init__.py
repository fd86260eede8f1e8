"""Readers of prediction files and harness logs: each turns its input into validated raw rows.

Formats (``format:`` of a predictions entry; ``auto``, the default, recognises
each by content, never only by name):

``mmlu_pro``
    A JSON list of records, plain or the one file of a zip (:mod:`.mmlu_pro`).
``table``
    A long CSV, TSV or Parquet table (:mod:`.long_tables`).
``lm_eval``
    lm-evaluation-harness 0.4 ``samples_*.jsonl`` with their ``results_*.json``,
    also as the Open LLM Leaderboard and lmms-eval name them (:mod:`.lm_eval`).
``inspect``
    Inspect 0.3 ``.eval`` and ``.json`` logs (:mod:`.inspect_logs`).
``helm``, ``lighteval``, ``every_eval_ever``, ``swe_bench``
    HELM run folders (:mod:`.helm`), lighteval details parquet (:mod:`.lighteval`), Every
    Eval Ever instance files (:mod:`.every_eval_ever`), SWE-bench ``results.json``
    (:mod:`.swe_bench`): the public corpora, read through :data:`CORPUS_READERS`.

An entry may name a file or a directory; a directory is walked for every log
it holds. A file that does not claim to be a log, by its content or its name (a
README, an unrelated JSON object, a CSV without prediction columns), is skipped
and counted; a file that claims to be one, by its content or by its name and place (a
SWE-bench ``results/results.json``, an EEE ``<uuid>_samples.jsonl`` or the ``<uuid>.json``
beside it, a lighteval ``details_<task>_<ts>.parquet``, a HELM run folder's files), and is
broken or empty stops the walk. A file or folder that cannot be read stops it too ("permission
denied"), and so does gzip data named as a log ("decompress it"); a symbolic link to nothing
is one warning. Every
reader raises :class:`~evalbars.errors.InputError`, whose message names the
file, the record and the problem; raw rows have the layout of :mod:`.common`.
:class:`SourceOptions` holds what a user may say about an entry.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from evalbars.data.readers import every_eval_ever, helm, lighteval, swe_bench
from evalbars.data.readers.archives import (
    MAX_MEMBER_BYTES,
    ZIP_SIGNATURES,
    is_zip_archive,
    member_names,
    open_archive,
)
from evalbars.data.readers.common import (
    DEFAULT_N_OPTIONS,
    RAW_COLUMNS,
    choose_newest,
    few,
    set_hint_style,
)
from evalbars.data.readers.inspect_logs import (
    is_inspect_archive,
    is_inspect_log,
    log_identity,
    read_inspect_log,
)
from evalbars.data.readers.lm_eval import (
    is_lm_eval_name,
    read_lm_eval_file,
    read_lm_eval_runs,
    results_of,
)
from evalbars.data.readers.long_tables import TABLE_SUFFIXES, read_long_table
from evalbars.data.readers.mmlu_pro import read_json_document, read_mmlu_pro
from evalbars.errors import InputError

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
        named = lighteval.claims_details_name(path)
        return "lighteval" if named or lighteval.is_lighteval_details(path) else None
    if path.name.endswith(every_eval_ever.SAMPLES_SUFFIX):
        return "every_eval_ever" if every_eval_ever.is_eee_samples(path) else None
    if helm.is_helm_document(document) or helm.in_helm_run(path):
        return "helm"
    if lighteval.is_lighteval_results(document) or lighteval.claims_results_name(path):
        return "lighteval"
    if every_eval_ever.is_eee_aggregate(document) or every_eval_ever.beside_samples(path):
        return "every_eval_ever"
    return "swe_bench" if swe_bench.is_swe_bench_results(path, document) else None


__all__ = [
    "FORMATS",
    "RAW_COLUMNS",
    "DEFAULT_N_OPTIONS",
    "MAX_MEMBER_BYTES",
    "ZIP_SIGNATURES",
    "SourceOptions",
    "set_hint_style",
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
    tasks : tuple of str, optional
        lm-eval: the tasks to read (a group stands for its subtasks; default: every
        task with a samples file).
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
    tasks: tuple[str, ...] | None = None
    split: str | None = None
    perturbation: str | None = None
    instances: tuple | str | None = None

    def __post_init__(self):
        if isinstance(self.tasks, str):
            object.__setattr__(self, "tasks", (self.tasks,))
        elif self.tasks is not None:
            object.__setattr__(self, "tasks", tuple(self.tasks) or None)

    @classmethod
    def from_entry(cls, entry: dict) -> SourceOptions:
        """Options from a config entry (``path`` and unknown keys left out)."""
        names = {f.name for f in fields(cls)}
        chosen = {k: v for k, v in entry.items() if k in names and v is not None}
        if isinstance(chosen.get("instances"), list):
            chosen["instances"] = tuple(chosen["instances"])
        return cls(**chosen)


#: Names that say a file is a log: upstream MMLU-Pro's, and Inspect's ``<ISO time>_<task>_<id>``.
_MMLU_PRO_NAME = re.compile(r"model_outputs_.+\.(json|zip)")
_INSPECT_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}.*\.(eval|json)")
_TASKS_ONLY = "`tasks` chooses among lm-eval tasks; this entry holds no lm-eval output"
#: Columns that say a table holds predictions.
_TABLE_MARKS = {"question_id", "correct", "pred"}


def _peek_json(path: Path):
    """The parsed JSON document of a text file, or None when it is not one JSON value."""
    with open(path, "rb") as fh:
        head = fh.read(64).removeprefix(b"\xef\xbb\xbf").lstrip()  # json reads past a BOM
    if head[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


#: The first bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"


def _gzip_problem(path: Path) -> str:
    """The remedy for gzip data: gunzip (which refuses a name without ``.gz``: then ``-c``)."""
    if path.suffix.lower() == ".gz":
        return f"gzip-compressed; decompress it (gunzip {path}) and read the decompressed file"
    return (
        f"gzip-compressed under a name without .gz; decompress it "
        f"(gunzip -c {path} > {path.with_name('decompressed-' + path.name)}) and read that file"
    )


def _unreadable(path: Path) -> InputError:
    what = "folder" if path.is_dir() else "file"
    return InputError(path, f"permission denied: evalbars cannot read this {what}")


def _check_readable(path: Path) -> None:
    """Refuse a file or folder the user running evalbars may not read (one line, early)."""
    mode = os.R_OK | os.X_OK if path.is_dir() else os.R_OK
    if not os.access(path, mode):
        raise _unreadable(path)


def _claims_gzip_log(path: Path) -> bool:
    """Whether a gzip file's name, without ``.gz``, is that of a log evalbars reads."""
    inner = path.with_suffix("") if path.suffix.lower() == ".gz" else path
    return is_lm_eval_name(inner) or inner.suffix.lower() in (
        *TABLE_SUFFIXES,
        ".json",
        ".jsonl",
        ".parquet",
    )


def _recognise(path: Path) -> tuple[str | None, bool]:
    """``(format, claimed)``: the format a file is read as (None: none fits), and whether the
    file claims to be a log by its content or its name (a walk skips the others)."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
    except PermissionError as exc:
        raise _unreadable(path) from exc
    if magic == GZIP_MAGIC:
        return "gzip", _claims_gzip_log(path)
    return _recognise_content(path)


def _recognise_content(path: Path) -> tuple[str | None, bool]:
    """:func:`_recognise` of a readable, uncompressed file."""
    inspect_name = bool(_INSPECT_NAME.fullmatch(path.name))
    named = inspect_name or bool(_MMLU_PRO_NAME.fullmatch(path.name))
    if is_zip_archive(path):
        with open_archive(path) as archive:
            names = member_names(archive)
        if is_inspect_archive(names):
            return "inspect", True
        return "mmlu_pro", named or any(n.endswith(".json") for n in names)
    if swe_bench.claims_swe_bench_name(path):  # read, and refused when broken: never skipped
        return "swe_bench", True
    # The corpora first: lighteval also writes results_<ts>.json, and details as Parquet.
    corpus = _corpus_format(path, _peek_json(path) if path.suffix.lower() == ".json" else None)
    if corpus:
        return corpus, True
    if is_lm_eval_name(path):
        return "lm_eval", True
    with open(path, "rb") as fh:
        if fh.read(4) == b"PAR1":
            return "table", True
    document = _peek_json(path)
    if isinstance(document, list):
        records = any(isinstance(r, dict) and "question_id" in r for r in document[:50])
        return "mmlu_pro", named or records
    if is_inspect_log(document):
        return "inspect", True
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        return "table", _table_has_marks(path)
    if suffix in (".json", ".zip"):  # named like JSON, but not valid JSON, or another object
        return ("inspect" if inspect_name else "mmlu_pro"), named
    return None, False


def _table_has_marks(path: Path) -> bool:
    """Whether a CSV/TSV's header names a prediction column (question_id, correct, pred)."""
    with open(path, "rb") as fh:
        header = fh.readline(4096).decode("utf-8", "replace").lstrip("\ufeff")
    columns = {c.strip().strip('"').strip() for c in re.split(r"[,\t]", header)}
    return bool(columns & _TABLE_MARKS)


def detect_format(path) -> str:
    """The format of one file, recognised by its content (see the module docstring).

    Raises :class:`~evalbars.errors.InputError` naming the file when no format fits.
    """
    path = Path(path)
    kind, _ = _recognise(path)
    if kind == "gzip":
        raise InputError(path, _gzip_problem(path))
    if kind is None:
        raise InputError(
            path,
            "not a recognised prediction file (an MMLU-Pro JSON list or zip, a CSV/TSV/Parquet "
            "table, lm-eval samples and results, an Inspect .eval/.json log, a HELM run, "
            "lighteval details, Every Eval Ever samples or a SWE-bench results.json)",
        )
    return kind


def _walk(directory: Path) -> dict:
    """Every log under ``directory``, by format: ``{format: [paths]}``; lm-eval as results files."""
    found: dict = {"lm_eval": set(), "inspect": [], "mmlu_pro": [], "table": []}
    found.update({kind: [] for kind in CORPUS_FORMATS})
    skipped, dangling, files = [], [], []
    for path in sorted(directory.rglob("*")):
        if path.is_symlink() and not path.exists():
            dangling.append(path)
        elif path.is_dir() or path.is_file():
            _check_readable(path)  # rglob passes over a folder it cannot list: say so instead
            files += [path] if path.is_file() else []
    if dangling:
        log.warning(
            "%s: ignored %d symbolic link(s) to nothing (%s -> %s)",
            directory,
            len(dangling),
            few(p.name for p in dangling),
            os.readlink(dangling[0]),
        )
    for path in files:
        kind, claimed = _recognise(path)
        if kind == "gzip" and claimed:
            raise InputError(path, _gzip_problem(path))
        if not claimed:
            skipped.append(path.name)
        elif kind == "lm_eval":
            found["lm_eval"].add(results_of(path))
        else:
            found[kind].append(path)
    if skipped:
        what = (
            "files that are not prediction logs"
            if len(skipped) > 1
            else "file that is not a prediction log"
        )
        log.warning("%s: skipped %d %s (%s)", directory, len(skipped), what, few(skipped))
    found["lm_eval"] = sorted(found["lm_eval"])
    return found


def _newest_inspect_logs(paths, runs: str) -> list:
    """One log per (model, task): all of them, or the newest when ``runs`` is ``newest``."""
    by_run: dict = {}
    for path in paths:
        model, task, created = log_identity(path)
        by_run.setdefault((model, task), []).append(((created, path), path.name, path))
    return sorted(choose_newest(by_run, runs, "logs").values())


def _read_directory(path: Path, options: SourceOptions) -> list[pd.DataFrame]:
    """Raw rows of every log a directory holds (:func:`_walk`), each format by its reader."""
    found = _walk(path)
    if options.format != "auto":
        found = {k: v for k, v in found.items() if k == options.format}
    if not any(found.values()):
        raise InputError(path, "the directory holds no prediction file or log evalbars reads")
    if options.tasks and not found.get("lm_eval"):
        raise InputError(path, _TASKS_ONLY)
    frames = read_lm_eval_runs(found.get("lm_eval", []), options) if found.get("lm_eval") else []
    frames += [
        read_inspect_log(p, options)
        for p in _newest_inspect_logs(found.get("inspect", []), options.runs)
    ]
    frames += [read_mmlu_pro(p, options.model) for p in found.get("mmlu_pro", [])]
    frames += [read_long_table(p) for p in found.get("table", [])]
    for kind, read in CORPUS_READERS.items():
        frames += read(found[kind], options) if found.get(kind) else []
    return frames


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
    if path.is_symlink() and not path.exists():
        raise InputError(path, f"a symbolic link to {os.readlink(path)}, which does not exist")
    if not path.exists():
        raise InputError(path, "file does not exist")
    _check_readable(path)
    if options.format not in FORMATS:
        raise InputError(path, f"unknown format {options.format!r}; use one of {FORMATS}")
    if path.is_dir():
        return _read_directory(path, options)
    with open(path, "rb") as fh:
        if fh.read(2) == GZIP_MAGIC:  # whatever format was asked for
            raise InputError(path, _gzip_problem(path))
    kind = detect_format(path) if options.format == "auto" else options.format
    if options.model is not None and kind != "mmlu_pro":
        raise InputError(
            path,
            "a 'model' name is only used with MMLU-Pro-style JSON files; other formats name their models",
        )
    if options.tasks and kind != "lm_eval":
        raise InputError(path, _TASKS_ONLY)
    if kind == "mmlu_pro":
        return [read_mmlu_pro(path, options.model)]
    if kind == "table":
        return [read_long_table(path)]
    if kind == "lm_eval":
        return read_lm_eval_file(path, options)
    if kind in CORPUS_READERS:
        return CORPUS_READERS[kind]([path], options)
    return [read_inspect_log(path, options)]


def read_predictions(path, model: str | None = None) -> pd.DataFrame:
    """One file's raw rows (a single-model file: an MMLU-Pro JSON, a table or an Inspect log)."""
    frames = read_source(path, SourceOptions(model=model))
    if len(frames) != 1:
        raise InputError(path, f"holds {len(frames)} runs; read it with read_source")
    return frames[0]
