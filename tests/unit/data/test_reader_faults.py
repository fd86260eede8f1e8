"""Bad and unusual reader input: each case gives the exact line a user sees.

Inputs are rewritten copies of the real harness logs under tests/data/harness/ (never the files
themselves), made in each test's tmp_path.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from evalbars import cli
from evalbars.cli import main
from evalbars.data.items import build_item_table, join_sources, missing_prediction_counts
from evalbars.data.readers import SourceOptions, read_source, set_hint_style
from evalbars.data.readers.inspect_logs import UNPARSED
from evalbars.errors import InputError

from ...conftest import DATA
from ...helpers import digest, last_error, refusal
from .test_readers import record, write_json

HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness"
DEFLATE_LOG = next((HARNESS / "inspect" / "eval_deflate").glob("*.eval"))
JSON_LOG = next((HARNESS / "inspect" / "json").glob("*.json"))
STRONG = HARNESS / "lm_eval" / "evalbars__fake-strong"
UNFINISHED = "unfinished Inspect log (no header.json; Inspect was still writing it or was stopped)"


@pytest.fixture
def cli_hints():
    """Remedies worded for the command line, as `evalbars read` words them."""
    previous = set_hint_style("cli")
    yield
    set_hint_style(previous)


def read_cli(argv, capsys):
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def copy_archive(source: Path, target: Path, keep) -> Path:
    """A copy of a deflate .eval archive with only the members ``keep`` accepts."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if keep(info.filename):
                new.writestr(info.filename, old.read(info))
    return target


def json_log(tmp_path: Path, change=None, name: str = JSON_LOG.name) -> Path:
    """A copy of the Inspect .json log, ``change(document)`` applied."""
    document = json.loads(JSON_LOG.read_text())
    if change:
        change(document)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


# --- 1. Inspect archives without header.json --------------------------------------------------


@pytest.mark.parametrize(
    "keep",
    [
        lambda name: name != "header.json",  # stopped after its samples
        lambda name: name.startswith("_journal/"),  # still being written: only the journal
    ],
    ids=["no_header", "journal_only"],
)
def test_an_unfinished_eval_archive_is_named_so(tmp_path, capsys, keep):
    path = copy_archive(DEFLATE_LOG, tmp_path / DEFLATE_LOG.name, keep)
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == f"{path}: {UNFINISHED}"
    with pytest.raises(InputError) as walked:
        read_source(tmp_path)  # a folder holding it: it claims to be a log, so it stops the walk
    assert str(walked.value) == f"{path}: {UNFINISHED}"
    status, out, err = read_cli(["read", str(path)], capsys)
    assert (status, out, err) == (1, "", f"evalbars read: error: {path}: {UNFINISHED}\n")


def test_a_zip_of_many_json_members_is_named_in_a_few_words(tmp_path):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(65):
            zf.writestr(f"part{i:02d}.json", "[]")
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == (
        f"{path}: expected exactly one .json member in the archive (an MMLU-Pro zip), found "
        "'part00.json', 'part01.json', 'part02.json' and 62 more"
    )


# --- 2. Folder walks ----------------------------------------------------------------------------


def test_a_walk_skips_files_that_are_not_logs_and_counts_them(tmp_path, caplog):
    write_json(tmp_path / "model_outputs_M_5shots.json", [record(1), record(2, pred="B")])
    (tmp_path / "README.md").write_text("# my predictions\n")
    write_json(tmp_path / "config.json", {"learning_rate": 0.1})
    write_json(tmp_path / "labels.json", ["a", "b"])
    (tmp_path / "notes.csv").write_text("date,comment\n2026-12-01,ran it\n")
    with caplog.at_level(logging.WARNING):
        (frame,) = read_source(tmp_path)
    assert frame["model"].unique().tolist() == ["M"]
    assert caplog.messages == [
        f"{tmp_path}: skipped 4 files that are not prediction logs ('README.md', 'config.json', "
        "'labels.json' and 1 more)"
    ]


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("model_outputs_X_5shots.json", "[{", "not valid JSON: Expecting property name"),
        (
            "mine.json",
            json.dumps([record(1), {"question_id": 2}]),
            "record 2: missing field 'category'",
        ),
        ("samples_toy_2026-12-01T00-00-00.jsonl", "{}\n", "no results_2026-12-01T00-00-00.json"),
        ("2026-12-01T10-00-00-00-00_toy_abc.json", "{", "the log is not valid JSON"),
    ],
)
def test_a_walk_stops_at_a_file_that_claims_to_be_a_log_and_is_broken(
    tmp_path, name, text, problem
):
    write_json(tmp_path / "model_outputs_M_5shots.json", [record(1)])
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=problem) as caught:
        read_source(tmp_path)
    assert str(caught.value).startswith(str(tmp_path / name))


