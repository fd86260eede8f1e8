"""Broken files of the public corpora (SWE-bench, Every Eval Ever, lighteval, HELM): a file whose
name or place claims it is a log of a format is refused when broken, never skipped; every refusal
is one line naming the file and the 1-based record. The readers on well-formed files:
test_corpora_readers.py.
"""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pytest

from evalbars.data.readers import SourceOptions, read_source
from evalbars.errors import InputError

from ...conftest import DATA
from ...helpers import refusal

CORPORA = DATA / "corpora"
SWE_LITE = CORPORA / "swe_bench" / "evaluation" / "lite"
SWE_INSTANCES = CORPORA / "swe_bench" / "lite_instances.txt"


# --- SWE-bench -----------------------------------------------------------------------------------


@pytest.fixture
def swe(tmp_path):
    lite = tmp_path / "evaluation" / "lite"
    shutil.copytree(SWE_LITE, lite)
    return lite, lite / "20241029_agent-b" / "results" / "results.json"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "not a SWE-bench results.json: a JSON list, not an object with a 'resolved' list"),
        ("{}", "not a SWE-bench results.json (no 'resolved' list)"),
        (
            '{"resolved": "astropy__astropy-11681"}',
            "'resolved' must be a list of instance ids, got str 'astropy__astropy-11681'",
        ),
        ('{"resolved": ["a__b-1", "a__', "not a readable SWE-bench results.json: "),
    ],
)
def test_a_broken_swe_bench_results_json_is_refused_not_skipped(swe, text, problem):
    lite, results = swe
    results.write_text(text)
    assert refusal(lite).startswith(f"{results}: {problem}")


def test_a_non_id_in_a_swe_bench_list_is_numbered_from_one(swe):
    lite, results = swe
    document = json.loads(results.read_text())
    document["resolved"] = ["astropy__astropy-11681", 1]
    results.write_text(json.dumps(document))
    assert refusal(lite) == f"{results}, record 2: resolved must list instance ids, got 1"


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda d: d["resolved"].append(d["resolved"][0]), "resolved names {first!r} 2 times"),
        (
            lambda d: d["no_generation"].append(d["resolved"][0]),
            "{first!r} is both in resolved and in no_generation",
        ),
    ],
)
def test_a_swe_bench_report_naming_an_instance_twice_is_refused(tmp_path, edit, problem):
    source = next((DATA / "corpora" / "swe_bench").rglob("results.json"))
    folder = tmp_path / "evaluation" / "lite" / "agent" / "results"
    folder.mkdir(parents=True)
    document = json.loads(source.read_text())
    document.setdefault("no_generation", [])
    first = document["resolved"][0]
    edit(document)
    (folder / "results.json").write_text(json.dumps(document))
    instances = sorted(
        {i for k in ("resolved", "no_generation", "no_logs") for i in document.get(k) or []}
    )
    with pytest.raises(InputError) as raised:
        read_source(folder / "results.json", SourceOptions(instances=tuple(instances)))
    assert str(raised.value) == f"{folder / 'results.json'}, record 1: " + problem.format(
        first=first
    )


def test_a_swe_bench_instance_list_with_a_bom_or_as_a_json_list_is_read(tmp_path):
    ids = SWE_INSTANCES.read_text().split()
    expected = pd.concat(read_source(SWE_LITE, SourceOptions(instances=str(SWE_INSTANCES))))
    bom = tmp_path / "instances.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + SWE_INSTANCES.read_bytes())
    listed = tmp_path / "instances.json"
    listed.write_text(json.dumps(ids))
    for given in (bom, listed):
        frame = pd.concat(read_source(SWE_LITE, SourceOptions(instances=str(given))))
        pd.testing.assert_frame_equal(frame, expected)


def test_a_swe_bench_submission_without_results_is_said(swe, caplog):
    lite, results = swe
    shutil.rmtree(results.parent)
    frames = read_source(lite, SourceOptions(instances=str(SWE_INSTANCES)))
    assert len(frames) == 2
    assert (
        f"{lite}: skipped 1 submission folder(s) without results/results.json ('20241029_agent-b')"
        in caplog.text
    )


