"""The ``evalbars`` command line: ``evalbars ranks`` formats and options, one-line errors and
exit codes, help, outputs that never overwrite an input, the bounds of its options, its
defaults (:mod:`evalbars.defaults`), and a parser that loads no statistics.

The installed console script: tests/workflow/test_installed_command.py."""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbars import cli, defaults
from evalbars.cli import choices, main
from evalbars.data import items, readers
from evalbars.data.readers import common
from evalbars.defaults import DRAWS
from evalbars.readings import battles as battle_readings
from evalbars.readings import claims, ranks
from evalbars.readings.ranks import board_file
from evalbars.stats import bradley_terry
from evalbars.stats.planning import sample_size

from ...conftest import REPO
from ...helpers import digest, last_error, long_table

DATA = Path(__file__).resolve().parents[2] / "data"
SEED001 = DATA / "calculator_example.csv"
HEADLINE = "8 systems, 3 tiers; the leader (model-a) is first in 64% of plausible worlds"


def run(argv, capsys):
    """Run ``evalbars`` in-process: (exit status, stdout, stderr)."""
    try:
        status = cli.main(argv)
    except SystemExit as exc:  # argparse usage errors and --help
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_markdown_is_the_default_with_the_headline_first(capsys):
    status, out, err = run(["ranks", str(SEED001)], capsys)
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == HEADLINE
    assert lines[2].startswith("|   # | system  | score % |    95% CI |")
    rows = [line for line in lines if line.startswith("|   1 |") or line.startswith("|   5 |")]
    assert rows[0].split("|")[2:5] == [" model-a ", "    84.2 ", " 80.7–87.1 "]
    assert "+6.8 (+1.4 to +12.2)" in rows[1] and "| yes " in rows[1]
    assert "64.1%" in rows[0] and "1–3" in rows[0]


def test_csv_format_is_the_tidy_table_with_the_headline_on_stderr(capsys):
    status, out, err = run(["ranks", str(SEED001), "--format", "csv"], capsys)
    assert status == 0
    assert err.strip() == HEADLINE
    table = pd.read_csv(io.StringIO(out))
    assert list(table.columns) == ranks.RANK_COLUMNS
    expected = ranks.rank_table(ranks.read_leaderboard(SEED001)).table
    pd.testing.assert_frame_equal(
        table[["name", "score", "ci_low", "ci_high", "gap_low", "gap_high", "tier", "p_first"]],
        expected[["name", "score", "ci_low", "ci_high", "gap_low", "gap_high", "tier", "p_first"]],
    )


def test_json_format_carries_settings_headline_and_systems(capsys):
    status, out, err = run(["ranks", str(SEED001), "--format", "json", "--seed", "5"], capsys)
    assert status == 0 and err == ""
    document = json.loads(out)
    assert document["seed"] == 5 and document["draws"] == DRAWS
    assert document["level"] == 0.95 and document["reading"] == "unpaired"
    assert len(document["systems"]) == 8
    last = document["systems"][-1]
    assert last["name"] == "model-h" and last["gap"] is None and last["separated"] is None
    assert document["systems"][4]["separated"] is True
    assert document["headline"].startswith("8 systems, 3 tiers; the leader (model-a) is first in")


def test_seed_draws_and_level_options(capsys):
    _, first, _ = run(
        ["ranks", str(SEED001), "--format", "csv", "--seed", "3", "--draws", "500"], capsys
    )
    _, again, _ = run(
        ["ranks", str(SEED001), "--format", "csv", "--seed", "3", "--draws", "500"], capsys
    )
    _, other, _ = run(
        ["ranks", str(SEED001), "--format", "csv", "--seed", "4", "--draws", "500"], capsys
    )
    assert first == again and first != other
    p_first = pd.read_csv(io.StringIO(first))["p_first"]
    assert ((p_first * 500).round(9) % 1 == 0).all()  # shares of 500 worlds
    seeded = ["--seed", "3", "--draws", "500"]
    _, narrow, _ = run(
        ["ranks", str(SEED001), "--format", "csv", "--level", "0.7", *seeded], capsys
    )
    wide, narrow = pd.read_csv(io.StringIO(first)), pd.read_csv(io.StringIO(narrow))
    assert ((narrow["ci_high"] - narrow["ci_low"]) < (wide["ci_high"] - wide["ci_low"])).all()
    # At 70% model-c over model-d (+3.2 points) is separated too: a fourth tier.
    assert wide["tier"].max() == 3 and narrow["tier"].max() == 4
    assert narrow["separated"].iloc[2] and not wide["separated"].iloc[2]
    assert (narrow["rank_high"] - narrow["rank_low"] <= wide["rank_high"] - wide["rank_low"]).all()


