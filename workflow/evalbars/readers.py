"""Readers of prediction files: each turns one file into raw rows, validated.

Every reader raises :class:`~evalbars.errors.InputError`, whose message names the
file, the record and the problem. Raw rows carry ``model, question_id, category,
src, answer, pred, n_options, correct, source_file, source_path, record``
(``source_file`` the file's name, ``source_path`` the path as given, for
messages); ``correct`` is null where the source has no prediction
(:mod:`evalbars.items` decides what that counts as). ``frame.attrs["skipped_entries"]``
counts entries a reader skipped.

What is fatal and what is skipped
---------------------------------
Fatal: a file that cannot be read or parsed; a JSON document that is not a list
of records; a record without ``question_id``, ``category``, ``answer`` or
``pred`` (``pred`` may be null, but the key must be there); an empty or
non-scalar question id; a ``correct`` value that is not 0/1; a question id that
occurs twice for one model; an archive member with an absolute or ``..`` path,
or larger than :data:`MAX_MEMBER_BYTES`; a file with no records or rows. Record
numbers count JSON list entries from 0 and table data rows from 1.

Skipped with a warning, and counted: entries of a JSON list that are not
records at all (upstream's DeepSeek-Coder-V2 archive carries 43 stray strings
such as ``"total"`` between its records).
"""

from __future__ import annotations

import json
import logging
import re
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from .errors import InputError, plain
from .fetch import model_from_archive

__all__ = [
    "MAX_MEMBER_BYTES",
    "DEFAULT_N_OPTIONS",
    "ZIP_SIGNATURES",
    "is_zip_archive",
    "read_json_document",
    "read_mmlu_pro",
    "read_long_table",
    "read_predictions",
]

log = logging.getLogger(__name__)

#: Largest uncompressed archive member we accept (the biggest MMLU-Pro member is ~40 MB).
MAX_MEMBER_BYTES = 512 * 1024**2
#: Options assumed when a long table gives no ``n_options`` column (MMLU-Pro's A-J).
DEFAULT_N_OPTIONS = 10


def _safe_member(zf: zipfile.ZipFile, path) -> zipfile.ZipInfo:
    """The one JSON member of an archive, refusing unsafe names and oversized members."""
    infos = [i for i in zf.infolist() if not i.is_dir()]
    for info in infos:
        member = PurePosixPath(info.filename.replace("\\", "/"))
        if member.is_absolute() or ".." in member.parts or re.match(r"^[A-Za-z]:", info.filename):
            raise InputError(path, f"archive member {info.filename!r} has an unsafe path")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                path,
                f"archive member {info.filename!r} would unpack to {info.file_size} bytes, "
                f"more than the {MAX_MEMBER_BYTES} allowed",
            )
    json_members = [
        i for i in infos if i.filename.endswith(".json") and not i.filename.startswith("__MACOSX/")
    ]
    if len(json_members) != 1:
        names = [i.filename for i in infos]
        raise InputError(path, f"expected exactly one .json member in the archive, found {names}")
    return json_members[0]


def _read_capped(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path) -> bytes:
    # The size in the directory can lie; stop decompressing past the limit either way.
    with zf.open(info) as fh:
        data = fh.read(MAX_MEMBER_BYTES + 1)
    if len(data) > MAX_MEMBER_BYTES:
        raise InputError(path, f"archive member {info.filename!r} unpacks past the size limit")
    return data


#: The first bytes of a zip archive (a local file header, or an empty archive's end record).
ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")


def is_zip_archive(path) -> bool:
    """Whether a file is a zip archive by its content (its first bytes), whatever its name."""
    with open(path, "rb") as fh:
        return fh.read(4) in ZIP_SIGNATURES


def read_json_document(path):
    """Parse a JSON file, or the single JSON member of a zip archive.

    Archives are recognised by content, not by suffix, so a truncated or corrupt
    ``.zip`` is reported as a damaged archive, never as invalid JSON.
    """
    path = Path(path)
    try:
        archive = is_zip_archive(path)
        if archive:
            raw = _read_archive(path)
        else:
            raw = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read file: {exc.strerror or exc}") from exc
    if not archive and path.suffix.lower() == ".zip":
        raise InputError(path, f"named .zip but is not a zip archive (it starts with {raw[:8]!r})")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not valid JSON: {exc}") from exc


