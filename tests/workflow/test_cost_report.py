"""`evalbars report --prices` on Inspect logs that record token usage: the cost table, the
frontier and its figure, the best-model readings and a cost claim, from one command (issue 40).

The logs are ``tests/data/harness/inspect_usage/logs`` (written by Inspect 0.3.285 with the
prices of ``prices.csv``); ``expected_usage.csv`` is Inspect's own ledger of their tokens.
"""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
import yaml

from ..conftest import DATA
from ..workflow_runs import report_front_page, snakemake_env
from .test_api_equals_workflow import (
    BEST_TABLES,
    assert_tables_equal_files,
    best_tables,
    run_config,
)

pytestmark = pytest.mark.workflow

USAGE = DATA / "harness" / "inspect_usage"
CLAIM = "mockllm/fake-weak on frontier"


@pytest.fixture(scope="module")
def cost_report(tmp_path_factory):
    output = tmp_path_factory.mktemp("cost") / "cost-report"
    result = subprocess.run(
        [sys.executable, "-m", "evalbars.cli", "report", str(USAGE / "logs")]
        + ["--prices", str(USAGE / "prices.csv"), "--claim", CLAIM, "--output", str(output)],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return output


def test_cost_csv_is_the_ledger_times_the_prices(cost_report):
    tables = cost_report / "results" / "tables"
    cost = pd.read_csv(tables / "cost.csv").set_index("model")
    ledger = pd.read_csv(USAGE / "expected_usage.csv")
    prices = pd.read_csv(USAGE / "prices.csv").set_index("model")
    ledger["priced"] = (
        ledger["input_tokens"] * ledger["model"].map(prices["input"])
        + ledger["output_tokens"] * ledger["model"].map(prices["output"])
    ) / 1e6
    expected = ledger.groupby("model")["priced"].mean()
    assert cost["mean_cost"].to_numpy() == pytest.approx(expected.loc[cost.index].to_numpy())
    accuracy = ledger.groupby("model")["score"].mean()
    assert cost["accuracy_per_dollar"].to_numpy() == pytest.approx(
        (accuracy / expected).loc[cost.index].to_numpy()
    )
    frontier = pd.read_csv(tables / "frontier.csv").set_index("model")
    assert frontier["on_frontier"].to_dict() == {
        "mockllm/fake-mid": True,
        "mockllm/fake-strong": False,
        "mockllm/fake-weak": True,
    }
    figures = cost_report / "results" / "figures"
    for name in ("cost_frontier", "best_set"):
        assert (figures / f"{name}.png").stat().st_size > 0
        assert (figures / f"{name}.svg").stat().st_size > 0
    # the run records the prices themselves
    config = yaml.safe_load((cost_report / "config.yaml").read_text())
    assert config["prices"]["mockllm/fake-strong"] == {"input": 3.0, "output": 15.0}


def test_the_report_shows_the_corrected_winner_the_set_and_the_frontier(cost_report):
    tables = cost_report / "results" / "tables"
    winner = pd.read_csv(tables / "winner.csv")
    assert winner["method"].tolist() == ["naive", "conditional", "hybrid", "zoom"]
    board = pd.read_csv(tables / "leaderboard.csv")
    assert {"in_best_set", "mcb_low", "mcb_high", "in_top_k_set"} <= set(board.columns)
    front = report_front_page(cost_report / "report.html")
    assert "corrected for being the top (hybrid" in front
    assert "confidence set at 95%, Hsu&#x27;s MCB" in front  # HTML-escaped
    assert "On the observed cost-accuracy frontier" in front
    claims = pd.read_csv(tables / "claims.csv")
    paired = claims[(claims["claim"] == CLAIM) & (claims["reading"] == "paired")]
    assert len(paired) == 2 and (paired["verdict"] != "n/a").all()


def test_the_api_tables_equal_the_runs_files(cost_report):
    # evalbars.api on the run's logs and prices with the leaderboard stage's settings: the
    # corrected winner, the sets for the best, the cost, the frontier and every question's cost
    # equal the files the run wrote, dtypes included (test_api_equals_workflow.py, BEST_TABLES)
    computed = best_tables(cost_report, run_config(cost_report / "config.yaml"))
    assert assert_tables_equal_files(cost_report, computed) == BEST_TABLES
