"""Token usage per (model, question, epoch), from the logs and tables that record it.

A cost per (model, question) is tokens times a price (:mod:`evalbars.data.prices`), or a cost a
log records. :func:`read_usage` reads the tokens from the same files, with the same options, as
the item readers (it reads the entry with :func:`~evalbars.data.readers.read_source` first), so
its question ids and epochs are the item table's:

- **Inspect** (``.eval`` and ``.json``): the sample's ``model_usage`` entry of the evaluated
  model (``eval.model``), which Inspect sums over the sample's calls to it (a solver that asks
  twice, an agent's turns). Other models' tokens (a grader bound through ``model_roles``) are
  not the evaluated model's cost and are left out. When a role is bound to the evaluated model
  itself (a model grading its own answers) Inspect adds both roles' calls under the one name,
  and the role's own ``role_usage`` entry is subtracted. ``input_tokens`` and
  ``output_tokens`` are as Inspect records them (the provider's counts; providers differ in
  whether cache reads and reasoning tokens are included in them). ``cost`` is the usage's
  ``total_cost``, which Inspect records when it has the model's prices (``set_model_info``,
  ``--model-cost-config``), with the same subtraction. A sample without an entry for the
  evaluated model gives no row (it made no call that Inspect counted: it errored first, or was
  answered from Inspect's cache, whose hits record no usage);
- **HELM** (a run folder's ``per_instance_stats.json``): per instance, train trial and split,
  ``num_prompt_tokens`` (counted by HELM with the deployment's tokenizer) and
  ``num_output_tokens`` (the completions' tokens, less an echoed prompt; else
  ``num_completion_tokens``). Their ``sum``, not their ``mean``: a run that sends one request
  per answer choice merges the requests' statistics into one (``count`` requests), and the
  cost is all of them. The split, perturbation and runs are those the HELM item reader reads;
  HELM records no cost;
- **tables** (CSV, TSV, Parquet) with ``model``, ``question_id``, optional ``epoch``, and
  ``input_tokens`` and ``output_tokens``, or ``cost``, or all three: a predictions table with
  these columns beside its scores, or a usage table of their own (no score column; then
  :func:`join_usage` checks its rows against the item table). Empty cells: the row records no
  usage (no row).

Rows: ``model, question_id, epoch, input_tokens, output_tokens, cost`` (nullable: ``cost`` is
empty where nothing records one, the tokens where only a cost is recorded), and ``source_path``
and ``record`` for messages. Bad values are refused in one line naming the file, the record
(1-based: the item readers' record numbers for a table and an Inspect log, the position in
``per_instance_stats.json`` for HELM) and the problem: tokens that are negative, fractional or
not numbers, a negative cost, a role's tokens larger than the model's, the same (model,
question, epoch) twice, and token usage for a sample that has no score (no row in the item
table: :func:`join_usage`; a HELM instance with token statistics but no score).

References
----------
.. [1] UK AI Security Institute, Inspect AI (https://inspect.aisi.org.uk/): ``EvalSample.model_usage``,
   ``EvalSample.role_usage`` and ``ModelUsage`` (``total_cost``), inspect-ai 0.3.285.
.. [2] Liang et al., "Holistic Evaluation of Language Models", arXiv:2211.09110; crfm-helm
   0.5.16, ``helm.benchmark.metrics.efficiency_metrics.EfficiencyMetric``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers import SourceOptions, detect_format, read_source
from evalbars.data.readers.archives import member_names, open_archive, read_member
from evalbars.data.readers.common import check_question_id
from evalbars.data.readers.helm import run_identity
from evalbars.data.readers.long_tables import TABLE_SUFFIXES, load_table, normalise_ids
from evalbars.errors import InputError, plain

__all__ = [
    "USAGE_COLUMNS",
    "TOKEN_COLUMNS",
    "HELM_INPUT_STAT",
    "HELM_OUTPUT_STATS",
    "read_usage",
    "join_usage",
]

#: The columns of a usage table.
USAGE_COLUMNS = [
    "model",
    "question_id",
    "epoch",
    "input_tokens",
    "output_tokens",
    "cost",
    "source_path",
    "record",
]
#: Token columns, in a usage table and in a predictions table beside its scores.
TOKEN_COLUMNS = ("input_tokens", "output_tokens")
#: HELM's statistic of the prompt's tokens, and of the output's (preferred first).
HELM_INPUT_STAT = "num_prompt_tokens"
HELM_OUTPUT_STATS = ("num_output_tokens", "num_completion_tokens")
_KEY = ["model", "question_id", "epoch"]
_SAMPLE_MEMBER = re.compile(r"samples/.+_epoch_\d+\.json")
_SCORE_COLUMNS = {"correct", "pred"}
_NO_USAGE = (
    "records no token usage (evalbars reads it from Inspect logs, HELM runs, and tables with "
    "input_tokens and output_tokens or cost columns)"
)


def read_usage(
    path, options: SourceOptions | None = None, *, required: bool = True
) -> pd.DataFrame:
    """The token usage (and recorded cost) of one predictions entry, per (model, question, epoch).

    Parameters
    ----------
    path : path-like
        What a predictions entry names: an Inspect log, a HELM run or suite folder, a table, or
        a folder of them; or a usage table of its own (``model, question_id[, epoch],
        input_tokens, output_tokens[, cost]`` without a score column).
    options : SourceOptions, optional
        The entry's reader options (HELM's ``split`` and ``perturbation``, ``runs``, Inspect's
        ``allow_partial``, ...), so that the rows are those the item readers read. A folder's
        usage tables (no score column) beside its logs are read too.
    required : bool
        Refuse an entry that records no token usage (default); False gives no rows instead
        (one entry of several, the others recording usage).

    Returns
    -------
    DataFrame
        :data:`USAGE_COLUMNS`: ``input_tokens`` and ``output_tokens`` as nullable integers,
        ``cost`` (dollars, as the log records it) as a nullable float; see the module docstring.

    Raises
    ------
    evalbars.errors.InputError
        In one line naming the file, the record and the problem (see the module docstring), and
        when the entry holds no file that records token usage.

    Examples
    --------
    >>> import pandas as pd, tempfile, pathlib
    >>> table = pathlib.Path(tempfile.mkdtemp()) / "usage.csv"
    >>> pd.DataFrame({"model": ["m", "m"], "question_id": ["q1", "q2"],
    ...               "input_tokens": [120, 80], "output_tokens": [30, 12]}).to_csv(table, index=False)
    >>> read_usage(table)[["model", "question_id", "epoch", "input_tokens", "output_tokens"]]
      model question_id  epoch  input_tokens  output_tokens
    0     m          q1      1           120             30
    1     m          q2      1            80             12
    """
    options = options or SourceOptions()
    path = Path(path)
    if path.is_file() and path.suffix.lower() in TABLE_SUFFIXES:
        table = load_table(path, known=_TABLE_KNOWN)
        if _is_usage_only(table):
            return _finish(_table_usage(path, table), path)
    frames, read = [], []
    for items in read_source(path, options):
        read.append(items)
        sources = [Path(p) for p in items["source_path"].astype(str).unique()]
        kind = detect_format(sources[0])
        if kind == "inspect":
            usage = pd.concat([_inspect_usage(p) for p in sources], ignore_index=True)
        elif kind == "helm":
            usage = pd.concat([_helm_usage(p, options) for p in sources], ignore_index=True)
        elif kind == "table":
            table = load_table(sources[0], known=_TABLE_KNOWN)
            if not set(table.columns) & {"cost", *TOKEN_COLUMNS}:
                continue  # a predictions table without usage, beside logs that may have some
            usage = _table_usage(sources[0], table)
        else:
            continue  # lm-eval, lighteval, MMLU-Pro, Every Eval Ever, SWE-bench: no tokens
        frames.append(_only_scored(usage, items))
    if path.is_dir() and read:  # usage tables beside the logs, which the item walk passed over
        scored = pd.concat(read, ignore_index=True)
        frames += [_only_scored(usage, scored) for usage in _folder_usage_tables(path)]
    if not frames:
        if not required:
            return pd.DataFrame({c: [] for c in USAGE_COLUMNS}).pipe(_typed)
        raise InputError(path, _NO_USAGE)
    return _finish(pd.concat(frames, ignore_index=True), path)


def _folder_usage_tables(folder: Path) -> list[pd.DataFrame]:
    """The usage rows of every usage table (:func:`_is_usage_only`) under ``folder``, in name
    order: a folder of logs that record no tokens may hold its usage in a table beside them."""
    frames = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in TABLE_SUFFIXES:
            continue
        try:
            table = load_table(path, known=_TABLE_KNOWN)
        except InputError:
            continue  # not a table evalbars reads: the item walk has judged it
        if _is_usage_only(table):
            frames.append(_table_usage(path, table))
    return frames


def join_usage(items: pd.DataFrame, usage: pd.DataFrame) -> pd.DataFrame:
    """The item table with each row's ``input_tokens``, ``output_tokens`` and ``cost``.

    Parameters
    ----------
    items : DataFrame
        An item table (``model, question_id, epoch, ...``:
        :func:`evalbars.api.read_items`, or raw rows of a reader).
    usage : DataFrame
        :func:`read_usage` of the same predictions (or several, concatenated).

    Returns
    -------
    DataFrame
        ``items`` in its order, with the usage columns (empty where no usage was recorded).

    Raises
    ------
    evalbars.errors.InputError
        Token usage for a sample that has no score: a usage row whose (model, question,
        epoch) is not in ``items``, named by its file and record.

    Examples
    --------
    >>> items = pd.DataFrame({"model": ["m", "m"], "question_id": ["q1", "q2"],
    ...                       "epoch": [1, 1], "correct": [1.0, 0.0]})
    >>> usage = pd.DataFrame({"model": ["m"], "question_id": ["q2"], "epoch": [1],
    ...                       "input_tokens": [80], "output_tokens": [12], "cost": [None],
    ...                       "source_path": ["usage.csv"], "record": [1]})
    >>> join_usage(items, usage)[["question_id", "correct", "input_tokens"]]
      question_id  correct  input_tokens
    0          q1      1.0          <NA>
    1          q2      0.0            80
    """
    left = _key_frame(items)
    right = _key_frame(usage)
    found = right.merge(left.assign(_item=True), on=_KEY, how="left")["_item"].notna().to_numpy()
    if not found.all():
        i = int(np.argmin(found))
        raise InputError(usage["source_path"].iloc[i], _unscored(usage.iloc[i]), _record(usage, i))
    columns = ["input_tokens", "output_tokens", "cost"]
    joined = left.merge(
        right.assign(**{c: usage[c].to_numpy() for c in columns}), on=_KEY, how="left"
    )
    out = items.reset_index(drop=True).copy()
    for column in columns:
        out[column] = joined[column].to_numpy()
        out[column] = out[column].astype("Int64" if column != "cost" else "Float64")
    return out


# ---------------------------------------------------------------------------------------
# Inspect
# ---------------------------------------------------------------------------------------


def _inspect_document(raw: bytes, path, what: str):
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"{what} is not valid JSON: {exc}") from exc


def _inspect_log(path: Path) -> tuple[dict, list]:
    """``(header, samples)`` of an Inspect log (the item reader has already accepted it)."""
    if path.suffix.lower() == ".json":
        document = _inspect_document(path.read_bytes(), path, "the log")
        return document, list(document.get("samples") or [])
    with open_archive(path) as archive:
        names = sorted(n for n in member_names(archive) if _SAMPLE_MEMBER.fullmatch(n))
        header = _inspect_document(read_member(archive, "header.json", path), path, "header.json")
        samples = [_inspect_document(read_member(archive, n, path), path, n) for n in names]
    return header, samples


def _sample_order(sample) -> tuple:
    """The item reader's order: by epoch, then id (its record numbers)."""
    epoch = sample.get("epoch", 1) if isinstance(sample, dict) else 0
    epoch = epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else 0
    return (epoch, str(sample.get("id")) if isinstance(sample, dict) else "")


