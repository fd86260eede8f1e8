"""Long tables of predictions: CSV, TSV or Parquet, one row per (model, question[, run][, epoch]).

Columns: ``model``, ``question_id``, and either ``correct`` (the score: 0/1,
true/false, or a fraction in [0, 1] for partial credit; empty or NaN = a missing
prediction) or ``pred`` and ``answer``; optional ``category``, ``epoch`` or ``sample``
(positive integers numbering repeated samples of a question; one of the two), ``run`` (a
label of each invocation of the harness: a seed, a date; text, never empty), ``src``,
``n_options`` and ``human``
(a person's label in [0, 1] where ``correct`` is a judge's score; empty where nobody
labelled the row: :mod:`evalbars.data.labels`). Record numbers in errors are 1-based
data rows. The item tables the workflow writes
(``data/items.parquet``) read back as such tables.
"""

from __future__ import annotations

import codecs
import csv
import logging
import re
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pyarrow as pa

from evalbars.data.readers.common import (
    LABEL_COLUMN,
    SPELLINGS,
    blank_cells,
    check_spellings,
    finish_frame,
)
from evalbars.data.readers.mmlu_pro import correct_from_pred
from evalbars.errors import InputError, plain

__all__ = [
    "read_long_table",
    "read_long_tables",
    "hive_partitions",
    "load_table",
    "parse_score",
    "label_values",
    "normalise_ids",
    "TABLE_SUFFIXES",
]

#: Suffixes read as tables; Parquet is also recognised by its content.
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".parquet", ".pq")
_REQUIRED = ("model", "question_id")
#: Columns read as text, whatever they hold (ids such as 001 keep their zeros).
_TEXT = ("model", "question_id", "run", "category", "src", "pred", "answer")
_TRUTH = {"true": 1.0, "false": 0.0}
log = logging.getLogger(__name__)