# --- Every Eval Ever: a samples file cut at a line boundary, a BOM, a truncated aggregate --------


EEE = CORPORA / "every_eval_ever"


def test_an_eee_samples_file_cut_at_a_line_boundary_is_refused(tmp_path):
    shutil.copytree(EEE / "inspect", tmp_path / "inspect")
    samples = next((tmp_path / "inspect").rglob("fake-mid/*_samples.jsonl"))
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text(lines[0])
    assert refusal(tmp_path / "inspect") == (
        f"{samples}: holds 1 samples of 'match:accuracy', but its aggregate counts {len(lines)}: the "
        "file is cut short (they are not the samples of another evaluation of this model read "
        "with it, as a task group's would be); give the whole file"
    )


def test_an_eee_task_group_holding_a_subtasks_samples_is_still_skipped(caplog):
    frame = pd.concat(read_source(EEE / "lm_eval", SourceOptions(runs="newest")))
    assert "toybench" not in set(frame["category"])
    assert "(a task group: they are the samples of" in caplog.text


def test_eee_files_with_a_utf8_bom_are_read(tmp_path):
    shutil.copytree(EEE / "lm_eval", tmp_path / "lm_eval")
    before = pd.concat(read_source(tmp_path / "lm_eval", SourceOptions(runs="newest")))
    for path in (tmp_path / "lm_eval").rglob("*.json*"):  # samples and aggregates
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    after = pd.concat(read_source(tmp_path / "lm_eval", SourceOptions(runs="newest")))
    pd.testing.assert_frame_equal(before, after)


def test_a_truncated_eee_aggregate_is_refused_without_being_listed_as_skipped(tmp_path, caplog):
    shutil.copytree(EEE / "inspect", tmp_path / "inspect")
    samples = next((tmp_path / "inspect").rglob("fake-mid/*_samples.jsonl"))
    aggregate = samples.with_name(samples.name.removesuffix("_samples.jsonl") + ".json")
    aggregate.write_text(aggregate.read_text()[:50])
    assert refusal(tmp_path / "inspect").startswith(
        f"{aggregate}: not a readable EEE aggregate file: "
    )
    assert "not a prediction log" not in caplog.text


# --- lighteval details and results, named as lighteval names them --------------------------------


LIGHTEVAL = CORPORA / "lighteval"


@pytest.fixture
def lighteval(tmp_path):
    shutil.copytree(LIGHTEVAL, tmp_path / "lighteval")
    model_b = tmp_path / "lighteval" / "details" / "synth" / "model-b"
    details = next(model_b.rglob("details_synthmcq:arithmetic*.parquet"))
    return tmp_path / "lighteval", details


def test_an_empty_lighteval_details_file_is_refused_not_skipped(lighteval):
    folder, details = lighteval
    details.write_bytes(b"")
    assert refusal(folder, runs="newest").startswith(f"{details}: not a readable Parquet file")


def test_lighteval_details_without_a_metric_column_get_lightevals_message(lighteval):
    folder, details = lighteval
    pd.read_parquet(details).drop(columns=["metric"]).to_parquet(details)
    assert refusal(folder, runs="newest") == (
        f"{details}: not a lighteval details file: no column 'metric' (lighteval writes doc, "
        "model_response and metric; before 0.5, example, choices and metrics)"
    )


def test_a_lighteval_row_without_a_score_is_numbered_from_one(lighteval):
    folder, details = lighteval
    table = pd.read_parquet(details)
    table["metric"] = [None if i == 2 else m for i, m in enumerate(table["metric"])]
    table.to_parquet(details)
    message = refusal(folder, runs="newest")
    assert message.startswith(f"{details}, record 3: ")


def test_a_lighteval_duplicate_row_names_its_own_details_file_one_based(lighteval):
    folder, details = lighteval
    table = pd.read_parquet(details)
    pd.concat([table, table.iloc[:1]], ignore_index=True).to_parquet(details)
    message = refusal(folder, runs="newest")
    assert message.startswith(f"{details}, record {len(table) + 1}: question_id ")
    assert message.endswith(f"(records [1, {len(table) + 1}])")


