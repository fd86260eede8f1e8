"""Bad input, round 5 (the tester's round-4 report, /work/wt/tester-report.md): outputs over
inputs, decisions from a zero paired SE, compare's margin and self-comparison, unbounded
draws and splits, and the command line's messages and exit codes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from evalbars.cli import main


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
