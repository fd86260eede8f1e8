"""Cost beside accuracy (issue 40): the costs job on the Inspect usage fixture against Inspect's
own ledger times the prices, cost.csv and frontier.csv by hand, the price file, the recogniser
passing over a usage table, the cost claims against hand-computed p-values, the figure and the
command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import special

from evalbars import api, cli
from evalbars.data.prices import per_question_costs, read_price_file, tables_carry_costs
from evalbars.data.readers import read_source
from evalbars.data.readers.usage import read_usage
from evalbars.data.scores import WideScores, wide_scores
from evalbars.errors import ConfigError, InputError
from evalbars.jobs import claims as claim_jobs
from evalbars.jobs import leaderboard as jobs
from evalbars.pipeline import smk
from evalbars.readings.claims import evaluate_claims, parse_claim
from evalbars.readings.claims.parsing import ClaimError
from evalbars.readings.leaderboard.cost import COST_COLUMNS, FRONTIER_COLUMNS, cost_readings
from evalbars.render.figures.cost import frontier_figure

from ...conftest import DATA

USAGE = DATA / "harness" / "inspect_usage"
LOGS = USAGE / "logs"
PRICES = USAGE / "prices.csv"


@pytest.fixture(scope="module")
def fixture_costs():
    items = api.read_items(LOGS)
    prices = read_price_file(PRICES)
    costs = jobs.costs(items, sources=[{"path": str(LOGS)}], prices=prices)["costs"].frame
    return items, costs


def expected_costs() -> pd.DataFrame:
    """Inspect's own ledger of the fixture times the price table, per (model, question)."""
    ledger = pd.read_csv(USAGE / "expected_usage.csv")
    prices = pd.read_csv(PRICES).set_index("model")
    ledger["priced"] = (
        ledger["input_tokens"] * ledger["model"].map(prices["input"])
        + ledger["output_tokens"] * ledger["model"].map(prices["output"])
    ) / 1e6
    return ledger


def test_the_costs_job_is_the_ledger_times_the_prices(fixture_costs):
    _, costs = fixture_costs
    ledger = expected_costs()
    merged = costs.merge(ledger, on=["model", "question_id"], suffixes=("", "_ledger"))
    assert len(merged) == len(costs) == 60
    assert merged["cost"].to_numpy() == pytest.approx(merged["priced"].to_numpy(), rel=1e-12)
    # and Inspect recorded the same cost from the same prices
    assert merged["cost"].to_numpy() == pytest.approx(merged["cost_ledger"].to_numpy(), rel=1e-9)
    assert (merged["samples"] == 1).all()


def test_cost_csv_and_the_frontier_by_hand(fixture_costs):
    items, costs = fixture_costs
    wide = wide_scores(items)
    result = jobs.cost_table(wide, costs, alpha=0.05, level=0.95, seed=2024)
    table = result["cost"].frame.set_index("model")
    assert list(result["cost"].frame.columns) == COST_COLUMNS
    ledger = expected_costs().groupby("model").agg(cost=("priced", "mean"), acc=("score", "mean"))
    assert table["mean_cost"].to_numpy() == pytest.approx(
        ledger.loc[table.index, "cost"].to_numpy(), rel=1e-12
    )
    assert table["accuracy"].to_numpy() == pytest.approx(ledger.loc[table.index, "acc"])
    assert table["accuracy_per_dollar"].to_numpy() == pytest.approx(
        (ledger["acc"] / ledger["cost"]).loc[table.index].to_numpy()
    )
    # the cost SE: the population SD of the per-question costs over sqrt(n)
    per_question = expected_costs().pivot(index="question_id", columns="model", values="priced")
    assert table["cost_se"].to_numpy() == pytest.approx(
        (per_question.std(ddof=0) / np.sqrt(20)).loc[table.index].to_numpy()
    )
    frontier = result["frontier"].frame.set_index("model")
    assert list(result["frontier"].frame.columns) == FRONTIER_COLUMNS
    # fake-mid is more accurate than fake-strong at a tenth of its cost; fake-weak is cheapest
    assert frontier["on_frontier"].to_dict() == {
        "mockllm/fake-mid": True,
        "mockllm/fake-strong": False,
        "mockllm/fake-weak": True,
    }
    # 20 questions: 85% against 80% is no significant difference, so nothing is dominated
    assert frontier["in_frontier_set"].all()
    assert api.cost_table(LOGS, PRICES).equals(result["cost"].frame)
    assert api.frontier_table(LOGS, read_price_file(PRICES)).equals(result["frontier"].frame)