def _whole(value, what: str, path, record) -> int:
    """A token count: a whole number from 0 (a float with no fraction is taken as one)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(
            path, f"{what} must be a whole number of tokens, got {plain(value)!r}", record
        )
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise InputError(
            path, f"{what} must be a whole number of tokens from 0, got {plain(value)!r}", record
        )
    return int(value)


def _dollars(value, what: str, path, record) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(path, f"{what} must be a number of dollars, got {plain(value)!r}", record)
    if not math.isfinite(value) or value < 0:
        raise InputError(path, f"{what} must be a cost from 0, got {plain(value)!r}", record)
    return float(value)


def _usage_entry(entry, where: str, path, record) -> tuple[int, int, float | None]:
    """``(input, output, total_cost)`` of one Inspect ``ModelUsage`` object."""
    if not isinstance(entry, dict):
        raise InputError(
            path, f"{where} must be a ModelUsage object, got {plain(entry)!r:.60}", record
        )
    tokens = [_whole(entry.get(n, 0), f"{where}.{n}", path, record) for n in TOKEN_COLUMNS]
    return (
        tokens[0],
        tokens[1],
        _dollars(entry.get("total_cost"), f"{where}.total_cost", path, record),
    )


def _roles_of_model(header: dict, model: str) -> list[str]:
    """Roles the log binds to the evaluated model itself (``eval.model_roles``)."""
    roles = header["eval"].get("model_roles") or {}
    if not isinstance(roles, dict):
        return []
    return [
        r for r, bound in roles.items() if isinstance(bound, dict) and bound.get("model") == model
    ]


def _inspect_usage(path: Path) -> pd.DataFrame:
    """Usage rows of one Inspect log (see the module docstring)."""
    header, samples = _inspect_log(path)
    model = header["eval"]["model"]
    own_roles = _roles_of_model(header, model)
    rows = []
    for record, sample in enumerate(sorted(samples, key=_sample_order), start=1):
        usage = sample.get("model_usage") or {}
        if not isinstance(usage, dict):
            raise InputError(
                path, f"model_usage must be an object, got {plain(usage)!r:.60}", record
            )
        if model not in usage:
            continue
        n_in, n_out, cost = _usage_entry(usage[model], f"model_usage[{model!r}]", path, record)
        roles = sample.get("role_usage")
        if own_roles and roles is None:
            raise InputError(
                path,
                f"role {own_roles[0]!r} is bound to the evaluated model {model}, whose tokens then "
                "hold both roles' calls, and the sample has no role_usage to tell them apart "
                "(written by an Inspect release before role_usage)",
                record,
            )
        for role in own_roles:
            if role in (roles or {}):
                r_in, r_out, r_cost = _usage_entry(
                    roles[role], f"role_usage[{role!r}]", path, record
                )
                if r_in > n_in or r_out > n_out:
                    raise InputError(
                        path,
                        f"role_usage[{role!r}] holds more tokens ({r_in} in, {r_out} out) than "
                        f"model_usage[{model!r}] ({n_in} in, {n_out} out), which includes them",
                        record,
                    )
                n_in, n_out = n_in - r_in, n_out - r_out
                cost = None if cost is None or r_cost is None else max(cost - r_cost, 0.0)
        question = check_question_id(sample.get("id"), path, record)
        rows.append((model, question, sample.get("epoch", 1), n_in, n_out, cost, str(path), record))
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


# ---------------------------------------------------------------------------------------
# HELM
# ---------------------------------------------------------------------------------------


def _helm_usage(path: Path, options: SourceOptions) -> pd.DataFrame:
    """Usage rows of one HELM run (``path`` is its ``per_instance_stats.json``)."""
    model, scenario, _ = run_identity(path.parent)
    document = json.loads(path.read_bytes())  # the item reader has parsed and checked it
    split = options.split or "test"
    rows = []
    for record, entry in enumerate(document, start=1):
        perturbation = (entry.get("perturbation") or {}).get("name")
        if perturbation != (options.perturbation or None):
            continue
        sums = {}
        for stat in entry["stats"]:
            name = stat.get("name") if isinstance(stat, dict) else None
            if isinstance(name, dict) and name.get("split") == split:
                sums.setdefault(name.get("name"), stat.get("sum"))  # the first, as the item reader
        output = next((s for s in HELM_OUTPUT_STATS if s in sums), None)
        if HELM_INPUT_STAT not in sums and output is None:
            continue
        if HELM_INPUT_STAT not in sums or output is None:
            missing = HELM_INPUT_STAT if output else " or ".join(HELM_OUTPUT_STATS)
            raise InputError(
                path, f"the instance counts some tokens but has no {missing} stat", record
            )
        n_in = _whole(sums[HELM_INPUT_STAT], f"the {HELM_INPUT_STAT} stat's sum", path, record)
        n_out = _whole(sums[output], f"the {output} stat's sum", path, record)
        question = f"{scenario}/{entry['instance_id']}"
        epoch = entry.get("train_trial_index", 0) + 1
        rows.append((model, question, epoch, n_in, n_out, None, str(path), record))
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------

#: Columns a usage or predictions table may name in another case.
_TABLE_KNOWN = {
    "model",
    "question_id",
    "epoch",
    "correct",
    "pred",
    "answer",
    "cost",
    *TOKEN_COLUMNS,
}


def _is_usage_only(table: pd.DataFrame) -> bool:
    """Whether a table holds usage alone (token or cost columns, no score column)."""
    columns = set(table.columns)
    return bool(columns & {"cost", *TOKEN_COLUMNS}) and not columns & _SCORE_COLUMNS


def _numbers(frame: pd.DataFrame, column: str, path) -> np.ndarray:
    """A column as floats (NaN where empty); text that is not a number is refused."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    text = (
        np.isnan(values) & raw.notna().to_numpy() & (raw.astype(str).str.strip() != "").to_numpy()
    )
    if text.any():
        i = int(np.argmax(text))
        raise InputError(
            path,
            f"{column} must be a number, got {plain(raw.iloc[i])!r}",
            int(frame["record"].iloc[i]),
        )
    return values


