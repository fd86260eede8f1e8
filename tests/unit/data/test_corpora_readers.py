"""Readers of the public corpora: HELM run folders, lighteval details (0.11+ and the Open LLM
Leaderboard v1 layout), Every Eval Ever instance files and SWE-bench results.json.

Every fixture was written by the tool itself (crfm-helm 0.5.16, lighteval 0.13.0,
every-eval-ever 0.3.0) or built from the format's source (SWE-bench, OLL v1); see
tests/reference/corpora/README.md. The per-item scores the readers return are checked against
the tool's own summary numbers: HELM's stats.json, lighteval's results_*.json, EEE's
aggregate <uuid>.json, SWE-bench's resolved share.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from snakemake.utils import validate

from evalbars import api, cli
from evalbars.data import sampling
from evalbars.data.readers import SourceOptions, detect_format, read_source
from evalbars.errors import ConfigError, InputError

REPO = Path(__file__).resolve().parents[3]
CORPORA = REPO / "tests" / "data" / "corpora"
HELM = CORPORA / "helm"
HELM_UNSHARED = CORPORA / "helm_unshared"
LIGHTEVAL = CORPORA / "lighteval"
OLL_V1 = CORPORA / "lighteval_oll_v1"
EEE = CORPORA / "every_eval_ever"
SWE = CORPORA / "swe_bench"
SWE_LITE = SWE / "evaluation" / "lite"
SWE_INSTANCES = SWE / "lite_instances.txt"


def read(path, **options) -> pd.DataFrame:
    frames = read_source(path, SourceOptions(**options))
    return pd.concat(frames, ignore_index=True)


def by_model(frame: pd.DataFrame) -> dict:
    return frame.groupby("model", observed=True)["correct"].mean().astype(float).to_dict()


# --- HELM -----------------------------------------------------------------------------------------


def helm_stat(run: Path, split="test", perturbation=None, name="exact_match") -> dict:
    """The run's aggregate stat from HELM's stats.json."""
    for stat in json.loads((run / "stats.json").read_text()):
        key = stat["name"]
        wanted = key.get("perturbation") or {}
        if key["name"] == name and key.get("split") == split:
            if perturbation is None and not wanted:
                return stat
            if wanted.get("name") == perturbation and wanted.get("computed_on") == "perturbed":
                return stat
    raise AssertionError(f"no {name} {split} {perturbation} in {run}")


def mmlu_runs():
    return sorted(p for p in HELM.iterdir() if p.name.startswith("mmlu:"))


def run_model_subject(run: Path) -> tuple[str, str]:
    spec = json.loads((run / "run_spec.json").read_text())
    return spec["adapter_spec"]["model"], spec["scenario_spec"]["args"]["subject"]


@pytest.mark.parametrize("split", ["test", "valid"])
def test_helm_per_item_scores_give_stats_json_means(split):
    frame = read(HELM, split=split)
    means = frame.groupby(["model", "category"], observed=True)["correct"].mean()
    for run in mmlu_runs():
        model, subject = run_model_subject(run)
        stat = helm_stat(run, split)
        # stats.json's mean is the mean over train trials of per-trial means; count = trials.
        assert stat["count"] == 3
        assert means[(model, subject)] == pytest.approx(stat["mean"], abs=1e-12)
    assert sorted(frame["epoch"].unique()) == [1, 2, 3]  # train_trial_index + 1


def test_helm_model_from_run_spec_and_question_keyed_by_scenario_and_subject():
    frame = read(HELM)
    # The folders say model=synth_model-a; run_spec.adapter_spec.model says synth/model-a.
    assert sorted(frame["model"].unique()) == ["synth/model-a", "synth/model-b", "synth/model-c"]
    # instance ids are positional: id7 of addition is not id7 of multiplication.
    ids = set(frame["question_id"])
    assert "mmlu/subject=addition/id7" in ids and "mmlu/subject=multiplication/id7" in ids
    assert frame.groupby("model", observed=True)["question_id"].nunique().eq(16).all()
    assert (frame["n_options"] == 4).all()  # HELM's num_references stat


def test_helm_perturbed_copies_left_out_unless_asked():
    default = read(HELM)
    model_a = default[default["model"] == "synth/model-a"]
    assert len(model_a) == 16 * 3  # not 96: the lowercased copies share the instance ids
    lowered = read(HELM, perturbation="lowercase")
    assert set(lowered["model"]) == {"synth/model-a"}  # the only model with that expander
    means = lowered.groupby("category", observed=True)["correct"].mean()
    for run in mmlu_runs():
        model, subject = run_model_subject(run)
        if model == "synth/model-a":
            stat = helm_stat(run, perturbation="lowercase")
            assert means[subject] == pytest.approx(stat["mean"], abs=1e-12)


def test_helm_run_without_correctness_metric_and_failed_run_are_skipped(caplog):
    with caplog.at_level(logging.WARNING):
        frame = read(HELM)
    assert "simple/model1" not in set(frame["model"])  # skipped, not scored 0
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "simple1:model=simple_model1: skipped: the run has no correctness metric" in messages
    assert "num_outputs=3: skipped: an empty or failed HELM run folder" in messages


def test_helm_metric_option_and_no_run_with_it():
    quasi = read(HELM, metric="quasi_exact_match")
    for run in mmlu_runs():
        model, subject = run_model_subject(run)
        rows = quasi[(quasi["model"] == model) & (quasi["category"] == subject)]
        stat = helm_stat(run, name="quasi_exact_match")
        assert rows["correct"].mean() == pytest.approx(stat["mean"], abs=1e-12)
    with pytest.raises(InputError, match="none of the 7 HELM runs has a correctness metric named"):
        read(HELM, metric="f1_score")


def test_helm_files_are_recognised_by_content():
    run = mmlu_runs()[0]
    for name in ("per_instance_stats.json", "run_spec.json", "stats.json", "scenario.json"):
        assert detect_format(run / name) == "helm"
    # One file of a run reads that run.
    one = read(run / "per_instance_stats.json")
    assert len(one) == 8 * 3


def test_helm_bad_entry_names_the_file_and_record(tmp_path):
    run = tmp_path / "runs" / mmlu_runs()[0].name
    shutil.copytree(mmlu_runs()[0], run)
    entries = json.loads((run / "per_instance_stats.json").read_text())
    del entries[4]["stats"]
    (run / "per_instance_stats.json").write_text(json.dumps(entries))
    with pytest.raises(InputError, match=r"per_instance_stats.json, record 5: the entry has no"):
        read(run.parent)


def test_helm_truncated_file_names_the_file(tmp_path):
    run = tmp_path / "runs" / mmlu_runs()[1].name
    shutil.copytree(mmlu_runs()[1], run)
    text = (run / "per_instance_stats.json").read_text()
    (run / "per_instance_stats.json").write_text(text[: len(text) // 2])
    with pytest.raises(InputError, match=r"per_instance_stats.json: not a readable HELM file"):
        read(run.parent)


def test_a_helm_suite_whose_models_share_no_question_is_read_and_said_so(caplog):
    # crfm-helm's own suite folder (helm-run, then helm-summarize): model-a ran addition,
    # model-b multiplication, model-c both; no question is answered by all three.
    with caplog.at_level(logging.WARNING):
        items = api.read_items(HELM_UNSHARED)
    means = items.groupby(["model", "category"], observed=True)["correct"].mean()
    runs = sorted(p for p in HELM_UNSHARED.iterdir() if p.name.startswith("mmlu:"))
    assert len(means) == len(runs) == 4
    for run in runs:
        model, subject = run_model_subject(run)
        assert means[(model, subject)] == pytest.approx(helm_stat(run)["mean"], abs=1e-12)
    note = (
        "no question is answered by every model (3 models, 16 questions): each pair is compared "
        "on the questions both answered (0 to 8 per pair), and the readings of every model at "
        "once (the omnibus tests, the paired ranks) are left out; 1 of the 3 pairs shares no "
        "question ('synth/model-a' and 'synth/model-b'), so it has only unpaired readings"
    )
    messages = [r.getMessage() for r in caplog.records]
    assert note in messages
    # helm-summarize's tables beside the runs are not logs, and its groups/ folder is no run.
    assert (
        f"{HELM_UNSHARED}: skipped 2 files that are not prediction logs ('mmlu.json', "
        "'summary.json')" in messages
    )
    assert not any("failed HELM run folder" in m for m in messages)
    # What the report's first screen calls on the drawn items (IndexError before).
    assert sampling.design_notes(items[["model", "question_id", "category"]]) == [note]
    # The paper's design (question_set: shared) refuses such data in one line.
    with pytest.raises(ConfigError, match=r"^no question was answered by every model \(the "):
        api.read_items(HELM_UNSHARED, question_set="shared", max_unshared_share=1)


# --- lighteval --------------------------------------------------------------------------------


def lighteval_results(model: str) -> dict:
    """``{stamp: results}`` of one model's results_<ts>.json files."""
    folder = LIGHTEVAL / "results" / model
    return {
        p.stem.removeprefix("results_"): json.loads(p.read_text())["results"]
        for p in folder.glob("results_*.json")
    }