def test_tsv_and_stdin(tmp_path, capsys, monkeypatch):
    tsv = tmp_path / "board.tsv"
    tsv.write_text(SEED001.read_text().replace(",", "\t"))
    _, from_tsv, _ = run(["ranks", str(tsv)], capsys)
    monkeypatch.setattr(sys, "stdin", io.StringIO(SEED001.read_text()))
    _, from_stdin, _ = run(["ranks", "-"], capsys)
    _, from_csv, _ = run(["ranks", str(SEED001)], capsys)
    assert from_tsv == from_csv == from_stdin


BAD_BOARDS = {
    "score_above_100": (
        "name,score,n\na,80,100\nb,104,100\n",
        r"row 2 (b): score 104 is outside [0, 100]",
    ),
    "score_below_0": (
        "name,score,n\na,0.8,100\nb,-0.2,100\n",
        r"row 2 (b): score -0.2 is outside [0, 1]",
    ),
    "n_zero": ("name,score,n\na,0.8,100\nb,0.7,0\n", "row 2 (b): n must be > 0, got 0"),
    "total_negative": (
        "name,correct,total\na,8,10\nb,3,-10\n",
        "row 2 (b): total must be > 0, got -10",
    ),
    "correct_above_total": (
        "name,correct,total\na,8,10\nb,12,10\n",
        "row 2 (b): correct 12 exceeds total 10",
    ),
    "missing_total": (
        "name,correct,total\na,8,10\nb,7,\n",
        "row 2 (b): missing value: correct is given but total is empty",
    ),
    "missing_n_and_se": (
        "name,score,n,se\na,0.8,100,\nb,0.7,,\n",
        "row 2 (b): missing value: score is given but neither n nor se",
    ),
    "empty_row": (
        "name,correct,total\na,8,10\nb,,\n",
        "row 2 (b): missing values: the row has no numbers",
    ),
    "missing_name": ("name,correct,total\na,8,10\n,7,10\n", "row 2: missing name"),
    "duplicate_name": (
        "name,correct,total\na,8,10\nb,7,10\na,6,10\n",
        "row 3 (a): duplicate name, also on row 1",
    ),
    "not_a_number": (
        "name,correct,total\na,8,10\nb,seven,10\n",
        "row 2 (b): correct 'seven' is not a number",
    ),
    "two_forms": (
        "name,correct,total,score,n\na,8,10,0.8,10\n",
        "row 1 (a): fills both correct+total and score+n",
    ),
    "unknown_column": ("name,correct,total,org\na,8,10,x\n", "unknown column(s) 'org'"),
    "no_form": ("name,score\na,0.8\n", "do not make a known combination"),
    "no_name_column": ("correct,total\n8,10\n", "no name column"),
    "ragged": ("name,correct,total\na,8,10\nb,7\n", "row 2 has 2 fields but the header has 3"),
    "header_only": ("name,correct,total\n", "the leaderboard has no rows"),
    "mixed_scales": (
        "name,score,n\na,0.84,500\nb,83,500\nc,0.79,500\nd,80%,500\n",
        "scores mix proportions and percentages: row 1 (a) (0.84), row 3 (c) (0.79) look like "
        "proportions while row 2 (b) gives 83",
    ),
    "empty_file": ("", "the file is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_BOARDS))
def test_bad_input_exits_1_with_one_line_naming_the_row(case, tmp_path, capsys):
    text, reason = BAD_BOARDS[case]
    path = tmp_path / f"{case}.csv"
    path.write_text(text)
    status, out, err = run(["ranks", str(path)], capsys)
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"evalbars ranks: error: {path}: ")
    assert reason in err
    assert "Traceback" not in err


def test_missing_file_exits_1(tmp_path, capsys):
    status, out, err = run(["ranks", str(tmp_path / "nope.csv")], capsys)
    assert status == 1 and out == ""
    assert (
        err
        == f"evalbars ranks: error: {tmp_path / 'nope.csv'}: cannot read file: No such file or directory\n"
    )


@pytest.mark.parametrize(
    "argv,reason",
    [
        (
            ["ranks", "x.csv", "--level", "95"],
            "argument --level: 95 is not between 0 and 1 (e.g. 0.95)",
        ),
        (["ranks", "x.csv", "--level", "high"], "argument --level: 'high' is not a number"),
        (["ranks", "x.csv", "--draws", "0"], "argument --draws: 0 is not a positive whole number"),
        (["ranks", "x.csv", "--seed", "-1"], "argument --seed: -1 is negative"),
        (["ranks", "x.csv", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["ranks"], "the following arguments are required: FILE"),
        ([], "the following arguments are required: COMMAND"),
        (["rank", "x.csv"], "invalid choice: 'rank'"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(argv, reason, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1, err
    assert reason in err


HARNESS = Path(__file__).resolve().parents[2] / "data" / "harness"


def test_read_previews_harness_logs_per_model(capsys, tmp_path):
    output = tmp_path / "items.parquet"
    status, out, err = run(
        [
            "read",
            str(HARNESS / "lm_eval"),
            "--runs",
            "newest",
            "--id-field",
            "id",
            "-o",
            str(output),
        ],
        capsys,
    )
    assert status == 0
    lines = [line for line in out.splitlines() if line.startswith("| evalbars/")]
    assert [line.split("|")[1].strip() for line in lines] == [
        "evalbars/fake-mid",
        "evalbars/fake-strong",
        "evalbars/fake-weak",
    ]
    strong = [cell.strip() for cell in lines[1].split("|")[2:11]]
    # 39 questions in 3 tasks, one run, one sample each (none to disagree), 1 [invalid]
    # generation, accuracy 29/39.
    assert strong == ["39", "3", "1", "1", "39", "—", "1", "0", "0.7436"]
    assert "using 'strict-match' (pass `--filter NAME` to choose)" in err
    items = pd.read_parquet(output)
    assert len(items) == 117 and items["missing_prediction"].sum() == 8


def test_read_states_a_bad_log_in_one_line(capsys):
    status, out, err = run(["read", str(HARNESS / "lm_eval")], capsys)
    assert status == 1 and out == ""
    assert err.count("\n") == 1
    assert "2 runs of model 'evalbars/fake-mid' on task" in err and "--runs newest" in err


@pytest.mark.parametrize(
    ("command", "holds", "example"),
    [
        (
            "read",
            "a long CSV/TSV/Parquet table with columns model, question_id and correct",
            "evalbars read tests/data/harness/lm_eval",
        ),
        (
            "claims",
            "ITEMS are files `evalbars read` reads",
            "evalbars claims data/subsample/items.parquet",
        ),
        (
            "ranks",
            "one system per row: a name column (name, system or model)",
            "evalbars ranks tests/data/calculator_example.csv",
        ),
        (
            "plan",
            "--disagreement is the share of questions on which two models differ",
            "evalbars plan --models 6 --gap 2",
        ),
        (
            "report",
            "Each PATH is a prediction file or a folder of harness logs",
            "evalbars report tests/data/harness/lm_eval",
        ),
    ],
)
def test_help_says_what_a_file_holds_with_an_example(capsys, command, holds, example):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert holds in text and f"example: {example}" in text


def test_claims_help_gives_the_syntax_and_plan_help_the_disagreement(capsys):
    with pytest.raises(SystemExit):
        main(["claims", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for form in (
        '"A > B"',
        '"A >= B - d"',
        '"|A - B| < d"',
        '"best: A"',
        '"top k: A"',
        "in CATEGORY",
    ):
        assert form in text, form
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(n10 + n01) / n" in text and "results/tables/pairwise.csv" in text


def test_every_reading_command_takes_the_same_reader_options(capsys):
    flags = ["--runs", "--id-field", "--category-field", "--metric", "--filter", "--task"]
    flags += ["--scorer", "--allow-partial", "--missing-prediction", "--input-format"]
    for command in ("read", "claims", "report", "leaderboard", "compare"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert all(flag in text for flag in flags), command


def test_claims_reads_the_shipped_lm_eval_folder_with_reader_options(capsys):
    status = main(
        [
            "claims",
            str(DATA / "harness" / "lm_eval"),
            "--runs",
            "newest",
            "--id-field",
            "id",
            "--claim",
            "evalbars/fake-strong > evalbars/fake-weak",
            "--replicates",
            "200",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0 and out.startswith(
        "With 39 questions (fewer than 332) the z readings' intervals are too narrow; "
        "supported: 1 of 1 by the exact McNemar reading, 1 of 1 by the Bayesian reading. "
        "The claim is supported by the paired reading."
    )


def test_read_output_follows_its_suffix_or_is_refused(tmp_path, capsys):
    source = str(DATA / "synthetic_balanced.csv")
    assert main(["read", source, "-o", str(tmp_path / "items.csv")]) == 0
    written = pd.read_csv(tmp_path / "items.csv")
    assert {"model", "question_id", "correct"} <= set(written.columns)
    capsys.readouterr()
    assert main(["read", source, "-o", str(tmp_path / "items.xlsx")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"evalbars read: error: {tmp_path / 'items.xlsx'}: unknown suffix '.xlsx'; use one of "
        "('.parquet', '.pq', '.csv', '.tsv')"
    )
    missing = tmp_path / "no" / "items.parquet"
    assert main(["read", source, "-o", str(missing)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"evalbars read: error: {missing}: folder '{missing.parent}' does not exist; create it first"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.csv"]


LM_EVAL = HARNESS / "lm_eval"


# --- An output path that is also an input, or that cannot be written -----------------------------


@pytest.fixture
def two_models(tmp_path) -> Path:
    rng = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0] * 3
    return long_table(tmp_path / "ab.csv", {"A": rng, "B": rng[::-1]})


def test_compare_refuses_a_flips_file_that_is_its_input(two_models, capsys):
    before = digest(two_models.parent)
    argv = ["compare", str(two_models), "--baseline", "A", "--candidate", "B"]
    assert main([*argv, "--flips", str(two_models)]) == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: {two_models}: --flips is the input {str(two_models)!r}; "
        "write the output elsewhere"
    )
    assert digest(two_models.parent) == before


def test_read_refuses_an_output_that_is_its_input_or_lies_in_an_input_folder(two_models, capsys):
    before = digest(two_models.parent)
    assert main(["read", str(two_models), "-o", str(two_models)]) == 1
    assert last_error(capsys) == (
        f"evalbars read: error: {two_models}: -o is the input {str(two_models)!r}; "
        "write the output elsewhere"
    )
    folder = str(two_models.parent)
    assert main(["read", folder, "-o", str(two_models)]) == 1
    assert last_error(capsys) == (
        f"evalbars read: error: {two_models}: -o lies inside the input {folder!r}; "
        "write the output elsewhere"
    )
    link = two_models.parent.parent / f"{two_models.parent.name}-link.csv"
    link.symlink_to(two_models)
    try:
        assert main(["read", str(two_models), "-o", str(link)]) == 1
        assert "-o is the input" in last_error(capsys)
    finally:
        link.unlink()
    assert digest(two_models.parent) == before


def test_report_refuses_a_run_directory_that_holds_an_input(two_models, capsys):
    before = digest(two_models.parent)
    folder = str(two_models.parent)
    assert main(["report", str(two_models), "--output", folder]) == 1
    assert last_error(capsys) == (
        f"evalbars report: error: {folder}: --output holds the input {str(two_models)!r}; "
        "write the output elsewhere"
    )
    assert digest(two_models.parent) == before


def test_report_into_a_path_that_is_a_file_is_one_line(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["report", str(LM_EVAL), "--runs", "newest", "--output", str(taken)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"evalbars report: error: {taken}: is a file, not a run directory; give another --output"
    )
    assert taken.read_text() == "mine"


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


# --- compare: its margin, a model compared with itself, three sources ----------------------------


@pytest.mark.parametrize("margin", ["nan", "inf", "-inf", "500", "-1", "100.5"])
def test_compare_refuses_a_margin_outside_0_to_100_points(two_models, margin, capsys):
    argv = ["compare", str(two_models), "--baseline", "A", "--candidate", "B"]
    with pytest.raises(SystemExit) as raised:
        main([*argv, f"--margin={margin}"])
    assert raised.value.code == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: argument --margin: {margin} is not between 0 and 100 "
        "accuracy points (e.g. 1 for one point) (see evalbars compare --help)"
    )


def test_compare_refuses_a_model_with_itself_from_two_sources(tmp_path, capsys):
    scores = [1, 0, 1, 1, 0] * 8
    a = long_table(tmp_path / "a.csv", {"A": scores})
    assert main(["compare", str(a), str(a)]) == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: {a}: is the baseline's source too: a model with itself"
    )
    again = long_table(tmp_path / "again.csv", {"A": scores[::-1]})
    assert main(["compare", str(a), str(again)]) == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: {again}: the baseline and the candidate are one model "
        "('A' in both sources); give two models (rename one run's model to compare two runs)"
    )
    assert main(["compare", str(a), str(a), "--margin", "100"]) == 2


def test_compare_with_three_sources_has_one_prefix(two_models, capsys):
    paths = [str(two_models)] * 3
    assert main(["compare", *paths]) == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: {' '.join(paths)}: 3 sources; give BASELINE CANDIDATE, or one "
        "table with --baseline NAME --candidate NAME"
    )


# --- Bounded draws and splits; md and markdown ---------------------------------------------------


def test_draws_and_splits_have_an_upper_bound_that_says_what_more_would_cost(two_models, capsys):
    board = two_models.parent / "board.csv"
    board.write_text("name,correct,total\nA,50,100\nB,60,100\n")
    with pytest.raises(SystemExit) as raised:
        main(["ranks", str(board), "--draws", "100000000000"])
    assert raised.value.code == 2
    assert last_error(capsys) == (
        "evalbars ranks: error: argument --draws: 100,000,000,000 is too many; at most "
        "1,000,000 (100,000,000,000 would take 10,000,000 times as long as the default 10,000, "
        "and 1,000,000 already give a Monte Carlo error under 0.0005) (see evalbars ranks --help)"
    )
    for splits, cost in (("100000000000", "4,470,348"), ("2000000", "89")):
        with pytest.raises(SystemExit) as raised:
            main(["leaderboard", str(two_models), "--splits", splits])
        assert raised.value.code == 2
        assert last_error(capsys) == (
            f"evalbars leaderboard: error: argument --splits: {int(splits):,} is too many; at "
            f"most 10,000 ({int(splits):,} splits would hold {cost} GiB per 1,000 questions) "
            "(see evalbars leaderboard --help)"
        )
    assert main(["leaderboard", str(two_models), "--splits", "10000"]) == 0


def test_md_and_markdown_are_one_format_for_every_table_command(two_models, capsys):
    board = two_models.parent / "board.csv"
    board.write_text("name,correct,total\nA,50,100\nB,60,100\n")
    runs = {
        "ranks": ["ranks", str(board)],
        "leaderboard": ["leaderboard", str(two_models), "--splits", "5"],
        "claims": ["claims", str(two_models), "--claim", "A > B"],
        "compare": ["compare", str(two_models), "--baseline", "A", "--candidate", "B"],
        "plan": ["plan", "--models", "6", "--gap", "2", "--disagreement", "0.25"],
    }
    for name, argv in runs.items():
        shown = []
        for fmt in ("md", "markdown"):
            code = main([*argv, "--format", fmt])
            assert code in (0, 3), name
            shown.append(capsys.readouterr().out)
        assert shown[0] == shown[1] and shown[0], name


def test_ctrl_c_in_any_command_is_one_line_and_exit_130(capsys, monkeypatch):
    # (The run commands add the command that resumes the run: tests/unit/pipeline/test_runner.py.)
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    parser = cli.build_parser()
    ranks_parser = parser._subparsers._group_actions[0].choices["ranks"]
    ranks_parser.set_defaults(run=interrupted)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    status, out, err = run(["ranks", str(SEED001)], capsys)
    assert (status, out, err) == (130, "", "evalbars ranks: interrupted\n")


@pytest.mark.parametrize("command", ["read", "claims", "leaderboard"])
def test_a_labels_file_that_does_not_exist_is_one_line(command, tmp_path, capsys):
    judged = DATA / "judged" / "judged_scores.csv"
    argv = [command, str(judged), "--labels", str(tmp_path / "labels.csv")]
    argv += ["--claim", "model-a > model-b"] if command == "claims" else []
    status, out, err = run(argv, capsys)
    assert (status, out) == (1, "")
    assert err == f"evalbars {command}: error: {tmp_path / 'labels.csv'}: file does not exist\n"


# --- The parser side: evalbars.defaults, and no statistics loaded ------------------------------


def test_the_parsers_defaults_are_evalbars_defaults():
    # a default changed in evalbars.defaults changes every command that takes the option
    expected = {
        "alpha": defaults.ALPHA,
        "power": defaults.POWER,
        "level": defaults.LEVEL,
        "seed": defaults.SEED,
        "draws": defaults.DRAWS,
        "replicates": defaults.DRAWS,
        "splits": defaults.SPLITS,
    }
    subparsers = cli.build_parser()._subparsers._group_actions[0].choices
    given = {
        (name, action.dest): action.default
        for name, subparser in subparsers.items()
        for action in subparser._actions
        if action.dest in expected and not action.required  # labels' --seed has no default
    }
    assert given == {key: expected[key[1]] for key in given}
    assert {key for key in given if key[1] in ("alpha", "power")} == {
        (name, option)
        for name in ("claims", "plan", "leaderboard", "compare")
        for option in ("alpha", "power")
    }
    assert {("ranks", "seed"), ("ranks", "draws"), ("claims", "replicates")} <= set(given)
    assert {("leaderboard", "splits"), ("leaderboard", "level"), ("ranks", "level")} <= set(given)


def test_the_parsers_choices_are_their_owners():
    # copies (evalbars.cli.choices), so that the parser imports none of these modules
    assert choices.FORMATS == readers.FORMATS
    assert choices.MISSING_POLICIES == items.MISSING_POLICIES
    assert choices.FAMILIES == claims.FAMILIES
    assert choices.ADJUSTMENTS == claims.ADJUSTMENTS
    assert choices.PROCEDURES == sample_size.PROCEDURES
    assert choices.TESTS == sample_size.TESTS
    assert choices.SE_UNITS == board_file.SE_UNITS
    assert choices.TIE_MODELS == bradley_terry.TIE_MODELS
    assert choices.CLUSTERINGS == battle_readings.CLUSTERINGS
    assert choices.RUN_POLICIES == common.RUN_POLICIES
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert choices.SCORE_SPELLING == schema["properties"]["score"]["pattern"]
    assert set(choices.__all__) == {name for name in vars(choices) if name.isupper()}


@pytest.mark.parametrize("command", cli.COMMANDS, ids=lambda command: command.name)
def test_every_command_runs_a_function_of_the_running_side(command):
    module, function = command.run.split(":")
    assert module.startswith("evalbars.cli.") and function == f"run_{command.name}"
    assert callable(getattr(importlib.import_module(module), function))


#: What the parser side must not load: `evalbars --help` took 2.5 s when it loaded them.
STATISTICS = ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "pyarrow", "snakemake")


def test_help_and_bad_command_lines_load_no_statistics():
    # A fresh interpreter (this one has loaded everything): every --help, a missing argument, an
    # unknown command and an option refused by its check, then what they loaded.
    argvs = [
        ["--help"],
        ["--version"],
        *[[command.name, "--help"] for command in cli.COMMANDS],
        ["ranks"],
        ["nope"],
        ["ranks", "board.csv", "--draws", "10"],
        ["claims", "items.csv", "--alpha", "2"],
    ]
    probe = (
        "import sys\nfrom evalbars.cli import main\n"
        f"for argv in {argvs!r}:\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "loaded = sorted({name.partition('.')[0] for name in sys.modules})\n"
        "print('loaded:', *loaded, file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "usage: evalbars ranks" in result.stdout and "--draws" in result.stdout
    assert "evalbars ranks: error: argument --draws: 10 is too few" in result.stderr
    loaded = result.stderr.splitlines()[-1].split()
    assert loaded[0] == "loaded:" and "argparse" in loaded and "evalbars" in loaded
    assert [name for name in STATISTICS if name in loaded] == []
