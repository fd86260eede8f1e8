"""Reading prediction files into the canonical item table, reshaping it, and writing tables.

The canonical item table has one row per (model, question) and the columns
:data:`ITEM_COLUMNS`. Every reader validates its input and raises
:class:`InputError`, whose message names the file, the record and the problem.

What is fatal and what is skipped
---------------------------------
Fatal (:class:`InputError`): a file that cannot be read or parsed; a JSON
document that is not a list of records; a record without ``question_id``,
``category``, ``answer`` or ``pred`` (``pred`` may be null, but the key must be
there); an empty or non-scalar question id; a ``correct`` value that is not
0/1; a question id that occurs twice for one model; a question whose category
differs between models or files; a model that appears in two sources; an archive
member with an absolute or ``..`` path, or larger than :data:`MAX_MEMBER_BYTES`.

Also fatal: a file with no records or rows; a model that the ``exclude`` policy
leaves with no question. Record numbers count JSON list entries from 0 and
table data rows from 1.

Filled with a warning: a question that no source gives a category is put in
the category ``uncategorised``.

Skipped with a warning, and counted: entries of a JSON list that are not
records at all (upstream's DeepSeek-Coder-V2 archive carries 43 stray strings
such as ``"total"`` between its records).

Kept and counted, never dropped silently: predictions that could not be
extracted (``pred`` null). What they count as is the ``missing_prediction``
policy: ``wrong``, ``random_guess`` or ``exclude``.

:func:`write_columns` writes a tidy table held as columns (what the simulation
studies return) to CSV without pandas.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from ._lazy import load
from .errors import ConfigError, InputError

# pandas loads on first use (see evalbars._lazy): numpy-only jobs skip it.
pd = load("pandas")

__all__ = [
    "ITEM_COLUMNS",
    "MISSING_POLICIES",
    "MAX_MEMBER_BYTES",
    "InputError",
    "archive_name",
    "model_from_archive",
    "read_json_document",
    "read_mmlu_pro",
    "read_long_table",
    "read_predictions",
    "apply_missing_policy",
    "build_item_table",
    "missing_prediction_counts",
    "WideScores",
    "wide_scores",
    "question_order",
    "write_columns",
]

log = logging.getLogger(__name__)

#: Columns of the canonical item table. ``n_options`` (how many answer options the question
#: has) is kept so that missing predictions can be re-scored as random guesses later.
ITEM_COLUMNS = [
    "model",
    "question_id",
    "category",
    "src",
    "answer",
    "pred",
    "correct",
    "source_file",
    "n_options",
]
MISSING_POLICIES = ("wrong", "random_guess", "exclude")
#: Largest uncompressed archive member we accept (the biggest MMLU-Pro member is ~40 MB).
MAX_MEMBER_BYTES = 512 * 1024**2
#: Options assumed when a long table gives no ``n_options`` column (MMLU-Pro's A-J).
DEFAULT_N_OPTIONS = 10

_ARCHIVE_RE = re.compile(r"^model_outputs_(?P<model>.+)_5shots\.(zip|json)$")


def archive_name(model: str) -> str:
    """Upstream's archive file name for ``model``, e.g. ``model_outputs_Yi-6B_5shots.zip``."""
    return f"model_outputs_{model}_5shots.zip"


def model_from_archive(path) -> str:
    """Model name from an upstream archive name; the file stem for any other name."""
    name = Path(path).name
    match = _ARCHIVE_RE.match(name)
    if match:
        return match["model"]
    return Path(name).stem.removesuffix(".json")


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


def read_json_document(path):
    """Parse a ``.json`` file, or the single JSON member of a ``.zip`` archive."""
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                raw = _read_capped(zf, _safe_member(zf, path), path)
        else:
            raw = path.read_bytes()
    except (OSError, zipfile.BadZipFile) as exc:
        raise InputError(path, f"cannot read file: {exc}") from exc
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not valid JSON: {exc}") from exc


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
    model = model or model_from_archive(path)
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
    frame["correct"] = _correct_from_pred(frame["pred"], frame["answer"])
    _check_unique_questions(frame, path)
    return frame


def _correct_from_pred(pred: pd.Series, answer: pd.Series) -> pd.Series:
    norm_pred = pred.astype("string").str.strip().str.upper()
    norm_answer = answer.astype("string").str.strip().str.upper()
    correct = (norm_pred == norm_answer).astype("Int8")
    return correct.mask(pred.isna())


