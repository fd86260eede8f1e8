"""Rank uncertainty: score intervals, separated neighbours, tiers and plausible ranks.

Two readings of one ordering:

- **unpaired** (:func:`rank_table`, the seed-001 calculator): every system is an
  independent estimate. Works on a leaderboard copied from a web page, given as
  ``correct`` + ``total``, ``score`` + ``n`` or ``score`` + ``se`` per row
  (:func:`read_leaderboard`, :func:`parse_leaderboard`).
- **paired** (:func:`paired_rank_table`): when the per-question outcomes are
  available (:class:`evalbars.io.WideScores`), every system answered the same
  questions, so their errors are positively correlated; a bootstrap over the
  shared questions (stratified by category) and paired z intervals for the
  adjacent gaps respect that, and are sharper.

:func:`ranks_readings` puts both readings of the item data in one tidy table
(column ``reading``), which is what the workflow writes to
``results/tables/ranks.csv``.

Column contract of a rank table (one row per system, in nominal order: score
descending, ties in input order):

``position``
    1-based place in the nominal order.
``name``, ``form``, ``n``
    System name; ``counts`` (correct + total), ``proportion`` (score + n) or
    ``se`` (score + standard error); the item count (empty for ``se`` rows).
``score``, ``ci_low``, ``ci_high``
    Score as a proportion and its interval: Wilson for ``counts``/``proportion``
    rows, ``score ± z·se`` for ``se`` rows.
``gap``, ``gap_low``, ``gap_high``
    Score minus the next system's score, with its interval (empty on the last row).
``separated``
    The gap interval excludes zero (empty on the last row).
``tier``
    1 + the number of separated adjacent pairs above this system.
``p_first``
    Share of plausible worlds in which this system ranks first (ties share the
    better rank, so shares can add up to more than 1).
``rank_low``, ``rank_high``
    Central rank range: the (1 - level)/2 and (1 + level)/2 quantiles of the
    system's rank over the plausible worlds (inverse-CDF quantiles of a discrete
    distribution, so the range holds at least ``level`` of the worlds).
``note``
    Anything the reader must know about the row (fractional count, mixed pair).
"""

from __future__ import annotations

import csv
import io as _stdio
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .intervals import mover_difference, wilson_interval, z_for_level
from .io import InputError, WideScores

__all__ = [
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "DEFAULT_LEVEL",
    "DRAW_CHUNK",
    "FORMS",
    "RANK_COLUMNS",
    "RankReport",
    "read_leaderboard",
    "parse_leaderboard",
    "leaderboard_from_wide",
    "score_intervals",
    "adjacent_gaps",
    "tiers_from_separated",
    "rank_counts",
    "rank_summary",
    "plausible_scores",
    "rank_table",
    "bootstrap_accuracies",
    "paired_rank_table",
    "ranks_readings",
    "read_rank_table",
    "headline",
    "display_table",
    "readings_display",
    "report_markdown",
    "readings_markdown",
    "report_json",
    "forest_figure",
    "rank_range_figure",
]

#: Plausible worlds drawn per system when no draw count is given.
DEFAULT_DRAWS = 10_000
#: Seed of the plausible-world generator when none is given.
DEFAULT_SEED = 2024
#: Confidence level of intervals and rank ranges when none is given.
DEFAULT_LEVEL = 0.95
#: Plausible worlds (or bootstrap replicates) generated and ranked at a time. It bounds
#: memory (a chunk of the bootstrap holds DRAW_CHUNK x questions counts) and is a fixed
#: constant, so results depend on the seed and the number of draws only.
DRAW_CHUNK = 512
#: Row forms, in the order a row is tried.
FORMS = ("counts", "proportion", "se")
#: Columns of every rank table, in order.
RANK_COLUMNS = [
    "position",
    "name",
    "form",
    "n",
    "score",
    "ci_low",
    "ci_high",
    "gap",
    "gap_low",
    "gap_high",
    "separated",
    "tier",
    "p_first",
    "rank_low",
    "rank_high",
    "note",
]

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


# --- Reading and validating a leaderboard --------------------------------------------------------


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