# --- 3. Remedies worded for where the user is ----------------------------------------------------


def test_remedies_name_the_config_key_or_the_command_line_flag(tmp_path, cli_hints):
    folder = HARNESS / "lm_eval" / "evalbars__fake-mid"
    with pytest.raises(
        InputError,
        match=r"keep one, or pass `--runs newest` to use the newest \(`--runs all` reads each "
        r"as a run\)$",
    ):
        read_source(folder)
    status = json_log(tmp_path, lambda d: d.update(status="cancelled"))
    with pytest.raises(InputError) as caught:
        read_source(status)
    assert str(caught.value) == (
        f"{status}: the log's status is 'cancelled': the run did not finish; pass "
        "`--allow-partial` to analyse the samples it holds"
    )
    two = HARNESS / "inspect" / "partial_credit"
    with pytest.raises(InputError, match=r"\]\); pass `--scorer NAME` with one of them$"):
        read_source(two)
    set_hint_style("config")
    with pytest.raises(InputError, match=r"\]\); set `scorer:` on this predictions entry with one"):
        read_source(two)


def test_every_sample_errored_says_no_sample_has_a_score(tmp_path):
    def errored(document):
        document["status"] = "error"
        for sample in document["samples"]:
            sample["error"] = {"message": "RuntimeError('flaky')"}
            sample.pop("scores")

    path = json_log(tmp_path, errored)
    with pytest.raises(InputError) as caught:
        read_source(path, SourceOptions(allow_partial=True))
    assert str(caught.value) == (
        f"{path}: no sample has a score (10 samples, all 10 errored): nothing to analyse"
    )


# --- 4. Records are 1-based everywhere ------------------------------------------------------------


def test_inspect_records_count_samples_from_one(tmp_path):
    path = json_log(tmp_path, lambda d: d["samples"][0].update(epoch=0))
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == f"{path}, record 1: epoch must be a positive whole number, got 0"
    (frame,) = read_source(JSON_LOG)
    assert frame["record"].tolist() == list(range(1, 11))


# --- 5./6. Inspect: options from the sample; unparseable answers are missing predictions --------


def test_inspect_options_come_from_the_samples_choices(tmp_path):
    def four_choices(document):
        for sample in document["samples"][:6]:
            sample["choices"] = ["Paris", "Lyon", "Nice", "Lille"]

    (frame,) = read_source(json_log(tmp_path, four_choices))
    assert frame["n_options"].tolist() == [4] * 6 + [10] * 4


def test_inspect_unparseable_answers_are_missing_predictions(tmp_path):
    def unparsed(document):
        samples = document["samples"]
        samples[1]["scores"]["match"] = {"value": "I", "answer": ""}  # choice(): no letter
        samples[2]["scores"]["match"] = {"value": "I", "explanation": "not matched"}  # pattern()

    (frame,) = read_source(json_log(tmp_path, unparsed))
    (plain,) = read_source(JSON_LOG)
    assert frame["correct"].isna().tolist() == [False, True, True] + [False] * 7
    assert frame.attrs["missing_means"] == UNPARSED
    assert frame.attrs["errored_samples"] == 0
    pd.testing.assert_series_equal(frame["correct"].dropna(), plain["correct"].drop([1, 2]))
    counts = missing_prediction_counts([frame]).iloc[0]
    assert (counts["missing_predictions"], counts["missing_means"]) == (
        2,
        "unparseable answer (scored I with an empty answer)",
    )
    # A log whose missing predictions are all errored samples says that alone.
    errored = next((HARNESS / "inspect" / "errored_samples").glob("*.eval"))
    assert read_source(errored)[0].attrs["missing_means"] == (
        "errored sample (the harness logged an error, no score)"
    )


# --- 7. lm-eval: metrics, tasks, one samples file -------------------------------------------------


def test_a_metric_no_task_logs_is_refused_naming_those_they_log():
    with pytest.raises(InputError) as caught:
        read_source(STRONG, SourceOptions(metric="acc_nrom"))
    assert str(caught.value) == (
        f"{STRONG}: no task logs metric 'acc_nrom'; the tasks log acc, acc_norm, exact_match"
    )


