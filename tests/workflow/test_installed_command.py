"""The console script declared in pyproject.toml (`evalbars`), run as a user runs it: a process of
its own, from the environment's bin folder. In-process runs of the command line:
tests/unit/cli/test_cli.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..unit.cli.test_cli import HEADLINE, SEED001

pytestmark = pytest.mark.workflow


def test_installed_entry_point_runs(tmp_path):
    # The console script declared in pyproject.toml, as a user runs it.
    script = Path(sys.executable).parent / "evalbars"
    assert script.exists(), f"{script} missing: is the package installed (uv sync)?"
    done = subprocess.run(
        [str(script), "ranks", str(SEED001)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == HEADLINE
    bad = tmp_path / "bad.csv"
    bad.write_text("name,correct,total\na,12,10\n")
    done = subprocess.run(
        [str(script), "ranks", str(bad)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert done.stderr == f"evalbars ranks: error: {bad}: row 1 (a): correct 12 exceeds total 10\n"