def read_leaderboard(path) -> pd.DataFrame:
    """Read and validate a leaderboard CSV or TSV file (``-`` reads standard input).

    The delimiter (comma, tab, semicolon or bar) is sniffed. See
    :func:`parse_leaderboard` for the columns and the checks.

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
        for row in csv.reader(_stdio.StringIO(text), delimiter=delimiter)
        if any(c.strip() for c in row)
    ]
    header, body = rows[0], rows[1:]
    for number, row in enumerate(body, start=1):
        if len(row) != len(header):
            raise InputError(
                source, f"row {number} has {len(row)} fields but the header has {len(header)}"
            )
    frame = pd.DataFrame(body, columns=[c.strip() for c in header], dtype=object)
    return parse_leaderboard(frame, source=source)


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


def parse_leaderboard(frame: pd.DataFrame, source: str = "leaderboard") -> pd.DataFrame:
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
        percentages), ``n`` or ``total`` <= 0, ``correct`` < 0 or > ``total``, ``se`` <= 0;
        and for the header: no name column, unknown columns, or columns that make no form.
    """
    name_column, value_columns = _check_columns(frame.columns, source)
    frame = frame.copy()
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if frame.empty:
        raise InputError(source, "the leaderboard has no rows")

    names, parsed, percent_any = [], [], False
    for number, row in enumerate(frame.to_dict("records"), start=1):
        raw_name = row[name_column]
        name = (
            ""
            if raw_name is None or (isinstance(raw_name, float) and math.isnan(raw_name))
            else str(raw_name).strip()
        )
        where = f"row {number} ({name})" if name else f"row {number}"
        if not name:
            raise InputError(source, f"{where}: missing name")
        values = {}
        for column in value_columns:
            value, percent = _parse_number(row[column], column, where, source)
            values[column] = value
            percent_any |= percent and column == "score"
        names.append(name)
        parsed.append((where, values))

    seen = {}
    for (where, _), name in zip(parsed, names):
        if name in seen:
            raise InputError(source, f"{where}: duplicate name, also on {seen[name]}")
        seen[name] = where.split(" (")[0]

    scores = [v.get("score", math.nan) for _, v in parsed]
    percent_scale = percent_any or any(s > 1 for s in scores if not math.isnan(s))
    scale, bounds = (100.0, "[0, 100]") if percent_scale else (1.0, "[0, 1]")

    records = []
    for (where, values), name in zip(parsed, names):
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
        records.append(_canonical_row(name, where, form, values, scale, bounds, source))
    return pd.DataFrame.from_records(
        records, columns=["name", "form", "score", "n", "successes", "se", "note"]
    )


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


def _canonical_row(name, where, form, values, scale, bounds, source) -> dict:
    note = []
    if form == "counts":
        correct, total = values["correct"], values["total"]
        if total <= 0:
            raise InputError(source, f"{where}: total must be > 0, got {_format_number(total)}")
        if correct < 0:
            raise InputError(
                source, f"{where}: correct must be >= 0, got {_format_number(correct)}"
            )
        if correct > total:
            raise InputError(
                source,
                f"{where}: correct {_format_number(correct)} exceeds total {_format_number(total)}",
            )
        n, successes = total, correct
        if not float(successes).is_integer():
            note.append(f"fractional count {successes:g} of {n:g}")
        if not float(n).is_integer():
            note.append(f"fractional total {n:g}")
        return _proportion_row(name, form, successes, n, note)
    score = values["score"]
    if not 0 <= score <= scale:
        raise InputError(source, f"{where}: score {_format_number(score)} is outside {bounds}")
    score = score / scale
    if form == "proportion":
        n = values["n"]
        if n <= 0:
            raise InputError(source, f"{where}: n must be > 0, got {_format_number(n)}")
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
    se = values["se"]
    if se <= 0:
        raise InputError(source, f"{where}: se must be > 0, got {_format_number(se)}")
    return dict(
        name=name, form=form, score=score, n=math.nan, successes=math.nan, se=se / scale, note=""
    )


def leaderboard_from_wide(wide: WideScores) -> pd.DataFrame:
    """A counts leaderboard (:func:`parse_leaderboard` layout) from item-level scores.

    Uses :func:`evalbars.pairwise.model_table`, so systems come in
    :func:`evalbars.pairwise.accuracy_order` (best first, ties by name) and each
    model's counts are over the questions it answered.
    """
    from .pairwise import model_table

    models = model_table(wide)
    correct = models["correct"].to_numpy(dtype=float)
    n = models["n"].to_numpy(dtype=float)
    return pd.DataFrame(
        {
            "name": models["model"].astype(str).to_numpy(),
            "form": "counts",
            "score": correct / n,
            "n": n,
            "successes": correct,
            "se": math.nan,
            "note": "",
        }
    )


# --- Intervals, gaps and tiers -------------------------------------------------------------------