def with_generation_variant(tmp_path) -> Path:
    """fake-strong's run plus `toybench_math_gen`, a generation task over toybench_math's
    documents (as mmlu and mmlu_generative are), written as lm-eval writes generation samples."""
    folder = tmp_path / "evalbars__fake-strong"
    shutil.copytree(STRONG, folder)
    (results_path,) = folder.glob("results_*.json")
    stamp = results_path.stem.removeprefix("results_")
    results = json.loads(results_path.read_text())
    results["configs"]["toybench_math_gen"] = {
        **results["configs"]["toybench_math"],
        "task": "toybench_math_gen",
        "output_type": "generate_until",
    }
    results_path.write_text(json.dumps(results))
    lines = []
    for line in (folder / f"samples_toybench_math_{stamp}.jsonl").read_text().splitlines():
        sample = json.loads(line)
        doc = sample["doc"]
        answer = doc["choices"][doc["answer"]] if sample["acc"] else "?"
        sample.update(
            arguments={"gen_args_0": {"arg_0": doc["question"], "arg_1": {"until": ["\n"]}}},
            resps=[[answer]],
            filtered_resps=[answer],
            metrics=["exact_match"],
            exact_match=sample.pop("acc"),
        )
        sample.pop("acc_norm")
        lines.append(json.dumps(sample))
    (folder / f"samples_toybench_math_gen_{stamp}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_two_tasks_over_the_same_documents_are_refused(tmp_path):
    folder = with_generation_variant(tmp_path)
    with pytest.raises(InputError) as caught:
        read_source(folder)
    stamp = next(folder.glob("results_*.json")).stem.removeprefix("results_")
    assert str(caught.value) == (
        f"{folder / f'samples_toybench_math_gen_{stamp}.jsonl'}: tasks 'toybench_math' "
        "(multiple_choice, acc) and 'toybench_math_gen' (generate_until, exact_match) of model "
        "'evalbars/fake-strong' score the same 12 documents; pooled, each would count twice: "
        "choose the tasks to read (set `tasks: [toybench_math]` on this predictions entry "
        "reads 'toybench_math' alone)"
    )
    (generation,) = read_source(folder, SourceOptions(tasks=["toybench_math_gen"]))
    (choice,) = read_source(folder, SourceOptions(tasks=["toybench_math"]))
    assert len(generation) == len(choice) == 12
    assert generation["correct"].tolist() == choice["correct"].tolist()
    assert (generation["n_options"] == 4).all()  # the doc's four choices
    (group,) = read_source(folder, SourceOptions(tasks=["toybench", "toyarith"]))
    assert set(group["category"]) == {"toybench_math", "toybench_history", "toyarith"}
    with pytest.raises(InputError) as unknown:
        read_source(folder, SourceOptions(tasks=["toybench_physics"]))
    assert str(unknown.value) == (
        f"{folder}: no task 'toybench_physics' among the samples files; they hold 'toyarith', "
        "'toybench_history', 'toybench_math', 'toybench_math_gen'"
    )


def test_one_samples_file_reads_its_task_alone(tmp_path):
    folder = with_generation_variant(tmp_path)
    (samples,) = folder.glob("samples_toybench_math_gen_*.jsonl")
    (frame,) = read_source(samples)
    assert frame["question_id"].str.startswith("toybench_math_gen/").all() and len(frame) == 12


def test_tasks_come_from_a_config_entry_as_a_list():
    options = SourceOptions.from_entry({"path": "x", "tasks": ["a", "b"]})
    assert options.tasks == ("a", "b")
    assert SourceOptions(tasks="a").tasks == ("a",)


# --- 8. Names alike but for case or whitespace ------------------------------------------------------


def test_model_names_that_differ_in_whitespace_stop_the_read_naming_both(tmp_path):
    (tmp_path / "a.csv").write_text(
        "model,question_id,category,correct\n"
        + "".join(f"fake-mid,{q},{'ab'[q % 2]},{q % 2}\n" for q in range(1, 5))
    )
    (tmp_path / "b.csv").write_text(
        "model,question_id,category,correct\nfake-mid ,5,b,1\nfake-mid ,6,a,0\n"
        + "".join(f"other,{q},{'ab'[q % 2]},1\n" for q in range(1, 7))
    )
    with pytest.raises(InputError) as caught:
        join_sources(read_source(tmp_path / "a.csv") + read_source(tmp_path / "b.csv"))
    assert str(caught.value) == (
        f"{tmp_path / 'a.csv'} and {tmp_path / 'b.csv'}: model names 'fake-mid' and 'fake-mid ' "
        "differ only in trailing whitespace: they would be analysed as two models that print "
        "alike; write the name alike in every file (or rename one if they are two)"
    )


def test_categories_that_differ_in_case_are_said_to(tmp_path):
    a = read_source(write_json(tmp_path / "model_outputs_A_5shots.json", [record(1)]))
    b = read_source(write_json(tmp_path / "model_outputs_B_5shots.json", [record(1, "Math")]))
    with pytest.raises(InputError) as caught:
        build_item_table(a + b)
    assert str(caught.value) == (
        f"{tmp_path / 'model_outputs_B_5shots.json'}, record 1: question 1 has category 'Math' "
        f"for model 'B' but 'math' for model 'A' ({tmp_path / 'model_outputs_A_5shots.json'}); "
        "1 question(s) conflict in all (the names 'Math' and 'math' differ only in case)"
    )


# --- 9. A model with no score at all ---------------------------------------------------------------


def test_a_model_whose_every_score_is_empty_is_refused_by_read(tmp_path, capsys):
    path = tmp_path / "mine.csv"
    path.write_text("model,question_id,correct\nA,1,1\nA,2,0\nB,1,\nB,2,\n")
    status, out, err = read_cli(["read", str(path)], capsys)
    assert (status, out) == (1, "")
    assert err == (
        f"evalbars read: error: {path}: model 'B' has no score: all 2 of its rows are missing "
        "predictions (correct empty or NaN (no score)), which would be analysed as 0%; fix its "
        "source or leave it out\n"
    )


def test_read_of_a_folder_says_how_many_files_it_skipped(tmp_path, capsys):
    write_json(tmp_path / "model_outputs_M_5shots.json", [record(1), record(2, pred="B")])
    write_json(tmp_path / "config.json", {"learning_rate": 0.1})
    status, out, err = read_cli(["read", str(tmp_path)], capsys)
    assert status == 0 and "| M " in out
    assert err == (
        f"evalbars: {tmp_path}: skipped 1 file that is not a prediction log ('config.json')\n"
    )


def test_a_group_of_groups_stands_for_all_their_tasks(tmp_path):
    folder = tmp_path / "evalbars__fake-strong"
    shutil.copytree(STRONG, folder)
    (results_path,) = folder.glob("results_*.json")
    results = json.loads(results_path.read_text())
    results["group_subtasks"]["suite"] = ["toybench", "toyarith"]
    results_path.write_text(json.dumps(results))
    (suite,) = read_source(folder, SourceOptions(tasks=["suite"]))
    (toybench,) = read_source(folder, SourceOptions(tasks=["toybench"]))
    assert len(suite) == 39 and len(toybench) == 24


def test_a_log_with_no_missing_prediction_says_what_would_make_one():
    (frame,) = read_source(JSON_LOG)
    assert frame.attrs["missing_means"] == (
        "errored sample (the harness logged an error, no score) or unparseable answer (scored I "
        "with an empty answer)"
    )


def test_a_task_that_logs_one_other_metric_is_scored_by_it(tmp_path, caplog):
    """The Open LLM Leaderboard's bbh, gpqa and musr tasks log acc_norm alone."""
    folder = tmp_path / "evalbars__fake-strong"
    shutil.copytree(STRONG, folder)
    (samples,) = folder.glob("samples_toybench_math_*.jsonl")
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for line in lines:
        line.update(metrics=["acc_norm"], acc_norm=1.0 - line.pop("acc"))  # tell them apart
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        (frame,) = read_source(folder, SourceOptions(tasks=["toybench_math"]))
    assert caplog.messages == [
        f"{samples}: task toybench_math logs one metric, 'acc_norm'; using it"
    ]
    assert frame["correct"].tolist() == [line["acc_norm"] for line in lines]


def test_tasks_on_an_entry_without_lm_eval_output_is_refused():
    for path in (JSON_LOG, JSON_LOG.parent):
        with pytest.raises(InputError) as caught:
            read_source(path, SourceOptions(tasks=["toyqa"]))
        assert str(caught.value) == (
            f"{path}: `tasks` chooses among lm-eval and lighteval tasks; this entry holds "
            "neither's output"
        )


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            lambda d: d["samples"][3].update(epoch="two"),
            "record 1: epoch must be a positive whole number, got 'two'",
        ),
        (lambda d: d["samples"].insert(2, "stray"), "record 3: the sample is not a JSON object"),
    ],
)
def test_malformed_inspect_samples_are_one_line_not_a_crash(tmp_path, change, problem):
    path = json_log(tmp_path, change)
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == f"{path}, {problem}"