def test_cost_board_leaves_out_models_and_questions_without_a_cost():
    scores = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1.0]])
    wide = WideScores(scores, list("abc"), np.array(["q1", "q2", "q3"]), np.array(["x"] * 3))
    costs = pd.DataFrame(
        {"model": ["a", "a", "b", "b", "b"], "question_id": ["q1", "q2", "q1", "q2", "q3"]}
    ).assign(cost=[0.1, 0.2, 0.3, 0.4, 0.5])
    table, frontier, notes = cost_readings(wide, costs)
    assert table["model"].tolist() == ["a", "b"] and (table["questions"] == 2).all()
    assert notes[0].startswith("1 model has no cost")
    assert notes[1] == (
        "1 of 3 questions lack a cost of some costed model and are left out of the cost readings."
    )


def test_no_price_is_ever_guessed_and_no_usage_is_said():
    items = api.read_items(LOGS)
    prices = read_price_file(PRICES)
    del prices["mockllm/fake-mid"]
    # the log records fake-mid's cost: it is kept from the log (Inspect had the price)
    costs = jobs.costs(items, sources=[{"path": str(LOGS)}], prices=prices)["costs"].frame
    assert set(costs["model"]) == {"mockllm/fake-mid", "mockllm/fake-strong", "mockllm/fake-weak"}
    lm_eval = DATA / "harness" / "lm_eval"
    options = {"runs": "newest", "id_field": "id"}
    lm_items = api.read_items(lm_eval, **options)
    with pytest.raises(ConfigError, match="none of the predictions records token usage"):
        jobs.costs(lm_items, sources=[{"path": str(lm_eval), **options}], prices=prices)


def test_a_model_with_tokens_and_no_price_is_refused_naming_it(tmp_path):
    table = tmp_path / "preds.csv"
    pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "question_id": ["q1", "q2", "q1", "q2"],
            "correct": [1, 0, 1, 1],
            "input_tokens": [100, 200, 50, 60],
            "output_tokens": [10, 20, 5, 6],
        }
    ).to_csv(table, index=False)
    items = api.read_items(table)
    with pytest.raises(ConfigError, match="model 'b' has token usage but no price in `prices`"):
        jobs.costs(items, sources=[{"path": str(table)}], prices={"a": {"input": 1, "output": 2}})


def test_per_question_costs_average_a_questions_samples():
    usage = pd.DataFrame(
        {
            "model": ["a"] * 4,
            "question_id": ["q1", "q1", "q2", "q3"],
            "epoch": [1, 2, 1, 1],
            "input_tokens": [100, 300, 10, 10],
            "output_tokens": [0, 0, 0, 0],
            "cost": [0.1, 0.3, 0.01, 0.02],
        }
    )
    items = usage[["model", "question_id", "epoch"]].iloc[:3]  # q3 is not analysed
    table = per_question_costs(usage, items)
    assert table["question_id"].tolist() == ["q1", "q2"]
    assert table["cost"].tolist() == pytest.approx([0.2, 0.01])
    assert table["samples"].tolist() == [2, 1]


def test_price_files(tmp_path):
    assert read_price_file(PRICES)["mockllm/fake-strong"] == {"input": 3.0, "output": 15.0}
    yaml_file = tmp_path / "prices.yaml"
    yaml_file.write_text("m: {input: 1, output: 2}\n")
    assert read_price_file(yaml_file) == {"m": {"input": 1.0, "output": 2.0}}
    bad = tmp_path / "bad.csv"
    for text, message in (
        ("model,input\nm,1\n", "missing column(s) output"),
        ("model,input,output\nm,1,2\nm,1,2\n", "model 'm' is priced twice"),
        ("model,input,output\nm,-1,2\n", "input must be a number of dollars"),
    ):
        bad.write_text(text)
        with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read_price_file(bad)


