"""Bad input, round 4 (issue 19, the cases the round-3 closing note left open): each case one
exact line and a non-zero exit, nothing partial left and the inputs unchanged."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from evalbars.cli import main
from evalbars.errors import InputError
from evalbars.readers import SourceOptions, read_source

from .conftest import DATA

LM_EVAL = DATA / "harness" / "lm_eval"


def digest(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def last_error(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


# --- An lm-eval sample logged twice: the samples file and its line, not the results file --------


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


# --- A control character in a model name -----------------------------------------------------------


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
