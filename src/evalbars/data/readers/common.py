"""What every reader returns: raw rows in one layout, checked the same way.

Raw rows carry :data:`RAW_COLUMNS`: ``model, question_id, run, epoch, category, src,
answer, pred, n_options, correct, source_file, source_path, record``. A **run** is one
invocation of a harness (one lm-eval results file, one Inspect log, one lighteval timestamp, or
a ``run`` column of a table) and ``epoch`` numbers a question's samples within it; a reader that
keeps one run per model (``runs: only`` or ``newest``) labels it :data:`DEFAULT_RUN`, and with
``runs: all`` each run is labelled by its source's identity (the results file's timestamp, the
log's run id).
``correct`` is the score (1 right, 0 wrong, a fraction for partial credit) and
null where the source has no prediction; :mod:`evalbars.data.items` decides what a
missing prediction counts as. ``source_file`` is the file's name (for tables),
``source_path`` the path as given (for messages), ``record`` the position a
message names. ``frame.attrs`` carries ``skipped_entries`` (entries a reader
skipped as not records), ``missing_means`` (what made a row a missing
prediction in that format) and ``errored_samples`` (samples the harness logged
as errored, counted among the missing predictions). ``record`` is 1-based in every
reader: the data row of a table, the entry of a JSON list, the line of a JSON-lines
file, the sample of a log.

Messages that tell the user how to fix a problem word the remedy for where the
user gives reader options (:func:`option_hint`): a key of a ``predictions`` entry
in the config (``set `runs: newest` on this predictions entry``), or a flag of
``evalbars read`` (``pass `--runs newest```) once the command line has called
:func:`set_hint_style` with ``"cli"``.
"""

from __future__ import annotations

import math
import os
import shlex
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.codes import as_category, index_codes, mark_cells
from evalbars.errors import CONTROL_CHARACTERS, InputError, control_character, plain

__all__ = [
    "HINT_STYLES",
    "option_hint",
    "set_hint_style",
    "RAW_COLUMNS",
    "TEXT_COLUMNS",
    "DEFAULT_N_OPTIONS",
    "few",
    "RUN_POLICIES",
    "DEFAULT_RUN",
    "RUNS_ALL",
    "newest_remedy",
    "choose_newest",
    "choose_runs",
    "finish_frame",
    "check_question_id",
    "blank_cells",
    "LABEL_COLUMN",
    "SPELLINGS",
    "check_spellings",
    "spelling_difference",
]

