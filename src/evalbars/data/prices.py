"""Prices per million tokens, and the cost of each (model, question) they give.

A price table maps each model to its price in dollars per million input and output tokens,
as providers quote them::

    prices:
      openai/gpt-4o: {input: 2.5, output: 10.0}
      mockllm/fake-mid: {input: 0.5, output: 1.5}

The cost of one answer is

.. math::

    c = \\frac{t_{in}\\, p_{in} + t_{out}\\, p_{out}}{10^6}

with :math:`t` its tokens (:func:`evalbars.data.readers.usage.read_usage`) and :math:`p` the
model's prices: the formula of Inspect's ``compute_model_cost`` without its cache terms, so a
log's recorded ``total_cost`` is reproduced from the same prices. No price is ever guessed: a
model with token usage and no price, and no cost recorded by its logs, is refused, naming the
model. A model the table prices is costed from its tokens even where its log records a cost
(the table is what the user chose; a disagreement is logged); a model it does not price keeps
the cost its logs record.

References
----------
.. [1] UK AI Security Institute, Inspect AI: ``inspect_ai.model.ModelCost`` ("Model cost in
   $/million tokens") and ``compute_model_cost``, inspect-ai 0.3.285.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from evalbars.data.labels import table_header
from evalbars.errors import ConfigError, InputError

__all__ = [
    "TOKENS_PER_PRICE",
    "PRICE_KEYS",
    "price_table",
    "read_price_file",
    "tables_carry_costs",
    "token_cost",
    "usage_costs",
    "per_question_costs",
]

log = logging.getLogger(__name__)

#: Prices are given per this many tokens (the providers' "per million tokens").
TOKENS_PER_PRICE = 1_000_000
#: The keys of one model's prices: dollars per million input and output tokens.
PRICE_KEYS = ("input", "output")


def price_table(prices, key: str = "prices") -> pd.DataFrame:
    """A checked price table: one row per model, columns ``input`` and ``output`` ($ / M tokens).

    Parameters
    ----------
    prices : mapping
        ``{model: {"input": price, "output": price}}``, as the config's ``prices:`` holds it.
    key : str
        The config key, named in messages.

    Returns
    -------
    DataFrame
        Indexed by model name (``model``), float columns ``input`` and ``output``.

    Raises
    ------
    evalbars.errors.ConfigError
        In one line naming the key: not a mapping, a model name that is not text, a model whose
        prices are not ``{input, output}``, a price that is not a number from 0.

    Examples
    --------
    >>> price_table({"fake-mid": {"input": 0.5, "output": 1.5}}).to_dict("index")
    {'fake-mid': {'input': 0.5, 'output': 1.5}}
    """
    if not isinstance(prices, Mapping):
        raise ConfigError(
            f"`{key}` must map each model to its prices, {{input: ..., output: ...}} in dollars "
            f"per million tokens; got {prices!r:.60}"
        )
    rows = {}
    for model, given in prices.items():
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"`{key}`: a model name must be non-empty text, got {model!r}")
        where = f"{key}.{model}"
        if not isinstance(given, Mapping) or set(given) != set(PRICE_KEYS):
            found = sorted(map(str, given)) if isinstance(given, Mapping) else repr(given)[:60]
            raise ConfigError(
                f"`{where}` must be {{input: <$ per million input tokens>, output: <$ per "
                f"million output tokens>}}; got {found}"
            )
        for name in PRICE_KEYS:
            value = given[name]
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not math.isfinite(value) or value < 0:
                raise ConfigError(
                    f"`{where}.{name}` must be a number of dollars per million {name} tokens "
                    f"from 0, got {value!r}"
                )
        rows[model] = (float(given["input"]), float(given["output"]))
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=list(PRICE_KEYS), dtype=float)
    frame.index.name = "model"
    return frame


def read_price_file(path) -> dict:
    """The prices of a file, as the config's ``prices:`` holds them (checked by :func:`price_table`).

    Parameters
    ----------
    path : path-like
        A CSV or TSV table with columns ``model``, ``input`` and ``output`` (dollars per million
        tokens), one row per model; or a YAML or JSON file of the mapping ``{model: {input: ...,
        output: ...}}``, the config's form.

    Returns
    -------
    dict
        ``{model: {"input": float, "output": float}}``.

    Raises
    ------
    evalbars.errors.InputError
        In one line naming the file (and the row): an unreadable file, missing columns, a
        model twice, a price that is not a number from 0.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "prices.csv"
    >>> _ = file.write_text("model,input,output\\nfake-mid,0.5,1.5\\n")
    >>> read_price_file(file)
    {'fake-mid': {'input': 0.5, 'output': 1.5}}
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file does not exist")
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml", ".json"):
        try:
            prices = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            raise InputError(path, f"is not valid YAML or JSON: {exc}".splitlines()[0]) from exc
    else:
        try:
            frame = pd.read_csv(
                path, sep="\\t" if suffix in (".tsv", ".tab") else ",", dtype={"model": str}
            )
        except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise InputError(path, f"is not a CSV table of prices: {exc}") from exc
        frame.columns = [str(c).strip().casefold() for c in frame.columns]
        missing = [c for c in ("model", *PRICE_KEYS) if c not in frame.columns]
        if missing:
            raise InputError(
                path,
                f"missing column(s) {', '.join(missing)}: a price table has model, input and "
                f"output (dollars per million tokens); found {list(frame.columns)}",
            )
        repeated = frame["model"].duplicated()
        if repeated.any():
            i = int(np.argmax(repeated.to_numpy()))
            raise InputError(path, f"model {frame['model'].iloc[i]!r} is priced twice", i + 1)
        prices = {}
        for i, row in enumerate(frame.itertuples(index=False), start=1):
            given = {}
            for name in PRICE_KEYS:
                value = pd.to_numeric(pd.Series([getattr(row, name)]), errors="coerce").iloc[0]
                if not np.isfinite(value) or value < 0:
                    raise InputError(
                        path,
                        f"{name} must be a number of dollars per million {name} tokens from 0, "
                        f"got {getattr(row, name)!r}",
                        i,
                    )
                given[name] = float(value)
            prices[str(row.model).strip()] = given
    try:
        price_table(prices, key=str(path))
    except ConfigError as exc:
        raise InputError(path, str(exc)) from exc
    return {str(model): {k: float(v[k]) for k in PRICE_KEYS} for model, v in prices.items()}


