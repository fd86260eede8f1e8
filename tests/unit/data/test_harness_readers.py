"""Readers of harness logs against tables the harnesses' own readers made.

The logs under tests/data/harness/ were written by lm-evaluation-harness 0.4.13 and Inspect
0.3.285 (0.3.205 for the deflate log) with fake models, and every expected table beside them was
read with the harness's own reader (lm-eval's sample records, ``inspect_ai.log.read_eval_log``);
see tests/reference/harness/README.md. Every (model, question, epoch, score) must match.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.items import build_item_table
from evalbars.data.readers import SourceOptions, detect_format, read_source
from evalbars.errors import InputError

HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness"
MANIFEST = pd.read_csv(HARNESS / "expected" / "manifest.csv")
KEY = ["model", "question_id", "epoch"]


def expected(name: str) -> pd.DataFrame:
    return pd.read_csv(HARNESS / "expected" / f"{name}.csv", keep_default_na=False, na_values=[""])


def log_of(name: str) -> Path:
    row = MANIFEST[MANIFEST["expected"] == f"expected/{name}.csv"].iloc[0]
    return HARNESS / row["log"]


def ours(frame: pd.DataFrame) -> pd.DataFrame:
    return (
        frame[KEY + ["correct"]]
        .astype({"correct": float, "model": str, "epoch": "int64"})
        .sort_values(KEY)
        .reset_index(drop=True)
    )


def theirs(table: pd.DataFrame) -> pd.DataFrame:
    table = table.rename(columns={"score": "correct"})[KEY + ["correct"]]
    return table.astype({"correct": float}).sort_values(KEY).reset_index(drop=True)


# --- Inspect -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "inspect__eval_zstd__fake-strong",
        "inspect__eval_zstd__fake-mid",
        "inspect__eval_zstd__fake-weak",
        "inspect__eval_deflate__fake-strong",
        "inspect__json__fake-weak",
        "inspect__epochs__fake-mid",
    ],
)
def test_inspect_logs_match_read_eval_log(name):
    (frame,) = read_source(log_of(name))
    pd.testing.assert_frame_equal(ours(frame), theirs(expected(name)))
    table = expected(name)
    assert (
        frame["category"].tolist()
        == table.sort_values(["epoch", "question_id"])["category"].tolist()
    )


def test_zstd_and_deflate_members_read_alike():
    zstd = log_of("inspect__eval_zstd__fake-strong")
    deflate = log_of("inspect__eval_deflate__fake-strong")
    assert detect_format(zstd) == detect_format(deflate) == "inspect"
    pd.testing.assert_frame_equal(ours(read_source(zstd)[0]), ours(read_source(deflate)[0]))


def test_epochs_are_kept_one_row_per_sample():
    (frame,) = read_source(log_of("inspect__epochs__fake-mid"))
    assert sorted(frame["epoch"].unique()) == [1, 2, 3]
    assert frame.groupby("epoch")["correct"].mean().round(2).tolist() == [0.5, 0.6, 0.4]


def test_errored_samples_are_missing_predictions_and_counted():
    name = "inspect__errored_samples__fake-strong"
    (frame,) = read_source(log_of(name))
    table = expected(name)
    errored = table.loc[table["errored"], "question_id"].tolist()
    assert errored == ["q-004", "q-013"]
    assert frame.loc[frame["correct"].isna(), "question_id"].tolist() == errored
    assert frame.attrs["errored_samples"] == 2
    items = build_item_table([frame], "wrong")
    assert items["missing_prediction"].sum() == 2
    pd.testing.assert_frame_equal(
        ours(frame).dropna().reset_index(drop=True), theirs(table[~table["errored"]])
    )


def test_partial_credit_maps_letters_as_inspect_does():
    name = "inspect__partial_credit__fake-weak"
    table = expected(name)
    with pytest.raises(InputError, match=r"cannot choose a scorer \(the log has 2"):
        read_source(log_of(name))
    for scorer in ("match", "partial_credit"):
        (frame,) = read_source(log_of(name), SourceOptions(scorer=scorer))
        pd.testing.assert_frame_equal(ours(frame), theirs(table[table["metric"] == scorer]))
    assert set(table["value"]) == {"C", "I", "P", "N"}


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("inspect__status_error__fake-strong", "error"),
        ("inspect__status_cancelled__fake-weak", "cancelled"),
    ],
)
def test_unfinished_logs_are_refused_unless_allowed(name, status):
    path = log_of(name)
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == (
        f"{path}: the log's status is {status!r}: the run did not finish; set "
        "`allow_partial: true` on this predictions entry to analyse the samples it holds"
    )
    (frame,) = read_source(path, SourceOptions(allow_partial=True))
    table = expected(name)
    assert len(frame) == len(table)
    assert frame["correct"].isna().sum() == table["errored"].sum()


# --- lm-evaluation-harness ----------------------------------------------------------------------


def lm_eval_expected(name: str, filter_name: str = "strict-match") -> pd.DataFrame:
    """The rows our defaults read: acc for multiple choice, exact_match under one filter."""
    table = expected(name)
    chosen = (table["metric"] == "acc") | (
        (table["metric"] == "exact_match") & (table["filter"] == filter_name)
    )
    return table[chosen]


@pytest.mark.parametrize("model", ["fake-strong", "fake-weak"])
def test_lm_eval_runs_match_the_sample_records(model):
    name = f"lm_eval__{model}__run1"
    table = lm_eval_expected(name)
    (frame,) = read_source(HARNESS / "lm_eval" / f"evalbars__{model}", SourceOptions(id_field="id"))
    assert frame["model"].unique().tolist() == [f"evalbars/{model}"]  # model_name, not the class
    invalid = table["response"] == "[invalid]"
    expected_scores = theirs(table.assign(score=table["score"].where(~invalid)))
    pd.testing.assert_frame_equal(ours(frame), expected_scores)
    # Categories default to the subtask.
    assert set(frame["category"]) == {"toybench_math", "toybench_history", "toyarith"}


def test_lm_eval_question_ids_default_to_task_and_doc_id_which_repeats_across_subtasks():
    (frame,) = read_source(HARNESS / "lm_eval" / "evalbars__fake-strong")
    table = lm_eval_expected("lm_eval__fake-strong__run1")
    assert (table.groupby("task")["doc_id"].min() == 0).all()  # doc_id restarts per subtask
    assert sorted(frame["question_id"]) == sorted(table["task"] + "/" + table["doc_id"].astype(str))
    assert frame["question_id"].is_unique


def test_lm_eval_filter_and_metric_are_chosen_by_the_user():
    path = HARNESS / "lm_eval" / "evalbars__fake-strong"
    with pytest.raises(InputError, match=r"toyarith_.*: no filter 'typo' in the file; it has"):
        read_source(path, SourceOptions(filter="typo"))
    (frame,) = read_source(path, SourceOptions(id_field="id", filter="flexible-extract"))
    table = lm_eval_expected("lm_eval__fake-strong__run1", "flexible-extract")
    invalid = table["response"] == "[invalid]"
    pd.testing.assert_frame_equal(
        ours(frame), theirs(table.assign(score=table["score"].where(~invalid)))
    )
    # acc_norm where a task logs it (the multiple-choice subtasks), the default elsewhere.
    options = SourceOptions(id_field="id", metric="acc_norm", category_field="category")
    (norm,) = read_source(path, options)
    all_rows = expected("lm_eval__fake-strong__run1")
    wanted = (all_rows["metric"] == "acc_norm") | (
        (all_rows["metric"] == "exact_match") & (all_rows["filter"] == "strict-match")
    )
    chosen = all_rows[wanted]
    invalid = chosen["response"] == "[invalid]"
    pd.testing.assert_frame_equal(
        ours(norm), theirs(chosen.assign(score=chosen["score"].where(~invalid)))
    )
    assert set(norm["category"]) == set(all_rows["category"])


def test_two_runs_of_one_model_are_refused_unless_the_newest_is_asked_for():
    folder = HARNESS / "lm_eval" / "evalbars__fake-mid"
    with pytest.raises(InputError, match=r"2 runs of model 'evalbars/fake-mid' on task '"):
        read_source(folder)
    (frame,) = read_source(folder, SourceOptions(id_field="id", runs="newest"))
    newest = lm_eval_expected("lm_eval__fake-mid__run2")
    assert frame["source_file"].str.contains(newest["run"].iloc[0]).all()
    invalid = newest["response"] == "[invalid]"
    pd.testing.assert_frame_equal(
        ours(frame), theirs(newest.assign(score=newest["score"].where(~invalid)))
    )


def test_a_directory_of_every_harness_is_walked():
    frames = read_source(HARNESS / "inspect" / "eval_zstd")
    assert sorted(f["model"].iloc[0] for f in frames) == [
        "mockllm/fake-mid",
        "mockllm/fake-strong",
        "mockllm/fake-weak",
    ]
    models = read_source(HARNESS / "lm_eval", SourceOptions(runs="newest"))
    assert len(models) == 3 and all(len(f) == 39 for f in models)
    assert np.all(
        [f.attrs["missing_means"].startswith("filtered response [invalid]") for f in models]
    )
