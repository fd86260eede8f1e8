"""Battles at the doors: `evalbars read`, `leaderboard`, `claims` and `report` recognise battle
files by content and take the battles path; the Python API's battles functions; battle files
where item-level scores are read.

`evalbars report` on battles runs in the workflow tier (tests/workflow/test_battles_report.py);
here its refusals, which stop it before anything is written."""

from __future__ import annotations

import io
import json
import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evalbars import api, cli
from evalbars.data.readers import (
    BATTLES_HINT,
    SourceOptions,
    detect_format,
    is_battles_file,
    is_battles_source,
    read_source,
)
from evalbars.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "data"
CLUSTERED = DATA / "battles" / "clustered.csv"
JUDGMENTS = DATA / "battles" / "arena_hard" / "model_judgment" / "stand-in-judge"
LM_EVAL = DATA / "harness" / "lm_eval"


def run(argv, capsys):
    """Run ``evalbars`` in-process: (exit status, stdout, stderr)."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def disconnected(tmp_path):
    path = tmp_path / "two.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\nb,a,tie\nc,d,model_b\nd,c,model_a\n")
    return path


# --- Recognised by content ---------------------------------------------------------------------------


def test_battle_files_are_recognised_by_content_whatever_their_name(tmp_path):
    assert is_battles_file(CLUSTERED) and is_battles_source(JUDGMENTS)
    assert all(is_battles_file(f) for f in JUDGMENTS.glob("*.jsonl.gz"))  # gzip JSON lines
    renamed = tmp_path / "results.txt"
    shutil.copy(CLUSTERED, renamed)
    assert not is_battles_file(renamed)  # not a table by name, not JSON by content
    listed = tmp_path / "battles.json"
    listed.write_text(json.dumps([{"model_a": "x", "model_b": "y", "winner": "tie"}]))
    assert is_battles_file(listed)
    kaggle = tmp_path / "train.csv"
    kaggle.write_text("id,model_a,model_b,winner_model_a,winner_model_b,winner_tie\n1,x,y,1,0,0\n")
    assert is_battles_file(kaggle)
    assert not is_battles_source(LM_EVAL) and not is_battles_source(DATA / "calculator_example.csv")
    assert not is_battles_source(tmp_path / "absent.csv")


def test_a_battle_file_where_scores_are_read_is_refused_or_passed_over(tmp_path, caplog):
    with pytest.raises(InputError, match="holds pairwise battles") as error:
        detect_format(CLUSTERED)
    assert str(error.value).endswith(BATTLES_HINT)
    with pytest.raises(InputError, match="holds pairwise battles"):
        read_source(CLUSTERED)
    folder = tmp_path / "logs"
    shutil.copytree(LM_EVAL, folder)
    shutil.copy(CLUSTERED, folder / "battles.csv")
    with caplog.at_level(logging.WARNING):
        frames = read_source(folder, SourceOptions(runs="newest", id_field="id"))
    assert frames and "battles.csv" in caplog.text and "skipped" in caplog.text


# --- evalbars read ----------------------------------------------------------------------------------


def test_read_previews_battles_models_prompts_ties_and_the_graph(capsys):
    status, out, err = run(["read", CLUSTERED], capsys)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[:3] == [
        "table battles: 600 battles on 150 prompts between 6 models (15 of 15 pairs met); 85 ties (14.2%)",
        "comparison graph: 1 component(s)",
        "clustered by prompt (150 prompts, 600 battles)",
    ]
    assert lines[6].split("|")[1:6] == [" model-a ", "     197 ", "  101 ", "   30 ", "     66 "]
    status, out, _ = run(["read", CLUSTERED, "--cluster-by", "voter"], capsys)
    assert out.splitlines()[2] == "clustered by voter (25 voters, 600 battles)"


def test_read_of_arena_hard_judgments_says_how_strong_verdicts_weigh(capsys):
    status, out, err = run(["read", JUDGMENTS], capsys)
    assert status == 0
    assert out.splitlines()[0].startswith("arena_hard battles: 786 battles on 100 prompts")
    assert "223 strong verdicts (A>>B) weigh 3" in out
    assert err.count("judgment(s) without a verdict dropped") == 4


def test_a_disconnected_graph_is_refused_in_one_line(disconnected, capsys):
    status, out, err = run(["read", disconnected], capsys)
    assert status == 1 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"evalbars read: error: {disconnected}: the models fall into 2 groups")
    assert "({'a', 'b'} and {'c', 'd'})" in err


@pytest.mark.parametrize(
    "argv, option",
    [
        (["read", CLUSTERED, "--runs", "newest"], "--runs"),
        (["read", CLUSTERED, "-o", "x.parquet"], "-o"),
        (["leaderboard", CLUSTERED, "--input-format", "table"], "--input-format"),
        (["leaderboard", LM_EVAL, "--ties", "davidson"], "--ties"),
        (["read", LM_EVAL, "--cluster-by", "voter"], "--cluster-by"),
        (["claims", CLUSTERED, "--claim", "model-a > model-b", "--score", "pass@3"], "--score"),
        (["report", CLUSTERED, "--prices", "prices.csv", "--output", "never"], "--prices"),
        (["report", CLUSTERED, "--storage", "s3://bucket/run", "--output", "never"], "--storage"),
        (
            [
                "claims",
                CLUSTERED,
                "--claim",
                "model-a > model-b",
                "--family",
                "claims_and_all_pairs",
            ],
            "--family",
        ),  # fmt: skip
    ],
)
def test_options_of_the_other_kind_of_data_are_refused_naming_them(argv, option, capsys):
    status, _, err = run(argv, capsys)
    assert status == 1 and err.count("\n") == 1
    assert err.split(": error: ")[1].startswith(f"{option}: applies to")


def test_battles_and_scores_together_are_refused(capsys):
    status, _, err = run(["read", CLUSTERED, LM_EVAL], capsys)
    assert status == 1
    assert f"{LM_EVAL}: holds item-level scores while '{CLUSTERED}' holds pairwise battles" in err


# --- evalbars leaderboard and evalbars claims ----------------------------------------------------------


def test_leaderboard_prints_the_ratings_with_their_headline(capsys):
    status, out, err = run(["leaderboard", CLUSTERED], capsys)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (
        "6 models in 1 tier (clustered reading, max-t over the adjacent gaps); of 15 pairs, 4 "
        "are separated per battle and 3 clustered (Holm). Elo ratings, ties half; clustered by "
        "prompt (150 prompts, 600 battles)."
    )
    assert lines[2].startswith("| position | model   | rating | ci_low | ci_high |")
    assert lines[4].split("|")[2:6] == [" model-a ", "   1051 ", "   1012 ", "    1089 "]


def test_leaderboard_csv_is_the_api_table(capsys):
    status, out, err = run(
        ["leaderboard", JUDGMENTS, "--format", "csv", "--anchor", "baseline-model"], capsys
    )
    assert status == 0 and err.strip().endswith("clustered by prompt (100 prompts, 786 battles).")
    table = pd.read_csv(io.StringIO(out), keep_default_na=False, na_values=[""])
    expected = api.battles_table(api.read_battles(JUDGMENTS), anchor="baseline-model")
    pd.testing.assert_frame_equal(table, expected.reset_index(drop=True), check_dtype=False)
    assert table.loc[table["model"] == "baseline-model", "rating"].item() == 1000.0


def test_claims_on_battles_are_tested_with_elo_margins(capsys):
    argv = ["claims", CLUSTERED, "--claim", "model-a > model-f + 20", "--claim", "best: model-a"]
    status, out, err = run(argv, capsys)
    assert status == 0 and err == ""
    assert out.splitlines()[0] == (
        "1 of 2 claims is supported by the clustered reading after the Holm adjustment for 2 "
        "claims."
    )
    assert "| model-a > model-f + 20 Elo |" in out
    status, out, _ = run([*argv, "--format", "json"], capsys)
    document = json.loads(out)
    expected = api.battle_claims(
        api.read_battles(CLUSTERED), ["model-a > model-f + 20", "best: model-a"]
    )
    assert [row["verdict"] for row in document["rows"]] == expected["verdict"].tolist()
    status, _, err = run(["claims", CLUSTERED, "--claim", "model-a > model-f + 5%"], capsys)
    assert status == 1 and "battles' margins are Elo points, not %" in err


# --- evalbars report and write_report: refused before anything is written -----------------------------


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "the models fall into 2 groups"),
        (["--claim", "a > z"], "the models fall into 2 groups"),
    ],
)
def test_report_on_a_disconnected_graph_writes_nothing(
    disconnected, tmp_path, capsys, extra, message
):
    output = tmp_path / "report"
    status, out, err = run(["report", disconnected, "--output", output, *extra], capsys)
    assert status == 1 and message in err and err.count("\n") == 1
    assert not output.exists()


def test_report_refuses_an_unknown_model_or_anchor_before_writing(tmp_path, capsys):
    output = tmp_path / "report"
    status, _, err = run(["report", CLUSTERED, "--claim", "model-a > gpt-4", "--output", output],
                         capsys)  # fmt: skip
    assert status == 1 and "claim 'model-a > gpt-4': unknown model 'gpt-4'" in err
    status, _, err = run(["report", CLUSTERED, "--anchor", "gpt-4", "--output", output], capsys)
    assert status == 1 and err.startswith(
        "evalbars report: error: --anchor: 'gpt-4' is not a model"
    )
    assert not output.exists()


def test_the_battles_report_config_records_a_battles_run():
    config = api.battles_report_config(
        [CLUSTERED], claims=["model-a > model-b"], ties="rao_kupper", cluster=None, anchor=None
    )
    assert config == {
        "models": [],
        "data": "battles",
        "predictions": [str(CLUSTERED.resolve())],
        "claims": ["model-a > model-b"],
        "battles": {"ties": "rao_kupper"},
        "jobs": "per_stage",
        "run": {"stages": ["battles"], "report": "report.html"},
    }
    with pytest.raises(TypeError, match="unknown battles setting"):
        api.battles_report_config([CLUSTERED], runs="newest")