def test_lighteval_per_item_scores_give_results_json():
    frame = read(LIGHTEVAL, runs="newest")
    for model in ("synth/model-a", "synth/model-b", "synth/model-c"):
        runs = lighteval_results(model)
        results = runs[max(runs)]
        rows = frame[frame["model"] == model]
        means = rows.groupby("category", observed=True)["correct"].mean()
        assert means["synthmcq:arithmetic"] == pytest.approx(
            results["synthmcq:arithmetic|0"]["acc"]
        )
        assert means["synthmcq:geometry"] == pytest.approx(results["synthmcq:geometry|0"]["acc"])
        # em over 3 samples is "any of n": each sample is scored instead; their mean is avg@n.
        gen = rows[rows["category"] == "synthgen"]
        assert sorted(gen["epoch"].unique()) == [1, 2, 3]
        assert gen["correct"].mean() == pytest.approx(results["synthgen|0"]["avg@n:n=3"])
        # Asked for, em is read as lighteval scored it: the best of the 3 samples.
        em = read(LIGHTEVAL, runs="newest", metric="em")
        em = em[(em["model"] == model) & (em["category"] == "synthgen")]
        assert em["correct"].mean() == pytest.approx(results["synthgen|0"]["em"])


def test_lighteval_any_of_n_metric_is_said_to_be_so(caplog):
    with caplog.at_level(logging.WARNING):
        read(LIGHTEVAL, runs="newest")
    assert "is the best of 3 samples per question (any of n)" in caplog.text


