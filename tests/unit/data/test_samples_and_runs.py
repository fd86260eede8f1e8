"""Samples and runs in the item table (issue 38): one row per (model, question, run, sample).

The readers keep every run with ``runs: all`` (lm-eval results files, Inspect logs, lighteval
timestamps, a table's ``run`` column, two sources of one model) and every sample (lm-eval
``repeats`` re-scored per response, Inspect epochs, lighteval's n samples, a table's ``epoch``
or ``sample`` column); every refusal is one line naming the file. The repeat fixtures' truth
(what the fake models wrote, scored by the filters as lm-eval and Inspect score them) is the
oracle.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalbars.api as eb
from evalbars.api._read import quiet_warnings
from evalbars.data.items import build_item_table, read_summary, sample_summary
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.readers.shape import SourceShape, probe_sources
from evalbars.errors import InputError

HARNESS = Path(__file__).parents[2] / "data" / "harness"
LM = HARNESS / "lm_eval_repeats"
INSPECT = HARNESS / "inspect_epochs_runs"
LIGHTEVAL = Path(__file__).parents[2] / "data" / "corpora" / "lighteval"
LM_OPTIONS = {"id_field": "id", "category_field": "category"}


def _truth(folder: Path) -> pd.DataFrame:
    """The fakes' samples with each run's label as the readers give it (``runs: all``)."""
    runs = pd.read_csv(folder / "truth" / "runs.csv")
    return pd.read_csv(folder / "truth" / "samples.csv").merge(
        runs[["model", "seed", "run"]], on=["model", "seed"]
    )


def _items(folder, **options) -> pd.DataFrame:
    with quiet_warnings():
        return eb.read_items(folder, **options).astype({"model": str, "run": str})


@pytest.mark.parametrize(
    ("filter_name", "column"),
    [("strict-match", "strict"), ("lower-strict", "lower"), ("maj@3", "last_number")],
)
def test_lm_eval_repeats_are_each_response_rescored_by_the_tasks_filter(filter_name, column):
    items = _items(LM / "logs", runs="all", filter=filter_name, **LM_OPTIONS)
    truth = _truth(LM)
    assert len(items) == len(truth) == 288  # 2 models x 2 runs x 24 questions x 3 repeats
    merged = items.merge(
        truth,
        left_on=["model", "run", "question_id", "epoch"],
        right_on=["model", "run", "question_id", "repeat"],
        validate="one_to_one",
    )
    assert len(merged) == 288
    np.testing.assert_array_equal(merged["correct"], merged[f"score_{column}"])
    # an answer the filter could not extract is a missing prediction, scored 0 (policy wrong)
    invalid = merged[f"{column}_answer" if column != "last_number" else "last_number"]
    assert (merged["missing_prediction"] == (invalid.astype(str) == "[invalid]")).all()


def test_without_runs_all_two_runs_are_refused_naming_the_remedy():
    with pytest.raises(InputError) as caught:
        read_source(LM / "logs", SourceOptions(id_field="id"))
    message = str(caught.value)
    assert "\n" not in message
    assert "2 runs of model 'evalbars/fake-strong'" in message
    assert "`runs: newest`" in message and "`runs: all` reads each as a run" in message
    newest = _items(LM / "logs", runs="newest", **LM_OPTIONS)
    assert len(newest) == 144 and set(newest["run"]) == {"1"}


def _copy_logs(tmp_path: Path) -> Path:
    target = tmp_path / "logs"
    shutil.copytree(LM / "logs" / "evalbars__fake-weak", target / "evalbars__fake-weak")
    return target


def _edit_results(folder: Path, edit) -> None:
    for path in folder.rglob("results_*.json"):
        document = json.loads(path.read_text())
        edit(document["configs"]["toyarith_repeats"])
        path.write_text(json.dumps(document))


def test_a_filter_that_cannot_be_reproduced_is_refused_in_one_line_naming_it(tmp_path):
    logs = _copy_logs(tmp_path)
    _edit_results(
        logs, lambda config: config["filter_list"][0]["filter"].insert(0, {"function": "custom"})
    )
    with pytest.raises(InputError) as caught:
        read_source(logs, SourceOptions(id_field="id", runs="all"))
    message = str(caught.value)
    assert "\n" not in message
    assert "filter list 'strict-match': filter 'custom' cannot be re-applied" in message
    # another filter list of the task is not the one read: the task reads by it
    options = SourceOptions(id_field="id", runs="all", filter="lower-strict")
    assert len(pd.concat(read_source(logs, options))) == 144


def test_a_metric_that_cannot_be_recomputed_per_repeat_is_refused(tmp_path):
    logs = _copy_logs(tmp_path)
    _edit_results(
        logs, lambda config: config["metric_list"][0].update(ignore_numbers=True, extra=1)
    )
    with pytest.raises(InputError, match="exact_match options \\['extra'\\] not reproduced"):
        read_source(logs, SourceOptions(id_field="id", runs="all"))


def test_a_line_whose_rescoring_disagrees_with_the_file_is_refused_naming_its_record(tmp_path):
    logs = _copy_logs(tmp_path)
    samples = sorted(logs.rglob("samples_*.jsonl"))[0]
    lines = samples.read_text().splitlines()
    first = json.loads(lines[0])
    first["exact_match"] = 1.0 - first["exact_match"]  # the first repeat no longer agrees
    lines[0] = json.dumps(first)
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_source(logs, SourceOptions(id_field="id", runs="all"))
    message = str(caught.value)
    assert message.startswith(f"{samples}, record 1: filter 'strict-match': ")
    assert "but the file logged" in message and "\n" not in message


def test_inspect_logs_are_runs_labelled_by_their_run_id_and_epochs_are_samples():
    items = _items(INSPECT / "logs", runs="all")
    truth = _truth(INSPECT)
    merged = items.merge(truth, on=["model", "run", "question_id", "epoch"], validate="one_to_one")
    assert len(merged) == len(items) == 240
    np.testing.assert_array_equal(merged["correct"], merged["score_match"])
    assert set(items["run"]) == set(truth["run"])


def test_read_says_runs_samples_per_question_and_the_share_of_questions_that_disagree():
    with quiet_warnings():
        summary = eb.read_preview(INSPECT / "logs", runs="all")
    truth = _truth(INSPECT)
    per_question = truth.groupby(["model", "question_id"])["score_match"].agg(["min", "max"])
    disagree = (per_question["min"] != per_question["max"]).groupby("model").mean()
    assert summary["runs"].tolist() == [2, 2]
    assert summary["samples_per_question"].tolist() == ["6", "6"]
    np.testing.assert_allclose(summary["disagreeing_share"], disagree.to_numpy())
    one = pd.DataFrame({"model": "m", "question_id": ["a", "b"], "run": "1", "correct": [1, 0]})
    assert np.isnan(sample_summary(one)["disagreeing_share"].iloc[0])


def test_lighteval_timestamps_are_runs_with_runs_all():
    items = _items(LIGHTEVAL, runs="all")
    runs = items.groupby("model")["run"].nunique()
    assert runs.to_dict() == {"synth/model-a": 2, "synth/model-b": 1, "synth/model-c": 1}
    stamps = {"2026-12-01T09-22-48.261994", "2026-12-01T09-24-39.080075"}
    assert set(items.loc[items["model"] == "synth/model-a", "run"]) == stamps


def _table(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_table_gives_runs_and_samples_by_its_run_and_sample_columns(tmp_path):
    table = _table(
        tmp_path / "runs.csv",
        "model,question_id,run,sample,correct\n"
        "A,q1,s1,1,1\nA,q1,s1,2,0\nA,q1,s2,1,1\nA,q2,s1,1,0\nA,q2,s2,1,0\n"
        "B,q1,s1,1,1\nB,q2,s1,1,1\n",
    )
    items = _items(table)
    assert items[["run", "epoch"]].values.tolist()[:3] == [["s1", 1], ["s1", 2], ["s2", 1]]
    with quiet_warnings():
        summary = eb.read_preview(table).set_index("model")
    assert summary.loc["A", "runs"] == 2 and summary.loc["A", "samples_per_question"] == "2-3"
    # the same sample twice in one run is a repeat, named with its run
    twice = _table(
        tmp_path / "twice.csv",
        "model,question_id,run,sample,correct\nA,q,r,1,1\nA,q,r,1,0\nA,q,t,1,1\n",
    )
    with pytest.raises(InputError, match="question_id 'q' occurs 2 times for model 'A' in run r"):
        read_source(twice)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("model,question_id,epoch,sample,correct\nA,q,1,1,1\n", "both epoch and sample columns"),
        ("model,question_id,run,correct\nA,q,,1\n", "record 1: empty run"),
        ("model,question_id,sample,correct\nA,q,0,1\n", "record 1: sample must be a positive"),
    ],
)
def test_bad_sample_and_run_columns_are_one_line(tmp_path, text, problem):
    path = _table(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_two_sources_of_one_model_are_two_runs_only_with_runs_all(tmp_path):
    first = _table(tmp_path / "seed1.csv", "model,question_id,correct\nA,q1,1\nA,q2,0\n")
    second = _table(tmp_path / "seed2.csv", "model,question_id,correct\nA,q1,0\nA,q2,0\n")
    with pytest.raises(InputError, match="also comes from .*`runs: all`|also comes from"):
        build_item_table([*read_source(first), *read_source(second)])
    frames = [
        *read_source(first, SourceOptions(runs="all")),
        *read_source(second, SourceOptions(runs="all")),
    ]
    items = build_item_table(frames)
    assert items.groupby("run", observed=True).size().to_dict() == {"seed1.csv": 2, "seed2.csv": 2}
    summary = read_summary(frames, items).iloc[0]
    assert (summary["runs"], summary["samples_per_question"], summary["samples"]) == (2, "2", 4)
    # two sources that give one model the same run label are refused, naming both
    labelled = [
        _table(tmp_path / f"{name}.csv", "model,question_id,run,correct\nA,q1,r1,1\n")
        for name in ("x", "y")
    ]
    clash = [f for path in labelled for f in read_source(path, SourceOptions(runs="all"))]
    with pytest.raises(InputError, match="model 'A' has run 'r1' here and in .*x.csv"):
        build_item_table(clash)


def test_the_probe_finds_samples_and_runs_from_the_headers(tmp_path):
    assert probe_sources([{"path": str(INSPECT / "logs"), "runs": "all"}]) == SourceShape(
        True, True
    )
    assert probe_sources([{"path": str(LM / "logs"), "runs": "newest"}]) == SourceShape(True, False)
    assert probe_sources([{"path": str(HARNESS / "lm_eval"), "runs": "newest"}]) == SourceShape()
    one = _table(tmp_path / "one.csv", "model,question_id,correct\nA,q,1\n")
    both = [{"path": str(one), "runs": "all"}] * 2
    assert probe_sources(both) == SourceShape(samples=False, runs=True)
    sampled = _table(tmp_path / "s.csv", "model,question_id,sample,correct\nA,q,1,1\nA,q,2,0\n")
    assert probe_sources([{"path": str(sampled)}]) == SourceShape(samples=True, runs=False)
