"""The token-usage reader against logs the real tools wrote, and its refusals.

``tests/data/harness/inspect_usage/`` was written by Inspect 0.3.285 and
``tests/data/corpora/helm_usage/`` by crfm-helm 0.5.16, with stand-in models whose token counts
are known; each ``expected_usage.csv`` holds that truth (see the READMEs under
``tests/reference/harness/`` and ``tests/reference/corpora/``). The other harness fixtures
(Inspect logs with usage but no cost, a HELM suite with perturbations) check that the usage
rows are keyed exactly as the item readers key the same logs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.api import read_items
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.readers.usage import USAGE_COLUMNS, join_usage, read_usage
from evalbars.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "data"
INSPECT_USAGE = DATA / "harness" / "inspect_usage"
HELM_USAGE = DATA / "corpora" / "helm_usage"
INSPECT = DATA / "harness" / "inspect"
HELM = DATA / "corpora" / "helm"
KEY = ["model", "question_id", "epoch"]


def keyed(frame: pd.DataFrame, columns=()) -> pd.DataFrame:
    """Key columns as plain values (and ``columns``), sorted, for comparison."""
    out = frame[KEY + list(columns)].copy()
    out["model"] = out["model"].astype(str)
    out["question_id"] = out["question_id"].astype(str)
    out["epoch"] = out["epoch"].astype("int64")
    return out.sort_values(KEY).reset_index(drop=True)


@pytest.fixture(scope="module")
def inspect_read():
    """``(items, usage)`` of the Inspect usage fixture (read once for the module)."""
    logs = INSPECT_USAGE / "logs"
    return read_items(logs), read_usage(logs)


@pytest.fixture(scope="module")
def helm_read():
    """``(items, usage)`` of the HELM usage fixture's test split."""
    runs = HELM_USAGE / "runs"
    return read_items(runs), read_usage(runs)


def refused(call, *parts: str) -> str:
    """The one-line message of the InputError ``call`` raises, holding every part."""
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    for part in parts:
        assert part in message, (part, message)
    return message


# --- Inspect: the usage fixture ----------------------------------------------------------------


def test_inspect_usage_equals_the_fakes_ledger(inspect_read):
    _, usage = inspect_read
    assert list(usage.columns) == USAGE_COLUMNS
    truth = pd.read_csv(INSPECT_USAGE / "expected_usage.csv")
    assert len(usage) == len(truth) == 60
    got = keyed(usage, ["input_tokens", "output_tokens", "cost"])
    want = keyed(truth, ["input_tokens", "output_tokens", "cost"])
    pd.testing.assert_frame_equal(
        got[KEY + ["input_tokens", "output_tokens"]].astype(
            {c: "int64" for c in ("input_tokens", "output_tokens")}
        ),
        want[KEY + ["input_tokens", "output_tokens"]],
    )
    # Inspect's total_cost (its own sum over the calls) against the prices times the ledger's tokens
    np.testing.assert_allclose(got["cost"].to_numpy(dtype=float), want["cost"], rtol=1e-12)
    totals = got.groupby("model")[["input_tokens", "output_tokens"]].sum()
    assert totals.loc["mockllm/fake-strong"].tolist() == [714, 246]
    assert totals.loc["mockllm/fake-mid"].tolist() == [516, 172]
    assert totals.loc["mockllm/fake-weak"].tolist() == [277, 89]


