"""Prices per million tokens: the table's checks, and costs against Inspect's own.

The Inspect usage fixture (``tests/data/harness/inspect_usage/``) was written with the prices of
its ``prices.csv`` registered in Inspect (``set_model_info``), so every usage in it carries the
``total_cost`` Inspect computed, call by call: the oracle of :func:`usage_costs`.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.prices import price_table, token_cost, usage_costs
from evalbars.data.readers import SourceOptions
from evalbars.data.readers.usage import read_usage
from evalbars.errors import ConfigError

DATA = Path(__file__).resolve().parents[2] / "data"
INSPECT_USAGE = DATA / "harness" / "inspect_usage"
HELM_USAGE = DATA / "corpora" / "helm_usage"


def inspect_prices() -> dict:
    table = pd.read_csv(INSPECT_USAGE / "prices.csv")
    return {r.model: {"input": r.input, "output": r.output} for r in table.itertuples()}


@pytest.fixture(scope="module")
def inspect_usage():
    return read_usage(INSPECT_USAGE / "logs")


def refused(call, *parts: str) -> str:
    with pytest.raises(ConfigError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    for part in parts:
        assert part in message, (part, message)
    return message


def test_token_cost_is_tokens_times_price_per_million():
    assert token_cost(1200, 300, 3.0, 15.0) == pytest.approx(0.0081, rel=1e-15)
    costs = token_cost([1_000_000, 0, 2], [0, 1_000_000, 4], np.array([2.5, 2.5, 1.0]), 10.0)
    np.testing.assert_allclose(costs, [2.5, 10.0, 42e-6], rtol=1e-15)
    assert np.isnan(token_cost(np.nan, 3, 1.0, 1.0))


def test_costs_reproduce_inspects_own(inspect_usage):
    recorded = inspect_usage["cost"].to_numpy(dtype=float)
    assert not np.isnan(recorded).any()
    costed = usage_costs(inspect_usage, inspect_prices())
    assert (costed["cost_source"] == "price").all()
    np.testing.assert_allclose(costed["cost"].to_numpy(dtype=float), recorded, rtol=1e-12)
    truth = pd.read_csv(INSPECT_USAGE / "expected_usage.csv")
    per_model = costed.groupby("model")["cost"].sum()
    np.testing.assert_allclose(
        per_model.sort_index().to_numpy(dtype=float),
        truth.groupby("model")["cost"].sum().sort_index().to_numpy(),
        rtol=1e-12,
    )
    assert per_model["mockllm/fake-strong"] == pytest.approx((714 * 3.0 + 246 * 15.0) / 1e6)


def test_a_model_without_a_price_keeps_its_logs_cost(inspect_usage):
    costed = usage_costs(inspect_usage, {})
    assert (costed["cost_source"] == "log").all()
    assert costed["cost"].equals(inspect_usage["cost"])


def test_the_price_table_wins_over_a_logs_cost_and_says_so(inspect_usage, caplog):
    prices = inspect_prices()
    prices["mockllm/fake-mid"] = {"input": 1.0, "output": 3.0}  # twice the logged prices
    with caplog.at_level(logging.WARNING, logger="evalbars.data.prices"):
        costed = usage_costs(inspect_usage, prices)
    mid = (costed["model"] == "mockllm/fake-mid").to_numpy()
    np.testing.assert_allclose(
        costed["cost"].to_numpy(dtype=float)[mid],
        2 * inspect_usage["cost"].to_numpy(dtype=float)[mid],
        rtol=1e-12,
    )
    (message,) = [r.getMessage() for r in caplog.records]
    assert "model 'mockllm/fake-mid'" in message and "19 other answers differ" in message


def test_no_price_is_ever_guessed():
    usage = read_usage(HELM_USAGE / "runs", SourceOptions())
    refused(
        lambda: usage_costs(usage, {"synth/terse": {"input": 1.0, "output": 2.0}}),
        "model 'synth/verbose' has token usage but no price in `prices`",
        "for 32 of its answers",
        "no price is ever guessed",
    )
    costed = usage_costs(
        usage,
        {"synth/terse": {"input": 1.0, "output": 2.0}, "synth/verbose": {"input": 1, "output": 2}},
    )
    totals = costed.groupby("model")["cost"].sum()
    assert totals["synth/verbose"] == pytest.approx((15190 + 2 * 1937) / 1e6, rel=1e-12)
    assert totals["synth/terse"] == pytest.approx((15190 + 2 * 32) / 1e6, rel=1e-12)


def test_a_partly_recorded_cost_is_not_enough():
    usage = pd.DataFrame(
        {
            "model": ["a", "a"],
            "input_tokens": pd.array([10, 20], dtype="Int64"),
            "output_tokens": pd.array([1, 2], dtype="Int64"),
            "cost": pd.array([0.5, None], dtype="Float64"),
        }
    )
    refused(lambda: usage_costs(usage, {}, key="costs.prices"), "'a'", "`costs.prices`", "1 of its")


def test_the_price_table():
    table = price_table({"a": {"input": 3, "output": 15.0}, "b": {"output": 0, "input": 0.25}})
    assert table.to_dict("index") == {
        "a": {"input": 3.0, "output": 15.0},
        "b": {"input": 0.25, "output": 0.0},
    }
    assert table.index.name == "model"


@pytest.mark.parametrize(
    ("prices", "parts"),
    [
        ([("a", 1, 2)], ["`prices` must map each model to its prices"]),
        ({"": {"input": 1, "output": 2}}, ["a model name must be non-empty text"]),
        ({3: {"input": 1, "output": 2}}, ["a model name must be non-empty text, got 3"]),
        ({"a": {"input": 1}}, ["`prices.a` must be {input:", "got ['input']"]),
        ({"a": {"input": 1, "output": 2, "ouput": 2}}, ["`prices.a` must be", "'ouput'"]),
        ({"a": 3.0}, ["`prices.a` must be", "got 3.0"]),
        ({"a": {"input": -1, "output": 2}}, ["`prices.a.input` must be a number", "got -1"]),
        ({"a": {"input": 1, "output": "2"}}, ["`prices.a.output`", "got '2'"]),
        ({"a": {"input": True, "output": 2}}, ["`prices.a.input`", "got True"]),
        ({"a": {"input": float("nan"), "output": 2}}, ["`prices.a.input`", "got nan"]),
    ],
)
def test_bad_price_tables_are_refused(prices, parts):
    refused(lambda: price_table(prices), *parts)