def test_a_usage_table_in_a_folder_is_passed_over_as_predictions_and_read_as_usage(tmp_path):
    pd.DataFrame(
        {"model": ["a", "a", "b", "b"], "question_id": ["q1", "q2"] * 2, "correct": [1, 0, 1, 1]}
    ).to_csv(tmp_path / "predictions.csv", index=False)
    pd.DataFrame(
        {
            "model": ["a", "b"],
            "question_id": ["q1", "q1"],
            "input_tokens": [100, 50],
            "output_tokens": [10, 5],
        }
    ).to_csv(tmp_path / "usage.csv", index=False)
    frames = read_source(tmp_path)
    assert [str(f["source_path"].iloc[0]).rsplit("/", 1)[-1] for f in frames] == ["predictions.csv"]
    usage = read_usage(tmp_path)
    assert usage["input_tokens"].tolist() == [100, 50]
    assert not tables_carry_costs([str(tmp_path / "usage.csv")])
    assert smk.costed_run({"prices": {"a": {"input": 1, "output": 1}}}, [])


# --- The cost claims ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def costed_board():
    rng = np.random.default_rng(6)
    n = 600
    correct = (rng.random((n, 3)) < [0.80, 0.82, 0.60]).astype(float)
    spend = np.column_stack(
        [rng.gamma(4.0, 0.05, n), rng.gamma(4.0, 0.25, n), rng.gamma(4.0, 0.02, n)]
    )
    ids = np.array([f"q{i:03d}" for i in range(n)])
    wide = WideScores(correct, ["cheap", "dear", "weak"], ids, np.array(["x"] * n))
    costs = pd.DataFrame(
        {
            "model": np.repeat(wide.models, n),
            "question_id": np.tile(ids, 3),
            "cost": spend.T.ravel(),
        }
    )
    return wide, costs, correct, spend


def one_sided(values, null=0.0):
    """One-sided p of H0: mean <= null, t reference on n - 1 degrees of freedom, population SD
    over sqrt(n)."""
    n = len(values)
    return special.stdtr(n - 1, -(values.mean() - null) / (values.std() / np.sqrt(n)))


def test_noninferior_at_cost_claim_by_hand(costed_board):
    wide, costs, correct, spend = costed_board
    text = "cheap >= dear - 12 at <= 0.5 cost"
    claim = parse_claim(text)
    assert (claim.kind, claim.margin, claim.cost_ratio) == ("noninferior_at_cost", 12.0, 0.5)
    table = evaluate_claims(wide, [text, "dear > weak"], costs=costs, replicates=200)
    rows = table[table["claim"] == claim.label].set_index(["reading", "adjustment"])
    p_accuracy = one_sided(correct[:, 0] - correct[:, 1], -0.12)
    p_cost = one_sided(0.5 * spend[:, 1] - spend[:, 0])
    expected = min(1.0, 2 * max(p_accuracy, p_cost))
    assert rows.loc[("paired", "none"), "p"] == pytest.approx(expected, rel=1e-9)
    q = min(
        1.0,
        2
        * min(
            one_sided(correct[:, 1] - correct[:, 0], 0.12),
            one_sided(spend[:, 0] - 0.5 * spend[:, 1]),
        ),
    )
    assert rows.loc[("paired", "none"), "p_opposite_adjusted"] == pytest.approx(
        min(1.0, 2 * q), rel=1e-9
    )
    assert rows.loc[("paired", "none"), "verdict"] == "supported"
    # in the family with the other claim, Holm over 2: the other's p is far smaller, so this
    # one, second in Holm's order, is multiplied by 1
    holm = rows.loc[("paired", "holm")]
    assert holm["family_size"] == 2 and holm["p_adjusted"] == pytest.approx(expected)
    others = rows.drop(index=[("paired", "none"), ("paired", "holm")])
    assert (others["verdict"] == "n/a").all()
    assert set(others["note"]) == {"not applicable (cost claims: the paired readings)"}
    # the row's gap is the accuracy gap, A - B
    assert rows.loc[("paired", "none"), "estimate_points"] == pytest.approx(
        100 * (correct[:, 0].mean() - correct[:, 1].mean())
    )