RAW_COLUMNS = [
    "model",
    "question_id",
    "run",
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
#: The optional column of human labels (gold scores in [0, 1]) beside a judge's ``correct``:
#: NaN where no person labelled the row (:mod:`evalbars.data.labels`). Raw rows and the item
#: table carry it only when some source gives it.
LABEL_COLUMN = "human"
#: Text columns, held as categoricals with sorted string categories: a leaderboard of a thousand
#: models repeats each model name and category twelve thousand times.
TEXT_COLUMNS = ["model", "run", "category", "src", "answer", "pred", "source_file", "source_path"]
#: What a source with several runs of a model may do (``runs:``): refuse them (``only``), keep
#: the newest, or keep ``all``, each a run of its own.
RUN_POLICIES = ("only", "newest", "all")
#: The run label of rows a reader does not tell apart by run (one run per model).
DEFAULT_RUN = "1"
#: ``frame.attrs`` key of the frames of an entry that reads every run (``runs: all``), which
#: :func:`evalbars.data.items.join_sources` lets share their models with other such frames.
RUNS_ALL = "runs_all"
#: Options assumed when a source does not say how many a question has (MMLU-Pro's A-J).
DEFAULT_N_OPTIONS = 10
#: Where reader options are given: keys of a config ``predictions`` entry, or command-line flags.
HINT_STYLES = ("config", "cli")
# A workflow run on the command line's behalf (`evalbars report`) words its remedies as flags.
_HINTS = {"style": "cli" if os.environ.get("EVALBARS_HINT_STYLE") == "cli" else "config"}
#: Flags whose name is not the key's (``tasks:`` is the repeatable ``--task``).
_FLAGS = {"tasks": "--task"}


def hint_style() -> str:
    """How remedies are worded now: ``config`` (keys) or ``cli`` (flags); see
    :func:`set_hint_style`."""
    return _HINTS["style"]


def set_hint_style(style: str) -> str:
    """Word every remedy for ``style`` (:data:`HINT_STYLES`) from now on; returns the previous
    style. The command line calls ``set_hint_style("cli")`` once, before reading."""
    if style not in HINT_STYLES:
        raise ValueError(f"hint style must be one of {HINT_STYLES}, got {style!r}")
    previous, _HINTS["style"] = _HINTS["style"], style
    return previous


def option_hint(key: str, value=None, *, entry: bool = True) -> str:
    """The remedy "give reader option ``key`` (the value ``value``)", worded for where the
    user gives options (:func:`set_hint_style`).

    ``value`` None names the option without a value; True is a switch; a list is several
    values (one flag each on the command line). ``entry`` False leaves out "on this
    predictions entry" where the sentence already says where.

    Examples
    --------
    >>> option_hint("runs", "newest")
    'set `runs: newest` on this predictions entry'
    >>> option_hint("tasks", ["a", "b"])
    'set `tasks: [a, b]` on this predictions entry'
    >>> previous = set_hint_style("cli")
    >>> option_hint("runs", "newest"), option_hint("allow_partial", True)
    ('pass `--runs newest`', 'pass `--allow-partial`')
    >>> option_hint("tasks", ["a", "b"]), option_hint("scorer")
    ('pass `--task a --task b`', 'pass `--scorer NAME`')
    >>> option_hint("tasks", "synthq_mc|0")  # quoted for the shell, which reads | as a pipe
    "pass `--task 'synthq_mc|0'`"
    >>> _ = set_hint_style(previous)
    """
    if _HINTS["style"] == "cli":
        flag = _FLAGS.get(key, "--" + key.replace("_", "-"))
        if value is True:
            return f"pass `{flag}`"
        values = value if isinstance(value, (list, tuple)) else [value]
        words = [f"{flag} {shlex.quote(str(v)) if v is not None else 'NAME'}" for v in values]
        return "pass `" + " ".join(words) + "`"
    if value is None:
        setting = f"{key}:"
    elif isinstance(value, bool):
        setting = f"{key}: {str(value).lower()}"
    elif isinstance(value, (list, tuple)):
        setting = f"{key}: [{', '.join(map(str, value))}]"
    else:
        setting = f"{key}: {value}"
    return f"set `{setting}`" + (" on this predictions entry" if entry else "")


def few(names, shown: int = 3) -> str:
    """Up to ``shown`` names and how many more: a message never lists dozens of names.

    >>> few(["a", "b", "c", "d", "e"])
    "'a', 'b', 'c' and 2 more"
    """
    names = list(names)
    text = ", ".join(repr(n) for n in names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def newest_remedy(all_runs: bool = True) -> str:
    """The end of every "two runs" refusal: keep one, ask for the newest, or (where the format
    reads several runs, ``all_runs``) read each as a run (worded by :func:`option_hint` for the
    config or the command line).

    >>> newest_remedy()
    'keep one, or set `runs: newest` on this predictions entry to use the newest (`runs: all` reads each as a run)'
    """
    remedy = f"keep one, or {option_hint('runs', 'newest')} to use the newest"
    if not all_runs:
        return remedy
    every = option_hint("runs", "all", entry=False).split(" ", 1)[1]
    return f"{remedy} ({every} reads each as a run)"


def choose_newest(
    groups: dict, runs: str, what: str, *, folder=None, listed=few, all_runs: bool = False
) -> dict:
    """One run per (model, task): the only one, or the newest when ``runs`` is ``newest``.

    Parameters
    ----------
    groups : dict
        ``{(model, task): [(when, name, path), ...]}``, candidates in reading order; ``when``
        sorts them oldest first (ties by ``name``, then ``path``).
    runs : str
        ``only`` (refuse a group with two candidates) or ``newest``.
    what : str
        What a candidate is, plural, for the message (``runs``, ``logs``).
    folder : callable, optional
        The file the refusal names, from a group's candidates; default the folder of the
        first one read.
    listed : callable
        Formats the candidates' names, oldest first (default :func:`few`).
    all_runs : bool
        Whether the format reads every run (``runs: all``, :func:`choose_runs`): the refusal
        then says so. A format that does not refuses ``all`` as it refuses ``only``.

    Returns
    -------
    dict
        ``{(model, task): path}`` of the newest candidate of every group, in ``groups`` order.

    Raises
    ------
    InputError
        ``"<n> <what> of model 'M' on task 'T' (<names>); keep one, or ..."`` for the first
        group with two candidates, unless ``runs`` is ``newest``.

    Examples
    --------
    >>> groups = {("m", "t"): [(2, "b.json", "b"), (1, "a.json", "a")]}
    >>> choose_newest(groups, "newest", "runs")
    {('m', 't'): 'b'}
    """
    chosen = {}
    for (model, task), candidates in groups.items():
        if len(candidates) > 1 and runs != "newest":
            names = listed(name for _, name, _ in sorted(candidates))
            where = folder(candidates) if folder else Path(candidates[0][2]).parent
            raise InputError(
                where,
                f"{len(candidates)} {what} of model {model!r} on task {task!r} ({names}); "
                + newest_remedy(all_runs=all_runs and runs != "all"),
            )
        chosen[model, task] = max(candidates)[2]
    return chosen


def choose_runs(groups: dict, runs: str, what: str, *, folder=None, listed=few) -> dict:
    """The runs of every (model, task) to read: all of them, oldest first, when ``runs`` is
    ``all``; else the one :func:`choose_newest` keeps.

    Parameters
    ----------
    groups, runs, what, folder, listed
        As :func:`choose_newest`; ``runs`` one of :data:`RUN_POLICIES`.

    Returns
    -------
    dict
        ``{(model, task): [path, ...]}``, in ``groups`` order.

    Examples
    --------
    >>> groups = {("m", "t"): [(2, "b.json", "b"), (1, "a.json", "a")]}
    >>> choose_runs(groups, "all", "runs"), choose_runs(groups, "newest", "runs")
    ({('m', 't'): ['a', 'b']}, {('m', 't'): ['b']})
    """
    if runs == "all":
        return {key: [path for *_, path in sorted(found)] for key, found in groups.items()}
    chosen = choose_newest(groups, runs, what, folder=folder, listed=listed, all_runs=True)
    return {key: [path] for key, path in chosen.items()}


def check_question_id(value, path, record):
    """A question id as given, or an InputError: ids are non-empty integers or strings."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        raise InputError(
            path, f"question_id must be a non-empty integer or string, got {value!r}", record
        )
    return value


#: Integer columns held in compact types: twelve million rows of int64 epochs would take 96 MB.
_COMPACT = {"epoch": np.int32, "n_options": np.int16}


def finish_frame(
    frame: pd.DataFrame,
    path,
    *,
    missing_means: str,
    skipped_entries: int = 0,
    errored_samples: int = 0,
) -> pd.DataFrame:
    """Complete a reader's rows to :data:`RAW_COLUMNS` (and :data:`LABEL_COLUMN` where the
    reader gives it) and check them.

    Fills the optional columns (``run`` :data:`DEFAULT_RUN`, ``epoch`` 1,
    ``category``/``src``/``answer``/``pred`` null,
    ``n_options`` :data:`DEFAULT_N_OPTIONS`), adds the source columns (``path``,
    unless the frame has its own) and the ``attrs``, holds :data:`TEXT_COLUMNS` as
    categoricals (:func:`~evalbars.data.codes.as_category`; a ``run`` label as text), and refuses
    a (model, question, run, epoch) that occurs twice, naming the file that holds the repeat (its ``source_path``); ``path`` is
    the file other errors name.
    """
    path = Path(path)
    rows = len(frame)
    defaults = {
        "epoch": np.ones(rows, dtype=np.int32),
        "n_options": np.full(rows, DEFAULT_N_OPTIONS, dtype=np.int16),
    }
    for column in ("category", "src", "answer", "pred"):
        defaults[column] = pd.Categorical.from_codes(
            np.full(rows, -1, dtype=np.int8), categories=pd.Index([], dtype="str")
        )
    defaults["run"] = _one_label(rows, DEFAULT_RUN)
    if "source_file" not in frame.columns:  # readers of several files set their own
        defaults["source_file"] = _one_label(rows, path.name)
        defaults["source_path"] = _one_label(rows, str(path))
    elif "source_path" not in frame.columns:  # an item table evalbars wrote keeps source_file
        defaults["source_path"] = _one_label(rows, str(path))
    # One column at a time into a new frame, each compacted as it goes (text as categoricals,
    # int32 epochs, int16 option counts), the columns the source lacks from their defaults: no
    # whole-table copy of a board's hundred million rows, and no copy of a default either.
    columns = {}
    for column in RAW_COLUMNS:
        if column in frame.columns:
            values = frame[column].reset_index(drop=True)
        else:
            values = pd.Series(defaults[column], copy=False)
        if column == "run" and not isinstance(values.dtype, pd.CategoricalDtype):
            values = _run_labels(values)
        if column in TEXT_COLUMNS:
            values = as_category(values)
        elif column in _COMPACT and pd.api.types.is_integer_dtype(values):
            values = values.astype(_COMPACT[column])
        columns[column] = values
    if LABEL_COLUMN in frame.columns:
        columns[LABEL_COLUMN] = frame[LABEL_COLUMN].reset_index(drop=True).astype(float)
    attrs = dict(frame.attrs)
    del frame
    frame = pd.DataFrame(columns, copy=False)
    frame.attrs.update(attrs)
    frame.attrs.update(
        skipped_entries=int(skipped_entries),
        missing_means=missing_means,
        errored_samples=int(errored_samples),
    )
    _check_scales(frame)
    _check_names(frame)
    _normalise_names(frame)
    _check_unique_questions(frame)
    return frame


def _run_labels(values: pd.Series) -> pd.Series:
    """Run labels as text: whole numbers as written without a decimal point (a table's ``run``
    column of 1 and 2 read as floats where a cell is empty)."""
    if pd.api.types.is_float_dtype(values):
        whole = values.dropna()
        if (whole == np.floor(whole)).all():
            values = values.astype("Int64")
    return values.astype("string").astype(object).where(values.notna(), None)


def _one_label(rows: int, label: str) -> pd.Categorical:
    """``label`` on every one of ``rows`` rows, as a categorical (codes of its own)."""
    return pd.Categorical.from_codes(np.zeros(rows, dtype=np.int8), categories=[label])


def _check_scales(frame: pd.DataFrame) -> None:
    """Refuse, naming the file and record, a score outside [0, 1] and a question with no
    option, whatever the format (a harness log may hold any number; MMLU-Pro has questions
    with a single option)."""
    scores, options = (_as_numbers(frame[column]) for column in ("correct", "n_options"))
    for bad, problem in (
        (
            _outside(scores, 0, 1),
            lambda i: (
                f"a score must be in [0, 1] (1 right, 0 wrong, a fraction for partial "
                f"credit), got {plain(scores[i])!r}"
            ),
        ),
        (
            _outside(options, 1, np.inf),
            lambda i: f"a question has at least 1 option, got n_options {plain(options[i]):g}",
        ),
    ):
        if bad is not None:
            i = int(bad.argmax())
            raise InputError(
                frame["source_path"].iloc[i], problem(i), plain(frame["record"].iloc[i])
            )


def _outside(numbers: np.ndarray, low, high) -> np.ndarray | None:
    """Where ``numbers`` (NaN aside) lie outside [``low``, ``high``], or None where none does.

    Integers are judged by their range first: no mask of a board's every row unless some
    number is outside it."""
    if numbers.dtype.kind in "iu" and (
        not len(numbers) or (numbers.min() >= low and numbers.max() <= high)
    ):
        return None
    with np.errstate(invalid="ignore"):
        bad = ~np.isnan(numbers) & ((numbers < low) | (numbers > high))
    return bad if bad.any() else None


def _as_numbers(values: pd.Series) -> np.ndarray:
    """A column as numbers, NaN where it is null or not a number. Integers without nulls
    (0/1 scores, option counts) are returned as they are: nothing to coerce, and a float copy
    of a board's every row would cost 8 bytes each."""
    if pd.api.types.is_integer_dtype(values) and not values.hasnans:
        return values.to_numpy()
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _check_names(frame: pd.DataFrame) -> None:
    """Refuse, naming the file and record, a model or category name holding a control character
    (:func:`~evalbars.errors.control_character`). Judged once per distinct name."""
    for column in ("model", "category"):
        names = frame[column].cat.categories
        bad = np.asarray(names.str.contains(CONTROL_CHARACTERS.pattern, regex=True), dtype=bool)
        if not bad.any():
            continue
        code = int(bad.argmax())
        i = int((frame[column].cat.codes.to_numpy() == code).argmax())
        raise InputError(
            frame["source_path"].iloc[i],
            control_character(f"{column} name", str(names[code])),
            plain(frame["record"].iloc[i]),
        )


#: ``frame.attrs`` key: ``{column: {NFC name: the name as the source spells it}}`` for the model
#: and category names :func:`finish_frame` normalised (:func:`spelling_difference`).
SPELLINGS = "spellings"


def _normalise_names(frame: pd.DataFrame) -> None:
    """Model and category names in Unicode NFC, in place, so that a name means one string
    however a file spells it (``'é'`` as U+00E9, or as ``e`` and the combining U+0301 that
    macOS file names and some tokenizers write); the source's spellings that changed go in
    ``frame.attrs[SPELLINGS]`` (:func:`evalbars.data.items.join_sources` compares them across
    files).

    Two spellings of one model in one file are refused, naming both records: they would be
    analysed as one model though the file writes them as two. Categories so spelled are one
    category (canonically equivalent text). Judged once per distinct name; ASCII names pass.
    """
    spellings = {}
    for column in ("model", "category"):
        names = frame[column].cat.categories
        if not len(names) or names.str.isascii().all():
            continue
        normal = pd.Index([unicodedata.normalize("NFC", name) for name in names], dtype="str")
        changed = normal != names
        if not changed.any():
            continue
        spellings[column] = dict(zip(normal[changed], names[changed], strict=True))
        codes = frame[column].cat.codes.to_numpy()
        if normal.has_duplicates:
            if column == "model":
                _refuse_two_spellings(frame, names, normal)
            merged, normal = pd.factorize(normal)  # (sorted names stay sorted: as_category)
            codes = np.where(codes >= 0, merged[codes], -1)
        frame[column] = as_category(pd.Categorical.from_codes(codes, categories=normal))
    if spellings:
        frame.attrs[SPELLINGS] = spellings


def _refuse_two_spellings(frame: pd.DataFrame, names: pd.Index, normal: pd.Index) -> None:
    """The InputError for one model name spelled two ways in one file, naming both records."""
    clash = normal[normal.duplicated()][0]
    first_code, second_code = np.flatnonzero(normal == clash)[:2]
    codes = frame["model"].cat.codes.to_numpy()
    first, second = (int((codes == code).argmax()) for code in (first_code, second_code))
    first, second = sorted((first, second))
    spelled = [str(frame["model"].iloc[row]) for row in (first, second)]
    raise InputError(
        frame["source_path"].iloc[second],
        f"model names {spelling_difference(*spelled)}, in records "
        f"{plain(frame['record'].iloc[first])} and {plain(frame['record'].iloc[second])}: "
        "they would print alike as two models; write the name one way",
        plain(frame["record"].iloc[second]),
    )


def check_spellings(frames) -> dict:
    """Refuse a model whose name two of ``frames`` spell differently (Unicode forms that
    :func:`finish_frame` normalised alike), naming both files; return ``{model: spelling}``
    of the names some frame spelled otherwise than NFC."""
    frames = list(frames)
    respelled = {
        model for frame in frames for model in frame.attrs.get(SPELLINGS, {}).get("model", {})
    }
    if not respelled:  # every name as its file spells it (and NFC): nothing to compare
        return {}
    spelled: dict = {}  # each model's name as the first frame holding it spells it, and where
    for frame in frames:
        spellings = frame.attrs.get(SPELLINGS, {}).get("model", {})
        models = frame["model"]
        for model in respelled.intersection(models.dropna().unique()):
            spelling = spellings.get(model, model)
            if model in spelled and spelled[model][0] != spelling:
                row = int((models == model).to_numpy().argmax())
                raise InputError(
                    frame["source_path"].iloc[row],
                    f"model names {spelling_difference(spelled[model][0], spelling)}, the first "
                    f"in {spelled[model][1]}: they print alike; write the name alike in every "
                    "file (or rename one if they are two models)",
                    plain(frame["record"].iloc[row]),
                )
            spelled.setdefault(model, (spelling, frame["source_path"].iloc[0]))
    return {model: spelling for model, (spelling, _) in spelled.items() if spelling != model}


def spelling_difference(a: str, b: str) -> str:
    r"""Two spellings of one name and the code points they differ in (they print alike).

    Examples
    --------
    >>> spelling_difference("caf\u00e9", "cafe\u0301").split(" differ ")[1]
    'only in Unicode normalisation (U+00E9 against U+0065 U+0301)'
    """
    start = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    points = [" ".join(f"U+{ord(c):04X}" for c in text[start : len(text) - end]) for text in (a, b)]
    return f"{a!r} and {b!r} differ only in Unicode normalisation ({points[0]} against {points[1]})"


def blank_cells(values: pd.Series) -> np.ndarray:
    """Boolean array: True where a cell is null, or text that is empty or only whitespace.

    Numbers and booleans are blank only when null. Text is judged once per distinct value.
    """
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return values.isna().to_numpy()
    if isinstance(values.dtype, pd.CategoricalDtype):  # its codes already are a factorisation
        codes, uniques = values.array.codes, values.cat.categories
    else:
        codes, uniques = pd.factorize(values)
    blank = pd.Index(np.asarray(uniques, dtype=object)).astype("str").str.strip() == ""
    if not blank.any():  # (the usual case: only nulls are blank, no lookup per row)
        return codes < 0
    # Code -1 (null) picks the appended True.
    return np.append(blank, True)[codes]


def _check_unique_questions(frame: pd.DataFrame) -> None:
    key = ["model", "question_id", "run", "epoch"]
    codes, sizes = [], []
    for column in key:
        values = frame[column]
        if pd.api.types.is_integer_dtype(values) and len(values) and values.min() == values.max():
            continue  # one epoch, as in most tables: nothing to tell rows apart by
        if isinstance(values.dtype, pd.CategoricalDtype) and len(values.cat.categories) == 1:
            continue  # one run
        column_codes, labels = index_codes(values)
        codes.append(column_codes)
        sizes.append(len(labels))
    if not codes:  # one model, question, run and epoch: every row is the same
        codes, sizes = [np.zeros(len(frame), dtype=np.int8)], [1]
    cells = math.prod(sizes)
    if cells <= 4 * len(frame) + 1024:
        # A board where most models answer most questions: mark each cell, one pass (no cell
        # number per row: mark_cells); count them only if some cell is marked twice.
        seen = np.zeros(sizes, dtype=bool)
        mark_cells(seen, codes)
        if np.count_nonzero(seen) == len(frame):
            return
        del seen
        cell = np.ravel_multi_index(codes, sizes)
        repeated = np.flatnonzero(np.bincount(cell, minlength=cells) > 1)
    else:
        # Sorting finds repeats far faster than hashing millions of distinct keys.
        cell = np.ravel_multi_index(codes, sizes)
        ordered = np.sort(cell)
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        del ordered
    if not len(repeated):
        return
    dup = pd.Series(np.isin(cell, repeated))
    first = frame.loc[dup].iloc[0]
    same = dup & (frame[key] == first[key]).all(axis=1)
    records = frame.loc[same, "record"].tolist()
    # The file that holds the repeat (an lm-eval samples file, not the results file the reader
    # was given); records in other files are named with theirs.
    files = [str(name) for name in frame.loc[same, "source_path"]]
    shown = [
        f"{record}" if name == files[1] else f"{record} of {name}"
        for record, name in zip(records, files, strict=True)
    ]
    records_text = f"[{', '.join(shown)}]" if len(set(files)) > 1 else f"{records}"
    epoch = f" in epoch {plain(first['epoch'])}" if (frame["epoch"] != 1).any() else ""
    if frame["run"].nunique() > 1:
        epoch = f" in run {first['run']!s}" + epoch
    raise InputError(
        files[1],
        f"question_id {plain(first['question_id'])!r} occurs {len(records)} times for model "
        f"{first['model']!r}{epoch} (records {records_text})",
        plain(records[1]),
    )