def tables_carry_costs(paths) -> bool:
    """Whether any long table among ``paths`` (CSV, TSV or Parquet) has a ``cost`` column, from
    its header (or Parquet schema) alone: a run with such a table has costs without a price
    table (:func:`evalbars.pipeline.smk.costed_run`)."""
    return any("cost" in table_header(path) for path in paths)


def token_cost(input_tokens, output_tokens, input_price, output_price) -> np.ndarray:
    """The cost of each answer from its tokens and the model's prices per million tokens.

    Parameters
    ----------
    input_tokens, output_tokens : array_like
        Tokens read and written per answer (NaN where not recorded).
    input_price, output_price : float or array_like
        Dollars per million input and output tokens (broadcast against the tokens).

    Returns
    -------
    ndarray
        :math:`(t_{in} p_{in} + t_{out} p_{out}) / 10^6` dollars.

    Examples
    --------
    >>> float(token_cost(1200, 300, 3.0, 15.0))
    0.0081
    """
    return (
        np.asarray(input_tokens, float) * input_price
        + np.asarray(output_tokens, float) * output_price
    ) / TOKENS_PER_PRICE


def usage_costs(usage: pd.DataFrame, prices, key: str = "prices") -> pd.DataFrame:
    """Each usage row's cost: its tokens times its model's prices, or the cost its log records.

    Parameters
    ----------
    usage : DataFrame
        ``model, input_tokens, output_tokens, cost`` per (model, question, epoch)
        (:func:`evalbars.data.readers.usage.read_usage`; ``cost`` may be absent or empty).
    prices : mapping or DataFrame
        The price table (:func:`price_table`'s input or output).
    key : str
        The config key of the prices, named in messages.

    Returns
    -------
    DataFrame
        ``usage`` with ``cost`` (dollars) and ``cost_source``: ``price`` where the model is
        priced and the row has tokens, ``log`` where the cost is the one recorded; empty where
        neither (a priced model's row with a cost and no tokens keeps its cost).

    Raises
    ------
    evalbars.errors.ConfigError
        A model with token usage, no price in the table, and rows whose logs record no cost:
        named, with the key to add (no price is ever guessed).

    Examples
    --------
    >>> usage = pd.DataFrame({"model": ["a", "a", "b"], "input_tokens": [1000, 2000, 500],
    ...                       "output_tokens": [100, 300, 50], "cost": [None, None, 0.01]})
    >>> usage_costs(usage, {"a": {"input": 3.0, "output": 15.0}})[["model", "cost", "cost_source"]]
      model    cost cost_source
    0     a  0.0045       price
    1     a  0.0105       price
    2     b    0.01         log
    """
    table = prices if isinstance(prices, pd.DataFrame) else price_table(prices, key)
    out = usage.copy()
    recorded = (
        pd.to_numeric(out["cost"]).to_numpy(dtype=float, na_value=np.nan)
        if "cost" in out.columns
        else np.full(len(out), np.nan)
    )
    t_in = pd.to_numeric(out["input_tokens"]).to_numpy(dtype=float, na_value=np.nan)
    t_out = pd.to_numeric(out["output_tokens"]).to_numpy(dtype=float, na_value=np.nan)
    models = out["model"].astype(str).to_numpy()
    priced = np.isin(models, table.index.to_numpy())
    unpriced = ~priced & np.isnan(recorded) & ~np.isnan(t_in)
    if unpriced.any():
        model = models[int(np.argmax(unpriced))]
        rows = int(unpriced[models == model].sum())
        raise ConfigError(
            f"model {model!r} has token usage but no price in `{key}`, and its logs record no "
            f"cost for {rows} of its answers; add `{key}: {{{model}: {{input: <$ per million "
            "input tokens>, output: <$ per million output tokens>}}}}` (no price is ever guessed)"
        )
    p_in = table["input"].reindex(models).to_numpy(dtype=float)
    p_out = table["output"].reindex(models).to_numpy(dtype=float)
    computed = token_cost(t_in, t_out, p_in, p_out)
    from_price = priced & ~np.isnan(computed)
    differs = from_price & ~np.isnan(recorded) & ~np.isclose(computed, recorded, rtol=1e-9, atol=0)
    if differs.any():
        i = int(np.argmax(differs))
        log.warning(
            "model %r: the prices in `%s` give $%.6g where its log records $%.6g (and %d other "
            "answers differ); the prices in `%s` are used",
            models[i],
            key,
            computed[i],
            recorded[i],
            int(differs.sum()) - 1,
            key,
        )
    cost = np.where(from_price, computed, recorded)
    out["cost"] = pd.array(cost, dtype="Float64")
    source = np.where(from_price, "price", np.where(np.isnan(recorded), None, "log"))
    out["cost_source"] = pd.array(source, dtype="string")
    return out