def test_inspect_usage_sums_calls_and_leaves_out_the_grader(inspect_read):
    usage = keyed(inspect_read[1], ["input_tokens", "output_tokens", "cost"])
    truth = keyed(
        pd.read_csv(INSPECT_USAGE / "expected_usage.csv"),
        ["calls", "grader", "grader_input_tokens", "grader_output_tokens"],
    )
    both = usage.merge(truth, on=KEY, validate="one_to_one")
    # Three samples asked twice ("I don't know." then a guess): two calls summed by Inspect.
    twice = both[both["calls"] == 2]
    assert sorted(zip(twice["model"], twice["question_id"], strict=True)) == [
        ("mockllm/fake-mid", "q-002"),
        ("mockllm/fake-weak", "q-002"),
        ("mockllm/fake-weak", "q-005"),
    ]
    assert twice["input_tokens"].tolist() == [64, 32, 30]
    # fake-weak graded itself: the log's model_usage holds both roles (answer 32 + grader 157
    # input tokens on q-002); the reader keeps the answering role's only.
    self_graded = both[both["model"] == "mockllm/fake-weak"]
    assert (self_graded["grader"] == "mockllm/fake-weak").all()
    assert (self_graded["grader_input_tokens"] > 4 * self_graded["input_tokens"]).all()
    row = self_graded[self_graded["question_id"] == "q-002"].iloc[0]
    assert (row["input_tokens"], row["grader_input_tokens"]) == (32, 157)
    assert row["cost"] == pytest.approx((32 * 0.15 + 7 * 0.6) / 1e6, rel=1e-12)


def test_inspect_usage_keys_are_the_item_tables(inspect_read):
    items, usage = inspect_read
    assert keyed(items).equals(keyed(usage))
    joined = join_usage(items, usage)
    assert joined["input_tokens"].notna().all() and joined["cost"].notna().all()
    truth = keyed(pd.read_csv(INSPECT_USAGE / "expected_usage.csv"), ["input_tokens", "score"])
    mine = keyed(joined, ["input_tokens", "correct"])
    assert (mine["input_tokens"].to_numpy() == truth["input_tokens"].to_numpy()).all()
    assert (mine["correct"].to_numpy(dtype=float) == truth["score"].to_numpy()).all()


# --- Inspect: the other harness fixtures -------------------------------------------------------


def test_inspect_logs_without_cost_read_as_json_and_zip_alike():
    zipped = read_usage(INSPECT / "eval_zstd")
    assert len(zipped) == 60 and zipped["cost"].isna().all()
    (json_log,) = (INSPECT / "json").glob("*.json")
    from_json = keyed(read_usage(json_log), ["input_tokens", "output_tokens"])
    weak = keyed(zipped[zipped["model"] == "mockllm/fake-weak"], ["input_tokens", "output_tokens"])
    assert len(from_json) == 10
    pd.testing.assert_frame_equal(from_json, weak.iloc[:10].reset_index(drop=True))
    # the deflate log of an older Inspect: fake-strong's answers, so its tokens
    deflate = keyed(read_usage(INSPECT / "eval_deflate"), ["input_tokens", "output_tokens"])
    strong = zipped[zipped["model"] == "mockllm/fake-strong"]
    pd.testing.assert_frame_equal(deflate, keyed(strong, ["input_tokens", "output_tokens"]))


def test_a_judged_log_counts_the_answering_models_tokens_only():
    judged = keyed(read_usage(INSPECT / "model_graded"), ["input_tokens", "output_tokens"])
    plain = keyed(read_usage(INSPECT / "eval_zstd"), ["input_tokens", "output_tokens"])
    pd.testing.assert_frame_equal(
        judged, plain
    )  # same answers; the fake judge's 157-token prompts left out


def test_epochs_and_errored_samples():
    epochs = read_usage(INSPECT / "epochs")
    assert sorted(epochs["epoch"].unique()) == [1, 2, 3] and len(epochs) == 30
    folder = INSPECT / "errored_samples"
    usage = read_usage(folder)
    assert len(usage) == 18  # q-004 and q-013 errored before calling the model: no usage
    assert not {"q-004", "q-013"} & set(usage["question_id"])
    joined = join_usage(read_items(folder), usage)
    assert sorted(joined.loc[joined["input_tokens"].isna(), "question_id"]) == ["q-004", "q-013"]
    (partial,) = (
        read_usage(INSPECT / "status_cancelled", SourceOptions(allow_partial=True))
        .groupby("model")["question_id"]
        .count()
    )
    assert partial == 7  # q-008 was cancelled in flight: no usage


# --- HELM ------------------------------------------------------------------------------------------


def helm_truth(split: str = "test") -> pd.DataFrame:
    truth = pd.read_csv(HELM_USAGE / "expected_usage.csv")
    return truth[truth["split"] == split]