def test_lighteval_two_runs_of_one_model_refused_unless_newest():
    with pytest.raises(
        InputError, match=r"2 runs of model 'synth/model-a' on task 'synthgen\|0'.*runs: newest"
    ):
        read(LIGHTEVAL)
    frame = read(LIGHTEVAL, runs="newest")
    runs = lighteval_results("synth/model-a")
    newest, oldest = runs[max(runs)], runs[min(runs)]
    assert newest["synthmcq:arithmetic|0"]["acc"] != oldest["synthmcq:arithmetic|0"]["acc"]
    arithmetic = frame[
        (frame["model"] == "synth/model-a") & (frame["category"] == "synthmcq:arithmetic")
    ]
    assert arithmetic["correct"].mean() == pytest.approx(newest["synthmcq:arithmetic|0"]["acc"])


def test_lighteval_question_ids_are_the_kept_id_or_a_hash_not_doc_id():
    frame = read(LIGHTEVAL, runs="newest")
    model_a = frame[(frame["model"] == "synth/model-a") & (frame["epoch"] == 1)]
    mcq = model_a[model_a["category"] == "synthmcq:arithmetic"]["question_id"]
    assert set(mcq) == {f"synthmcq:arithmetic/arithmetic-{i:03d}" for i in range(10)}
    gen = model_a[model_a["category"] == "synthgen"]["question_id"]
    assert gen.str.fullmatch(r"synthgen/[0-9a-f]{16}").all()
    # The same hashed questions for every model (rows are shuffled differently per run).
    per_model = frame[frame["category"] == "synthgen"].groupby("model", observed=True)
    assert per_model["question_id"].apply(frozenset).nunique() == 1
    # doc.id is the row index within each subset: it collides across subsets, ours do not.
    details = sorted((LIGHTEVAL / "details" / "synth" / "model-b").rglob("*.parquet"))
    doc_ids = [
        pq.read_table(p).column("doc").combine_chunks().field("id").to_pylist() for p in details
    ]
    assert set(doc_ids[1]) & set(doc_ids[2])
    assert model_a["question_id"].is_unique


def test_lighteval_results_file_is_not_taken_for_lm_eval():
    results = next((LIGHTEVAL / "results" / "synth" / "model-b").glob("results_*.json"))
    assert detect_format(results) == "lighteval"
    details = next((LIGHTEVAL / "details").rglob("details_synthgen*.parquet"))
    assert detect_format(details) == "lighteval"


