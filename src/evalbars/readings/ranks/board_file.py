"""Reading a leaderboard copied from a web page, and validating every row.

A leaderboard has one system per row and, per row, one of three forms:
``correct`` + ``total`` (counts), ``score`` + ``n`` (a published score and its
item count) or ``score`` + ``se`` (a score with a standard error).
:func:`parse_leaderboard` brings every row to proportions; bad rows raise
:class:`~evalbars.errors.InputError` naming the row.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.blocks import blocks
from evalbars.data.scores import WideScores, accuracy_order
from evalbars.errors import InputError, control_character
from evalbars.stats.accuracy import accuracy_table

__all__ = [
    "FORMS",
    "SE_UNITS",
    "PLAUSIBLE_QUESTIONS",
    "read_leaderboard",
    "parse_leaderboard",
    "leaderboard_from_wide",
]

#: Row forms, in the order a row is tried.
FORMS = ("counts", "proportion", "se")
_NAME_ALIASES = ("name", "system", "model")
_VALUE_COLUMNS = ("correct", "total", "score", "n", "se")
_FORM_COLUMNS = {
    "counts": ("correct", "total"),
    "proportion": ("score", "n"),
    "se": ("score", "se"),
}
_FORM_LABELS = {"counts": "correct+total", "proportion": "score+n", "se": "score+se"}
#: A score times n closer than this to a whole number is that whole number (float round-off).
_WHOLE_TOLERANCE = 1e-6
#: Units of the ``se`` column: ``auto`` (the score's, checked), ``points`` or ``proportion``.
SE_UNITS = ("auto", "points", "proportion")
#: More questions than any benchmark scored by accuracy has (the largest in common use hold tens
#: of thousands): an se on a points score that implies more is taken for a proportion.
PLAUSIBLE_QUESTIONS = 1_000_000


def _sniff_delimiter(text: str) -> str:
    """The field delimiter of a CSV/TSV text: csv.Sniffer, else the most frequent header candidate."""
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=",\t;|").delimiter
    except csv.Error:
        header = text.splitlines()[0] if text.strip() else ""
        counts = {d: header.count(d) for d in ("\t", ",", ";", "|")}
        best = max(counts, key=counts.get)
        return best if counts[best] else ","


def read_leaderboard(path, se_units: str = "auto") -> pd.DataFrame:
    """Read and validate a leaderboard CSV or TSV file (``-`` reads standard input).

    The delimiter (comma, tab, semicolon or bar) is sniffed. See
    :func:`parse_leaderboard` for the columns, ``se_units`` and the checks.

    Raises
    ------
    InputError
        The file cannot be read, or a row is bad; the message names the file and the row.
    """
    source = "<stdin>" if str(path) == "-" else str(path)
    try:
        text = sys.stdin.read() if str(path) == "-" else Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(source, f"cannot read file: {reason}") from exc
    if not text.strip():
        raise InputError(source, "the file is empty")
    delimiter = _sniff_delimiter(text)
    rows = [
        row
        for row in csv.reader(io.StringIO(text), delimiter=delimiter)
        if any(c.strip() for c in row)
    ]
    header, body = rows[0], rows[1:]
    for number, row in enumerate(body, start=1):
        if len(row) != len(header):
            raise InputError(
                source, f"row {number} has {len(row)} fields but the header has {len(header)}"
            )
    frame = pd.DataFrame(body, columns=[c.strip() for c in header], dtype=object)
    return parse_leaderboard(frame, source=source, se_units=se_units)


def _parse_number(text, column: str, where: str, source: str):
    """A cell as (float or NaN, had_percent_sign)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return math.nan, False
    if isinstance(text, (int, float, np.integer, np.floating)) and not isinstance(text, bool):
        return float(text), False
    cell = str(text).strip()
    if cell == "" or cell.lower() in ("na", "nan", "n/a", "-", "—"):
        return math.nan, False
    percent = cell.endswith("%")
    try:
        value = float(cell.rstrip("%").strip())
    except ValueError:
        raise InputError(source, f"{where}: {column} {cell!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(source, f"{where}: {column} {cell!r} is not a finite number")
    return value, percent


def _check_columns(columns, source: str) -> tuple[str, list]:
    """The name column and the value columns of a header, or an InputError saying what is wrong."""
    normal = [str(c).strip().lower() for c in columns]
    if len(set(normal)) != len(normal):
        dup = sorted({c for c in normal if normal.count(c) > 1})
        raise InputError(source, f"duplicate column(s): {', '.join(dup)}")
    names = [c for c in normal if c in _NAME_ALIASES]
    expected = "expected a name column and correct+total, score+n or score+se"
    if len(names) != 1:
        problem = "no name column" if not names else f"several name columns ({', '.join(names)})"
        raise InputError(source, f"{problem}; {expected}")
    unknown = [c for c in normal if c not in _NAME_ALIASES and c not in _VALUE_COLUMNS]
    if unknown:
        raise InputError(source, f"unknown column(s) {', '.join(map(repr, unknown))}; {expected}")
    values = [c for c in normal if c in _VALUE_COLUMNS]
    usable = {
        c for form in FORMS if set(_FORM_COLUMNS[form]) <= set(values) for c in _FORM_COLUMNS[form]
    }
    if not usable or set(values) - usable:
        raise InputError(
            source,
            f"columns {', '.join(normal)} do not make a known combination; {expected}",
        )
    return names[0], values


def parse_leaderboard(
    frame: pd.DataFrame, source: str = "leaderboard", se_units: str = "auto"
) -> pd.DataFrame:
    """Validate a leaderboard and bring every row to proportions.

    Parameters
    ----------
    frame : DataFrame
        One system per row. Columns (case-insensitive): a name column (``name``,
        ``system`` or ``model``) and the columns of at least one form:
        ``correct`` + ``total`` (counts), ``score`` + ``n`` (a published score and
        its item count) or ``score`` + ``se`` (a score with a standard error, for
        metrics that are not plain accuracies). Forms may be mixed across rows;
        each row fills exactly one form and leaves the other cells empty. Cells
        may be strings (as read from a file) or numbers.
    source : str
        File name used in error messages.
    se_units : {"auto", "points", "proportion"}
        The units of ``se``. ``auto`` (the default): the score's scale, checked against
        it (below). ``points`` or ``proportion``: as stated, whatever the score's scale
        (``evalbars ranks --se-units``); the checks of the scale are then off.

    Returns
    -------
    DataFrame
        Columns ``name, form, score, n, successes, se, note``, in input order;
        ``score`` and ``se`` as proportions, ``successes = score * n`` for count
        and proportion rows.

    Notes
    -----
    Scores (and standard errors) are percentages when any score exceeds 1 or
    carries a ``%`` sign, proportions otherwise; the scale is one for the whole
    table. A ``score * n`` (or a ``correct``) that is not a whole number is kept
    fractional, never snapped to a nearby count: the closed forms are evaluated at
    the fractional proportion and the row's note says so.

    Raises
    ------
    InputError
        Naming the row (``row 3 (model-c)``; rows count from 1 after the header):
        a missing name, duplicate names, a value that is not a number, a row that
        fills no form or more than one, a score outside [0, 1] (or [0, 100] for
        percentages), ``n`` or ``total`` <= 0, ``correct`` < 0 or > ``total``, ``se`` <= 0,
        an ``se`` above 0.5 (a proportion) or 50 (points), the largest standard error of
        an accuracy; with ``se_units="auto"``, an ``se`` above 0.5 beside proportions
        (in points) and an ``se`` on a points score that would put more than
        :data:`PLAUSIBLE_QUESTIONS` questions behind an accuracy (a proportion; see
        :func:`_check_se_scale`); and for the header: no name column, unknown columns, or
        columns that make no form.
    """
    if se_units not in SE_UNITS:
        raise ValueError(f"se_units must be one of {SE_UNITS}, got {se_units!r}")
    name_column, value_columns = _check_columns(frame.columns, source)
    frame = frame.copy()
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if frame.empty:
        raise InputError(source, "the leaderboard has no rows")

    names, parsed, percent_rows = [], [], []
    for number, row in enumerate(frame.to_dict("records"), start=1):
        name = _row_name(row[name_column], number, source)
        where = f"row {number} ({name})"
        values, percent_sign = {}, False
        for column in value_columns:
            value, percent = _parse_number(row[column], column, where, source)
            values[column] = value
            percent_sign |= percent and column == "score"
        names.append(name)
        parsed.append((where, values))
        percent_rows.append(percent_sign)

    seen = {}
    for (where, _), name in zip(parsed, names, strict=True):
        if name in seen:
            raise InputError(source, f"{where}: duplicate name, also on {seen[name]}")
        seen[name] = where.split(" (")[0]

    scale, bounds = _score_scale(parsed, percent_rows, source)

    records = []
    for (where, values), name in zip(parsed, names, strict=True):
        given = {c for c, v in values.items() if not math.isnan(v)}
        complete = [f for f in FORMS if set(_FORM_COLUMNS[f]) <= given]
        if len(complete) > 1:
            labels = " and ".join(_FORM_LABELS[f] for f in complete)
            raise InputError(source, f"{where}: fills both {labels}; give one form per row")
        if not complete:
            raise InputError(source, f"{where}: {_missing_description(given)}")
        form = complete[0]
        stray = given - set(_FORM_COLUMNS[form])
        if stray:
            raise InputError(
                source,
                f"{where}: {', '.join(sorted(stray))} given beside {_FORM_LABELS[form]}; "
                f"leave the cells of other forms empty",
            )
        records.append(_canonical_row(name, where, form, values, (scale, bounds, se_units), source))
    return pd.DataFrame.from_records(
        records, columns=["name", "form", "score", "n", "successes", "se", "note"]
    )


def _row_name(raw, number: int, source: str) -> str:
    """A row's system name, stripped; refused when missing or holding a control character."""
    name = "" if raw is None or (isinstance(raw, float) and math.isnan(raw)) else str(raw).strip()
    if not name:
        raise InputError(source, f"row {number}: missing name")
    control = control_character("name", name)
    if control:
        raise InputError(source, f"row {number}: {control}")
    return name


def _score_scale(parsed, percent_rows, source) -> tuple[float, str]:
    """The one scale of the table's scores: percentages or proportions.

    Scores are percentages when any carries a ``%`` sign or exceeds 1. A table on
    the percentage scale whose other rows give a score in (0, 1] without a ``%``
    sign mixes the two scales (0.84 next to 83): it is refused, naming those rows,
    rather than read as 0.84%.
    """
    scores = [values.get("score", math.nan) for _, values in parsed]
    percent = [sign or score > 1 for sign, score in zip(percent_rows, scores, strict=True)]
    if not any(percent):
        return 1.0, "[0, 1]"
    ambiguous = [
        f"{where} ({_format_number(score)})"
        for (where, _), score, sign in zip(parsed, scores, percent_rows, strict=True)
        if not sign and 0 < score <= 1
    ]
    if ambiguous:
        example = next(i for i, p in enumerate(percent) if p)
        shown = ", ".join(ambiguous[:3]) + (
            f" and {len(ambiguous) - 3} more" if len(ambiguous) > 3 else ""
        )
        raise InputError(
            source,
            f"scores mix proportions and percentages: {shown} look like proportions while "
            f"{parsed[example][0]} gives {_format_number(scores[example])}; write every score on "
            "one scale (a score below 1% as e.g. 0.5%)",
        )
    return 100.0, "[0, 100]"


def _missing_description(given: set) -> str:
    if not given:
        return "missing values: the row has no numbers"
    if "correct" in given and "total" not in given:
        return "missing value: correct is given but total is empty"
    if "total" in given and "correct" not in given:
        return "missing value: total is given but correct is empty"
    if "score" in given:
        return "missing value: score is given but neither n nor se"
    # Only n and/or se: the score is what is missing.
    return f"missing value: {' and '.join(sorted(given))} given but score is empty"


def _format_number(value: float) -> str:
    return f"{value:g}"


def _proportion_row(name, form, successes, n, note) -> dict:
    """A canonical row for a proportion read from counts or from a score with its n."""
    return dict(
        name=name,
        form=form,
        score=successes / n,
        n=n,
        successes=successes,
        se=math.nan,
        note="; ".join(note),
    )


def _canonical_row(name, where, form, values, scales, source) -> dict:
    """One validated row in proportions, from whichever form it fills; ``scales`` is the
    score's scale, its bounds in words and the se's units."""
    if form == "counts":
        return _counts_row(name, where, values, source)
    return _score_row(name, where, form, values, scales, source)


def _counts_row(name, where, values, source) -> dict:
    correct, total = values["correct"], values["total"]
    if total <= 0:
        raise InputError(source, f"{where}: total must be > 0, got {_format_number(total)}")
    if correct < 0:
        raise InputError(source, f"{where}: correct must be >= 0, got {_format_number(correct)}")
    if correct > total:
        raise InputError(
            source,
            f"{where}: correct {_format_number(correct)} exceeds total {_format_number(total)}",
        )
    note = []
    if not float(correct).is_integer():
        note.append(f"fractional count {correct:g} of {total:g}")
    if not float(total).is_integer():
        note.append(f"fractional total {total:g}")
    return _proportion_row(name, "counts", correct, total, note)


def _score_row(name, where, form, values, scales, source) -> dict:
    scale, bounds, se_units = scales
    score = values["score"]
    if not 0 <= score <= scale:
        raise InputError(source, f"{where}: score {_format_number(score)} is outside {bounds}")
    score = score / scale
    if form == "se":
        se = values["se"]
        if se <= 0:
            raise InputError(source, f"{where}: se must be > 0, got {_format_number(se)}")
        return dict(
            name=name,
            form=form,
            score=score,
            n=math.nan,
            successes=math.nan,
            se=_se_proportion(where, values["score"], se, scale, se_units, source),
            note="",
        )
    n = values["n"]
    if n <= 0:
        raise InputError(source, f"{where}: n must be > 0, got {_format_number(n)}")
    note = []
    successes = score * n
    if abs(successes - round(successes)) < _WHOLE_TOLERANCE:
        successes = float(round(successes))
    else:
        note.append(
            f"fractional count {successes:.2f} (score x n); intervals at the fractional proportion"
        )
    if not float(n).is_integer():
        note.append(f"fractional n {n:g}")
    return _proportion_row(name, form, successes, n, note)


def _se_proportion(where, score, se, scale, se_units, source) -> float:
    """The row's se as a proportion: in the units stated (``points``: se / 100;
    ``proportion``: se), or on the score's scale, checked (``auto``:
    :func:`_check_se_scale`). Either way at most 0.5, the largest standard error of an
    accuracy."""
    if se_units == "auto":
        _check_se_scale(where, score, se, scale, source)
        return se / scale
    proportion = se / 100 if se_units == "points" else se
    if proportion > 0.5:
        largest = "50 points" if se_units == "points" else "0.5"
        raise InputError(
            source,
            f"{where}: se {_format_number(se)} exceeds {largest}, the largest standard error of "
            "an accuracy",
        )
    return proportion


def _questions_text(n: float) -> str:
    """``15.7 million``, ``906,000``: a question count as a message shows it."""
    return f"{n / 1e6:,.1f} million" if n >= 1e6 else f"{n:,.0f}"


def _check_se_scale(where, score, se, scale, source) -> None:
    """Refuse an se on another scale than the score's.

    A score in [0, 1] has a standard error of at most 0.5 (the standard deviation
    of a 0/1 outcome at 50 %, over one item): a larger se next to a proportion is
    in points (or impossible), and would give intervals far outside [0, 100] %.
    Likewise at most 50 on the percentage scale.

    The other way round, a proportion's se beside a score in points, is within every
    bound (0.012 next to 65.3), so it is judged by the questions it implies. An
    accuracy p over n questions answered 0/1 has se = sqrt(p (1 - p) / n), so an se
    of s points implies n = p (1 - p) / (s / 100)^2 questions; read as points, a
    proportion's se implies 10,000 times the questions it was computed from (0.012 on
    65.3 points: 15.7 million). Above :data:`PLAUSIBLE_QUESTIONS` the row is refused,
    naming both readings: multiply se by 100 or pass ``--se-units proportion``, or, for a
    metric whose per-item scores vary less than an accuracy's (partial credit, a mean
    over many samples per question; its se can be that small), ``--se-units points``.
    The check cannot catch a proportion's se from a benchmark of fewer than
    PLAUSIBLE_QUESTIONS / 10,000 = 100 questions; state the units there.
    """
    largest = scale / 2
    if scale == 100 and se <= 0.5 and 0 < score < 100:
        p = score / 100
        implied = p * (1 - p) / (se / 100) ** 2
        if implied > PLAUSIBLE_QUESTIONS:
            raise InputError(
                source,
                f"{where}: se {_format_number(se)} on a score of {_format_number(score)} points "
                f"implies {_questions_text(implied)} questions (an accuracy's se is "
                "sqrt(p(1-p)/n)); if se is a proportion, multiply it by 100 (se "
                f"{_format_number(100 * se)}) or pass --se-units proportion; if it is in points, "
                "pass --se-units points",
            )
    if se <= largest:
        return
    if scale == 1 and se <= 50:
        raise InputError(
            source,
            f"{where}: se {_format_number(se)} is in points but score {_format_number(score)} is "
            f"a proportion; give both on one scale (se {_format_number(se / 100)}, or score "
            f"{_format_number(100 * score)})",
        )
    unit = "" if scale == 1 else " points"
    raise InputError(
        source,
        f"{where}: se {_format_number(se)} exceeds {_format_number(largest)}{unit}, the largest "
        "standard error of an accuracy",
    )


def _one_sample_counts(wide: WideScores) -> pd.DataFrame:
    """``model, n, samples, correct, accuracy, n_effective`` of :func:`accuracy_table`, for
    scores of one sample per cell: each model's answered questions (all of them effective) and
    its sum of scores, the same sums (per block of models, over the questions in order), without
    the standard errors that only repeated samples would need.
    """
    n_questions, n_models = wide.scores.shape
    n, total = np.empty(n_models), np.empty(n_models)
    for columns in blocks(n_models, n_questions):
        part = wide.scores[:, columns]
        n[columns] = np.isfinite(part).sum(axis=0)
        total[columns] = np.nansum(part, axis=0)
    order = pd.Index(wide.models).get_indexer(accuracy_order(wide))
    n, total = n[order], total[order]
    return pd.DataFrame(
        {
            "model": np.asarray(wide.models, dtype=object)[order],
            "n": n,
            "samples": n,
            "correct": total,
            "accuracy": total / n,
            "n_effective": n,
        }
    )


def leaderboard_from_wide(wide: WideScores) -> pd.DataFrame:
    """A counts leaderboard (:func:`parse_leaderboard` layout) from item-level scores.

    Uses :func:`evalbars.stats.accuracy.accuracy_table`, so systems come in
    :func:`evalbars.data.scores.accuracy_order` (best first, ties by name) and each
    model's counts are over the questions it answered. With one 0/1 sample per
    question these are its questions and right answers; with repeated samples
    (epochs) or partial credit, the effective number of independent answers
    (``n_effective``) and the accuracy times it, so that a model's precision is
    what its samples are worth, not their raw count. With one sample per cell those
    counts are summed directly (:func:`_one_sample_counts`, the same numbers).
    """
    one_sample = wide.samples is None and wide.within_ss is None
    models = _one_sample_counts(wide) if one_sample else accuracy_table(wide)
    n = models["n_effective"].to_numpy(dtype=float)
    accuracy = models["accuracy"].to_numpy(dtype=float)
    plain = (models["samples"] == models["n"]).to_numpy() & np.isin(
        models["correct"].to_numpy(dtype=float), np.round(models["correct"].to_numpy(dtype=float))
    )
    successes = np.where(plain, models["correct"].to_numpy(dtype=float), accuracy * n)
    note = np.where(plain, "", "effective count of independent answers (repeated samples)")
    return pd.DataFrame(
        {
            "name": models["model"].astype(str).to_numpy(),
            "form": "counts",
            "score": successes / n,
            "n": n,
            "successes": successes,
            "se": math.nan,
            "note": note,
        }
    )