def per_question_costs(usage: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """The cost of each (model, question) of an item table: the mean over its samples.

    Parameters
    ----------
    usage : DataFrame
        :func:`usage_costs`' rows (``model, question_id, epoch, input_tokens, output_tokens,
        cost``); rows without a cost are left out.
    items : DataFrame
        The item table's ``model, question_id, epoch``: only its samples count (the analysed
        questions, after the subsample).

    Returns
    -------
    DataFrame
        ``model, question_id, samples, input_tokens, output_tokens, cost``: per (model,
        question) with a cost, the number of its samples with one and their means (dollars;
        tokens NaN where only a cost is recorded), in the item table's order; ``question_id``
        as the item table writes it.

    Examples
    --------
    >>> usage = pd.DataFrame({"model": ["a", "a", "a"], "question_id": ["q1", "q1", "q2"],
    ...     "epoch": [1, 2, 1], "input_tokens": [100, 300, 50], "output_tokens": [10, 30, 5],
    ...     "cost": [0.001, 0.003, None]})
    >>> items = pd.DataFrame({"model": ["a", "a", "a"], "question_id": ["q1", "q1", "q2"],
    ...                       "epoch": [1, 2, 1]})
    >>> per_question_costs(usage, items)
      model question_id  samples  input_tokens  output_tokens   cost
    0     a          q1        2         200.0           20.0  0.002
    """
    costed = usage[pd.notna(usage["cost"])]
    key = ["model", "question_id", "epoch"]

    def keys(frame):
        ids = frame["question_id"]
        ids = ids.astype(object) if isinstance(ids.dtype, pd.CategoricalDtype) else ids
        return pd.DataFrame(
            {
                "model": frame["model"].astype(str).to_numpy(),
                "question_id": pd.Series(np.asarray(ids, dtype=object)).map(str).to_numpy(),
                "epoch": frame["epoch"].to_numpy(dtype=np.int64),
            }
        )

    left = keys(items).assign(_order=np.arange(len(items)), _id=np.asarray(items["question_id"]))
    values = {
        c: pd.to_numeric(costed[c]).to_numpy(dtype=float, na_value=np.nan)
        for c in ("input_tokens", "output_tokens", "cost")
    }
    right = keys(costed).assign(**values)
    joined = left.merge(right, on=key, how="inner")
    grouped = joined.groupby(["model", "question_id"], sort=False)
    table = grouped.agg(
        _order=("_order", "min"),
        _id=("_id", "first"),
        samples=("cost", "size"),
        input_tokens=("input_tokens", "mean"),
        output_tokens=("output_tokens", "mean"),
        cost=("cost", "mean"),
    ).reset_index()
    table = table.sort_values("_order", kind="stable").reset_index(drop=True)
    table["question_id"] = table["_id"]
    return table[["model", "question_id", "samples", "input_tokens", "output_tokens", "cost"]]
