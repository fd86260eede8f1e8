"""MMLU-Pro-style predictions: a JSON list of records, plain or as the one file of a zip.

Records carry ``question_id``, ``category``, ``answer`` and ``pred`` (null when
upstream's answer extractor failed: a missing prediction); ``src`` and
``options`` are optional. This is the form of upstream's cached predictions
(TIGER-AI-Lab/MMLU-Pro ``eval_results/``).

Fatal: a document that is not a list of records; a record without
``question_id``, ``category``, ``answer`` or ``pred`` (``pred`` may be null, but
the key must be there); an empty or non-scalar question id; a question id that
occurs twice for one model; an empty list. Record numbers count list entries
from 1. Skipped with a warning, and counted: entries of the list that are not
records at all (upstream's DeepSeek-Coder-V2 archive carries 43 stray strings
such as ``"total"`` between its records).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from evalbars.data.fetch import model_from_archive
from evalbars.data.readers.archives import is_zip_archive, member_names, open_archive, read_member
from evalbars.data.readers.common import DEFAULT_N_OPTIONS, check_question_id, few, finish_frame
from evalbars.errors import InputError

__all__ = ["read_json_document", "read_mmlu_pro", "correct_from_pred"]

log = logging.getLogger(__name__)

MISSING_MEANS = "pred null (the answer could not be extracted)"


def read_json_document(path):
    """Parse a JSON file, or the single JSON member of a zip archive.

    Archives are recognised by content, not by suffix, so a truncated or corrupt
    ``.zip`` is reported as a damaged archive, never as invalid JSON.
    """
    path = Path(path)
    try:
        archive = is_zip_archive(path)
        if archive:
            with open_archive(path) as zf:
                names = [n for n in member_names(zf) if n.endswith(".json")]
                if len(names) != 1:
                    raise InputError(
                        path,
                        "expected exactly one .json member in the archive (an MMLU-Pro zip), "
                        f"found {few(names) if names else 'none'}",
                    )
                raw = read_member(zf, names[0], path)
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


def correct_from_pred(pred: pd.Series, answer: pd.Series) -> pd.Series:
    """1 where the prediction equals the answer (case and spaces ignored), 0 if not, null
    where there is no prediction."""
    norm_pred = pred.astype("string").str.strip().str.upper()
    norm_answer = answer.astype("string").str.strip().str.upper()
    correct = (norm_pred == norm_answer).astype("Int8")
    return correct.mask(pred.isna())


def read_mmlu_pro(path, model: str | None = None, document=None) -> pd.DataFrame:
    """Read an MMLU-Pro-style prediction file (plain JSON or zipped) into raw rows.

    Parameters
    ----------
    path : path-like
        The file.
    model : str, optional
        Model name; defaults to the one in upstream's file name
        (``model_outputs_<model>_5shots.zip``), else the file's stem.
    document : list, optional
        The parsed document, when the caller has read it already.

    Returns
    -------
    DataFrame
        :data:`evalbars.data.readers.RAW_COLUMNS` rows in file order; ``correct`` is
        null where ``pred`` is.
    """
    path = Path(path)
    if model is None:
        model = model_from_archive(path) or path.name.removesuffix(".zip").removesuffix(".json")
    document = read_json_document(path) if document is None else document
    if not isinstance(document, list):
        raise InputError(
            path, f"expected a JSON list of records, got a JSON {type(document).__name__}"
        )
    if not document:
        raise InputError(path, "the JSON list holds no records")
    skipped = [i for i, rec in enumerate(document, start=1) if not isinstance(rec, dict)]
    if skipped:
        shown = ", ".join(f"{i} ({document[i - 1]!r:.20})" for i in skipped[:5])
        log.warning(
            "%s: skipped %d entries that are not records: %s%s",
            path,
            len(skipped),
            shown,
            " ..." if len(skipped) > 5 else "",
        )
    rows = [
        _record(rec, path, index)
        for index, rec in enumerate(document, start=1)
        if isinstance(rec, dict)
    ]
    frame = pd.DataFrame(
        rows, columns=["record", "question_id", "category", "src", "answer", "pred", "n_options"]
    )
    frame["model"] = model
    frame["correct"] = correct_from_pred(frame["pred"], frame["answer"])
    return finish_frame(frame, path, missing_means=MISSING_MEANS, skipped_entries=len(skipped))


def _record(rec: dict, path, index) -> tuple:
    for field in ("question_id", "category", "answer", "pred"):
        if field not in rec:
            raise InputError(path, f"missing field {field!r}", index)
    qid = check_question_id(rec["question_id"], path, index)
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
    return (index, qid, category, rec.get("src"), answer, pred, n_options)