def _nominal_order(board: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by score, highest first; ties keep their input order."""
    order = np.argsort(-board["score"].to_numpy(dtype=float), kind="stable")
    return board.iloc[order].reset_index(drop=True)


def score_intervals(board: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Each row's score interval.

    Counts and proportion rows: the Wilson score interval at ``successes`` of
    ``n`` (:func:`evalbars.intervals.wilson_interval`; fractional counts are
    evaluated at the fractional proportion). SE rows: :math:`\\hat s \\pm z\\,se`
    with :math:`z = \\Phi^{-1}((1 + level)/2)`, not clipped to [0, 1].

    Returns
    -------
    low, high : ndarray

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and
       statistical inference. JASA 22, 209-212.
    .. [2] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation
       for a binomial proportion. Statistical Science 16, 101-133.
    """
    is_se = (board["form"] == "se").to_numpy()
    score = board["score"].to_numpy(dtype=float)
    se = board["se"].to_numpy(dtype=float)
    k = np.where(is_se, 0.0, board["successes"].to_numpy(dtype=float))
    n = np.where(is_se, 1.0, board["n"].to_numpy(dtype=float))
    wilson_low, wilson_high = wilson_interval(k, n, level)
    z = z_for_level(level)
    return (
        np.where(is_se, score - z * se, wilson_low),
        np.where(is_se, score + z * se, wilson_high),
    )


def adjacent_gaps(board: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Gap between each system and the next one in the given order, with its interval.

    Parameters
    ----------
    board : DataFrame
        Rows in nominal order (:func:`parse_leaderboard` layout).
    level : float
        Confidence level.

    Returns
    -------
    DataFrame
        ``gap, gap_low, gap_high, separated, pair_kind`` (one row per system; the
        last row's values are missing). ``pair_kind`` is ``proportions``, ``se``
        or ``mixed``.

    Notes
    -----
    - Two count/proportion rows: Newcombe's hybrid score interval (method 10),
      :func:`evalbars.intervals.newcombe_interval`, i.e. :func:`evalbars.intervals.mover_difference`
      with Wilson bounds:
      :math:`L = d - \\sqrt{(p_a - l_a)^2 + (u_b - p_b)^2}`,
      :math:`U = d + \\sqrt{(u_a - p_a)^2 + (p_b - l_b)^2}` with Wilson bounds.
    - Two SE rows: the normal difference interval
      :math:`d \\pm z\\sqrt{se_a^2 + se_b^2}`.
    - A proportion next to an SE row (our decision): the same MOVER formula
      (Zou and Donner 2008), of which both rules above are special cases, fed with
      the proportion's Wilson bounds and the SE row's normal bounds. It keeps the
      Wilson interval's asymmetry near 0 and 1 on the proportion's side and
      reduces to the normal difference where the proportion's interval is
      symmetric. The row's note says the pair is mixed.

    ``separated`` is True when the interval excludes zero. Two 95% intervals can
    overlap while the difference is separated (non-overlap is roughly a 99%
    test; Schenker and Gentleman 2001).

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between
       independent proportions: comparison of eleven methods. Stat Med 17, 873-890.
    .. [2] Zou, G. Y. and Donner, A. (2008). Construction of confidence limits
       about effect measures: a general approach. Stat Med 27, 1693-1702.
    .. [3] Schenker, N. and Gentleman, J. F. (2001). On judging the significance of
       differences by examining the overlap between confidence intervals. The
       American Statistician 55, 182-186.
    """
    score = board["score"].to_numpy(dtype=float)
    k = len(score)
    gap = np.full(k, np.nan)
    gap_low = np.full(k, np.nan)
    gap_high = np.full(k, np.nan)
    kind = np.full(k, "", dtype=object)
    if k > 1:
        low, high = score_intervals(board, level)
        is_se = (board["form"] == "se").to_numpy()
        a, b = np.arange(k - 1), np.arange(1, k)
        # One formula for every pair: the score intervals are Wilson for proportions and
        # normal for SE rows, so MOVER gives Newcombe, the normal difference, or the mix.
        gap_low[:-1], gap_high[:-1] = mover_difference(
            score[a], low[a], high[a], score[b], low[b], high[b]
        )
        both_proportions = ~is_se[a] & ~is_se[b]
        gap[:-1] = score[a] - score[b]
        kind[:-1] = np.where(
            both_proportions, "proportions", np.where(is_se[a] & is_se[b], "se", "mixed")
        )
    separated = pd.array(np.where(np.isnan(gap_low), False, gap_low > 0), dtype="boolean")
    separated[np.isnan(gap)] = pd.NA
    return pd.DataFrame(
        {
            "gap": gap,
            "gap_low": gap_low,
            "gap_high": gap_high,
            "separated": separated,
            "pair_kind": kind,
        }
    )


def tiers_from_separated(separated) -> np.ndarray:
    """Tier of each system: 1 + the number of separated adjacent pairs above it.

    ``separated[i]`` says whether system i is separated from system i + 1 (the
    last entry is ignored).

    Examples
    --------
    >>> tiers_from_separated([False, False, True, False, True, None]).tolist()
    [1, 1, 1, 2, 2, 3]
    """
    flags = np.array([bool(s) if s is not None and s is not pd.NA else False for s in separated])
    tiers = np.ones(len(flags), dtype=int)
    if len(flags) > 1:
        tiers[1:] += np.cumsum(flags[:-1])
    return tiers


# --- Plausible ranks -----------------------------------------------------------------------------


def _min_ranks(samples: np.ndarray) -> np.ndarray:
    """Rank of each column within each row, 1 = highest; ties share the better (smaller) rank."""
    return stats.rankdata(-samples, axis=1, method="min").astype(np.int64)


def rank_counts(sample_chunks, n_systems: int) -> np.ndarray:
    """Tabulate ranks over plausible worlds.

    Parameters
    ----------
    sample_chunks : iterable of ndarray, each (worlds, n_systems)
        Plausible scores; every row is one world.
    n_systems : int

    Returns
    -------
    ndarray, shape (n_systems, n_systems), int
        ``counts[i, r - 1]``: worlds in which system i has rank r (ties share
        the better rank, so a world can give rank 1 to several systems).
    """
    counts = np.zeros(n_systems * n_systems, dtype=np.int64)
    offsets = np.arange(n_systems) * n_systems
    for chunk in sample_chunks:
        ranks = _min_ranks(chunk)
        counts += np.bincount((ranks - 1 + offsets).ravel(), minlength=n_systems * n_systems)
    return counts.reshape(n_systems, n_systems)


def rank_summary(counts: np.ndarray, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """P(first) and the central rank range from a rank-count matrix (:func:`rank_counts`).

    ``rank_low`` is the smallest rank r with :math:`F(r) \\ge (1 - level)/2` and
    ``rank_high`` the smallest with :math:`F(r) \\ge (1 + level)/2`, where F is the
    system's rank distribution over the worlds (inverse-CDF quantiles), so at least
    ``level`` of the worlds put the system inside ``[rank_low, rank_high]``.

    Returns
    -------
    DataFrame
        ``p_first, rank_low, rank_high``, one row per system.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    counts = np.asarray(counts)
    worlds = counts[0].sum()
    cumulative = np.cumsum(counts, axis=1)
    # Integer comparison with a tolerance for the float product level * worlds.
    lower_target = (1 - level) / 2 * worlds * (1 - 1e-12)
    upper_target = (1 + level) / 2 * worlds * (1 - 1e-12)
    rank_low = 1 + np.argmax(cumulative >= lower_target, axis=1)
    rank_high = 1 + np.argmax(cumulative >= upper_target, axis=1)
    return pd.DataFrame(
        {"p_first": counts[:, 0] / worlds, "rank_low": rank_low, "rank_high": rank_high}
    )


def plausible_scores(
    board: pd.DataFrame, draws: int, rng: np.random.Generator, chunk: int = DRAW_CHUNK
):
    """Yield chunks of plausible true scores, shape (worlds, systems).

    Count and proportion rows: the Jeffreys posterior
    :math:`\\mathrm{Beta}(k + 1/2,\\, n - k + 1/2)` (fractional k allowed), which
    stays non-degenerate at 0% and 100%. SE rows: :math:`N(\\hat s, se^2)`. Each
    chunk draws the Beta columns first, then the normal columns, from ``rng``.

    References
    ----------
    .. [1] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation
       for a binomial proportion. Statistical Science 16, 101-133 (the Jeffreys
       interval).
    """
    is_se = (board["form"] == "se").to_numpy()
    score = board["score"].to_numpy(dtype=float)
    k = board["successes"].to_numpy(dtype=float)[~is_se]
    n = board["n"].to_numpy(dtype=float)[~is_se]
    mean, sd = score[is_se], board["se"].to_numpy(dtype=float)[is_se]
    for start in range(0, draws, chunk):
        size = min(chunk, draws - start)
        worlds = np.empty((size, len(score)))
        worlds[:, ~is_se] = rng.beta(k + 0.5, n - k + 0.5, size=(size, len(k)))
        worlds[:, is_se] = rng.normal(mean, sd, size=(size, len(mean)))
        yield worlds


@dataclass(frozen=True)
class RankReport:
    """A rank table with its headline and the settings that produced it.

    Attributes
    ----------
    table : DataFrame
        :data:`RANK_COLUMNS`, one row per system in nominal order.
    headline : str
        ``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.
    reading : str
        ``unpaired`` or ``paired``.
    level : float
    draws : int
        Plausible worlds (Jeffreys/normal draws, or bootstrap replicates).
    seed : int
    method : str
        One sentence on how the worlds were drawn and the gaps tested.
    """

    table: pd.DataFrame
    headline: str
    reading: str
    level: float
    draws: int
    seed: int
    method: str

    @property
    def n_tiers(self) -> int:
        return int(self.table["tier"].max())


def _check_settings(level: float, draws: int) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    if int(draws) != draws or draws < 1:
        raise ValueError(f"the number of draws must be a positive integer, got {draws!r}")


def _percent_text(p: float) -> str:
    """A share as a whole percentage; never rounds a share below 1 up to 100% (or above 0 to 0%)."""
    if 0.995 <= p < 1:
        return ">99%"
    if 0 < p < 0.005:
        return "<1%"
    return f"{100 * p:.0f}%"


def headline(table: pd.DataFrame) -> str:
    """``"N systems, T tiers; the leader (X) is first in P% of plausible worlds"``.

    Examples
    --------
    >>> t = pd.DataFrame({"name": ["a", "b"], "tier": [1, 2], "p_first": [0.9712, 0.0288]})
    >>> headline(t)
    '2 systems, 2 tiers; the leader (a) is first in 97% of plausible worlds'
    """
    n = len(table)
    tiers = int(table["tier"].max())
    leader = table.iloc[0]
    return (
        f"{n} system{'s' if n != 1 else ''}, {tiers} tier{'s' if tiers != 1 else ''}; "
        f"the leader ({leader['name']}) is first in {_percent_text(float(leader['p_first']))} "
        "of plausible worlds"
    )


def _assemble(board, gaps, summary) -> pd.DataFrame:
    notes = board["note"].astype(str).tolist()
    kinds = gaps["pair_kind"].tolist()
    for i, kind in enumerate(kinds):
        if kind == "mixed":
            notes[i] = "; ".join(
                x for x in (notes[i], "gap mixes a proportion and an SE row (MOVER interval)") if x
            )
    table = pd.DataFrame(
        {
            "position": np.arange(1, len(board) + 1),
            "name": board["name"].to_numpy(),
            "form": board["form"].to_numpy(),
            "n": board["n"].to_numpy(dtype=float),
            "score": board["score"].to_numpy(dtype=float),
            "ci_low": board["ci_low"].to_numpy(dtype=float),
            "ci_high": board["ci_high"].to_numpy(dtype=float),
            "gap": gaps["gap"].to_numpy(),
            "gap_low": gaps["gap_low"].to_numpy(),
            "gap_high": gaps["gap_high"].to_numpy(),
            "separated": gaps["separated"].array,
            "tier": tiers_from_separated(gaps["separated"].tolist()),
            "p_first": summary["p_first"].to_numpy(),
            "rank_low": summary["rank_low"].to_numpy(),
            "rank_high": summary["rank_high"].to_numpy(),
            "note": notes,
        }
    )
    return table[RANK_COLUMNS]


def rank_table(
    board: pd.DataFrame,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
) -> RankReport:
    """The unpaired rank-uncertainty calculator (seed 001) on a leaderboard.

    Parameters
    ----------
    board : DataFrame
        From :func:`parse_leaderboard` / :func:`read_leaderboard` (or
        :func:`leaderboard_from_wide`). Rows are put in nominal order: score
        descending, ties in input order.
    level : float
        Confidence level of the score and gap intervals and of the rank range.
    draws : int
        Plausible worlds, drawn by :func:`plausible_scores` from
        ``numpy.random.default_rng(seed)``.
    seed : int
        Same board, level, draws and seed give an identical table.

    Returns
    -------
    RankReport
        ``table`` with :data:`RANK_COLUMNS` and ``headline``.

    Notes
    -----
    Score intervals: :func:`score_intervals`; gaps: :func:`adjacent_gaps`; a new
    tier starts at every separated adjacent pair (no multiplicity adjustment
    across the pairs). Plausible ranks: every world is ranked with ties sharing
    the better rank, and :func:`rank_summary` gives ``p_first`` and the central
    rank range. Every system is treated as an independent estimate; systems
    scored on the same items have positively correlated errors, so this is the
    conservative reading (see :func:`paired_rank_table`).

    Examples
    --------
    >>> board = parse_leaderboard(pd.DataFrame({"name": ["a", "b"], "correct": [160, 120],
    ...                                         "total": [200, 200]}))
    >>> report = rank_table(board, draws=2000, seed=1)
    >>> report.table[["name", "tier", "rank_low", "rank_high"]].to_dict("list")
    {'name': ['a', 'b'], 'tier': [1, 2], 'rank_low': [1, 2], 'rank_high': [1, 2]}
    """
    _check_settings(level, draws)
    board = _nominal_order(board)
    low, high = score_intervals(board, level)
    board = board.assign(ci_low=low, ci_high=high)
    gaps = adjacent_gaps(board, level)
    rng = np.random.default_rng(seed)
    counts = rank_counts(plausible_scores(board, int(draws), rng), len(board))
    table = _assemble(board, gaps, rank_summary(counts, level))
    method = (
        f"Unpaired: Wilson (or score ± z·se) intervals, Newcombe gap intervals, "
        f"{int(draws):,} Jeffreys/normal draws (seed {seed})."
    )
    return RankReport(table, headline(table), "unpaired", level, int(draws), seed, method)


# --- Paired rank uncertainty from item-level data ------------------------------------------------


def _shared_questions(wide: WideScores) -> WideScores:
    """The questions every model answered."""
    keep = np.isfinite(wide.scores).all(axis=1)
    if not keep.any():
        raise ValueError(
            "no question was answered by every model; a paired reading needs shared questions"
        )
    return WideScores(
        wide.scores[keep], list(wide.models), wide.question_ids[keep], wide.categories[keep]
    )


def bootstrap_accuracies(
    scores: np.ndarray,
    strata,
    replicates: int,
    rng: np.random.Generator,
    chunk: int = DRAW_CHUNK,
):
    """Yield chunks of stratified-bootstrap mean scores, shape (replicates, models).

    Every replicate resamples, within each stratum h of size :math:`n_h`, :math:`n_h`
    questions with replacement and takes each model's mean over the resampled
    question set, **the same questions for every model** (so pairing is kept).
    The replicate mean is :math:`\\bar s^*_m = \\frac1n \\sum_i c_i s_{im}` where
    :math:`c_i` counts how often question i was drawn: each chunk draws indices
    with one vectorised ``rng.integers`` call, turns them into a (chunk, questions)
    count matrix with ``bincount`` and multiplies it by the score matrix, so memory
    is O(chunk x questions) whatever the number of replicates.

    Parameters
    ----------
    scores : ndarray, shape (questions, models)
        Complete scores (no NaN).
    strata : array_like of length questions, or None
        Stratum label of each question (category); None for an unstratified bootstrap.
    replicates : int
    rng : numpy.random.Generator

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the
       Bootstrap. Chapman & Hall (the nonparametric bootstrap).
    .. [2] Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and their
       Application. Cambridge University Press, section 3.7 (stratified resampling).
    """
    scores = np.asarray(scores, dtype=float)
    n_questions = scores.shape[0]
    codes = (
        np.zeros(n_questions, dtype=np.int64)
        if strata is None
        else np.unique(np.asarray(strata), return_inverse=True)[1]
    )
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
    ends = np.searchsorted(sorted_codes, sorted_codes, side="right")
    sorted_scores = scores[order]
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        picks = rng.integers(starts, ends, size=(size, n_questions))
        picks += (np.arange(size) * n_questions)[:, None]
        counts = np.bincount(picks.ravel(), minlength=size * n_questions).reshape(size, n_questions)
        # Float counts: the product then runs in BLAS (integer matmul does not), still exact.
        yield counts.astype(np.float64) @ sorted_scores / n_questions


def paired_rank_table(
    wide: WideScores,
    level: float = DEFAULT_LEVEL,
    replicates: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    stratify: bool = True,
) -> RankReport:
    """Rank uncertainty that respects pairing, from item-level scores.

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores; only the questions every model answered are used.
    level : float
        Confidence level of intervals and rank ranges.
    replicates : int
        Bootstrap replicates of the question set (:func:`bootstrap_accuracies`).
    seed : int
        Seed of ``numpy.random.default_rng``; same inputs and seed, same table.
    stratify : bool
        Resample within categories (default), so each replicate keeps the
        benchmark's category mix.

    Returns
    -------
    RankReport
        Same columns as :func:`rank_table`, models in
        :func:`evalbars.pairwise.accuracy_order`.

    Notes
    -----
    - ``score``, ``ci_low``, ``ci_high``: accuracy and Wilson interval on the
      shared questions (pairing does not change one model's own precision).
    - Gap to the next model: the paired z interval :math:`\\bar d \\pm z\\, SE_p`
      with :math:`SE_p = \\sqrt{\\frac1n \\cdot \\frac1n \\sum_i (d_i - \\bar d)^2}`, the
      per-question differences :math:`d_i = s_{ia} - s_{ib}` (Miller 2024, Eq. 7;
      ``se_paired`` of :func:`evalbars.pairwise.pairwise_table`). For 0/1 scores
      its test is the large-sample McNemar test. ``separated``: the interval
      excludes zero; tiers as in :func:`rank_table`.
    - Plausible ranks: every bootstrap replicate is one world; ranks with ties
      sharing the better rank (ties are common, since replicate accuracies are
      multiples of 1/n), then ``p_first`` and the central rank range. Because all
      models are resampled on the same questions, the question-difficulty
      variance they share cancels from their differences (Hall and Miller 2009
      use this bootstrap to judge the authority of an empirical ranking).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.
    .. [2] Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap.
    .. [3] Hall, P. and Miller, H. (2009). Using the bootstrap to quantify the
       authority of an empirical ranking. Annals of Statistics 37, 3929-3959.
    .. [4] McNemar, Q. (1947). Note on the sampling error of the difference
       between correlated proportions or percentages. Psychometrika 12, 153-157.
    """
    from .pairwise import accuracy_order, pairwise_table

    _check_settings(level, replicates)
    shared = _shared_questions(wide)
    order = accuracy_order(shared)
    columns = [shared.models.index(m) for m in order]
    scores = shared.scores[:, columns]
    n_questions = scores.shape[0]
    board = leaderboard_from_wide(WideScores(scores, order, shared.question_ids, shared.categories))
    low, high = score_intervals(board, level)
    board = board.assign(ci_low=low, ci_high=high)

    pairs = pairwise_table(WideScores(scores, order, shared.question_ids, shared.categories))
    adjacent = pairs.set_index(["model_a", "model_b"]).reindex(list(zip(order[:-1], order[1:])))
    z = z_for_level(level)
    gap = np.append(adjacent["diff"].to_numpy(dtype=float), np.nan)
    se = np.append(adjacent["se_paired"].to_numpy(dtype=float), np.nan)
    separated = pd.array(gap - z * se > 0, dtype="boolean")
    separated[len(order) - 1] = pd.NA
    gaps = pd.DataFrame(
        {
            "gap": gap,
            "gap_low": gap - z * se,
            "gap_high": gap + z * se,
            "separated": separated,
            "pair_kind": np.where(np.isnan(gap), "", "paired"),
        }
    )
    rng = np.random.default_rng(seed)
    strata = shared.categories if stratify else None
    counts = rank_counts(bootstrap_accuracies(scores, strata, int(replicates), rng), len(order))
    table = _assemble(board, gaps, rank_summary(counts, level))
    n_strata = len(np.unique(shared.categories))
    dropped = wide.scores.shape[0] - n_questions
    method = (
        f"Paired: {int(replicates):,} bootstrap replicates of the {n_questions:,} shared questions"
        + (f" stratified by {n_strata} categories" if stratify else "")
        + f" (seed {seed}); paired z gap intervals"
        + (f"; {dropped:,} questions not answered by every model left out" if dropped else "")
        + "."
    )
    return RankReport(table, headline(table), "paired", level, int(replicates), seed, method)


def ranks_readings(
    wide: WideScores,
    level: float = DEFAULT_LEVEL,
    draws: int = DEFAULT_DRAWS,
    replicates: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    stratify: bool = True,
) -> tuple[pd.DataFrame, list[RankReport]]:
    """Unpaired and paired readings of the same item data, in one tidy table.

    The unpaired reading is :func:`rank_table` on each model's counts
    (:func:`leaderboard_from_wide`, so running ``evalbars ranks`` on those counts
    with the same seed gives the same numbers); the paired reading is
    :func:`paired_rank_table`. Both use ``seed``.

    Returns
    -------
    table : DataFrame
        ``reading`` (``unpaired`` then ``paired``) followed by :data:`RANK_COLUMNS`.
    reports : list of RankReport
        The two readings, for headlines and method sentences.
    """
    unpaired = rank_table(leaderboard_from_wide(wide), level, draws, seed)
    paired = paired_rank_table(wide, level, replicates, seed, stratify)
    reports = [unpaired, paired]
    table = pd.concat([r.table.assign(reading=r.reading) for r in reports], ignore_index=True)[
        ["reading"] + RANK_COLUMNS
    ]
    return table, reports


def read_rank_table(path) -> pd.DataFrame:
    """Read a rank table CSV (one or both readings) back with its column types.

    ``separated`` becomes a nullable boolean (missing on each reading's last row),
    ``name`` and ``note`` stay strings (a model called ``NA`` is not a missing value).
    """
    table = pd.read_csv(path, keep_default_na=False, na_values={c: [""] for c in _NUMERIC_COLUMNS})
    table["separated"] = (
        table["separated"].map({"True": True, "False": False, "": pd.NA}).astype("boolean")
    )
    return table


_NUMERIC_COLUMNS = ["n", "score", "ci_low", "ci_high", "gap", "gap_low", "gap_high", "p_first"]


# --- Rendering -----------------------------------------------------------------------------------


def _points(value: float, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{100 * value:+.1f}" if signed else f"{100 * value:.1f}"
    return text.replace("-", "−")


def _range_text(low, high) -> str:
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}–{int(high)}"


def _share_text(p: float) -> str:
    if 0.9995 <= p < 1:
        return ">99.9%"
    if 0 < p < 0.0005:
        return "<0.1%"
    return f"{100 * p:.1f}%"


def display_table(table: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """A human-readable view of a rank table: points for scores and gaps, ranges as text."""
    pct = f"{100 * level:g}%"
    rows = []
    for row in table.itertuples(index=False):
        gap = (
            "—"
            if pd.isna(row.gap)
            else f"{_points(row.gap, True)} ({_points(row.gap_low, True)} to {_points(row.gap_high, True)})"
        )
        rows.append(
            {
                "#": int(row.position),
                "system": row.name,
                "score %": _points(row.score),
                f"{pct} CI": f"{_points(row.ci_low)}–{_points(row.ci_high)}",
                f"gap to next, points ({pct} CI)": gap,
                "separated": "—" if pd.isna(row.separated) else ("yes" if row.separated else "no"),
                "tier": int(row.tier),
                "P(first)": _share_text(float(row.p_first)),
                f"{pct} rank range": _range_text(row.rank_low, row.rank_high),
                "note": row.note or "",
            }
        )
    return pd.DataFrame(rows)


def readings_display(table: pd.DataFrame, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Unpaired and paired readings side by side, one row per system (for Markdown)."""
    pct = f"{100 * level:g}%"
    unpaired = table[table["reading"] == "unpaired"].set_index("name")
    paired = table[table["reading"] == "paired"].set_index("name")
    rows = []
    for name, u in unpaired.iterrows():
        p = paired.loc[name] if name in paired.index else None

        def gap_text(r):
            if r is None or pd.isna(r["gap"]):
                return "—"
            mark = " *" if bool(r["separated"]) else ""
            return f"{_points(r['gap_low'], True)} to {_points(r['gap_high'], True)}{mark}"

        rows.append(
            {
                "#": int(u["position"]),
                "model": name,
                "score %": f"{_points(u['score'])} ({_points(u['ci_low'])}–{_points(u['ci_high'])})",
                "gap to next": _points(u["gap"], True) if not pd.isna(u["gap"]) else "—",
                "gap CI, unpaired": gap_text(u),
                "gap CI, paired": gap_text(p),
                "tier unpaired / paired": f"{int(u['tier'])} / {int(p['tier']) if p is not None else '—'}",
                "P(first) unpaired / paired": f"{_share_text(u['p_first'])} / "
                + (_share_text(p["p_first"]) if p is not None else "—"),
                f"{pct} rank range unpaired / paired": f"{_range_text(u['rank_low'], u['rank_high'])} / "
                + (_range_text(p["rank_low"], p["rank_high"]) if p is not None else "—"),
            }
        )
    return pd.DataFrame(rows)


def report_markdown(report: RankReport) -> str:
    """The headline, a Markdown table of the report and its method line."""
    from .report import to_markdown

    shown = display_table(report.table, report.level)
    right = [c for c in shown.columns if c not in ("system", "note", "separated")]
    if not shown["note"].astype(bool).any():
        shown = shown.drop(columns="note")
    return f"{report.headline}\n\n" + to_markdown(shown, align_right=right) + f"\n{report.method}\n"


def readings_markdown(table: pd.DataFrame, reports) -> str:
    """Both readings side by side, with both headlines (the workflow's ranks.md)."""
    from .report import to_markdown

    level = reports[0].level
    shown = readings_display(table, level)
    right = [c for c in shown.columns if c != "model"]
    lines = [f"- **{r.reading}**: {r.headline}. {r.method}" for r in reports]
    return (
        "\n".join(lines)
        + "\n\n"
        + to_markdown(
            shown,
            caption=f"Scores with {100 * level:g}% Wilson intervals; gap intervals to the next model "
            "(* = separated, the interval excludes zero); tiers start at every separated "
            "adjacent pair; P(first) and central rank ranges over the plausible worlds.",
            align_right=right,
        )
    )


def report_json(report: RankReport) -> str:
    """The report as a JSON document: settings, headline and one record per system."""
    records = json.loads(report.table.to_json(orient="records", double_precision=15))
    document = {
        "headline": report.headline,
        "reading": report.reading,
        "level": report.level,
        "draws": report.draws,
        "seed": report.seed,
        "method": report.method,
        "systems": records,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- Figures -------------------------------------------------------------------------------------


def _readings(table: pd.DataFrame) -> list:
    if "reading" not in table.columns:
        return [("unpaired", table)]
    return [
        (r, table[table["reading"] == r].sort_values("position"))
        for r in table["reading"].drop_duplicates()
    ]


def _tier_finding(readings) -> str:
    parts = [
        f"{int(t['tier'].max())} tier{'s' if t['tier'].max() != 1 else ''} {r}" for r, t in readings
    ]
    n = len(readings[0][1])
    return f"{n} models form " + (" but ".join(parts) if len(parts) == 2 else parts[0])


def forest_figure(table: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Forest plot: every system's score and interval, tiers shaded; one panel per reading.

    Parameters
    ----------
    table : DataFrame
        A rank table, or the two-reading table of :func:`ranks_readings`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import PALETTE, figure, percent_axis

    readings = _readings(table)
    n = len(readings[0][1])
    # Each panel keeps its own y axis: with incomplete data the readings can order the
    # systems differently, and tiers are runs of neighbours in each reading's own order.
    with figure(1, len(readings), figsize=(5.2 * len(readings), 0.55 * n + 1.8), squeeze=False) as (
        fig,
        axes,
    ):
        for ax, (reading, t) in zip(axes[0], readings):
            y = np.arange(n)
            for tier, rows in t.groupby("tier"):
                ys = y[rows["position"].to_numpy() - 1]
                ax.axhspan(
                    ys.min() - 0.45, ys.max() + 0.45, color="0.88" if tier % 2 else "0.96", zorder=0
                )
                ax.text(
                    0.99,
                    ys.mean(),
                    f"tier {tier}",
                    transform=ax.get_yaxis_transform(),
                    ha="right",
                    va="center",
                    fontsize=9,
                    color="0.3",
                )
            colour = PALETTE[0] if reading == "unpaired" else PALETTE[2]
            ax.errorbar(
                t["score"],
                y,
                xerr=[t["score"] - t["ci_low"], t["ci_high"] - t["score"]],
                fmt="o",
                color=colour,
                ecolor=colour,
                capsize=3,
                markersize=5,
                zorder=3,
            )
            for i, row in enumerate(t.itertuples(index=False)):
                if i < n - 1 and bool(row.separated):
                    ax.axhline(i + 0.5, color=PALETTE[3], linewidth=1.2, linestyle="--", zorder=2)
            ax.set_yticks(y, t["name"])
            percent_axis(ax.xaxis)
            ax.set_xlabel(f"score with {100 * level:g}% interval")
            ax.set_title(
                f"{reading}: dashed line = separated neighbours", fontsize=9, fontweight="normal"
            )
        for ax in axes[0]:
            ax.invert_yaxis()
        fig.suptitle(_tier_finding(readings), fontweight="bold")
    return fig


def rank_range_figure(table: pd.DataFrame, level: float = DEFAULT_LEVEL):
    """Each system's central rank range (left) and P(first) (right), one bar per reading.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import PALETTE, figure, percent_axis

    readings = _readings(table)
    n = len(readings[0][1])
    # One row per system: align every reading on the first reading's order, by name.
    names = readings[0][1]["name"].to_numpy()
    aligned = [(r, t.set_index("name").loc[names].reset_index()) for r, t in readings]
    colours = {"unpaired": PALETTE[0], "paired": PALETTE[2]}
    height = 0.7 / len(readings)
    offsets = (np.arange(len(readings)) - (len(readings) - 1) / 2) * height
    with figure(
        1, 2, figsize=(8.5, 0.6 * n + 2.0), sharey=True, gridspec_kw={"width_ratios": [3, 1.4]}
    ) as (fig, (ax_rank, ax_first)):
        y = np.arange(n)
        for offset, (reading, t) in zip(offsets, aligned):
            colour = colours.get(reading, PALETTE[1])
            ax_rank.barh(
                y + offset,
                t["rank_high"] - t["rank_low"] + 0.8,
                left=t["rank_low"] - 0.4,
                height=height * 0.9,
                color=colour,
                alpha=0.85,
                label=f"{reading}: central {100 * level:g}% rank range",
            )
            ax_first.barh(y + offset, t["p_first"], height=height * 0.9, color=colour, alpha=0.85)
            for yi, p in zip(y + offset, t["p_first"]):
                ax_first.text(
                    min(p, 1.0) + 0.02,
                    yi,
                    _percent_text(float(p)),
                    va="center",
                    fontsize=8,
                    color=colour,
                )
        ax_rank.plot(y + 1, y, "k|", markersize=16, markeredgewidth=2, label="nominal rank")
        ax_rank.set_yticks(y, names)
        ax_rank.invert_yaxis()
        ax_rank.set_xticks(np.arange(1, n + 1))
        ax_rank.set_xlim(0.4, n + 0.6)
        ax_rank.set_xlabel("rank (1 = best)")
        ax_rank.grid(axis="y", visible=False)
        ax_first.set_xlim(0, 1.25)
        ax_first.set_xticks([0, 0.5, 1])
        percent_axis(ax_first.xaxis)
        ax_first.set_xlabel("P(first)")
        handles, labels = ax_rank.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        leaders = {t["name"].iloc[0] for _, t in readings}
        if len(leaders) == 1:
            leader = " and ".join(
                f"{_percent_text(float(t['p_first'].iloc[0]))} ({r})" for r, t in readings
            )
            title = f"{names[0]} is first in {leader} of plausible worlds"
        else:
            title = (
                "; ".join(
                    f"{r}: {t['name'].iloc[0]} first in {_percent_text(float(t['p_first'].iloc[0]))}"
                    for r, t in readings
                )
                + " of plausible worlds"
            )
        fig.suptitle(title, fontweight="bold")
    return fig