def test_on_frontier_claim_by_hand(costed_board):
    wide, costs, correct, spend = costed_board
    table = evaluate_claims(wide, ["weak on frontier", "dear on frontier"], costs=costs)
    paired = table[(table["reading"] == "paired") & (table["adjustment"] == "none")]
    paired = paired.set_index("claim")
    # weak is the cheapest: for each rival, cheaper (significantly) or more accurate
    pieces = []
    for rival in (0, 1):
        p_acc = one_sided(correct[:, 2] - correct[:, rival])
        p_cheap = one_sided(spend[:, rival] - spend[:, 2])
        pieces.append(min(1.0, 2 * min(p_acc, p_cheap)))
    assert paired.loc["weak on frontier", "p"] == pytest.approx(min(1.0, 2 * max(pieces)), rel=1e-9)
    assert paired.loc["weak on frontier", "verdict"] == "supported"
    assert paired.loc["dear on frontier", "verdict"] != "contradicted"


def test_a_cost_claim_without_costs_is_refused_before_anything_runs(costed_board):
    wide, costs, *_ = costed_board
    with pytest.raises(ClaimError, match="needs a cost per question"):
        evaluate_claims(wide, ["cheap on frontier"])
    with pytest.raises(ConfigError, match="needs a cost per question"):
        claim_jobs.checked_claims(
            pd.Series([0.8, 0.8, 0.6], index=wide.models),
            ["x"],
            claims=["cheap on frontier"],
            notes=[],
        )
    no_weak = costs[costs["model"] != "weak"]
    with pytest.raises(ClaimError, match="model 'weak' has no cost"):
        evaluate_claims(wide, ["weak >= dear - 2 at <= 1 cost"], costs=no_weak)


def test_api_question_costs_feed_check_claims(fixture_costs):
    items, costs = fixture_costs
    assert api.question_costs(LOGS, PRICES).equals(costs)
    verdicts = api.check_claims(items, ["mockllm/fake-weak on frontier"], costs=costs)
    assert set(verdicts.loc[verdicts["verdict"] != "n/a", "reading"]) == {"paired"}


# --- The figure and the command line ---------------------------------------------------------


def test_the_frontier_figure_states_the_set(fixture_costs):
    items, costs = fixture_costs
    result = jobs.cost_table(wide_scores(items), costs, alpha=0.05, level=0.95, seed=1)
    fig = frontier_figure(result["cost"].frame, result["frontier"].frame, 0.05, 40)
    title = fig.get_suptitle()
    assert title.startswith("No model is shown to cost more for less")
    assert fig.axes[0].get_xscale() == "log"  # the costs span more than a factor of 10


def test_evalbars_leaderboard_with_prices_prints_cost_and_the_frontier(capsys):
    status = cli.main(["leaderboard", str(LOGS), "--prices", str(PRICES), "--format", "json"])
    document = json.loads(capsys.readouterr()[0])
    assert status == 0
    cost = pd.DataFrame(document["cost"]).set_index("model")
    ledger = expected_costs().groupby("model")["priced"].mean()
    assert cost["mean_cost"].to_numpy() == pytest.approx(ledger.loc[cost.index].to_numpy())
    assert "On the observed cost-accuracy frontier" in document["headline"]


def test_the_cost_api_reads_accuracy_on_the_runs_item_score():
    # score= reaches the score matrix: pass@1 of one sample is its 0/1 score, so the table is
    # the mean's; pass@2 of logs with one sample a question is refused, as the workflow refuses it
    logs, prices = USAGE / "logs", USAGE / "prices.csv"
    mean = api.cost_table(logs, prices)
    pd.testing.assert_frame_equal(api.cost_table(logs, prices, score="pass@1"), mean)
    with pytest.raises(ConfigError, match="pass@2 needs 2 samples of a question"):
        api.frontier_table(logs, prices, score="pass@2")
    items = api.read_items(logs)
    with pytest.raises(ValueError, match="needs an item table"):
        api.check_claims(
            api.scores(items), ["mockllm/fake-mid > mockllm/fake-weak"], score="pass@1"
        )