def test_oll_v1_details_give_results_json():
    frame = read(OLL_V1)
    for folder in sorted(OLL_V1.glob("details_*")):
        document = json.loads(next(folder.glob("results_*.json")).read_text())
        model = document["config_general"]["model_name"]
        assert folder.name == "details_" + model.replace("/", "__")
        rows = frame[frame["model"] == model]
        means = rows.groupby("category", observed=True)["correct"].mean()
        for task, scores in document["results"].items():
            assert means[task.split("|")[1]] == pytest.approx(scores["acc"])
    # No id column: the question is a hash of the example and its choices, the same for all models.
    assert frame.groupby("model", observed=True)["question_id"].apply(frozenset).nunique() == 1
    # acc_norm is logged for ARC only: the MMLU subjects keep acc, said in the log.
    norm = read(OLL_V1, metric="acc_norm")
    arc = norm[norm["category"] == "arc:challenge"]
    results = json.loads(
        next((OLL_V1 / "details_synth-org__oll-c").glob("results_*.json")).read_text()
    )
    wanted = results["results"]["harness|arc:challenge|25"]["acc_norm"]
    assert by_model(arc)["synth-org/oll-c"] == pytest.approx(wanted)


def test_oll_v1_tasks_run_at_different_times_are_one_model(tmp_path):
    # The leaderboard ran benchmarks separately: one model's tasks carry different timestamps.
    folder = tmp_path / "details_synth-org__oll-a"
    shutil.copytree(OLL_V1 / folder.name, folder)
    (old,) = [p for p in folder.iterdir() if p.is_dir()]
    later = "2024-02-11T08-00-00.000001"
    (folder / later).mkdir()
    arc = next(old.glob("details_harness|arc*"))
    arc.rename(folder / later / arc.name.replace(old.name, later))
    frame = read(folder)
    assert frame["question_id"].nunique() == 20
    assert set(frame["model"]) == {"synth-org/oll-a"}  # from the results file of either stamp


def test_lighteval_bad_file_names_the_file(tmp_path):
    run = tmp_path / "details" / "org" / "m" / "2026-01-01T00-00-00.0"
    run.mkdir(parents=True)
    source = next((LIGHTEVAL / "details" / "synth" / "model-b").rglob("details_synthgen*.parquet"))
    table = pq.read_table(source).drop_columns(["metric"])
    target = run / "details_synthgen|0_2026-01-01T00-00-00.0.parquet"
    pq.write_table(table.append_column("metric", pa_nulls(len(table))), target)
    with pytest.raises(InputError, match=r"details_synthgen\|0_2026-01-01T00-00-00.0.parquet"):
        read(tmp_path / "details")


def pa_nulls(n):
    return pa.array([{"acc": None}] * n, type=pa.struct([("acc", pa.float64())]))


# --- Every Eval Ever --------------------------------------------------------------------------


def eee_aggregates(folder: Path) -> list[dict]:
    return [
        json.loads(p.read_text())
        for p in sorted(folder.rglob("*.json"))
        if p.with_name(p.stem + "_samples.jsonl").exists()
    ]


def test_eee_from_inspect_gives_the_aggregate_scores():
    frame = read(EEE / "inspect")
    for aggregate in eee_aggregates(EEE / "inspect"):
        model = aggregate["model_info"]["id"]
        score = aggregate["evaluation_results"][0]["score_details"]["score"]
        assert by_model(frame)[model] == pytest.approx(score)
    assert (frame["epoch"] == 1).all()  # metadata.epoch, written as text by the converter


def test_eee_epoch_lines_carrying_the_epoch_mean_are_read_once(caplog):
    # The Inspect converter writes metadata.epoch ("1", "2", "3") but each epoch's line carries
    # the question's mean over epochs (1/3, 2/3), not that epoch's score.
    lines = next((EEE / "inspect_epochs").rglob("*_samples.jsonl")).read_text().splitlines()
    epochs = {json.loads(line)["metadata"]["epoch"] for line in lines}
    assert epochs == {"1", "2", "3"}
    with caplog.at_level(logging.WARNING):
        frame = read(EEE / "inspect_epochs")
    assert "carries the same fractional score" in caplog.text
    assert (frame["epoch"] == 1).all() and frame["question_id"].is_unique
    log = read(REPO / "tests" / "data" / "harness" / "inspect" / "epochs")
    per_question = log.groupby("question_id")["correct"].mean()
    ours = frame.set_index(frame["question_id"].str.removeprefix("toyqa/"))["correct"]
    assert (ours.sort_index() == per_question.sort_index()).all()
    aggregate = eee_aggregates(EEE / "inspect_epochs")[0]
    wanted = aggregate["evaluation_results"][0]["score_details"]["score"]
    assert frame["correct"].mean() == pytest.approx(wanted)