def _read_archive(path: Path) -> bytes:
    """The JSON member of a zip archive, or an InputError saying the archive is damaged."""
    try:
        with zipfile.ZipFile(path) as zf:
            return _read_capped(zf, _safe_member(zf, path), path)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        # A download cut short loses the central directory at the end of the file (BadZipFile);
        # damage inside a member shows as a CRC or decompression error while reading it.
        raise InputError(
            path, f"the zip archive is damaged (truncated or corrupt; download it again): {exc}"
        ) from exc


def _check_question_id(value, path, record):
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        raise InputError(
            path, f"question_id must be a non-empty integer or string, got {value!r}", record
        )
    return value


def read_mmlu_pro(path, model: str | None = None) -> pd.DataFrame:
    """Read an MMLU-Pro-style prediction file (plain JSON or zipped) into raw rows.

    Parameters
    ----------
    path : path-like
        A JSON list of records with ``question_id``, ``category``, ``answer`` and
        ``pred`` (null when extraction failed); ``src`` and ``options`` are optional.
    model : str, optional
        Model name; defaults to the one in upstream's file name.

    Returns
    -------
    DataFrame
        Columns ``model, question_id, category, src, answer, pred, n_options,
        correct, source_file``, in file order; ``correct`` is null where ``pred`` is.
    """
    path = Path(path)
    model = (
        model or model_from_archive(path) or path.name.removesuffix(".zip").removesuffix(".json")
    )
    document = read_json_document(path)
    if not isinstance(document, list):
        raise InputError(
            path, f"expected a JSON list of records, got a JSON {type(document).__name__}"
        )
    if not document:
        raise InputError(path, "the JSON list holds no records")
    skipped = [i for i, rec in enumerate(document) if not isinstance(rec, dict)]
    if skipped:
        shown = ", ".join(f"{i} ({document[i]!r:.20})" for i in skipped[:5])
        log.warning(
            "%s: skipped %d entries that are not records: %s%s",
            path,
            len(skipped),
            shown,
            " ..." if len(skipped) > 5 else "",
        )
    rows = []
    for index, rec in enumerate(document):
        if not isinstance(rec, dict):
            continue
        for field in ("question_id", "category", "answer", "pred"):
            if field not in rec:
                raise InputError(path, f"missing field {field!r}", index)
        qid = _check_question_id(rec["question_id"], path, index)
        category = rec["category"]
        if not isinstance(category, str) or not category:
            raise InputError(path, f"category must be a non-empty string, got {category!r}", index)
        answer, pred = rec["answer"], rec["pred"]
        if not isinstance(answer, str) or not answer:
            raise InputError(path, f"answer must be a non-empty string, got {answer!r}", index)
        if pred is not None and not isinstance(pred, str):
            raise InputError(path, f"pred must be a string or null, got {pred!r}", index)
        options = rec.get("options")
        n_options = len(options) if isinstance(options, list) and options else DEFAULT_N_OPTIONS
        rows.append((index, qid, category, rec.get("src"), answer, pred, n_options))
    frame = pd.DataFrame(
        rows, columns=["record", "question_id", "category", "src", "answer", "pred", "n_options"]
    )
    frame["model"] = model
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    frame.attrs["skipped_entries"] = len(skipped)
    frame["correct"] = _correct_from_pred(frame["pred"], frame["answer"])
    _check_unique_questions(frame, path)
    return frame


def _correct_from_pred(pred: pd.Series, answer: pd.Series) -> pd.Series:
    norm_pred = pred.astype("string").str.strip().str.upper()
    norm_answer = answer.astype("string").str.strip().str.upper()
    correct = (norm_pred == norm_answer).astype("Int8")
    return correct.mask(pred.isna())


def _check_unique_questions(frame: pd.DataFrame, path) -> None:
    dup = frame.duplicated(["model", "question_id"], keep=False)
    if dup.any():
        first = frame.loc[dup].iloc[0]
        where = frame.index[
            dup
            & (frame["model"] == first["model"])
            & (frame["question_id"] == first["question_id"])
        ]
        records = frame.loc[where, "record"].tolist() if "record" in frame else list(where)
        raise InputError(
            path,
            f"question_id {plain(first['question_id'])!r} occurs {len(records)} times for model "
            f"{first['model']!r} (records {records})",
            plain(records[1]),
        )


