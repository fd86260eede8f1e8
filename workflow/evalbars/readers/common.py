"""What every reader returns: raw rows in one layout, checked the same way.

Raw rows carry :data:`RAW_COLUMNS`: ``model, question_id, epoch, category, src,
answer, pred, n_options, correct, source_file, source_path, record``.
``correct`` is the score (1 right, 0 wrong, a fraction for partial credit) and
null where the source has no prediction; :mod:`evalbars.items` decides what a
missing prediction counts as. ``source_file`` is the file's name (for tables),
``source_path`` the path as given (for messages), ``record`` the position a
message names. ``frame.attrs`` carries ``skipped_entries`` (entries a reader
skipped as not records), ``missing_means`` (what made a row a missing
prediction in that format) and ``errored_samples`` (samples the harness logged
as errored, counted among the missing predictions).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import InputError, plain

__all__ = ["RAW_COLUMNS", "DEFAULT_N_OPTIONS", "finish_frame", "check_question_id"]

RAW_COLUMNS = [
    "model",
    "question_id",
    "epoch",
    "category",
    "src",
    "answer",
    "pred",
    "n_options",
    "correct",
    "source_file",
    "source_path",
    "record",
]
#: Options assumed when a source does not say how many a question has (MMLU-Pro's A-J).
DEFAULT_N_OPTIONS = 10


def check_question_id(value, path, record):
    """A question id as given, or an InputError: ids are non-empty integers or strings."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        raise InputError(
            path, f"question_id must be a non-empty integer or string, got {value!r}", record
        )
    return value


def finish_frame(
    frame: pd.DataFrame,
    path,
    *,
    missing_means: str,
    skipped_entries: int = 0,
    errored_samples: int = 0,
) -> pd.DataFrame:
    """Complete a reader's rows to :data:`RAW_COLUMNS` and check them.

    Fills the optional columns (``epoch`` 1, ``src``/``answer``/``pred`` null,
    ``n_options`` :data:`DEFAULT_N_OPTIONS`), adds the source columns (``path``,
    unless the frame has its own) and the ``attrs``, and refuses a (model,
    question, epoch) that occurs twice; ``path`` is the file errors name.
    """
    path = Path(path)
    defaults = {"epoch": 1, "src": None, "answer": None, "pred": None}
    defaults["n_options"] = DEFAULT_N_OPTIONS
    for column, value in defaults.items():
        if column not in frame.columns:
            frame[column] = value
    if "source_file" not in frame.columns:  # readers of several files set their own
        frame["source_file"] = path.name
        frame["source_path"] = str(path)
    frame = frame[RAW_COLUMNS].reset_index(drop=True)
    frame.attrs.update(
        skipped_entries=int(skipped_entries),
        missing_means=missing_means,
        errored_samples=int(errored_samples),
    )
    _check_unique_questions(frame, path)
    return frame


def _check_unique_questions(frame: pd.DataFrame, path) -> None:
    key = ["model", "question_id", "epoch"]
    dup = frame.duplicated(key, keep=False)
    if not dup.any():
        return
    first = frame.loc[dup].iloc[0]
    same = dup & (frame[key] == first[key]).all(axis=1)
    records = frame.loc[same, "record"].tolist()
    epoch = f" in epoch {plain(first['epoch'])}" if (frame["epoch"] != 1).any() else ""
    raise InputError(
        path,
        f"question_id {plain(first['question_id'])!r} occurs {len(records)} times for model "
        f"{first['model']!r}{epoch} (records {records})",
        plain(records[1]),
    )