@pytest.mark.parametrize("split", ["test", "valid"])
def test_helm_usage_equals_the_stand_ins_truth(split):
    options = SourceOptions(split=split)
    usage = read_usage(HELM_USAGE / "runs", options)
    truth = helm_truth(split)
    assert len(usage) == len(truth) == {"test": 64, "valid": 16}[split]
    columns = ["input_tokens", "output_tokens"]
    got = keyed(usage, columns).astype({c: "int64" for c in columns})
    pd.testing.assert_frame_equal(got, keyed(truth, columns))
    assert usage["cost"].isna().all()  # HELM records no cost
    # one request per instance: count 1, so the sums are the prompt's characters and 1 + reasoning
    terse = got[got["model"] == "synth/terse"]
    assert (terse["output_tokens"] == 1).all()


def test_helm_usage_keys_are_the_item_tables(helm_read):
    items, usage = helm_read
    assert keyed(items).equals(keyed(usage))
    joined = keyed(join_usage(items, usage), ["output_tokens", "correct"])
    truth = keyed(helm_truth(), ["output_tokens", "exact_match"])
    assert (joined["output_tokens"].to_numpy() == truth["output_tokens"].to_numpy()).all()
    assert (joined["correct"].to_numpy(dtype=float) == truth["exact_match"].to_numpy()).all()
    assert joined.groupby("model")["output_tokens"].sum().to_dict() == {
        "synth/terse": 32,
        "synth/verbose": 1937,
    }


@pytest.mark.parametrize("perturbation", [None, "lowercase"])
def test_helm_keys_follow_the_item_readers_choices(perturbation):
    """The corpus fixture: 3 trials, perturbed copies, a run without a correctness metric and a
    failed run folder; usage rows are exactly the item reader's rows."""
    options = SourceOptions(perturbation=perturbation)
    (items,) = [f for f in read_source(HELM, options) if f["model"].iloc[0] == "synth/model-a"]
    usage = read_usage(HELM, options)
    assert keyed(usage[usage["model"] == "synth/model-a"]).equals(keyed(items))
    assert len(usage) == (144 if perturbation is None else 48)


# --- tables ---------------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_predictions_table_with_usage_columns(tmp_path):
    path = write(
        tmp_path,
        "preds.csv",
        "model,question_id,correct,input_tokens,output_tokens,cost\n"
        "a,1,1,100,10,0.5\na,2,0,120,,\nb,1,,90,9,\nb,2,1,,,0.25\n",
    )
    refused(
        lambda: read_usage(path), "preds.csv, record 2", "one of input_tokens and output_tokens"
    )
    path.write_text(
        "model,question_id,correct,input_tokens,output_tokens,cost\n"
        "a,1,1,100,10,0.5\na,2,0,,,\nb,1,,90,9,\nb,2,1,,,0.25\n",
        encoding="utf-8",
    )
    usage = read_usage(path)
    assert keyed(usage)["question_id"].tolist() == ["1", "1", "2"]
    assert usage["question_id"].tolist() == [1, 1, 2]  # integer ids, as the table reader's
    assert usage["input_tokens"].tolist() == [100, 90, pd.NA]
    assert usage["cost"].tolist() == [0.5, pd.NA, 0.25]
    assert usage["record"].tolist() == [1, 3, 4]
    joined = join_usage(read_items(path), usage)
    assert joined.loc[joined["question_id"] == 2, "cost"].dropna().tolist() == [0.25]