def test_read_words_the_remedy_as_a_flag_once_the_command_line_says_so(capsys, cli_hints):
    folder = HARNESS / "lm_eval" / "evalbars__fake-mid"
    status, out, err = read_cli(["read", str(folder)], capsys)
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and err.endswith(
        "keep one, or pass `--runs newest` to use the newest (`--runs all` reads each as a run)\n"
    )
    assert "predictions entry" not in err


def test_categories_alike_but_for_case_are_warned_about(tmp_path, caplog):
    path = tmp_path / "mine.csv"
    path.write_text("model,question_id,category,correct\nA,1,Math,1\nA,2,math,0\nA,3,law,1\n")
    with caplog.at_level(logging.WARNING):
        join_sources(read_source(path))
    assert caplog.messages == [
        "categories 'Math' and 'math' differ only in case; they are read as two categories"
    ]


LM_EVAL = HARNESS / "lm_eval"


# --- A sample logged twice; a control character in a model name ----------------------------------


def test_an_lm_eval_sample_logged_twice_names_the_samples_file_and_its_line(tmp_path, capsys):
    logs = tmp_path / "lm_eval"
    shutil.copytree(LM_EVAL / "evalbars__fake-weak", logs)
    samples = next(logs.glob("samples_toybench_math_*.jsonl"))
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([*lines, lines[1]]) + "\n")  # line 2 again, as the last line
    before = digest(logs)
    line = (
        f"{samples}, record {len(lines) + 1}: question_id "
        f"{json.loads(lines[1])['doc']['id']!r} occurs 2 times for model 'evalbars/fake-weak' (records [2, {len(lines) + 1}])"
    )
    with pytest.raises(InputError) as raised:
        read_source(logs, SourceOptions(id_field="id"))
    assert str(raised.value) == line
    output = tmp_path / "items.parquet"
    assert main(["read", str(logs), "--id-field", "id", "-o", str(output)]) == 1
    assert last_error(capsys) == f"evalbars read: error: {line}"
    assert not output.exists() and digest(logs) == before