def _table_usage(path: Path, table: pd.DataFrame) -> pd.DataFrame:
    """Usage rows of a table (see the module docstring)."""
    given = [c for c in TOKEN_COLUMNS if c in table.columns]
    if len(given) == 1:
        other = next(c for c in TOKEN_COLUMNS if c not in given)
        raise InputError(path, f"has {given[0]} but no {other} column: a cost needs both")
    if not given and "cost" not in table.columns:
        raise InputError(path, _NO_USAGE)
    missing = [c for c in ("model", "question_id") if c not in table.columns]
    if missing:
        raise InputError(
            path, f"missing column(s): {', '.join(missing)}; found {list(table.columns)}"
        )
    n = len(table)
    tokens = {c: _numbers(table, c, path) if given else np.full(n, np.nan) for c in TOKEN_COLUMNS}
    cost = _numbers(table, "cost", path) if "cost" in table.columns else np.full(n, np.nan)
    half = np.isnan(tokens["input_tokens"]) != np.isnan(tokens["output_tokens"])
    if half.any():
        i = int(np.argmax(half))
        raise InputError(
            path,
            "the row gives one of input_tokens and output_tokens, not both",
            int(table["record"].iloc[i]),
        )
    for column, values in tokens.items():
        with np.errstate(invalid="ignore"):
            bad = ~np.isnan(values) & ((values < 0) | (values != np.floor(values)))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                path,
                f"{column} must be a whole number of tokens from 0, got {plain(table[column].iloc[i])!r}",
                int(table["record"].iloc[i]),
            )
    with np.errstate(invalid="ignore"):
        negative = cost < 0
    if negative.any():
        i = int(np.argmax(negative))
        raise InputError(
            path,
            f"cost must be from 0, got {plain(table['cost'].iloc[i])!r}",
            int(table["record"].iloc[i]),
        )
    if "epoch" in table.columns:
        epochs = _numbers(table, "epoch", path)
        bad = np.isnan(epochs) | (epochs < 1) | (epochs != np.floor(epochs))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                path,
                f"epoch must be a positive whole number, got {plain(table['epoch'].iloc[i])!r}",
                int(table["record"].iloc[i]),
            )
    else:
        epochs = np.ones(n)
    recorded = ~np.isnan(tokens["input_tokens"]) | ~np.isnan(cost)
    return pd.DataFrame(
        {
            "model": table["model"].astype(str).to_numpy(),
            "question_id": normalise_ids(table["question_id"]),
            "epoch": epochs.astype(np.int64),
            "input_tokens": tokens["input_tokens"],
            "output_tokens": tokens["output_tokens"],
            "cost": cost,
            "source_path": str(path),
            "record": table["record"].to_numpy(),
        }
    )[recorded].reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# Checks shared by every source