def test_a_usage_table_of_its_own_joins_onto_the_items(tmp_path, inspect_read):
    items, usage = inspect_read
    table = usage[KEY + ["input_tokens", "output_tokens"]].iloc[:5]
    path = tmp_path / "usage.csv"
    table.to_csv(path, index=False)
    again = read_usage(path)
    assert again[KEY + ["input_tokens", "output_tokens"]].equals(table.reset_index(drop=True))
    joined = join_usage(items, again)
    assert joined["input_tokens"].notna().sum() == 5
    # usage for a question the logs never scored
    path.write_text(
        "model,question_id,input_tokens,output_tokens\nmockllm/fake-mid,q-001,3,4\n"
        "mockllm/fake-mid,q-999,3,4\n",
        encoding="utf-8",
    )
    refused(
        lambda: join_usage(items, read_usage(path)),
        "usage.csv, record 2",
        "'q-999' (epoch 1) of model 'mockllm/fake-mid', which has no score",
    )


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("a,q1,-3,4,", "record 1: input_tokens must be a whole number of tokens from 0, got -3"),
        ("a,q1,3,2.5,", "output_tokens must be a whole number of tokens from 0, got 2.5"),
        ("a,q1,many,4,", "input_tokens must be a number, got 'many'"),
        ("a,q1,3,4,-0.01", "cost must be from 0, got -0.01"),
        ("a,q1,3,4,free", "cost must be a number, got 'free'"),
    ],
)
def test_bad_table_values_are_refused(tmp_path, row, problem):
    path = write(
        tmp_path, "usage.csv", f"model,question_id,input_tokens,output_tokens,cost\n{row}\n"
    )
    refused(lambda: read_usage(path), "usage.csv", problem)


def test_bad_table_shapes_are_refused(tmp_path):
    half = write(tmp_path, "half.csv", "model,question_id,input_tokens\na,q1,3\n")
    refused(lambda: read_usage(half), "half.csv", "has input_tokens but no output_tokens column")
    twice = write(
        tmp_path, "twice.csv", "model,question_id,epoch,cost\na,q1,1,0.1\na,q1,2,0.1\na,q1,1,0.2\n"
    )
    refused(
        lambda: read_usage(twice),
        "twice.csv, record 3",
        "'q1' (epoch 1) of model 'a' is given twice",
    )
    epoch = write(tmp_path, "epoch.csv", "model,question_id,epoch,cost\na,q1,0,0.1\n")
    refused(
        lambda: read_usage(epoch), "epoch.csv, record 1", "epoch must be a positive whole number"
    )
    scores_only = write(tmp_path, "scores.csv", "model,question_id,correct\na,q1,1\n")
    refused(lambda: read_usage(scores_only), "scores.csv", "records no token usage")


def test_a_folder_reads_the_usage_of_the_files_that_record_it(tmp_path):
    (log,) = (INSPECT / "json").glob("*.json")
    shutil.copy(log, tmp_path / log.name)
    write(tmp_path, "scores.csv", "model,question_id,correct\na,q1,1\n")
    usage = read_usage(tmp_path)
    assert len(usage) == 10 and set(usage["model"]) == {"mockllm/fake-weak"}


def test_formats_without_usage_are_refused():
    refused(
        lambda: read_usage(DATA / "harness" / "lm_eval" / "evalbars__fake-strong"),
        "records no token usage",
    )


# --- refusals in logs ----------------------------------------------------------------------------


@pytest.fixture
def json_log(tmp_path):
    """A copy of the JSON Inspect log (fake-weak, 10 samples) to break, and its document."""
    (source,) = (INSPECT / "json").glob("*.json")
    target = tmp_path / source.name
    document = json.loads(source.read_text(encoding="utf-8"))

    def save(doc):
        target.write_text(json.dumps(doc), encoding="utf-8")
        return target

    return document, save


def third_sample(document) -> dict:
    (sample,) = [s for s in document["samples"] if s["id"] == "q-003"]
    return sample


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (
            -12,
            "model_usage['mockllm/fake-weak'].input_tokens must be a whole number of tokens from 0, got -12",
        ),
        (
            "12",
            "model_usage['mockllm/fake-weak'].input_tokens must be a whole number of tokens, got '12'",
        ),
        (12.5, "must be a whole number of tokens from 0, got 12.5"),
    ],
)
def test_bad_inspect_tokens_are_refused(json_log, value, problem):
    document, save = json_log
    third_sample(document)["model_usage"]["mockllm/fake-weak"]["input_tokens"] = value
    path = save(document)
    refused(lambda: read_usage(path), path.name, "record 3", problem)


def test_bad_inspect_cost_is_refused(json_log):
    document, save = json_log
    third_sample(document)["model_usage"]["mockllm/fake-weak"]["total_cost"] = -1
    path = save(document)
    refused(lambda: read_usage(path), "record 3", "total_cost must be a cost from 0, got -1")