@pytest.mark.parametrize(
    ("name", "shown", "code"),
    [("fake\x00strong", "'fake\\x00strong'", "0000"), ("fake\tstrong", "'fake\\tstrong'", "0009")],
)
def test_a_control_character_in_a_model_name_is_refused_naming_file_and_record(
    tmp_path, capsys, name, shown, code
):
    table = tmp_path / "items.csv"
    table.write_bytes(f"model,question_id,correct\na,1,1\n{name},1,0\na,2,0\n{name},2,1\n".encode())
    before = table.read_bytes()
    line = (
        f"{table}, record 2: model name {shown} holds the control character U+{code} "
        "(at character 5); names must be printable text"
    )
    with pytest.raises(InputError) as raised:
        read_source(table, SourceOptions())
    assert str(raised.value) == line
    output = tmp_path / "out.parquet"
    assert main(["read", str(table), "-o", str(output)]) == 1
    assert last_error(capsys) == f"evalbars read: error: {line}"
    assert not output.exists() and table.read_bytes() == before


@pytest.mark.parametrize(
    ("column", "name", "shown", "code"),
    [
        ("model", "fake\u202egnorts", "'fake\\u202egnorts'", "U+202E (right-to-left override"),
        ("model", "fake\u2066strong", "'fake\\u2066strong'", "U+2066 (left-to-right isolate"),
        ("category", "math\u202a", "'math\\u202a'", "U+202A (left-to-right embedding"),
    ],
)
def test_a_bidirectional_control_in_a_name_is_refused_as_control_characters_are(
    tmp_path, capsys, column, name, shown, code
):
    # Before: a right-to-left override was read, and printed the name backwards after it.
    table = tmp_path / "items.csv"
    rows = {"model": ["a", "a"], "question_id": [1, 2], "category": ["x", "x"], "correct": [1, 0]}
    rows[column][1] = name
    pd.DataFrame(rows).to_csv(table, index=False)
    line = (
        f"{table}, record 2: {column} name {shown} holds the control character {code}, at "
        "character 5); names must be printable text"
    )
    assert refusal(table) == line
    assert main(["read", str(table)]) == 1
    assert last_error(capsys) == f"evalbars read: error: {line}"


def test_a_model_name_in_nfd_is_read_in_nfc(tmp_path):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    table = tmp_path / "items.csv"
    table.write_text(
        f"model,question_id,category,correct\n{nfd},1,\u00c9co,1\n{nfd},2,E\u0301co,0\n"
        "b,1,\u00c9co,0\nb,2,E\u0301co,1\n"
    )
    items = build_item_table(read_source(table))
    assert sorted(items["model"].unique()) == ["b", nfc]
    # Canonically equivalent categories are one category.
    assert items["category"].unique().tolist() == ["\u00c9co"]


