"""Bad input, round 5 (the tester's round-4 report, /work/wt/tester-report.md): outputs over
inputs, decisions from a zero paired SE, compare's margin and self-comparison, unbounded
draws and splits, and the command line's messages and exit codes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from evalbars.cli import main
from evalbars.data.scores import wide_scores
from evalbars.readings import claims, gate
from evalbars.readings.leaderboard import letters, stability
from evalbars.readings.leaderboard import table as verdicts
from evalbars.readings.leaderboard.stability import MAX_SPLITS
from evalbars.readings.ranks.defaults import MAX_DRAWS

from .conftest import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def digest(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def last_error(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def long_table(path: Path, scores: dict, categories=None) -> Path:
    """A long CSV table: ``scores`` maps a model to its 0/1 list over questions 0, 1, ..."""
    rows = [
        {
            "model": model,
            "question_id": q,
            "category": (categories or {}).get(q, "a"),
            "correct": c,
        }
        for model, column in scores.items()
        for q, c in enumerate(column)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def wide_of(path: Path):
    return wide_scores(pd.read_csv(path).astype({"model": str}))


@pytest.fixture
def two_models(tmp_path) -> Path:
    rng = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0] * 3
    return long_table(tmp_path / "ab.csv", {"A": rng, "B": rng[::-1]})


# --- A1: an output path that is also an input -----------------------------------------------------


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


# --- A2: the release gate never decides from a zero-width interval --------------------------------


def test_the_gate_is_inconclusive_on_one_or_two_questions(tmp_path, capsys):
    one = long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]})
    assert main(["compare", str(one), "--baseline", "C", "--candidate", "A"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("**inconclusive**: the SE is 0 (the same difference on every shared")
    assert "| -100.0 | none (SE 0) |" in out
    two = long_table(tmp_path / "two.csv", {"A": [0, 0], "B": [1, 1]})
    s = gate.compare_models(wide_of(two), "B", "A").summary
    assert (s["verdict"], s["se_kind"], s["p_regression"]) == ("inconclusive", "none", 0.25)
    assert np.isnan(s["low"]) and np.isnan(s["high"])
    # Six questions all pass -> fail: exact McNemar one-sided p = 1/64 < 0.025, a regression.
    six = long_table(tmp_path / "six.csv", {"A": [0] * 6, "B": [1] * 6})
    s = gate.compare_models(wide_of(six), "B", "A").summary
    assert (s["verdict"], s["p_regression"]) == ("regression", 1 / 64)
    # ... but only at margin 0: McNemar says nothing about "worse by more than 1 point".
    s = gate.compare_models(wide_of(six), "B", "A", margin=0.01).summary
    assert (s["verdict"], s["p_regression"]) == ("inconclusive", 1.0)


def test_the_gate_bounds_models_that_agree_everywhere_by_clopper_pearson(tmp_path):
    scores = [1, 0, 1, 1, 0] * 8  # 40 questions, the two models alike on each
    same = wide_of(long_table(tmp_path / "same.csv", {"A": scores, "B": scores}))
    s = gate.compare_models(same, "A", "B", margin=0.05).summary
    bound = 1 - 0.025 ** (1 / 40)  # 0 flips of 40: one-sided 97.5% Clopper-Pearson bound
    assert (s["low"], s["high"], s["se_kind"]) == (-bound, bound, "exact")
    assert round(bound, 6) == 0.088097  # scipy.stats.beta.ppf(0.975, 1, 40)
    assert s["verdict"] == "inconclusive" and s["p_noninferiority"] == 0.95**40
    s = gate.compare_models(same, "A", "B", margin=0.10).summary
    assert s["verdict"] == "non-inferior" and s["p_noninferiority"] == 0.9**40


# --- A3: claims never supported by a zero SE ------------------------------------------------------


def test_claims_are_not_supported_by_a_zero_se(tmp_path):
    one = wide_of(long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]}))
    table = claims.evaluate_claims(one, ["C > A"])
    verdicts = dict(zip(table["reading"], table["verdict"], strict=True))
    assert {r: verdicts[r] for r in ("naive", "paired", "mcnemar", "paired_holm")} == dict.fromkeys(
        ("naive", "paired", "mcnemar", "paired_holm"), "not supported"
    )
    assert table.set_index("reading").loc["paired", "p_adjusted"] == 1.0
    scores = [1, 0, 1, 1, 0] * 8
    same = wide_of(long_table(tmp_path / "same.csv", {"A": scores, "B": scores}))
    table = claims.evaluate_claims(same, ["|A - B| < 1"]).set_index("reading")
    assert table.loc["paired", "verdict"] == "not supported"
    assert table.loc["paired", "p_adjusted"] == 1.0
    # Ten wins of ten: the exact reading still decides (p = 2 * 2^-10).
    ten = wide_of(long_table(tmp_path / "ten.csv", {"A": [1] * 10, "B": [0] * 10}))
    table = claims.evaluate_claims(ten, ["A > B"]).set_index("reading")
    assert table.loc["mcnemar", "verdict"] == "supported"
    assert table.loc["mcnemar", "p_adjusted"] == 2 * 0.5**10
    assert table.loc["paired", "verdict"] == "not supported"


def test_the_leaderboard_does_not_separate_on_one_question(tmp_path):
    one = wide_of(long_table(tmp_path / "one.csv", {"A": [0], "B": [0], "C": [1]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stability.py's cast of NaN ranks warned here
        table = verdicts.leaderboard_table(one, splits=10)
        stable = stability.split_half_stability(one, splits=10)
    assert list(table["letters"]) == ["a", "a", "a"]
    # Every first half of one question is empty: only the 10 second halves rank, and C wins each.
    assert list(stable["first_share"]) == [0.0, 0.0, 1.0]
    assert list(stable["rank_half_high"]) == [2, 2, 1]
    # Two questions, every one won by C: the paired SE is 0, still one letter.
    two = wide_of(long_table(tmp_path / "two.csv", {"A": [0, 0], "C": [1, 1]}))
    assert list(letters.letters_table(two)["letters"]) == ["a", "a"]


# --- A7, A8: compare's margin, and a model compared with itself ----------------------------------


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


# --- B12: bounded draws, replicates and splits ----------------------------------------------------


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


def test_the_schema_bounds_are_the_command_lines(tmp_path):
    schema = yaml.safe_load(SCHEMA.read_text())["properties"]
    assert schema["ranks"]["properties"]["draws"]["maximum"] == MAX_DRAWS
    assert schema["ranks"]["properties"]["replicates"]["maximum"] == MAX_DRAWS
    assert schema["leaderboard"]["properties"]["splits"]["maximum"] == MAX_SPLITS


# --- C23-C26: plan's exit codes and hints, report's doubled error, prefixes, --format md --------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--models", "1", "--gap", "2"], "--models 1: a comparison needs at least 2 models"),
        (
            ["--models", "6", "--gap", "0"],
            "--gap 0: must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            ["--models", "6", "--gap", "nan"],
            "--gap nan: must be above 0 and at most the disagreement rate (25 points)",
        ),
        (
            ["--models", "6", "--gap", "2", "--questions", "9"],
            "--gap, --questions: give exactly one of --gap (points) or --questions",
        ),
    ],
)
def test_plan_refuses_what_it_cannot_plan_for_with_the_argument_error_status(argv, line, capsys):
    assert main(["plan", *argv, "--disagreement", "0.25"]) == 2
    assert last_error(capsys) == f"evalbars plan: error: {line} (see evalbars plan --help)"


def test_plan_hints_name_the_disagreement_and_the_plan_help(capsys):
    for argv, line in (
        (
            ["--disagreement", "1.5"],
            "argument --disagreement: 1.5 is not between 0 and 1 (e.g. 0.25)",
        ),
        (
            ["--disagreement", "0.25", "--simulate", "--seed", "3"],
            "unrecognized arguments: --seed 3",
        ),
    ):
        with pytest.raises(SystemExit) as raised:
            main(["plan", "--models", "6", "--gap", "2", *argv])
        assert raised.value.code == 2
        assert last_error(capsys) == f"evalbars plan: error: {line} (see evalbars plan --help)"


def test_compare_with_three_sources_has_one_prefix(two_models, capsys):
    paths = [str(two_models)] * 3
    assert main(["compare", *paths]) == 2
    assert last_error(capsys) == (
        f"evalbars compare: error: {' '.join(paths)}: 3 sources; give BASELINE CANDIDATE, or one "
        "table with --baseline NAME --candidate NAME"
    )


def test_report_prints_an_input_error_once(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalbars.cli",
            "report",
            str(empty),
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"evalbars report: error: {empty}: the directory holds no prediction file or log "
        "evalbars reads"
    ]


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


# --- C30, D27: thousands separators, and ties at the top ------------------------------------------


def test_plan_prints_large_counts_with_thousands_separators(capsys):
    assert main(["plan", "--models", "100000", "--gap", "2", "--disagreement", "0.25"]) == 0
    assert capsys.readouterr().out.startswith("100,000 models, Holm over 4,999,950,000 tests,")


def test_a_three_way_tie_at_the_top_is_headlined_as_a_tie(tmp_path):
    tie = wide_of(long_table(tmp_path / "tie.csv", {m: [1, 0, 1, 0] for m in "ABC"}))
    table = verdicts.leaderboard_table(tie, splits=5)
    headline = verdicts.leaderboard_headline(table, 5)
    assert "A, B and C tie for first; each is first (alone or tied) on at least 100% of 10" in (
        headline
    )
    assert "A is first" not in headline


def test_a_tie_at_the_top_of_ranks_is_headlined_as_a_tie(tmp_path, capsys):
    board = tmp_path / "tie.csv"
    board.write_text("name,score,se\nA,50,1\nB,50,1\nC,40,1\n")
    assert main(["ranks", str(board), "--format", "json"]) == 0
    headline = json.loads(capsys.readouterr().out)["headline"]
    assert headline.startswith("3 systems, 2 tiers; A and B tie for first (first in ")
    assert "the leader" not in headline