def _is_parquet(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == b"PAR1"


def _check_header(path: Path, sep: str) -> None:
    """Refuse a text table whose header names a column twice (pandas would read the second as
    ``correct.1`` and drop it without a word)."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = next(csv.reader([fh.readline()], delimiter=sep), [])
    names = [name.strip() for name in header]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(path, f"the header names column {repeated[0]!r} twice")


def _last_row_cut_short(path: Path, sep: str, columns: int) -> bool:
    """Whether a text table ends mid-row: no line end after its last row, and fewer fields
    there than the header names (pandas would read the missing fields as empty cells)."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - 65536))
        tail = fh.read()
    if not tail or tail.endswith((b"\n", b"\r")):
        return False
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", "replace")
    fields = next(csv.reader([last], delimiter=sep), [])
    return len(fields) < columns


def load_table(path, known=None) -> pd.DataFrame:
    """A CSV, TSV or Parquet table as written, checked, with a 1-based ``record`` per data row.

    Text tables are refused, in one line naming the file (and the line where it helps), when
    they are not UTF-8, are ``;``-separated, name a column twice or end mid-row. Text cells are
    read as written (only an empty cell is missing); column names of ``known`` (default: a
    long table's) written in another case or with spaces read as the known ones.
    """
    path = Path(path)
    parquet = _is_parquet(path)
    sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    if not parquet:
        _check_text_table(path, sep)
    try:
        if parquet:
            frame = pd.read_parquet(path)
            # Arrow's allocator keeps the pages it decoded into; give them back before the
            # checks below (a third of the peak on a board of a hundred million rows).
            pa.default_memory_pool().release_unused()
        else:
            # Text is read as written: a model, category or id named NA, None, null or N/A is a
            # name; only an empty cell is missing (pandas' default reads those words as NaN).
            frame = pd.read_csv(
                path,
                sep=sep,
                dtype=dict.fromkeys(_TEXT, str),
                keep_default_na=False,
                na_values=[""],
            )
    except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file for the user
        raise InputError(path, f"cannot read table: {exc}") from exc
    frame = _known_columns_by_case(frame, _KNOWN if known is None else known)
    if frame.empty:
        raise InputError(path, "the table has no rows")
    if not parquet:
        _check_text_shape(path, sep, frame)
    frame = frame.reset_index(drop=True)
    # int32 while it fits: a record number per row of a 94-million-row board is 380 MB as int64.
    frame["record"] = np.arange(
        1, len(frame) + 1, dtype=np.int32 if len(frame) < 2**31 else np.int64
    )
    if not parquet:
        frame = _skip_blank_rows(frame, path)
    return frame


def _skip_blank_rows(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``frame`` without its wholly blank rows (every field empty or whitespace: the ``,,,,``
    rows a spreadsheet's CSV export adds below the data), said in one warning line naming the
    file; the other rows keep their record numbers. A row with some field given is kept (and
    judged by the checks that follow)."""
    columns = [column for column in frame.columns if column != "record"]
    # Rows whose first field is blank, then those whose every other field is too: a table
    # without blank rows costs one look at one column.
    rows = np.flatnonzero(blank_cells(frame[columns[0]]))
    for column in columns[1:]:
        if not len(rows):
            break
        rows = rows[blank_cells(frame[column].iloc[rows])]
    if not len(rows):
        return frame
    records = frame["record"].to_numpy()[rows]
    if len(rows) == 1:
        which = f"record {records[0]}"
    elif records[-1] - records[0] == len(rows) - 1:
        which = f"records {records[0]} to {records[-1]}"
    else:
        which = f"records {records[0]}, {records[1]}{', ...' if len(rows) > 2 else ''}"
    log.warning(
        "%s: skipped %d wholly blank row%s (%s: nothing in any field)",
        path,
        len(rows),
        "" if len(rows) == 1 else "s",
        which,
    )
    kept = frame.drop(index=rows).reset_index(drop=True)
    if kept.empty:
        raise InputError(path, f"the table has no rows (its {len(rows)} rows are all blank)")
    return kept


def read_long_table(path) -> pd.DataFrame:
    """Read a long table of predictions into raw rows (see the module docstring).

    A table in a hive-partitioned folder (``model=alpha/part-0.parquet``) takes each
    ``key=value`` folder above it as a column (:func:`hive_partitions`).
    """
    path = Path(path)
    frame = load_table(path)
    frame = _with_partitions(frame, path)
    _check_columns(frame, path)
    # An item table the workflow wrote names the files it was built from; read back, its rows
    # come from this table, which is what messages must name.
    frame = frame.drop(columns=["source_file", "source_path"], errors="ignore")
    for column in ("model", "question_id"):
        bad = blank_cells(frame[column])
        if bad.any():
            raise InputError(path, f"empty {column}", int(frame["record"].iloc[bad.argmax()]))
    ids = normalise_ids(frame["question_id"])
    if ids.dtype != frame["question_id"].dtype:  # (setting an unchanged column would copy it)
        frame["question_id"] = ids
    frame = _samples_and_runs(frame, path)
    if "correct" in frame.columns:
        # An explicit correct column wins; pred and answer, if given too, are kept as they are,
        # once checked against it.
        frame["correct"] = parse_score(frame, "correct", path)
        if {"pred", "answer"} <= set(frame.columns):
            _check_correct_against_pred(frame, path)
    else:
        frame["correct"] = correct_from_pred(frame["pred"], frame["answer"]).astype("Float64")
    if LABEL_COLUMN in frame.columns:
        frame[LABEL_COLUMN] = label_values(frame, path)
    # A missing prediction is a null correct value; keep pred null there too.
    missing = frame["correct"].isna()
    if missing.any() and "pred" in frame.columns:
        frame.loc[missing, "pred"] = None
    return finish_frame(frame, path, missing_means="correct empty or NaN (no score)")


#: A hive partition folder's name: ``key=value``, the key a column name, the value
#: percent-encoded (pyarrow and Spark write ``model=openai%2Fgpt-4o`` for ``openai/gpt-4o``).
_PARTITION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)")
#: The value hive writers give a key that is null.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def hive_partitions(path) -> list[tuple[str, str | None]]:
    """The ``key=value`` folders directly above a table, outermost first, as
    ``(key, value)``: the columns a hive-partitioned dataset keeps in its folder names.

    Values are percent-decoded, :data:`HIVE_NULL` is None, and a key written in another case
    than a known column (``Model=alpha``) is that column. A key named twice is refused.

    Examples
    --------
    >>> hive_partitions("preds/model=openai%2Fgpt-4o/category=law/part-0.parquet")
    [('model', 'openai/gpt-4o'), ('category', 'law')]
    >>> hive_partitions("results/table.csv")
    []
    """
    path = Path(path)
    found = []
    for folder in path.parents:  # innermost first
        matched = _PARTITION.fullmatch(folder.name)
        if matched is None:
            break
        key, value = matched.groups()
        key = key.casefold() if key.casefold() in _KNOWN else key
        found.append((key, None if value == HIVE_NULL else unquote(value)))
    found.reverse()
    keys = [key for key, _ in found]
    repeated = next((key for key in keys if keys.count(key) > 1), None)
    if repeated is not None:
        folders = "/".join(path.parts[-len(found) - 1 : -1])
        raise InputError(
            path,
            f"its folders name the partition key {repeated!r} twice ({folders}); a "
            "hive-partitioned folder names each key once",
        )
    return found


def _with_partitions(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``frame`` with its hive partition keys as columns; a column the file holds too must
    hold the folder's value on every row (else refused, naming the first row that does not)."""
    for key, value in hive_partitions(path):
        if key not in frame.columns:
            frame[key] = pd.Series([value] * len(frame), dtype=object if value is None else "str")
            continue
        given = frame[key]
        blank = blank_cells(given)
        if value is None:
            differs = ~blank
        else:
            differs = blank | (given.astype(str).str.strip() != value).to_numpy(dtype=bool)
        if differs.any():
            i = int(differs.argmax())
            raise InputError(
                path,
                f"column {key!r} holds {plain(given.iloc[i])!r} but the folder "
                f"{key}={value if value is not None else HIVE_NULL} says {value!r}: the "
                "partitions are inconsistent",
                int(frame["record"].iloc[i]),
            )
    return frame


def read_long_tables(paths) -> list[pd.DataFrame]:
    """Raw rows of long tables, one frame per table (:func:`read_long_table`), except that the
    files of one hive-partitioned folder (every file under ``key=value`` folders below one
    root) are one frame, as pyarrow reads them as one dataset: a partition may be split
    into several files (``part-0.parquet``, ``part-1.parquet``), and a model may span them.

    Every file of a partitioned folder must sit under the same keys, in the same order; else
    the first that does not is refused. Its rows' ``source_file`` is the file's path below the
    root (``model=alpha/part-0.parquet``); their record numbers are the file's own.
    """
    order: list = []  # a table's path, or a partitioned folder's root, in reading order
    datasets: dict = {}
    for path in map(Path, paths):
        keys = hive_partitions(path)
        if not keys:
            order.append(path)
            continue
        root = path.parents[len(keys)]
        if root not in datasets:
            order.append(root)
        datasets.setdefault(root, []).append((path, [key for key, _ in keys]))
    return [
        _read_partitioned(item, datasets[item]) if item in datasets else read_long_table(item)
        for item in order
    ]


def _read_partitioned(root: Path, files: list) -> pd.DataFrame:
    """The files of one hive-partitioned folder as one frame (:func:`read_long_tables`)."""
    first_path, first_keys = files[0]
    parts = []
    for path, keys in files:
        if keys != first_keys:
            raise InputError(
                path,
                f"is partitioned by {'/'.join(keys)} but {first_path.relative_to(root)} by "
                f"{'/'.join(first_keys)}: the partitions are inconsistent (every file of a "
                "hive-partitioned folder sits under the same keys, in the same order)",
            )
        part = read_long_table(path)
        part["source_file"] = str(path.relative_to(root))
        parts.append(part)
    spellings = check_spellings(parts)
    combined = finish_frame(
        pd.concat(parts, ignore_index=True), root, missing_means=parts[0].attrs["missing_means"]
    )
    if spellings:
        combined.attrs[SPELLINGS] = {"model": spellings}
    return combined


#: Every column name a long table may use (others are kept and ignored).
_KNOWN = {
    "model",
    "question_id",
    "correct",
    "pred",
    "answer",
    "category",
    "epoch",
    "sample",
    "run",
    "src",
    "n_options",
    LABEL_COLUMN,
}


def _check_text_table(path: Path, sep: str) -> None:
    """Refuse, with the remedy, what spreadsheets export as CSV but is not: text that is not
    UTF-8 (Latin-1, Windows-1252), naming the record, and a ``;``-separated file (the export
    of a locale that writes decimal commas)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    header, lines, offset = None, 1, 0
    with open(path, "rb") as fh:
        # a megabyte at a time: the file is never held whole as text beside the table
        while chunk := fh.read(1 << 20):
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                line = lines + chunk[: exc.start].count(b"\n")
                raise InputError(
                    path,
                    f"is not UTF-8 text (byte {chunk[exc.start]:#04x} at byte {offset + exc.start:,}"
                    f", line {line}, as Latin-1 or Windows-1252 write it): save the file as UTF-8 "
                    "(in a spreadsheet, CSV UTF-8)",
                    line - 1 if line > 1 else None,
                ) from None
            header = header if header is not None else text.lstrip("\ufeff").split("\n", 1)[0]
            lines += chunk.count(b"\n")
            offset += len(chunk)
    header = header or ""
    if sep == "," and ";" in header and "," not in header:
        raise InputError(
            path,
            "is ;-separated (a spreadsheet's CSV where commas are decimal marks); save it with "
            'commas as separators and points as decimal marks, e.g. python -c "import pandas as '
            f"pd; pd.read_csv('{path}', sep=';', decimal=',').to_csv('{path.stem}-comma.csv', "
            'index=False)"',
        )


def _check_text_shape(path: Path, sep: str, frame: pd.DataFrame) -> None:
    """Refuse a text table whose header names a column twice, or whose last row is cut short."""
    _check_header(path, sep)
    if _last_row_cut_short(path, sep, len(frame.columns)):
        raise InputError(
            path,
            "the last row has fewer fields than the header and no line end: the file looks cut "
            "short (was it still being written?)",
            len(frame),
        )


def _known_columns_by_case(frame: pd.DataFrame, known) -> pd.DataFrame:
    """Column names as a spreadsheet may write them (``Model``, ``Question_ID``, `` correct``)
    read as the known ones, when that names no column twice."""
    renamed = {
        column: column.strip().casefold()
        for column in frame.columns
        if isinstance(column, str)
        and column not in known
        and column.strip().casefold() in known
        and column.strip().casefold() not in frame.columns
    }
    if len(set(renamed.values())) < len(renamed):
        return frame  # two spellings of one column: _check_header names the repeat
    return frame.rename(columns=renamed) if renamed else frame


def _check_columns(frame: pd.DataFrame, path) -> None:
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if "correct" not in frame.columns and not {"pred", "answer"} <= set(frame.columns):
        missing.append("correct (or pred and answer)")
    if missing and LABEL_COLUMN in frame.columns and "question_id" in frame.columns:
        raise InputError(
            path,
            "holds human labels (question_id, human) but no scores: it is a labels file; "
            "pass it with --labels (config key labels:) beside the predictions it labels",
        )
    if missing:
        raise InputError(
            path, f"missing column(s): {', '.join(missing)}; found {list(frame.columns)}"
        )


def parse_score(
    frame: pd.DataFrame, column: str, path
) -> pd.api.extensions.ExtensionArray | np.ndarray:
    """The scores of ``column`` in [0, 1] (true/false as 1/0); null for empty and NaN cells.

    Numbers and booleans are taken as they are; text is parsed once per distinct value. A
    value outside [0, 1], or text that is not a number, is refused naming its record.
    """
    raw = frame[column]
    if (pd.api.types.is_integer_dtype(raw) or pd.api.types.is_bool_dtype(raw)) and not (
        isinstance(raw.dtype, pd.api.extensions.ExtensionDtype) and raw.hasnans
    ):
        # 0/1 integers or booleans with no gap (a board's usual column): checked without a
        # float copy of every row, kept as int8 (a float and a mask per row cost 9 bytes).
        values = raw.to_numpy()
        bad = (values < 0) | (values > 1)
        if bad.any():
            i = int(bad.argmax())
            raise InputError(
                path,
                f"{column} must be a score in [0, 1] (0/1, true/false or a fraction), "
                f"got {plain(raw.iloc[i])!r}",
                int(frame["record"].iloc[i]),
            )
        return values.astype(np.int8, copy=False)
    if pd.api.types.is_numeric_dtype(raw) or pd.api.types.is_bool_dtype(raw):
        parsed = raw.to_numpy(dtype=float, na_value=np.nan)
        given = ~np.isnan(parsed)
    else:
        codes, uniques = pd.factorize(raw)
        text = pd.Series(np.asarray(uniques, dtype=object)).astype("str").str.strip().str.lower()
        values = pd.to_numeric(text.replace(_TRUTH), errors="coerce").to_numpy(dtype=float)
        known = ((text != "") & (text != "nan")).to_numpy()
        # Code -1 (a null cell) picks the appended NaN / False.
        parsed = np.append(values, np.nan)[codes]
        given = np.append(known, False)[codes]
    with np.errstate(invalid="ignore"):
        bad = given & ~((parsed >= 0) & (parsed <= 1))
    if bad.any():
        i = int(bad.argmax())
        raise InputError(
            path,
            f"{column} must be a score in [0, 1] (0/1, true/false or a fraction), "
            f"got {plain(raw.iloc[i])!r}",
            int(frame["record"].iloc[i]),
        )
    return pd.arrays.FloatingArray(np.where(given, parsed, 0.0), ~given)


def _check_correct_against_pred(frame: pd.DataFrame, path) -> None:
    """Check a ``correct`` column against the ``pred`` and ``answer`` beside it.

    ``correct`` is the score: it is the grader's verdict, and a grader may accept more than
    exact matching does (``'(B)'`` for ``B``, ``'18.0'`` for ``18``, an answer inside a
    sentence). Judged on the rows with a 0/1 ``correct``, a ``pred`` and an ``answer``:

    - a row marked wrong (0) whose ``pred`` is its ``answer`` character for character
      (surrounding spaces aside) is refused (:class:`~evalbars.errors.InputError` naming
      the first such record and how many there are): no grader marks the answer itself
      wrong, so the column does not score these predictions (shifted or stale);
    - any other disagreement with exact matching (case and surrounding spaces ignored,
      as :func:`~evalbars.data.readers.mmlu_pro.correct_from_pred` scores a table without
      ``correct``) is a warning naming the first record and the count; ``correct`` is kept.
    """
    scores = frame["correct"].to_numpy(dtype=float, na_value=np.nan)
    pred, answer = frame["pred"], frame["answer"]
    rows = np.flatnonzero((np.isin(scores, (0.0, 1.0)) & pred.notna() & answer.notna()).to_numpy())
    if not len(rows):
        return
    # Text is compared once per distinct value: codes into one vocabulary of stripped strings
    # (and one of their upper case) for both columns.
    pred_codes, pred_values = pred.iloc[rows].factorize()
    answer_codes, answer_values = answer.iloc[rows].factorize()
    text = pd.Index(
        np.concatenate([_as_text(pred_values), _as_text(answer_values)]), dtype="str"
    ).str.strip()
    split = len(pred_values)

    def matches(vocabulary) -> np.ndarray:
        codes = pd.factorize(vocabulary)[0]
        return codes[:split][pred_codes] == codes[split:][answer_codes]

    same, loose = matches(text), matches(text.str.upper())
    score = scores[rows]
    contradicted = same & (score == 0)
    if contradicted.any():
        i = int(contradicted.argmax())
        given, gold = text[pred_codes[i]], text[split + answer_codes[i]]
        raise InputError(
            path,
            f"correct is 0 but pred {given!r} equals the answer {gold!r}: "
            f"{int(contradicted.sum())} "
            f"of {len(rows)} records with correct, pred and answer are marked wrong while their "
            "prediction is the answer, so the correct column does not score these predictions "
            "(shifted or stale?); fix it, or drop pred and answer to score by correct alone",
            int(frame["record"].iloc[rows[i]]),
        )
    differs = loose != (score == 1)
    if differs.any():
        i = int(differs.argmax())
        log.warning(
            "%s: correct disagrees with matching pred to answer on %d of %d records (first: "
            "record %d, pred %r, answer %r, correct %g); correct is the score (a grader may "
            "accept more than exact matching): check the column if it should not",
            path,
            int(differs.sum()),
            len(rows),
            int(frame["record"].iloc[rows[i]]),
            text[pred_codes[i]],
            text[split + answer_codes[i]],
            score[i],
        )


def _as_text(values) -> np.ndarray:
    """Distinct cell values as text; whole numbers in a float column (a numeric column with
    empty cells) as integers, so that a pred of 18.0 reads as the answer 18 does."""
    values = np.asarray(values)
    if values.dtype.kind == "f" and np.all(values == np.round(values)):
        values = values.astype(np.int64)
    return np.asarray(pd.Index(values).astype("str"), dtype=object)


def _samples_and_runs(frame: pd.DataFrame, path) -> pd.DataFrame:
    """The ``epoch`` (or ``sample``: the same) and ``run`` columns of a table, checked: epochs
    positive whole numbers, runs never empty."""
    if "sample" in frame.columns:
        if "epoch" in frame.columns:
            raise InputError(
                path, "the table has both epoch and sample columns; they mean the same, keep one"
            )
        frame = frame.rename(columns={"sample": "epoch"})
        frame.attrs["epoch_column"] = "sample"
    if "epoch" in frame.columns:
        frame["epoch"] = _parse_epochs(frame, path)
    if "run" in frame.columns:
        bad = blank_cells(frame["run"])
        if bad.any():
            raise InputError(path, "empty run", int(frame["record"].iloc[bad.argmax()]))
    return frame


def _parse_epochs(frame: pd.DataFrame, path) -> pd.Series:
    epochs = pd.to_numeric(frame["epoch"], errors="coerce")
    bad = epochs.isna() | (epochs < 1) | (epochs != np.floor(epochs))
    if bad.any():
        i = bad.to_numpy().nonzero()[0][0]
        raise InputError(
            path,
            f"{frame.attrs.get('epoch_column', 'epoch')} must be a positive whole number, got "
            f"{plain(frame['epoch'].iloc[i])!r}",
            int(frame["record"].iloc[i]),
        )
    return epochs.astype("int64")


def label_values(frame: pd.DataFrame, path) -> np.ndarray:
    """The ``human`` column as float64 in [0, 1], NaN where no person labelled the row (an empty
    cell); a cell that says ``nan`` is refused naming its record, not read as unlabelled."""
    raw = frame[LABEL_COLUMN]
    if not (pd.api.types.is_numeric_dtype(raw) or pd.api.types.is_bool_dtype(raw)):
        said_nan = raw.astype("string").str.strip().str.lower().eq("nan").fillna(False)
        if said_nan.any():
            i = int(np.argmax(said_nan.to_numpy()))
            raise InputError(
                path,
                f"{LABEL_COLUMN} is {plain(raw.iloc[i])!r}: give a score in [0, 1], or leave the "
                "cell empty where no person labelled the answer",
                int(frame["record"].iloc[i]),
            )
    parsed = parse_score(frame, LABEL_COLUMN, path)
    return np.asarray(pd.array(parsed, dtype="Float64").to_numpy(dtype=float, na_value=np.nan))


def normalise_ids(ids: pd.Series) -> np.ndarray:
    """Integer ids where every id is a plain integer (MMLU-Pro), strings otherwise.

    An id with a leading zero keeps every id a string, so "007" and "7" stay
    different. Integer columns pass as they are; text is judged once per distinct id.
    """
    if pd.api.types.is_integer_dtype(ids) and not pd.api.types.is_bool_dtype(ids):
        return ids.to_numpy(dtype=np.int64, copy=False)
    codes, uniques = pd.factorize(ids)
    text = pd.Series(np.asarray(uniques, dtype=object)).astype("str").str.strip()
    if text.str.fullmatch(r"-?(0|[1-9]\d*)").all():
        return text.astype("int64").to_numpy()[codes]
    return np.asarray(text, dtype=object)[codes]
