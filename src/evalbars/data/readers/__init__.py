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
    (:mod:`.swe_bench`): the public corpora, read through :data:`READERS`.

An entry may name a file or a directory; a directory is walked for every log
it holds. A file that does not claim to be a log, by its content or its name (a
README, an unrelated JSON object, a CSV without prediction columns), is skipped
and counted; a file that claims to be one, by its content or by its name and place (a
SWE-bench ``results/results.json``, an EEE ``<uuid>_samples.jsonl`` or the ``<uuid>.json``
beside it, a lighteval ``details_<task>_<ts>.parquet``, a HELM run folder's files), and is
broken or empty stops the walk. A file or folder that cannot be read stops it too ("permission
denied"), and so does gzip data named as a log ("decompress it"); a symbolic link to nothing
is one warning. A file of pairwise battles (:func:`is_battles_file`: ``model_a, model_b,
winner``, LMArena's files, Arena-Hard-Auto's judgments) holds no item-level scores: a walk
passes over it, and given alone it is refused, saying where battles are read
(:mod:`evalbars.data.battles`). Every
reader raises :class:`~evalbars.errors.InputError`, whose message names the
file, the record and the problem; raw rows have the layout of :mod:`.common`.
:class:`SourceOptions` holds what a user may say about an entry.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

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
    RUN_POLICIES,
    RUNS_ALL,
    choose_runs,
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
from evalbars.data.readers.long_tables import TABLE_SUFFIXES, read_long_table, read_long_tables
from evalbars.data.readers.mmlu_pro import read_json_document, read_mmlu_pro
from evalbars.errors import InputError

__all__ = [
    "FORMATS",
    "RAW_COLUMNS",
    "DEFAULT_N_OPTIONS",
    "MAX_MEMBER_BYTES",
    "ZIP_SIGNATURES",
    "SourceOptions",
    "set_hint_style",
    "detect_format",
    "Reader",
    "READERS",
    "read_source",
    "read_predictions",
    "read_mmlu_pro",
    "read_long_table",
    "read_json_document",
    "is_zip_archive",
    "is_battles_file",
    "is_battles_source",
    "battles_given",
    "BATTLES_HINT",
]

log = logging.getLogger(__name__)


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
        ``only`` (refuse two runs of one model and task), ``newest`` (keep the newest) or
        ``all`` (keep every run, each labelled in the item table's ``run`` column; a model
        of this entry may then also come from another entry that reads ``runs: all``).
    scorer : str, optional
        Inspect: the scorer whose value is the score (default: the only one).
    allow_partial : bool
        Inspect: accept logs whose status is ``error`` or ``cancelled``.
    tasks : tuple of str, optional
        lm-eval: the tasks to read (a group stands for its subtasks; default: every
        task with a samples file). lighteval: ``task|k``, ``suite|task|k``, ``task`` (any
        few-shot count) or a superset (its subsets), as lighteval's own ``--tasks``.
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
_TASKS_ONLY = "`tasks` chooses among lm-eval and lighteval tasks; this entry holds neither's output"
#: JSON nested thousands deep exhausts Python's parser: no harness writes that.
DEEP_JSON = "holds JSON nested deeper than Python's parser reads; it is not a harness log"
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
    except RecursionError:
        raise InputError(path, DEEP_JSON) from None


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


# --- Pairwise battles: recognised here, read by evalbars.data.battles --------------------------

#: Columns that say a table or a JSON record holds pairwise battles (LMArena's, or a plain
#: table's; the Kaggle form's one-hot winner), and the key of an Arena-Hard-Auto judgment.
_BATTLE_MARKS = (
    {"model_a", "model_b", "winner"},
    {"model_a", "model_b", "winner_model_a", "winner_model_b", "winner_tie"},
)
_JUDGMENT_MARK = "games"
#: Bytes of a file's head in which a JSON file's battle keys are looked for before it is parsed.
_BATTLE_HEAD = 65_536
#: What a file of battles given where item-level scores are read is told.
BATTLES_HINT = (
    "holds pairwise battles (model_a, model_b, winner), not item-level scores: give it alone "
    "to `evalbars read`, `report`, `leaderboard` or `claims`, or set `data: battles` in the "
    "config"
)


def _battle_columns(names) -> bool:
    columns = {str(c).strip().strip('"').strip() for c in names}
    return any(marks <= columns for marks in _BATTLE_MARKS)


def _battle_record(record) -> bool:
    """Whether a JSON record is a battle, or an Arena-Hard-Auto judgment (with its games)."""
    if not isinstance(record, dict):
        return False
    return _battle_columns(record) or isinstance(record.get(_JUDGMENT_MARK), list)


def _first_record(text: str):
    """The first record of JSON lines or of a JSON list (None if it is neither)."""
    stripped = text.lstrip("\ufeff").lstrip()
    if stripped.startswith("["):
        try:
            document = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError):
            return None
        return document[0] if isinstance(document, list) and document else None
    line = stripped.split("\n", 1)[0]
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None


def is_battles_file(path) -> bool:
    """Whether a file holds pairwise battles, by its content: a CSV/TSV header or a Parquet
    schema with ``model_a, model_b, winner`` (or the one-hot winner), JSON (lines, a list, gzip
    too) whose first record has them, or an Arena-Hard-Auto judgment (a record with
    ``games``). Reads the head of the file only, unless its head names a battle key.

    Examples
    --------
    >>> is_battles_file("tests/data/battles/clustered.csv")
    True
    >>> is_battles_file("tests/data/calculator_example.csv")
    False
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(_BATTLE_HEAD)
        if head[:2] == GZIP_MAGIC:
            with gzip.open(path, "rb") as fh:
                head = fh.read(_BATTLE_HEAD)
            if b'"model_a"' not in head and b'"games"' not in head:
                return False
            with gzip.open(path, "rt", encoding="utf-8-sig") as fh:
                text = fh.read() if head.lstrip()[:1] == b"[" else fh.readline()
            return _battle_record(_first_record(text))
        if head[:4] == b"PAR1":
            return _battle_columns(pq.read_schema(path).names)
    except (OSError, EOFError, pa.ArrowException):
        return False
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if start in (b"{", b"["):
        if b'"model_a"' not in head and b'"games"' not in head:
            return False
        text = (
            path.read_text(encoding="utf-8-sig", errors="replace")
            if start == b"["
            else (head.decode("utf-8-sig", errors="replace"))
        )
        return _battle_record(_first_record(text))
    if path.suffix.lower() not in TABLE_SUFFIXES:
        return False
    header = head.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").rstrip("\r")
    return _battle_columns(re.split(r"[,\t]", header))


def is_battles_source(path) -> bool:
    """Whether a path given as data holds pairwise battles: a battles file
    (:func:`is_battles_file`), or a folder whose files of the battle formats
    (:data:`evalbars.data.battles.FOLDER_PATTERNS`, not its subfolders) are all battles (an
    Arena-Hard-Auto judge's folder holds one file per model).

    Examples
    --------
    >>> is_battles_source("tests/data/battles/arena_hard/model_judgment/stand-in-judge")
    True
    >>> is_battles_source("tests/data/harness/lm_eval")
    False
    """
    path = Path(path)
    if path.is_file():
        return is_battles_file(path)
    if not path.is_dir():
        return False
    patterns = ("*.jsonl", "*.jsonl.gz", "*.json", "*.json.gz", "*.csv", "*.tsv", "*.parquet")
    files = sorted({f for pattern in patterns for f in path.glob(pattern) if f.is_file()})
    return bool(files) and all(is_battles_file(f) for f in files)


def battles_given(paths) -> bool:
    """Whether the paths given as data hold pairwise battles (all of them), not item-level
    scores (none of them); some of each is refused in one line naming one of each."""
    kinds = [is_battles_source(path) for path in paths]
    if any(kinds) and not all(kinds):
        battles = next(p for p, k in zip(paths, kinds, strict=True) if k)
        scores = next(p for p, k in zip(paths, kinds, strict=True) if not k)
        raise InputError(
            scores,
            f"holds item-level scores while {str(battles)!r} holds pairwise battles: read or "
            "report them separately",
        )
    return bool(kinds) and all(kinds)


def _battles(path: Path, named: bool):
    """A file of pairwise battles: no item-level scores (a walk passes over it)."""
    return ("battles", False) if is_battles_file(path) else None


def _recognise(path: Path) -> tuple[str | None, bool]:
    """``(format, claimed)``: the format a file is read as (None: none fits), and whether the
    file claims to be a log by its content or its name (a walk skips the others)."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
    except PermissionError as exc:
        raise _unreadable(path) from exc
    if magic == GZIP_MAGIC:
        if is_battles_file(path):
            return "battles", False
        return "gzip", _claims_gzip_log(path)
    return _recognise_content(path)


def _zip_archive(path: Path, named: bool):
    """A zip: an Inspect ``.eval`` log by its members, else MMLU-Pro's zip of one JSON file."""
    if not is_zip_archive(path):
        return None
    with open_archive(path) as archive:
        names = member_names(archive)
    if is_inspect_archive(names):
        return "inspect", True
    return "mmlu_pro", named or any(n.endswith(".json") for n in names)


def _by_corpus_name(path: Path, named: bool):
    """A SWE-bench ``results/results.json`` by its place: read, and refused when broken."""
    return ("swe_bench", True) if swe_bench.claims_swe_bench_name(path) else None


def _by_corpus_content(path: Path, named: bool):
    """The public corpora by content (first: lighteval also writes ``results_<ts>.json``, and
    details as Parquet; HELM, Every Eval Ever and SWE-bench write JSON of their own)."""
    if path.suffix.lower() == ".parquet":
        is_details = lighteval.claims_details_name(path) or lighteval.is_lighteval_details(path)
        return ("lighteval", True) if is_details else None
    if path.name.endswith(every_eval_ever.SAMPLES_SUFFIX):
        return ("every_eval_ever", True) if every_eval_ever.is_eee_samples(path) else None
    document = _peek_json(path) if path.suffix.lower() == ".json" else None
    if helm.is_helm_document(document) or helm.in_helm_run(path):
        return "helm", True
    if lighteval.is_lighteval_results(document) or lighteval.claims_results_name(path):
        return "lighteval", True
    if every_eval_ever.is_eee_aggregate(document) or every_eval_ever.beside_samples(path):
        return "every_eval_ever", True
    return ("swe_bench", True) if swe_bench.is_swe_bench_results(path, document) else None


def _by_lm_eval_name(path: Path, named: bool):
    """lm-eval's ``samples_<task>_<ts>.jsonl`` and ``results_<ts>.json``, by name."""
    return ("lm_eval", True) if is_lm_eval_name(path) else None


def _parquet_table(path: Path, named: bool):
    """A Parquet file that no corpus claimed: a long table (passed over in a folder when it
    is a labels file or a usage table: :func:`_is_labels_header`, :func:`_is_usage_header`)."""
    with open(path, "rb") as fh:
        if fh.read(4) != b"PAR1":
            return None
    try:
        columns = set(pq.read_schema(path).names)
    except (OSError, pa.ArrowException):
        return "table", True  # its reader says what is wrong with it
    return "table", named or not (_is_labels_header(columns) or _is_usage_header(columns))


def _json_document(path: Path, named: bool):
    """A JSON list of records (MMLU-Pro) or an Inspect ``.json`` log."""
    document = _peek_json(path)
    if isinstance(document, list):
        records = any(isinstance(r, dict) and "question_id" in r for r in document[:50])
        return "mmlu_pro", named or records
    return ("inspect", True) if is_inspect_log(document) else None


def _by_suffix(path: Path, named: bool):
    """What the name says, last: a CSV/TSV table (claimed when its header names a prediction
    column), or JSON that is not valid JSON (refused by its reader if the name claims it)."""
    suffix = path.suffix.lower()
    if suffix in TABLE_SUFFIXES:
        return "table", _table_has_marks(path)
    if suffix in (".json", ".zip"):
        return ("inspect" if _INSPECT_NAME.fullmatch(path.name) else "mmlu_pro"), named
    return None


#: How a file's format is recognised: each recogniser in turn, the first that answers wins.
#: The order is the registry's one rule: archives before JSON, the corpora (whose files share
#: names with lm-eval's and Parquet tables) before lm-eval and tables, names last.
RECOGNISERS = (
    _zip_archive,
    _by_corpus_name,
    _by_corpus_content,
    _by_lm_eval_name,
    _battles,
    _parquet_table,
    _json_document,
    _by_suffix,
)


def _recognise_content(path: Path) -> tuple[str | None, bool]:
    """:func:`_recognise` of a readable, uncompressed file (:data:`RECOGNISERS`)."""
    named = bool(_INSPECT_NAME.fullmatch(path.name) or _MMLU_PRO_NAME.fullmatch(path.name))
    for recognise in RECOGNISERS:
        found = recognise(path, named)
        if found is not None:
            return found
    return None, False


def _is_labels_header(columns) -> bool:
    """Whether a table's columns are a labels file's (``question_id`` and ``human``, no score
    column): the human labels of :mod:`evalbars.data.labels`, which a folder of logs may hold
    beside the logs, not predictions."""
    names = {str(c).strip().casefold() for c in columns}
    return {"question_id", "human"} <= names and not names & {"correct", "pred"}


def _is_usage_header(columns) -> bool:
    """Whether a table's columns are a usage table's (``question_id`` and token or cost
    columns, no score column): the token usage of :func:`evalbars.data.readers.usage.read_usage`,
    which a folder of logs may hold beside the logs, not predictions."""
    names = {str(c).strip().casefold() for c in columns}
    usage = {"input_tokens", "output_tokens", "cost"}
    return "question_id" in names and bool(names & usage) and not names & {"correct", "pred"}


def _table_has_marks(path: Path) -> bool:
    """Whether a CSV/TSV's header names a prediction column (question_id, correct, pred), and
    is not a labels file's (:func:`_is_labels_header`) or a usage table's
    (:func:`_is_usage_header`)."""
    with open(path, "rb") as fh:
        header = fh.readline(4096).decode("utf-8", "replace").lstrip("\ufeff")
    columns = {c.strip().strip('"').strip() for c in re.split(r"[,\t]", header)}
    side_table = _is_labels_header(columns) or _is_usage_header(columns)
    return bool(columns & _TABLE_MARKS) and not side_table


def detect_format(path) -> str:
    """The format of one file, recognised by its content (see the module docstring).

    Raises :class:`~evalbars.errors.InputError` naming the file when no format fits.
    """
    path = Path(path)
    kind, _ = _recognise(path)
    if kind == "gzip":
        raise InputError(path, _gzip_problem(path))
    if kind == "battles":
        raise InputError(path, BATTLES_HINT)
    if kind is None:
        raise InputError(
            path,
            "not a recognised prediction file (an MMLU-Pro JSON list or zip, a CSV/TSV/Parquet "
            "table, lm-eval samples and results, an Inspect .eval/.json log, a HELM run, "
            "lighteval details, Every Eval Ever samples or a SWE-bench results.json)",
        )
    return kind


@dataclass(frozen=True)
class Reader:
    """One format evalbars reads: how its files are read, as a walk found them or one given.

    Attributes
    ----------
    format : str
        Its name, the config's ``format:`` (:data:`FORMATS`).
    read : callable
        ``read(paths, options) -> list of frames``: every file of the format a walk found
        (as :attr:`found_as` keeps them), or the one file an entry names.
    found_as : callable
        What a walk keeps for a recognised file (lm-eval: the results file of a samples file).
    tasks : bool
        Whether the files hold several tasks that ``tasks:`` (``--task``) chooses among.
    """

    format: str
    read: Callable[[list, SourceOptions], list]
    found_as: Callable[[Path], Path] = lambda path: path
    tasks: bool = False


def _read_lm_eval(paths, options: SourceOptions) -> list:
    """lm-eval runs a walk found (results files), or the one file an entry names (a samples
    file reads its own task alone)."""
    if len(paths) == 1:
        return read_lm_eval_file(paths[0], options)
    return read_lm_eval_runs(paths, options)


#: Every format, in the order a folder's logs are read (the rows' order in the item table).
READERS = {
    reader.format: reader
    for reader in (
        Reader("lm_eval", _read_lm_eval, found_as=results_of, tasks=True),
        Reader(
            "inspect",
            lambda paths, options: [
                read_inspect_log(p, options) for p in _newest_inspect_logs(paths, options.runs)
            ],
        ),
        Reader("mmlu_pro", lambda paths, options: [read_mmlu_pro(p, options.model) for p in paths]),
        Reader("table", lambda paths, options: read_long_tables(paths)),
        Reader("helm", helm.read_helm_files),
        Reader("lighteval", lighteval.read_lighteval_files, tasks=True),
        Reader("every_eval_ever", every_eval_ever.read_eee_files),
        Reader("swe_bench", swe_bench.read_swe_bench_files),
    )
}
#: The config's ``format:`` values (``auto`` recognises each file by content).
FORMATS = ("auto", *READERS)
#: The formats that hold tasks ``tasks:`` chooses among.
TASK_FORMATS = tuple(kind for kind, reader in READERS.items() if reader.tasks)


def _walk(directory: Path) -> dict:
    """Every log under ``directory``, by format: ``{format: [paths]}``; lm-eval as results files."""
    found: dict = {kind: [] for kind in READERS}
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
        else:
            found[kind].append(READERS[kind].found_as(path))
    if skipped:
        what = (
            "files that are not prediction logs"
            if len(skipped) > 1
            else "file that is not a prediction log"
        )
        log.warning("%s: skipped %d %s (%s)", directory, len(skipped), what, few(skipped))
    return {kind: sorted(set(paths)) for kind, paths in found.items()}


def _newest_inspect_logs(paths, runs: str) -> list:
    """The logs to read: one per (model, task), the newest when ``runs`` is ``newest``, or
    every one when it is ``all``."""
    by_run: dict = {}
    for path in paths:
        model, task, created = log_identity(path)
        by_run.setdefault((model, task), []).append(((created, path), path.name, path))
    return sorted(p for found in choose_runs(by_run, runs, "logs").values() for p in found)


def _read_found(path: Path, found: dict, options: SourceOptions) -> list[pd.DataFrame]:
    """Raw rows of the files found under (or at) ``path``, each format by its reader."""
    if options.tasks and not any(found.get(kind) for kind in TASK_FORMATS):
        raise InputError(path, _TASKS_ONLY)
    frames = [
        frame
        for kind, reader in READERS.items()
        if found.get(kind)
        for frame in reader.read(found[kind], options)
    ]
    if options.runs == "all":  # its models may come from other such entries too, as runs
        for frame in frames:
            frame.attrs[RUNS_ALL] = True
    return frames


def _read_directory(path: Path, options: SourceOptions) -> list[pd.DataFrame]:
    """Raw rows of every log a directory holds (:func:`_walk`), each format by its reader."""
    found = _walk(path)
    if options.format != "auto":
        found = {k: v for k, v in found.items() if k == options.format}
    if not any(found.values()):
        raise InputError(path, "the directory holds no prediction file or log evalbars reads")
    return _read_found(path, found, options)


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
    if options.runs not in RUN_POLICIES:
        raise InputError(path, f"unknown runs {options.runs!r}; use one of {RUN_POLICIES}")
    try:
        if path.is_dir():
            return _read_directory(path, options)
        with open(path, "rb") as fh:
            if fh.read(2) == GZIP_MAGIC:  # whatever format was asked for
                raise InputError(path, _gzip_problem(path))
        kind = detect_format(path) if options.format == "auto" else options.format
        if options.model is not None and kind != "mmlu_pro":
            raise InputError(
                path,
                "a 'model' name is only used with MMLU-Pro-style JSON files; other formats name "
                "their models",
            )
        return _read_found(path, {kind: [path]}, options)
    except RecursionError:  # a reader's own parse of JSON nested thousands deep
        raise InputError(path, DEEP_JSON) from None


def read_predictions(path, model: str | None = None) -> pd.DataFrame:
    """One file's raw rows (a single-model file: an MMLU-Pro JSON, a table or an Inspect log)."""
    frames = read_source(path, SourceOptions(model=model))
    if len(frames) != 1:
        raise InputError(path, f"holds {len(frames)} runs; read it with read_source")
    return frames[0]