def test_eee_from_lm_eval_runs_and_group_samples(caplog):
    with pytest.raises(
        InputError, match=r"holds questions of model 'evalbars/fake-mid'.*runs: newest"
    ):
        read(EEE / "lm_eval")
    with caplog.at_level(logging.WARNING):
        frame = read(EEE / "lm_eval", runs="newest")
    # The converter gives the group toybench the samples of one subtask: 12 rows, 24 counted.
    assert "skipped: 12 samples of 'acc', but the aggregate counts 24" in caplog.text
    assert "toybench" not in set(frame["category"])
    means = frame.groupby(["model", "category"], observed=True)["correct"].mean()
    for aggregate in eee_aggregates(EEE / "lm_eval"):
        result = aggregate["evaluation_results"][0]
        key = (aggregate["model_info"]["id"], result["evaluation_name"])
        if key in means and aggregate["model_info"]["id"] != "evalbars/fake-mid":
            assert means[key] == pytest.approx(result["score_details"]["score"])
    # The same scores as our lm-eval reader on the harness logs it converted.
    harness = read(REPO / "tests" / "data" / "harness" / "lm_eval", runs="newest")
    # (lm-eval's "[invalid]" extraction is a missing prediction there, a 0 in EEE.)
    assert by_model(frame) == pytest.approx(by_model(harness.fillna({"correct": 0})))


def test_eee_from_helm_needs_sample_hash_and_reads_the_test_result():
    # Both MMLU subjects are evaluation_name 'mmlu' with HELM's positional ids id5, id6...
    with pytest.raises(InputError, match="set `id_field: sample_hash`"):
        read(EEE / "helm")
    frame = read(EEE / "helm", id_field="sample_hash")
    assert frame.groupby("model", observed=True)["question_id"].nunique().eq(16).all()
    scores: dict = {}
    for aggregate in eee_aggregates(EEE / "helm"):
        result = next(
            r
            for r in aggregate["evaluation_results"]
            if r["evaluation_result_id"] == "exact_match:test"
        )
        scores.setdefault(aggregate["model_info"]["id"], []).append(
            result["score_details"]["score"]
        )
    # Two subjects of 8 test questions each: the model's mean is the mean of the two.
    assert by_model(frame) == pytest.approx({m: sum(s) / 2 for m, s in scores.items()})


def test_eee_metric_chooses_the_evaluation_result():
    strict = read(EEE / "lm_eval" / "toyarith", runs="newest", metric="exact_match:strict-match")
    assert set(strict["category"]) == {"toyarith/strict-match"}
    flexible = read(
        EEE / "lm_eval" / "toyarith", runs="newest", metric="exact_match:flexible-extract"
    )
    assert set(flexible["category"]) == {"toyarith/flexible-extract"}
    aggregate = next(
        a
        for a in eee_aggregates(EEE / "lm_eval" / "toyarith")
        if a["model_info"]["id"] == "evalbars/fake-strong"
    )
    wanted = aggregate["evaluation_results"][0]["score_details"]["score"]
    assert by_model(strict)["evalbars/fake-strong"] == pytest.approx(wanted)


def test_eee_bad_line_names_the_file_and_line(tmp_path):
    source = next((EEE / "inspect").rglob("*_samples.jsonl"))
    target = tmp_path / source.name
    lines = source.read_text().splitlines()
    lines[2] = lines[2][:40]
    target.write_text("\n".join(lines) + "\n")
    shutil.copy(source.with_name(source.name.replace("_samples.jsonl", ".json")), tmp_path)
    with pytest.raises(InputError, match=rf"{target.name}, record 3: not valid JSON"):
        read(tmp_path)


# --- SWE-bench --------------------------------------------------------------------------------


def swe_results() -> dict:
    return {
        p.parent.parent.name: json.loads(p.read_text())
        for p in sorted(SWE_LITE.glob("*/results/results.json"))
    }