def test_a_model_name_spelled_in_two_unicode_forms_is_refused_naming_both(tmp_path, capsys):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text(f"model,question_id,correct\n{nfc},1,1\n{nfc},2,0\nb,1,1\nb,2,0\n")
    second.write_text(f"model,question_id,correct\n{nfd},3,1\n{nfd},4,0\n")
    difference = (
        f"model names {nfc!r} and {nfd!r} differ only in Unicode normalisation (U+00E9 "
        "against U+0065 U+0301)"
    )
    # Before: two models 'café' and 'café', printed alike.
    line = (
        f"{second}, record 1: {difference}, the first in {first}: they print alike; write the "
        "name alike in every file (or rename one if they are two models)"
    )
    assert main(["read", str(first), str(second)]) == 1
    assert last_error(capsys) == f"evalbars read: error: {line}"
    # In one file: both records named.
    both = tmp_path / "both.csv"
    both.write_text(f"model,question_id,correct\n{nfc},1,1\nb,2,0\n{nfd},2,0\n")
    assert refusal(both) == (
        f"{both}, record 3: {difference}, in records 1 and 3: they would print alike as two "
        "models; write the name one way"
    )


def test_question_ids_in_two_unicode_forms_are_refused_as_ids_written_differently(tmp_path, capsys):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("model,question_id,correct\na,q\u00e9,1\na,q2,0\n")
    second.write_text("model,question_id,correct\nb,qe\u0301,1\nb,q2,0\n")
    assert main(["read", str(first), str(second)]) == 1
    assert last_error(capsys) == (
        "evalbars read: error: question ids are written differently in different sources: "
        "question ids 'qe\u0301' and 'q\u00e9' differ only in Unicode normalisation (U+0065 "
        "U+0301 against U+00E9); 2 of 3 questions are in some sources but not all. Write the "
        "ids alike in every file (the same zeros, case, spaces and Unicode form)"
    )


def test_a_control_character_in_an_lm_eval_model_name_names_the_results_file(tmp_path):
    logs = tmp_path / "lm_eval"
    shutil.copytree(LM_EVAL / "evalbars__fake-weak", logs)
    results = next(logs.glob("results_*.json"))
    document = json.loads(results.read_text())
    assert document["model_name"] == "evalbars/fake-weak"
    document["model_name"] = "evalbars/fake\x00weak"
    results.write_text(json.dumps(document))
    with pytest.raises(InputError, match=r"model name 'evalbars/fake\\x00weak' holds the control"):
        read_source(logs, SourceOptions(id_field="id"))


# --- A correct column that disagrees with pred and answer ----------------------------------------


def test_a_correct_column_marking_the_answer_itself_wrong_is_refused(tmp_path, capsys):
    table = tmp_path / "items.csv"
    table.write_text(
        "model,question_id,pred,answer,correct\n"
        "a,1,B,B,1\na,2,C,B,0\na,3,B,B,0\nb,1,B,B,1\nb,2,(B),B,1\nb,3, A ,A,0\n"
    )
    before = table.read_bytes()
    line = (
        f"{table}, record 3: correct is 0 but pred 'B' equals the answer 'B': 2 of 6 records "
        "with correct, pred and answer are marked wrong while their prediction is the answer, so "
        "the correct column does not score these predictions (shifted or stale?); fix it, or "
        "drop pred and answer to score by correct alone"
    )
    with pytest.raises(InputError) as raised:
        read_source(table, SourceOptions())
    assert str(raised.value) == line
    output = tmp_path / "out.parquet"
    assert main(["read", str(table), "-o", str(output)]) == 1
    assert last_error(capsys) == f"evalbars read: error: {line}"
    assert not output.exists() and table.read_bytes() == before


def test_a_correct_column_more_lenient_than_exact_matching_is_kept_with_a_warning(tmp_path, caplog):
    table = tmp_path / "items.csv"
    # a lenient grader: '(B)' and '18.0' accepted; a case-sensitive one: 'b' for 'B' wrong;
    # partial credit and a missing prediction are not judged
    table.write_text(
        "model,question_id,pred,answer,correct\n"
        "a,1,B,B,1\na,2,C,B,0\na,3,(B),B,1\na,4,B,B,0.5\nb,1,b,B,0\nb,2,18.0,18,1\nb,3,,A,\n"
        "b,4,A,A,1\n"
    )
    with caplog.at_level("WARNING"):
        (frame,) = read_source(table, SourceOptions())
    assert frame["correct"].tolist() == [1, 0, 1, 0.5, 0, 1, pd.NA, 1]  # correct is the score
    assert [r.getMessage() for r in caplog.records if "disagrees" in r.getMessage()] == [
        f"{table}: correct disagrees with matching pred to answer on 3 of 6 records (first: "
        "record 3, pred '(B)', answer 'B', correct 1); correct is the score (a grader may accept "
        "more than exact matching): check the column if it should not"
    ]


