"""Bad input, a second round by another hand: each case one exact line and a non-zero exit, with
nothing partial left and the inputs unchanged."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from evalbars.cli import main
from evalbars.data.readers import SourceOptions, read_source
from evalbars.errors import ConfigError, InputError
from evalbars.workflow import smk

from .conftest import DATA, REPO

LM_EVAL = DATA / "harness" / "lm_eval"


def digest(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


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


def test_a_question_with_no_option_is_refused(tmp_path, capsys):
    table = tmp_path / "nopt.csv"
    table.write_text("model,question_id,correct,n_options\nA,1,1,4\nA,2,,0\nB,1,0,4\nB,2,1,4\n")
    assert main(["read", str(table), "--missing-prediction", "random_guess"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars read: error: {table}, record 2: a question has at least 1 option, got "
        "n_options 0"
    )


def test_compare_flips_into_a_missing_folder_is_bad_input_not_a_regression(tmp_path, capsys):
    weak, strong = LM_EVAL / "evalbars__fake-weak", LM_EVAL / "evalbars__fake-strong"
    flips = tmp_path / "no" / "flips.csv"
    status = main(["compare", str(weak), str(strong), "--id-field", "id", "--flips", str(flips)])
    assert status == 2  # bad input, not 1 (a regression) or a traceback
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        f"evalbars compare: error: {flips}: folder '{flips.parent}' does not exist; create it first"
    )
    assert not flips.parent.exists()


def test_report_into_a_path_that_is_a_file_is_one_line(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["report", str(LM_EVAL), "--runs", "newest", "--output", str(taken)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars report: error: {taken}: is a file, not a run directory; give another --output"
    )
    assert taken.read_text() == "mine"


def test_a_simulation_grid_that_is_missing_or_misspelled_is_one_line(tmp_path):
    schema = REPO / "workflow" / "schemas" / "grid_leaderboard.schema.yaml"
    with pytest.raises(ConfigError) as raised:
        smk.check_grid(
            tmp_path / "fwr.tsv", schema, "simulation.fwer.grid", configured="config/fwr.tsv"
        )
    assert str(raised.value) == (
        "config key `simulation.fwer.grid`: grid file 'config/fwr.tsv' does not exist (looked in "
        "the run directory and beside the Snakefile)"
    )
    grid = tmp_path / "leaderboard.tsv"
    shipped = (REPO / "config" / "simulation" / "leaderboard.tsv").read_text()
    grid.write_text(shipped.replace("spread", "spred", 1))
    with pytest.raises(ConfigError) as raised:
        smk.check_grid(grid, schema, "simulation.leaderboard.grid")
    assert str(raised.value) == (
        f"{grid}, row 1: config key `spred` does not exist; did you mean `spread`?"
    )
    # the shipped grid passes, every row
    rows = smk.check_grid(REPO / "config" / "simulation" / "leaderboard.tsv", schema, "grid")
    assert len(rows) == len(shipped.splitlines()) - 1


def test_a_claims_questions_are_those_its_comparison_used(tmp_path, capsys):
    # B lacks question 5: "A > B" is tested on the 4 questions both answered, not on 5.
    rows = [f"A,{q},{q % 2},x" for q in range(1, 6)] + [f"B,{q},0,x" for q in range(1, 5)]
    rows += [f"C,{q},1,x" for q in range(1, 6)]
    table = tmp_path / "unequal.csv"
    table.write_text("model,question_id,correct,category\n" + "\n".join(rows) + "\n")
    status = main(
        ["claims", str(table), "--claim", "A > B", "--format", "csv", "--replicates", "100"]
    )
    assert status == 0
    out = capsys.readouterr().out.splitlines()
    header, first = out[0].split(","), out[1].split(",")
    assert first[header.index("questions")] == "4"


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


def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys):
    table = tmp_path / "dup.csv"
    table.write_text("model,question_id,correct,correct\nA,1,1,0\nB,1,0,1\n")
    assert main(["read", str(table)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars read: error: {table}: the header names column 'correct' twice"
    )


def test_a_model_listed_twice_in_the_config_says_so():
    config = {"models": ["Yi-6B", "Yi-6B"]}
    with pytest.raises(ConfigError) as raised:
        smk.validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    assert str(raised.value) == 'config key `models`: "Yi-6B" is listed twice'