def _plain(value):
    """A numpy scalar as the Python value it holds, so messages read ``1`` not ``np.int64(1)``."""
    return value.item() if isinstance(value, np.generic) else value


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
            f"question_id {_plain(first['question_id'])!r} occurs {len(records)} times for model "
            f"{first['model']!r} (records {records})",
            _plain(records[1]),
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
            f"correct must be 0/1 or true/false, got {_plain(raw.iloc[i])!r}",
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


def apply_missing_policy(frame: pd.DataFrame, policy: str, seed: int) -> pd.DataFrame:
    """Score rows whose prediction is missing, according to ``policy``.

    ``wrong`` scores them 0 (upstream's per-category summaries do this);
    ``exclude`` drops them, so the question drops out of the shared set;
    ``random_guess`` draws a uniform guess among the question's ``n_options``
    options, independently per (model, question), from a generator seeded by
    ``seed`` over the rows sorted by model and question. (Upstream's
    ``compute_accuracy.py`` reseeds inside its loop, so every failed extraction
    gets the same letter; we do not copy that.)
    """
    if policy not in MISSING_POLICIES:
        raise ValueError(f"missing_prediction must be one of {MISSING_POLICIES}, got {policy!r}")
    frame = frame.sort_values(["model", "question_id"], kind="stable").reset_index(drop=True)
    missing = frame["correct"].isna().to_numpy()
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
    correct = frame["correct"].astype("Int8")
    if policy == "wrong":
        correct = correct.fillna(0)
    else:
        rng = np.random.default_rng(seed)
        n_options = frame.loc[missing, "n_options"].to_numpy(dtype=float)
        # A guess is right with probability 1/n_options; draw all guesses at once.
        guesses_right = rng.random(int(missing.sum())) * n_options < 1.0
        correct = correct.copy()
        correct[missing] = guesses_right.astype("int8")
    frame["correct"] = correct.astype("int8")
    return frame


def _check_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """Fill categories a long table left empty from other sources; refuse conflicts."""
    known = frame.dropna(subset=["category"])
    per_question = known.groupby("question_id")["category"].nunique()
    conflicts = per_question[per_question > 1]
    if len(conflicts):
        qid = _plain(conflicts.index[0])
        rows = known.loc[
            known["question_id"] == qid, ["model", "category", "source_file", "record"]
        ]
        first = rows.drop_duplicates("category").iloc[:2]
        a, b = first.iloc[0], first.iloc[1]
        raise InputError(
            b["source_file"],
            f"question {qid!r} has category {b['category']!r} for model {b['model']!r} but "
            f"{a['category']!r} for model {a['model']!r} ({a['source_file']}); "
            f"{len(conflicts)} question(s) conflict in all",
            int(b["record"]),
        )
    lookup = known.drop_duplicates("question_id").set_index("question_id")["category"]
    filled = frame["category"].fillna(frame["question_id"].map(lookup))
    if filled.isna().any():
        log.warning(
            "%d rows have no category in any source; they are put in the category 'uncategorised'",
            int(filled.isna().sum()),
        )
        filled = filled.fillna("uncategorised")
    frame["category"] = filled.astype(str)
    return frame


def build_item_table(frames, policy: str = "wrong", seed: int = 0) -> pd.DataFrame:
    """Concatenate raw prediction frames into the canonical item table.

    Checks that no model comes from two files and that every question has one
    category across models, then applies the missing-prediction policy.

    Returns
    -------
    DataFrame
        :data:`ITEM_COLUMNS`, sorted by model and question id.
    """
    frames = list(frames)
    if not frames:
        raise ValueError("no prediction sources were given")
    seen: dict[str, str] = {}
    for frame in frames:
        for model in frame["model"].unique():
            source = frame["source_file"].iloc[0]
            if model in seen:
                raise InputError(
                    source,
                    f"model {model!r} also comes from {seen[model]}; each model needs one source",
                )
            seen[model] = source
    ids_are_int = [pd.api.types.is_integer_dtype(f["question_id"]) for f in frames]
    combined = pd.concat(frames, ignore_index=True)
    if not all(ids_are_int):
        combined["question_id"] = combined["question_id"].astype(str)
    combined = _check_categories(combined)
    scored = apply_missing_policy(combined, policy, seed)
    lost = sorted(set(combined["model"]) - set(scored["model"]))
    if lost:
        sources = ", ".join(f"{m} ({seen[m]})" for m in lost)
        raise ConfigError(
            f"missing_prediction=exclude leaves no scored question for model(s) {sources}: "
            "none of their answers could be extracted; use `wrong` or `random_guess`, or drop them"
        )
    items = scored[ITEM_COLUMNS].copy()
    items["src"] = items["src"].astype("string")
    items["pred"] = items["pred"].astype("string")
    items["answer"] = items["answer"].astype("string")
    items["n_options"] = items["n_options"].astype("int16")
    return items.reset_index(drop=True)


