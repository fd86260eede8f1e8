"""lm-eval filters and exact_match re-applied per repeat: against lm-eval 0.4.13's own filters
(tests/reference/harness/lm_eval_filter_output/), against the repeats fixture's own logged
metrics, and against the fake model's truth."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from evalbars.data.readers.lm_eval_filters import (
    ExactMatch,
    FilterList,
    FilterStep,
    check_rescoring,
    rescore_lines,
    rescore_samples_file,
    rescoring_disagreements,
    task_rescorer,
)
from evalbars.errors import InputError

TESTS = Path(__file__).parents[2]
ORACLE = json.loads(
    (TESTS / "reference" / "harness" / "lm_eval_filter_output" / "filters.json").read_text()
)
REPEATS = TESTS / "data" / "harness" / "lm_eval_repeats"
TRUTH = pd.read_csv(REPEATS / "truth" / "samples.csv", dtype={"value": str})
VOTES = pd.read_csv(REPEATS / "truth" / "votes.csv")
TASK = "toyarith_repeats"


def _runs():
    """(samples file, results file, model, seed) of every run in the fixture."""
    found = []
    for samples in sorted((REPEATS / "logs").glob("*/samples_*.jsonl")):
        stamp = re.search(r"_(\d{4}-[^_]*)\.jsonl$", samples.name).group(1)
        results = samples.parent / f"results_{stamp}.json"
        config = json.loads(results.read_text())["config"]
        found.append(
            (samples, results, config["model_args"]["pretrained"], config["model_args"]["seed"])
        )
    return found


RUNS = _runs()


def _list(steps):
    return FilterList(
        "case",
        tuple(
            FilterStep(s["function"], {k: v for k, v in s.items() if k != "function"})
            for s in steps
        ),
    )


@pytest.mark.parametrize("case", ORACLE["filters"], ids=lambda c: c["name"])
def test_each_filter_list_is_lm_evals(case):
    pipeline = _list(case["steps"])
    assert pipeline.aggregate(case["responses"], case["doc"]) == case["aggregate"]
    used = pipeline.repeats_used or len(case["responses"])
    assert pipeline.answers(case["responses"], case["doc"]) == case["answers"][:used]


@pytest.mark.parametrize("case", ORACLE["metrics"], ids=lambda c: c["name"])
def test_exact_match_is_lm_evals(case):
    options = dict(case["options"])
    options["regexes_to_ignore"] = tuple(options.get("regexes_to_ignore", ()))
    assert ExactMatch(**options).score(case["prediction"], case["reference"]) == case["exact_match"]


def test_the_fixture_holds_two_runs_of_two_models():
    assert sorted((model, seed) for _, _, model, seed in RUNS) == [
        ("evalbars/fake-strong", 1),
        ("evalbars/fake-strong", 2),
        ("evalbars/fake-weak", 1),
        ("evalbars/fake-weak", 2),
    ]


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r[2]}-seed{r[3]}")
def test_rescoring_reproduces_the_files_own_metrics(run):
    samples, results, _, _ = run
    table = rescore_samples_file(samples, results, TASK)  # raises on any disagreement
    assert rescoring_disagreements(table).empty
    first = table[table["repeat"] == 1]
    # take_first lists: repeat 1's own score is the logged one, line by line.
    kept = first[first["filter"].isin(["strict-match", "lower-strict"])]
    assert len(kept) == 48 and (kept["score"] == kept["logged"]).all()
    # Voting lists: the re-applied vote scores what the file logged.
    voted = first[first["filter"].isin(["maj@3", "first2-vote"])]
    assert len(voted) == 48 and (voted["aggregate_score"] == voted["logged"]).all()
    assert table.groupby("filter")["repeat"].max().to_dict() == {
        "first2-vote": 2,
        "lower-strict": 3,
        "maj@3": 3,
        "strict-match": 3,
    }


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r[2]}-seed{r[3]}")
def test_every_repeat_scores_what_the_fake_wrote(run):
    samples, results, model, seed = run
    table = rescore_samples_file(samples, results, TASK)
    docs = {
        json.loads(line)["doc_id"]: json.loads(line)["doc"]["id"]
        for line in samples.read_text().splitlines()
    }
    table["question_id"] = table["doc_id"].map(docs)
    truth = TRUTH[(TRUTH["model"] == model) & (TRUTH["seed"] == seed)]
    for name, column in (
        ("strict-match", "score_strict"),
        ("maj@3", "score_last_number"),
        ("lower-strict", "score_lower"),
    ):
        ours = table[table["filter"] == name].set_index(["question_id", "repeat"])["score"]
        expected = truth.set_index(["question_id", "repeat"])[column].loc[ours.index]
        assert (ours == expected).all(), name
    votes = VOTES[(VOTES["model"] == model) & (VOTES["seed"] == seed)].set_index("question_id")
    for name, column in (("maj@3", "score_maj3"), ("first2-vote", "score_first2")):
        first = table[(table["filter"] == name) & (table["repeat"] == 1)]
        assert (
            first.set_index("question_id")["aggregate_score"]
            == votes[column].loc[first["question_id"]]
        ).all()


def _config(filters=None, metrics=None, **extra):
    config = {"output_type": "generate_until", "repeats": 2}
    if filters is not None:
        config["filter_list"] = [{"name": "f", "filter": filters}]
    if metrics is not None:
        config["metric_list"] = metrics
    return {"configs": {"t": config | extra}}


@pytest.mark.parametrize(
    ("results", "message"),
    [
        (
            _config([{"function": "custom", "filter_fn": "x"}]),
            "filter 'custom' cannot be re-applied",
        ),
        (_config([{"function": "regex_pos"}]), "filter 'regex_pos'"),
        (_config([{"function": "regex", "pattern": "x"}]), "options \\['pattern'\\]"),
        (_config([{"function": "take_first"}, {"function": "lowercase"}]), "after take_first"),
        (_config([{"function": "take_first_k"}]), "take_first_k without k"),
        (_config(None, [{"metric": "bleu"}]), "metric 'bleu' cannot be re-computed"),
        (_config(None, [{"metric": "exact_match", "strip": True}]), "options \\['strip'\\]"),
        (_config(None, None, doc_to_choice="{{choices}}"), "doc_to_choice"),
        ({"configs": {"t": {"output_type": "multiple_choice"}}}, "only generate_until"),
        ({"configs": {}}, "no configs entry"),
    ],
)
def test_what_cannot_be_reproduced_is_refused_by_name(results, message):
    with pytest.raises(InputError, match=message) as raised:
        task_rescorer(results, "t", "results_x.json")
    assert raised.value.file == "results_x.json"


def test_no_filter_list_means_take_first_and_exact_match():
    rescorer = task_rescorer(_config(), "t", "r.json")
    assert list(rescorer.filters) == ["none"]
    line = {
        "doc_id": 3,
        "filter": "none",
        "target": "ok",
        "resps": [["ok", "no"]],
        "exact_match": 1.0,
    }
    table = rescore_lines(rescorer, [(7, line)], "s.jsonl")
    assert table["score"].tolist() == [1.0, 0.0]
    assert table["record"].tolist() == [7, 7]


def test_bad_lines_name_their_record():
    rescorer = task_rescorer(_config([{"function": "take_first"}]), "t", "r.json")
    line = {"doc_id": 0, "filter": "f", "target": "a", "resps": [["a", "b"]], "exact_match": 1.0}
    with pytest.raises(InputError, match="record 4: filter 'g' is not in"):
        rescore_lines(rescorer, [(4, line | {"filter": "g"})], "s.jsonl")
    with pytest.raises(InputError, match="record 5: 3 responses where the task has repeats: 2"):
        rescore_lines(rescorer, [(5, line | {"resps": [["a", "b", "c"]]})], "s.jsonl")
    with pytest.raises(InputError, match="record 6: resps is not"):
        rescore_lines(rescorer, [(6, line | {"resps": ["a", "b"]})], "s.jsonl")
    # A logged value the re-scoring does not reproduce is named with its line.
    table = rescore_lines(rescorer, [(8, line | {"exact_match": 0.0})], "s.jsonl")
    with pytest.raises(InputError, match="s.jsonl, record 8: filter 'f': re-scored exact_match 1"):
        check_rescoring(table, "s.jsonl")


def test_a_tampered_fixture_line_is_caught():
    samples, results, _, _ = RUNS[0]
    lines = [json.loads(text) for text in samples.read_text().splitlines()]
    rescorer = task_rescorer(json.loads(results.read_text()), TASK, results)
    index = next(i for i, line in enumerate(lines) if line["filter"] == "strict-match")
    lines[index]["exact_match"] = 1.0 - lines[index]["exact_match"]
    table = rescore_lines(rescorer, list(enumerate(lines, start=1)), samples)
    off = rescoring_disagreements(table)
    assert off["record"].tolist() == [index + 1]