# ---------------------------------------------------------------------------------------


def _key_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """(model, question_id, epoch) as plain values: text ids as text, so that the item table's
    (which turns every id into text when sources mix integer and text ids) and a usage table's
    match."""
    ids = frame["question_id"]
    ids = ids.astype(object) if isinstance(ids.dtype, pd.CategoricalDtype) else ids
    return pd.DataFrame(
        {
            "model": frame["model"].astype(str).to_numpy(),
            "question_id": pd.Series(np.asarray(ids, dtype=object)).map(str).to_numpy(),
            "epoch": frame["epoch"].to_numpy(dtype=np.int64),
        }
    )


def _record(usage: pd.DataFrame, i: int):
    record = usage["record"].iloc[i]
    return None if pd.isna(record) else int(record)


def _unscored(row) -> str:
    return (
        f"token usage for question {row['question_id']!r} (epoch {int(row['epoch'])}) of model "
        f"{row['model']!r}, which has no score: usage is only read for scored samples"
    )


def _only_scored(usage: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """``usage``, refused at its first row for a sample the item reader gave no row."""
    if usage.empty:
        return usage
    scored = _key_frame(items).assign(_item=True)
    found = _key_frame(usage).merge(scored, on=_KEY, how="left")["_item"].notna().to_numpy()
    if not found.all():
        i = int(np.argmin(found))
        raise InputError(usage["source_path"].iloc[i], _unscored(usage.iloc[i]), _record(usage, i))
    return usage


def _finish(usage: pd.DataFrame, path) -> pd.DataFrame:
    """The usage table in its dtypes, refused where a (model, question, epoch) repeats."""
    keys = _key_frame(usage)
    repeated = keys.duplicated(keep="first").to_numpy()
    if repeated.any():
        i = int(np.argmax(repeated))
        raise InputError(
            usage["source_path"].iloc[i],
            f"token usage for question {usage['question_id'].iloc[i]!r} (epoch "
            f"{int(usage['epoch'].iloc[i])}) of model {usage['model'].iloc[i]!r} is given twice",
            _record(usage, i),
        )
    if usage.empty:
        raise InputError(path, "no sample records token usage")
    return _typed(usage)


def _typed(usage: pd.DataFrame) -> pd.DataFrame:
    """:data:`USAGE_COLUMNS` in the usage table's dtypes."""
    out = usage[USAGE_COLUMNS].reset_index(drop=True).copy()
    out["epoch"] = out["epoch"].astype(np.int64)
    for column in TOKEN_COLUMNS:
        out[column] = pd.array(out[column].to_numpy(dtype=float, na_value=np.nan)).astype("Int64")
    out["cost"] = pd.array(pd.to_numeric(out["cost"]).to_numpy(dtype=float), dtype="Float64")
    out["record"] = pd.array(out["record"], dtype="Int64")
    return out