def test_a_self_graded_log_needs_role_usage(json_log):
    document, save = json_log
    document["eval"]["model_roles"] = {"grader": {"model": "mockllm/fake-weak"}}
    for sample in document["samples"]:
        sample.pop("role_usage", None)
    path = save(document)
    refused(
        lambda: read_usage(path),
        "record 1",
        "role 'grader' is bound to the evaluated model mockllm/fake-weak",
        "no role_usage",
    )
    for sample in document["samples"]:
        sample["role_usage"] = {}
    third_sample(document)["role_usage"] = {
        "grader": {"input_tokens": 500, "output_tokens": 1, "total_tokens": 501}
    }
    path = save(document)
    refused(lambda: read_usage(path), "record 3", "role_usage['grader'] holds more tokens")


@pytest.fixture
def helm_run(tmp_path):
    """A copy of one run of the HELM usage fixture, its stats document and a saver."""
    (source,) = (HELM_USAGE / "runs").glob("*subject=addition*synth_terse*")
    target = tmp_path / source.name
    shutil.copytree(source, target)
    stats_path = target / "per_instance_stats.json"
    document = json.loads(stats_path.read_text(encoding="utf-8"))

    def save(doc):
        stats_path.write_text(json.dumps(doc), encoding="utf-8")
        return target

    return document, save


def test_instances_are_numbered_as_the_file_holds_them(helm_run):
    document, save = helm_run
    run = save(document)
    usage = read_usage(run)
    first_test = next(
        i for i, e in enumerate(document, start=1) if e["stats"][0]["name"]["split"] == "test"
    )
    assert usage["record"].min() == first_test


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (-1, "the num_prompt_tokens stat's sum must be a whole number of tokens from 0, got -1"),
        (459.5, "got 459.5"),
        ("459", "must be a whole number of tokens, got '459'"),
    ],
)
def test_bad_helm_tokens_are_refused(helm_run, value, problem):
    document, save = helm_run
    record = next(
        i for i, e in enumerate(document, start=1) if e["stats"][0]["name"]["split"] == "test"
    )
    for stat in document[record - 1]["stats"]:
        if stat["name"]["name"] == "num_prompt_tokens":
            stat["sum"] = value
    run = save(document)
    refused(lambda: read_usage(run), "per_instance_stats.json", f"record {record}", problem)


def test_helm_tokens_are_the_sums_over_an_instances_requests(helm_run):
    """A method with one request per answer choice (``multiple_choice_separate_*``) merges the
    requests' statistics (HELM's ``merge_stat``: count, sum, mean); the cost is every request's
    tokens, the sum."""
    document, save = helm_run
    record = next(
        i for i, e in enumerate(document, start=1) if e["stats"][0]["name"]["split"] == "test"
    )
    for stat in document[record - 1]["stats"]:
        if stat["name"]["name"] in ("num_prompt_tokens", "num_output_tokens"):
            stat.update(count=4, sum=4 * stat["sum"])
    run = save(document)
    usage = read_usage(run)
    row = usage[usage["record"] == record].iloc[0]
    original = read_usage(HELM_USAGE / "runs").set_index(["question_id", "epoch", "model"])
    before = original.loc[(row["question_id"], row["epoch"], row["model"])]
    assert (row["input_tokens"], row["output_tokens"]) == (
        4 * before["input_tokens"],
        4 * before["output_tokens"],
    )


def test_helm_tokens_of_an_unscored_instance_are_refused(helm_run):
    document, save = helm_run
    record = next(
        i for i, e in enumerate(document, start=1) if e["stats"][0]["name"]["split"] == "test"
    )
    entry = document[record - 1]
    entry["stats"] = [s for s in entry["stats"] if s["name"]["name"] != "exact_match"]
    run = save(document)
    refused(
        lambda: read_usage(run),
        f"per_instance_stats.json, record {record}",
        f"'mmlu/subject=addition/{entry['instance_id']}' (epoch 1) of model 'synth/terse', "
        "which has no score",
    )