_LONG_REQUIRED = ("model", "question_id")


def read_long_table(path) -> pd.DataFrame:
    """Read a long CSV/TSV/Parquet table of predictions.

    Columns: ``model``, ``question_id``, and either ``correct`` (0/1, true/false;
    empty = missing prediction) or ``pred`` and ``answer``; optional ``category``,
    ``src`` and ``n_options``. Record numbers in errors are 1-based data rows.
    """
    path = Path(path)
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
            frame = pd.read_csv(path, sep=sep, dtype={"question_id": str, "model": str})
    except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise InputError(path, f"cannot read table: {exc}") from exc
    if frame.empty:
        raise InputError(path, "the table has no rows")
    missing = [c for c in _LONG_REQUIRED if c not in frame.columns]
    has_correct = "correct" in frame.columns
    if not has_correct and not {"pred", "answer"} <= set(frame.columns):
        missing.append("correct (or pred and answer)")
    if missing:
        raise InputError(
            path, f"missing column(s): {', '.join(missing)}; found {list(frame.columns)}"
        )
    frame = frame.reset_index(drop=True)
    frame["record"] = np.arange(1, len(frame) + 1)
    for column in ("model", "question_id"):
        bad = frame[column].isna() | (frame[column].astype("string").str.strip() == "")
        if bad.any():
            raise InputError(path, f"empty {column}", int(frame.loc[bad, "record"].iloc[0]))
    frame["model"] = frame["model"].astype(str)
    frame["question_id"] = _normalise_ids(frame["question_id"])
    for column in ("category", "src", "pred", "answer"):
        if column not in frame.columns:
            frame[column] = None
    if "n_options" not in frame.columns:
        frame["n_options"] = DEFAULT_N_OPTIONS
    if has_correct:
        # An explicit correct column wins; pred and answer, if given too, are kept as they are.
        frame["correct"] = _parse_correct(frame, path)
    else:
        frame["correct"] = _correct_from_pred(frame["pred"], frame["answer"])
    # A missing prediction is a null correct value; keep pred null there too.
    frame.loc[frame["correct"].isna(), "pred"] = None
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    frame.attrs["skipped_entries"] = 0
    _check_unique_questions(frame, path)
    return frame


def _parse_correct(frame: pd.DataFrame, path) -> pd.Series:
    mapping = {"1": 1, "0": 0, "1.0": 1, "0.0": 0, "true": 1, "false": 0}
    raw = frame["correct"]
    text = raw.astype("string").str.strip().str.lower()
    parsed = text.map(mapping)
    bad = raw.notna() & (text != "") & parsed.isna()
    if bad.any():
        i = bad.to_numpy().nonzero()[0][0]
        raise InputError(
            path,
            f"correct must be 0/1 or true/false, got {plain(raw.iloc[i])!r}",
            int(frame["record"].iloc[i]),
        )
    return parsed.astype("Int8")


def _normalise_ids(ids: pd.Series) -> pd.Series:
    """Integer ids where every id is a plain integer (MMLU-Pro), strings otherwise.

    An id with a leading zero keeps every id a string, so "007" and "7" stay different.
    """
    text = ids.astype("string").str.strip()
    if text.str.fullmatch(r"-?(0|[1-9]\d*)").all():
        return text.astype("int64")
    return text.astype(object)


def read_predictions(path, model: str | None = None) -> pd.DataFrame:
    """Read any supported prediction file, choosing the reader by its suffix."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file does not exist")
    suffix = path.suffix.lower()
    if suffix in (".json", ".zip"):
        return read_mmlu_pro(path, model)
    if suffix in (".csv", ".tsv", ".tab", ".parquet", ".pq"):
        if model is not None:
            raise InputError(
                path,
                "a 'model' name is only used with JSON files; long tables carry a model column",
            )
        return read_long_table(path)
    raise InputError(
        path, f"unsupported file type {suffix!r} (use .json, .zip, .csv, .tsv or .parquet)"
    )