def test_swe_bench_resolved_share_and_missing_predictions():
    instances = SWE_INSTANCES.read_text().split()
    frame = read(SWE_LITE, instances=str(SWE_INSTANCES))
    for name, results in swe_results().items():
        rows = frame[frame["model"] == name]
        assert len(rows) == len(instances) == 20
        # The leaderboard's number: resolved / instances of the split (missing count as 0).
        assert rows["correct"].fillna(0).mean() == pytest.approx(len(results["resolved"]) / 20)
        unlogged = set(results.get("generated", [])) - set(
            results.get("with_logs", results.get("generated", []))
        )
        missing = set(results["no_generation"]) | set(results.get("no_logs", [])) | unlogged
        assert set(rows.loc[rows["correct"].isna(), "question_id"]) == missing
    assert set(frame["category"]) == {
        "django/django",
        "sympy/sympy",
        "astropy/astropy",
        "pytest-dev/pytest",
    }


def test_swe_bench_union_of_submissions_undercounts_the_split(caplog, tmp_path):
    # Two new-style submissions list only resolved, no_generation and no_logs: an unresolved
    # instance is in no list, so their union is not the split.
    for name in ("20240620_agent-a", "20241029_agent-b"):
        shutil.copytree(SWE_LITE / name, tmp_path / name)
    with caplog.at_level(logging.WARNING):
        union = read(tmp_path)
    assert "no instance list given" in caplog.text
    assert union["question_id"].nunique() < 20
    full = read(tmp_path, instances=tuple(SWE_INSTANCES.read_text().split()))
    assert full["question_id"].nunique() == 20
    assert by_model(union)["20241029_agent-b"] > by_model(full)["20241029_agent-b"]


def test_swe_bench_submissions_of_two_splits_are_refused(tmp_path):
    for split in ("lite", "verified"):
        shutil.copytree(
            SWE_LITE / "20240620_agent-a", tmp_path / "evaluation" / split / f"agent-{split}"
        )
    with pytest.raises(InputError, match=r"submissions of 2 splits \(lite, verified\)"):
        read(tmp_path / "evaluation")


def test_swe_bench_resolved_outside_the_instance_list_is_refused():
    with pytest.raises(InputError, match=r"results.json, record 1: resolved names"):
        read(SWE_LITE, instances=("nobody__nothing-1",))


# --- evalbars read and the workflow -----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            [str(HELM)],
            {"synth/model-a": (0.7083333333333334 + 0.75) / 2},
        ),
        ([str(OLL_V1)], None),
        ([str(EEE / "inspect")], {"hf/fake-strong": 0.8, "hf/fake-mid": 0.65, "hf/fake-weak": 0.5}),
        ([str(SWE_LITE)], None),
        ([str(SWE_LITE), "--instances", str(SWE_INSTANCES)], {"20240620_agent-a": 6 / 20}),
        ([str(HELM), "--perturbation", "lowercase"], None),
        ([str(LIGHTEVAL), "--runs", "newest"], None),
    ],
)
def test_evalbars_read_prints_the_tools_numbers(args, expected, capsys):
    assert cli.main(["read", *args]) == 0
    out = capsys.readouterr().out
    table = [
        line.split("|") for line in out.splitlines() if line.startswith("| ") and "---" not in line
    ]
    header = [c.strip() for c in table[0]]
    printed = {
        row[header.index("model")].strip(): float(row[header.index("accuracy")])
        for row in table[1:]
    }
    perturbation = args[args.index("--perturbation") + 1] if "--perturbation" in args else None
    frame = read(Path(args[0]), runs="newest", perturbation=perturbation)
    wanted = expected or by_model(frame.assign(correct=frame["correct"].fillna(0)))
    for model, accuracy in wanted.items():
        assert printed[model] == pytest.approx(accuracy, abs=5e-5)


@pytest.mark.parametrize(
    ("entry", "valid"),
    [
        ({"path": "x", "format": "helm", "split": "valid", "perturbation": "lowercase"}, True),
        ({"path": "x", "instances": ["django__django-1", "sympy__sympy-2"]}, True),
        ({"path": "x", "instances": "split.txt"}, True),
        ({"path": "x", "instances": []}, False),
        ({"path": "x", "instances": [3]}, False),
        ({"path": "x", "format": "swebench"}, False),
    ],
)
def test_schema_takes_the_corpus_options(entry, valid):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text()) | {
        "predictions": [entry]
    }
    if valid:
        validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
        assert SourceOptions.from_entry(entry).instances in (
            None,
            "split.txt",
            tuple(entry.get("instances", ())),
        )
    else:
        with pytest.raises(Exception, match="predictions"):
            validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