def test_a_correct_column_that_agrees_with_pred_and_answer_says_nothing(tmp_path, caplog):
    table = tmp_path / "items.csv"
    table.write_text("model,question_id,pred,answer,correct\na,1,b ,B,1\na,2,C,B,0\nb,1,,B,\n")
    with caplog.at_level("WARNING"):
        (frame,) = read_source(table, SourceOptions())
    assert frame["correct"].tolist() == [1, 0, pd.NA]
    # numbers: a pred column with an empty cell is read as floats, 18.0 for the answer 18
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("model,question_id,pred,answer,correct\na,1,18,18,1\na,2,,18,\na,3,7,18,0\n")
    with caplog.at_level("WARNING"):
        read_source(numbers, SourceOptions())
    assert not [r for r in caplog.records if "disagrees" in r.getMessage()]


# --- A score above one, a row cut short, a column named twice ------------------------------------


def test_a_harness_score_above_one_is_refused_naming_the_file_and_record(tmp_path):
    logs = tmp_path / "lm_eval"
    shutil.copytree(LM_EVAL, logs)
    samples = next((logs / "evalbars__fake-weak").glob("samples_toyarith_*.jsonl"))
    lines = samples.read_text().splitlines()
    first = json.loads(lines[0])
    first["exact_match"] = 2.0
    samples.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    before = digest(logs)
    with pytest.raises(InputError) as raised:
        read_source(logs, SourceOptions(runs="newest", id_field="id"))
    assert str(raised.value) == (
        f"{samples}, record 1: a score must be in [0, 1] (1 right, 0 wrong, a fraction for "
        "partial credit), got 2.0"
    )
    assert digest(logs) == before