def test_a_truncated_lighteval_results_file_is_called_lightevals(lighteval):
    folder, _ = lighteval
    results = next((folder / "results" / "synth" / "model-b").glob("results_*.json"))
    results.write_text(results.read_text()[:40])
    assert refusal(folder, runs="newest").startswith(
        f"{results}: not a readable lighteval results file"
    )


# --- HELM run folders ----------------------------------------------------------------------------


HELM = CORPORA / "helm"
ADDITION = (
    "mmlu:subject=addition,method=multiple_choice_joint,model=synth_model-{},num_train_trials=3"
)


@pytest.fixture
def helm(tmp_path):
    runs = tmp_path / "runs"
    for model in "bc":
        shutil.copytree(HELM / ADDITION.format(model), runs / ADDITION.format(model))
    return runs, runs / ADDITION.format("b")


def edit_json(path, change):
    document = json.loads(path.read_text())
    path.write_text(json.dumps(change(document) or document))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda spec: spec.update(scenario_spec="x"),
            "scenario_spec must be an object (class_name, args), got 'x'",
        ),
        (
            lambda spec: spec["scenario_spec"].update(args=["subject", "addition"]),
            "scenario_spec.args must be an object of named arguments, got ['subject', 'addition']",
        ),
    ],
)
def test_a_helm_run_spec_of_the_wrong_shape_is_one_line(helm, change, problem):
    runs, run = helm
    edit_json(run / "run_spec.json", change)
    assert refusal(runs) == f"{run / 'run_spec.json'}: {problem}"


def test_a_helm_adapter_spec_that_is_not_an_object_is_named(helm):
    runs, run = helm
    edit_json(run / "run_spec.json", lambda spec: spec.update(adapter_spec="x"))
    assert refusal(runs) == (
        f"{run / 'run_spec.json'}: adapter_spec must be an object (model, ...), got 'x'"
    )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda e: e.update(stats=5), "stats must be a list of Stat records, got 5"),
        (lambda e: e.update(stats=None), "stats must be a list of Stat records, got None"),
        (
            lambda e: e.update(instance_id=None),
            "instance_id must be a non-empty string, got None",
        ),
        (
            lambda e: [
                s.update(mean="abc") for s in e["stats"] if s["name"]["name"] == "exact_match"
            ],
            "the exact_match stat's mean must be a number, got 'abc'",
        ),
    ],
)
def test_a_helm_instance_of_the_wrong_shape_is_one_line_numbered_from_one(helm, change, problem):
    runs, run = helm
    stats = run / "per_instance_stats.json"
    edit_json(stats, lambda entries: change(entries[2]) and None)
    assert refusal(runs) == f"{stats}, record 3: {problem}"


def test_two_helm_run_folders_of_one_model_are_two_runs_with_the_newest_remedy(helm):
    runs, run = helm
    edit_json(
        run / "run_spec.json", lambda spec: spec["adapter_spec"].update(model="synth/model-c")
    )
    newer = runs / ADDITION.format("c") / "per_instance_stats.json"
    os.utime(run / "per_instance_stats.json", ns=(10**18, 10**18))
    os.utime(newer, ns=(2 * 10**18, 2 * 10**18))
    assert refusal(runs) == (
        f"{runs}: 2 run folders of model 'synth/model-c' on task "
        "'mmlu/subject=addition' "
        f"('{run / 'per_instance_stats.json'}', "
        f"'{runs / ADDITION.format('c') / 'per_instance_stats.json'}'); "
        "keep one, or set `runs: newest` on this predictions entry to use the newest"
    )
    (frame,) = read_source(runs, SourceOptions(runs="newest"))
    assert set(frame["source_path"]) == {str(newer)}


@pytest.mark.parametrize("name", ["run_spec.json", "per_instance_stats.json"])
def test_a_truncated_helm_file_is_refused_without_being_listed_as_skipped(helm, caplog, name):
    runs, run = helm
    text = (run / name).read_text()
    (run / name).write_text(text[: len(text) // 2])
    assert refusal(runs).startswith(f"{run / name}: not a readable HELM file")
    assert "not prediction logs" not in caplog.text and "not a prediction log" not in caplog.text
