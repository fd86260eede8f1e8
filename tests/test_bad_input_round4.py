"""Bad input, round 4 (issue 19, the cases the round-3 closing note left open): each case one
exact line and a non-zero exit, nothing partial left and the inputs unchanged."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbars.cli import main
from evalbars.data.readers import SourceOptions, read_source
from evalbars.errors import ConfigError, InputError
from evalbars.readings import planner
from evalbars.readings.ranks import parse_leaderboard
from evalbars.workflow import smk

from .conftest import DATA, REPO
from .workflow_runs import make_workdir, run_snakemake

LM_EVAL = DATA / "harness" / "lm_eval"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


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


# --- A key given twice in a YAML config (the loader keeps the last without a word) ----------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "alpha: 0.05\nmodels: []\nalpha: 0.01\n",
            "line 3: key `alpha` is given twice (first on line 1)",
        ),
        (
            "subsample:\n  n: 400\n  seed: 1\n  n: all\n",
            "line 4: key `subsample.n` is given twice (first on line 2)",
        ),
        (
            "predictions:\n  - path: a.csv\n    format: table\n    path: b.csv\n",
            "line 4: key `predictions[0].path` is given twice (first on line 2)",
        ),
        # the first repeat in the file, wherever the walk meets it
        ("a:\n  b: 1\n  b: 2\nc: 1\nc: 2\n", "line 3: key `a.b` is given twice (first on line 2)"),
        ('{"alpha": 0.05, "models": [], "alpha": 0.01}', "line 1: key `alpha` is given twice"),
    ],
)
def test_a_key_given_twice_in_a_config_file_is_refused_naming_file_line_and_key(
    tmp_path, text, line
):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        smk.check_unique_keys(path)
    assert str(raised.value).startswith(f"{path}, {line}")
    assert str(raised.value).endswith("; YAML would keep only the last value: remove one")
    assert yaml.safe_load(text) is not None  # the loader itself accepts every one of them


def test_keys_that_repeat_only_across_mappings_or_through_a_merge_are_kept(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        "a:\n  n: 1\nb:\n  n: 2\nbase: &base\n  seed: 1\nc:\n  <<: *base\n  seed: 2\n"
        "d:\n  - n: 1\n  - n: 2\n"
    )
    assert smk.check_unique_keys(path) is None


def test_validate_config_checks_its_files_before_the_schema(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("alpha: 0.05\nalpha: 7\n")  # as loaded, alpha 7 would fail the schema
    with pytest.raises(ConfigError, match=r"line 2: key `alpha` is given twice"):
        smk.validate_config(yaml.safe_load(path.read_text()), SCHEMA, config_files=[path])


@pytest.mark.workflow
def test_a_dry_run_with_a_key_given_twice_in_a_configfile_ends_in_that_line(tmp_path):
    workdir = make_workdir(tmp_path)
    extra = tmp_path / "mine.yaml"
    extra.write_text("claims: []\nsubsample:\n  n: 50\n  n: 40\n")
    before = extra.read_bytes()
    result = run_snakemake(workdir, "-n", "--configfile", str(extra), check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"evalbars: {extra}, line 4: key `subsample.n` is given twice (first on line 3); YAML "
        "would keep only the last value: remove one"
    )
    # the Snakefile's own config file too
    shipped = workdir / "config" / "config.yaml"
    shipped.write_text(shipped.read_text() + "alpha: 0.01\n")
    first = 1 + next(
        i for i, text in enumerate(shipped.read_text().splitlines()) if text.startswith("alpha:")
    )
    count = len(shipped.read_text().splitlines())
    result = run_snakemake(workdir, "-n", check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"evalbars: config/config.yaml, line {count}: key `alpha` is given twice (first on line "
        f"{first}); YAML would keep only the last value: remove one"
    )
    assert extra.read_bytes() == before
    assert not (workdir / "results").exists() and not (workdir / "data").exists()


@pytest.mark.workflow
def test_a_dry_run_with_planning_gaps_given_as_proportions_ends_in_that_line(tmp_path):
    workdir = make_workdir(tmp_path, claims_options={"plan_gaps": [0.01, 0.02]})
    result = run_snakemake(workdir, "-n", check=False)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "evalbars: config key `claims_options.plan_gaps`: 0.01 is 0.01 points; did you mean 1 "
        "point? (gaps are accuracy points; set `claims_options.small_gaps: true` to plan for a "
        "gap under 1 point)"
    )
    assert not (workdir / "results").exists() and not (workdir / "data").exists()
    small = make_workdir(
        tmp_path / "small", claims_options={"plan_gaps": [0.5], "small_gaps": True}
    )
    assert run_snakemake(small, "-n", "plan_table", check=False).returncode == 0


# --- Planning gaps given as proportions ------------------------------------------------------------


def _config(**claims_options) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["claims_options"].update(claims_options)
    return config


def test_plan_gaps_given_as_proportions_are_refused_with_the_points_meant():
    with pytest.raises(ConfigError) as raised:
        smk.validate_config(_config(plan_gaps=[0.01, 0.02, 0.05]), SCHEMA)
    assert str(raised.value) == (
        "config key `claims_options.plan_gaps`: 0.01 is 0.01 points; did you mean 1 point? "
        "(gaps are accuracy points; set `claims_options.small_gaps: true` to plan for a gap "
        "under 1 point)"
    )
    # the same check as `evalbars plan --gap` (one home)
    with pytest.raises(InputError, match=r"is 0.02 points; did you mean 2 points\? \(the gap"):
        planner.check_plan_request(6, 0.02, None, 0.25)


def test_plan_gaps_under_one_point_are_planned_when_asked_for():
    config = smk.validate_config(_config(plan_gaps=[0.5, 1], small_gaps=True), SCHEMA)
    assert config["claims_options"]["plan_gaps"] == [0.5, 1]
    shipped = smk.validate_config(_config(), SCHEMA)["claims_options"]
    assert shipped["plan_gaps"] == [1, 2, 5] and shipped["small_gaps"] is False
    assert "small_gaps" in smk.validate_config({}, SCHEMA)["claims_options"]


# --- A correct column that disagrees with pred and answer -----------------------------------------


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


# --- A score in points with its se as a proportion ------------------------------------------------


def _board(rows: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO("name,score,se\n" + rows), dtype=object)


def test_a_proportions_se_beside_a_points_score_is_refused_by_the_questions_it_implies():
    # 0.012 read as points on 65.3 implies 0.653 * 0.347 / 0.00012^2 = 15.7 million questions
    with pytest.raises(InputError) as raised:
        parse_leaderboard(_board("a,65.3,0.012\nb,61.0,0.013\n"), source="board.csv")
    assert str(raised.value) == (
        "board.csv: row 1 (a): se 0.012 on a score of 65.3 points implies 15.7 million questions "
        "(an accuracy's se is sqrt(p(1-p)/n)); if se is a proportion, multiply it by 100 (se "
        "1.2) or pass --se-units proportion; if it is in points, pass --se-units points"
    )
    assert 0.653 * 0.347 / 0.00012**2 == pytest.approx(15.74e6, rel=1e-3)


@pytest.mark.parametrize(
    ("rows", "units", "se"),
    [
        # a points se of a plain accuracy: 0.5 points on 65.3 is 9,066 questions, 0.3 is 25,184
        ("a,65.3,0.5\nb,61.0,0.3\n", "auto", [0.005, 0.003]),
        # the same board as above, its units stated: a proportion...
        ("a,65.3,0.012\nb,61.0,0.013\n", "proportion", [0.012, 0.013]),
        # ...or a tiny-SE metric in points (partial credit over many samples), as stated
        ("a,65.3,0.012\nb,61.0,0.013\n", "points", [0.00012, 0.00013]),
        # tiny SEs on the proportion scale are never judged by the bound
        ("a,0.653,0.0001\nb,0.610,0.00012\n", "auto", [0.0001, 0.00012]),
        # a points se beside proportion scores, stated
        ("a,0.84,3.1\nb,0.80,2.5\n", "points", [0.031, 0.025]),
        # at 0 or 100 points an accuracy's se is 0: no bound to judge by
        ("a,100,0.001\nb,61.0,0.3\n", "auto", [0.00001, 0.003]),
    ],
)
def test_legitimate_standard_errors_are_read_in_their_units(rows, units, se):
    board = parse_leaderboard(_board(rows), source="board.csv", se_units=units)
    assert board["se"].tolist() == pytest.approx(se, rel=1e-12)


def test_the_bound_sits_at_a_million_questions():
    # 65.3 points: se = 100 * sqrt(0.653 * 0.347 / n); just under and over a million questions
    at = 100 * (0.653 * 0.347 / 1e6) ** 0.5
    parse_leaderboard(_board(f"a,65.3,{at * 1.001!r}\nb,61.0,0.3\n"))
    with pytest.raises(InputError, match=r"row 1 \(a\): se .* implies 1.0 million questions"):
        parse_leaderboard(_board(f"a,65.3,{at * 0.999!r}\nb,61.0,0.3\n"))


def test_stated_units_keep_the_largest_se_of_an_accuracy():
    with pytest.raises(InputError) as raised:
        parse_leaderboard(_board("a,65.3,0.6\nb,61.0,0.3\n"), source="b.csv", se_units="proportion")
    assert str(raised.value) == (
        "b.csv: row 1 (a): se 0.6 exceeds 0.5, the largest standard error of an accuracy"
    )


def test_ranks_takes_the_se_units_on_the_command_line(tmp_path, capsys):
    board = tmp_path / "board.csv"
    board.write_text("name,score,se\na,65.3,0.012\nb,61.0,0.013\n")
    before = board.read_bytes()
    assert main(["ranks", str(board)]) == 1
    assert last_error(capsys).startswith(
        f"evalbars ranks: error: {board}: row 1 (a): se 0.012 on a score of 65.3 points implies "
        "15.7 million questions"
    )
    assert main(["ranks", str(board), "--se-units", "proportion", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["systems"]
    assert [round(r["ci_high"] - r["ci_low"], 6) for r in rows] == [
        round(2 * 1.959963984540054 * se, 6) for se in (0.012, 0.013)
    ]
    assert board.read_bytes() == before


# --- A claim listed twice on the command line (it crashed the table) -----------------------------


def test_a_claim_listed_twice_in_a_claims_file_names_the_file_and_line(tmp_path, capsys):
    claims_file = tmp_path / "claims.txt"
    claims_file.write_text(
        "# mine\nevalbars/fake-strong > evalbars/fake-weak\n\nevalbars/fake-strong  >  "
        "evalbars/fake-weak\n"
    )
    before = claims_file.read_bytes()
    arguments = ["claims", str(LM_EVAL), "--runs", "newest", "--id-field", "id"]
    assert main([*arguments, "--claims-file", str(claims_file)]) == 1
    assert last_error(capsys) == (
        # (the command line shows a message's runs of spaces as one)
        f"evalbars claims: error: {claims_file}, record 4: claim 'evalbars/fake-strong > "
        "evalbars/fake-weak' is listed twice (first at record 2)"
    )
    assert claims_file.read_bytes() == before
    claim = "evalbars/fake-strong > evalbars/fake-weak"
    assert main([*arguments, "--claim", claim, "--claim", claim]) == 1
    assert last_error(capsys) == (
        f"evalbars claims: error: claim {claim!r}: listed twice (also as {claim!r})"
    )


def test_a_control_character_in_a_leaderboard_name_is_refused(tmp_path, capsys):
    board = tmp_path / "board.csv"
    board.write_bytes(b"name,correct,total\nfake\x00strong,50,100\nweak,40,100\n")
    assert main(["ranks", str(board)]) == 1
    assert last_error(capsys) == (
        f"evalbars ranks: error: {board}: row 1: name 'fake\\x00strong' holds the control "
        "character U+0000 (at character 5); names must be printable text"
    )