def test_a_csv_cut_mid_row_is_refused_not_read_as_a_missing_prediction(tmp_path, capsys):
    cut = tmp_path / "cut.csv"
    cut.write_text("model,question_id,correct,category\nA,1,1,x\nA,2,0,y\nB,1,1,x\nB,2")
    assert main(["read", str(cut)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars read: error: {cut}, record 4: the last row has fewer fields than the header "
        "and no line end: the file looks cut short (was it still being written?)"
    )
    # A complete last row without a line end is fine.
    cut.write_text("model,question_id,correct,category\nA,1,1,x\nA,2,0,y\nB,1,1,x\nB,2,1,y")
    assert main(["read", str(cut)]) == 0


def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys):
    table = tmp_path / "dup.csv"
    table.write_text("model,question_id,correct,correct\nA,1,1,0\nB,1,0,1\n")
    assert main(["read", str(table)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars read: error: {table}: the header names column 'correct' twice"
    )


def spreadsheet_export(path: Path, blank_rows: list[str]) -> Path:
    """180 questions of two models (records 1-360), then ``blank_rows`` as a spreadsheet's CSV
    export writes the empty rows below its data."""
    rows = [
        f"{model},q{q:03d},{'xy'[q % 2]},{int((q * 7 + len(model)) % 3 == 0)}"
        for model in ("alpha", "beta")
        for q in range(180)
    ]
    path.write_text("\n".join(["model,question_id,category,correct", *rows, *blank_rows]) + "\n")
    return path


def test_wholly_blank_rows_of_a_spreadsheet_export_are_skipped_in_one_line(
    tmp_path, capsys, caplog
):
    export = spreadsheet_export(tmp_path / "export.csv", [",,,"] * 4 + [" , ,\t,"])
    before = export.read_bytes()
    # Before: "export.csv, record 361: empty model".
    with caplog.at_level(logging.WARNING):
        (frame,) = read_source(export)
    assert len(frame) == 360 and frame["record"].max() == 360
    assert [r.getMessage() for r in caplog.records] == [
        f"{export}: skipped 5 wholly blank rows (records 361 to 365: nothing in any field)"
    ]
    items = build_item_table([frame])
    flat = pd.read_csv(export, nrows=360)
    assert items.groupby("model")["correct"].mean().to_dict() == pytest.approx(
        flat.groupby("model")["correct"].mean().to_dict()
    )
    assert main(["read", str(export)]) == 0 and export.read_bytes() == before


def test_a_partly_blank_row_is_still_refused_naming_its_record(tmp_path):
    export = spreadsheet_export(tmp_path / "export.csv", [",,,", ",q999,x,", ",,,"])
    assert refusal(export) == f"{export}, record 362: empty model"
    blank = tmp_path / "blank.csv"
    blank.write_text("model,question_id,correct\n,,\n,,\n")
    assert refusal(blank) == f"{blank}: the table has no rows (its 2 rows are all blank)"


# --- Inspect logs of a format version evalbars does not know ------------------------------------


@pytest.mark.parametrize(("version", "shown"), [(3, "3"), (None, "(none given)")])
def test_an_inspect_log_of_an_unknown_format_version_is_read_with_one_warning(
    tmp_path, caplog, version, shown
):
    def set_version(document):
        document["version"] = version

    log = json_log(tmp_path, set_version)
    # Before: read with no note.
    with caplog.at_level(logging.WARNING):
        (frame,) = read_source(log)
    (known,) = read_source(JSON_LOG)
    pd.testing.assert_series_equal(frame["correct"], known["correct"])
    assert [r.getMessage() for r in caplog.records] == [
        f"{log}: Inspect log format version {shown}, which evalbars does not know (it reads "
        "version 2, which Inspect 0.3 writes); its samples are read as version 2's: check the "
        "scores"
    ]


def test_an_inspect_log_of_version_2_is_read_without_a_warning(caplog):
    assert json.loads(JSON_LOG.read_text())["version"] == 2
    with caplog.at_level(logging.WARNING):
        read_source(JSON_LOG)
        read_source(DEFLATE_LOG)
    assert caplog.records == []


# --- Files evalbars may not read, gzip, dangling symbolic links ----------------------------------


@pytest.fixture
def without_permission(monkeypatch):
    """Reads ``path`` (chmod 000) as a user who may not: root reads anything (``os.access``
    says yes), so as root the readers' ``os.access`` is told what it says to other users."""

    def read(path):
        if os.geteuid() == 0:
            real = os.access
            monkeypatch.setattr(
                "evalbars.data.readers.os.access",
                lambda p, mode: False if Path(p).stat().st_mode & 0o777 == 0 else real(p, mode),
            )
        return refusal(path)

    return read


def test_an_unreadable_file_is_permission_denied(tmp_path, without_permission):
    table = tmp_path / "noperm.csv"
    table.write_text("model,question_id,correct\nA,1,1\n")
    table.chmod(0)
    assert without_permission(table) == (
        f"{table}: permission denied: evalbars cannot read this file"
    )


def test_an_unreadable_folder_inside_a_predictions_folder_is_permission_denied(
    tmp_path, without_permission
):
    (tmp_path / "a.csv").write_text("model,question_id,correct\nA,1,1\n")
    (tmp_path / "a.csv").chmod(0o644)
    locked = tmp_path / "permdir"
    locked.mkdir()
    (locked / "b.csv").write_text("model,question_id,correct\nB,1,1\n")
    locked.chmod(0)
    try:
        assert without_permission(tmp_path) == (
            f"{locked}: permission denied: evalbars cannot read this folder"
        )
    finally:
        locked.chmod(0o755)


def test_a_gzip_file_is_refused_with_the_remedy(tmp_path):
    rows = b"model,question_id,correct\nA,1,1\n"
    path = tmp_path / "mine.csv.gz"
    path.write_bytes(gzip.compress(rows, mtime=0))
    assert refusal(path) == (
        f"{path}: gzip-compressed; decompress it (gunzip {path}) and read the decompressed file"
    )
    named = tmp_path / "gz_named.csv"
    named.write_bytes(gzip.compress(rows, mtime=0))
    assert refusal(named) == (
        f"{named}: gzip-compressed under a name without .gz; decompress it (gunzip -c {named} > "
        f"{tmp_path / 'decompressed-gz_named.csv'}) and read that file"
    )


def test_gzipped_lm_eval_samples_in_a_folder_are_refused_with_the_remedy(tmp_path):
    logs = tmp_path / "lm_eval"
    shutil.copytree(DATA / "harness" / "lm_eval" / "evalbars__fake-weak", logs)
    first = sorted(logs.glob("samples_*.jsonl"))[0]
    for samples in logs.glob("samples_*.jsonl"):
        (samples.parent / (samples.name + ".gz")).write_bytes(gzip.compress(samples.read_bytes()))
        samples.unlink()
    gz = first.parent / (first.name + ".gz")
    assert refusal(logs) == (
        f"{gz}: gzip-compressed; decompress it (gunzip {gz}) and read the decompressed file"
    )


def test_a_dangling_symlink_in_a_predictions_folder_is_one_warning(tmp_path, caplog):
    (tmp_path / "ok.csv").write_text("model,question_id,correct\nA,1,1\nB,1,0\n")
    (tmp_path / "link.csv").symlink_to(tmp_path / "gone.csv")
    frames = read_source(tmp_path)
    assert len(pd.concat(frames)) == 2
    assert (
        f"{tmp_path}: ignored 1 symbolic link(s) to nothing ('link.csv' -> {tmp_path / 'gone.csv'})"
        in caplog.text
    )
    assert refusal(tmp_path / "link.csv") == (
        f"{tmp_path / 'link.csv'}: a symbolic link to {tmp_path / 'gone.csv'}, which does not exist"
    )