def missing_prediction_counts(raw_frames) -> pd.DataFrame:
    """Per model: questions read, predictions missing, and their share."""
    rows = [
        (model, len(group), int(group["correct"].isna().sum()), group["source_file"].iloc[0])
        for frame in raw_frames
        for model, group in frame.groupby("model", sort=False)
    ]
    table = pd.DataFrame(rows, columns=["model", "questions", "missing_predictions", "source_file"])
    table["missing_share"] = table["missing_predictions"] / table["questions"]
    return table.sort_values("model").reset_index(drop=True)


@dataclass(frozen=True)
class WideScores:
    """Scores as a question-by-model matrix.

    Attributes
    ----------
    scores : ndarray, shape (n_questions, n_models)
        0/1 (or continuous) scores; NaN where a model has no score for a question.
    models : list of str
        Column labels, in the order given to :func:`wide_scores`.
    question_ids : ndarray
        Row labels, sorted by category then question id.
    categories : ndarray of str
        Category of each row.
    """

    scores: np.ndarray
    models: list
    question_ids: np.ndarray
    categories: np.ndarray

    @property
    def complete(self) -> bool:
        """True when every model has a score for every question."""
        return bool(np.isfinite(self.scores).all())

    @property
    def category_codes(self) -> np.ndarray:
        """Integer code of each row's category (codes follow sorted category names)."""
        return np.unique(self.categories, return_inverse=True)[1]


def question_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Sort a frame with ``category`` and ``question_id`` columns into the canonical order."""
    return frame.sort_values(["category", "question_id"], kind="stable")


def wide_scores(items: pd.DataFrame, models=None) -> WideScores:
    """Pivot the long item table into a :class:`WideScores` matrix.

    ``models`` fixes the column order (default: sorted model names).
    """
    models = list(models) if models is not None else sorted(items["model"].unique())
    unknown = set(models) - set(items["model"].unique())
    if unknown:
        raise ValueError(f"models not in the item table: {sorted(unknown)}")
    subset = items[items["model"].isin(models)]
    questions = question_order(subset[["question_id", "category"]].drop_duplicates("question_id"))
    matrix = subset.pivot(index="question_id", columns="model", values="correct")
    matrix = matrix.reindex(index=questions["question_id"].to_numpy(), columns=models)
    return WideScores(
        scores=matrix.to_numpy(dtype=float),
        models=models,
        question_ids=questions["question_id"].to_numpy(),
        categories=questions["category"].to_numpy().astype(str),
    )


def write_columns(columns: dict, path) -> None:
    """Write a tidy table given as columns ``{name: values}`` to CSV, without pandas.

    The file reads back with :func:`pandas.read_csv` as ``pandas.DataFrame(columns)``
    would: a header row, then one row per index; floats in shortest round-trip
    form (so values survive exactly), NaN as an empty field, fields quoted only
    where needed. Simulation jobs use it so that they never import pandas.

    Raises :class:`ValueError` when the columns differ in length.
    """
    names = list(columns)
    arrays = [np.asarray(columns[name]) for name in names]
    lengths = {array.shape for array in arrays}
    if len(lengths) != 1 or len(next(iter(lengths))) != 1:
        shapes = ", ".join(f"{n}: {a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"columns must be 1-D and of equal length, got {shapes}")
    values = []
    for array in arrays:
        if array.dtype.kind == "f" and np.isnan(array).any():
            # An empty field is what pandas writes for NaN and reads back as NaN.
            blanked = array.astype(object)
            blanked[np.isnan(array)] = ""
            values.append(blanked.tolist())
        else:
            values.append(array.tolist())
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(names)
        writer.writerows(zip(*values))
