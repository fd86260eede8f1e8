"""Faults of the machine inside a workflow job (evalbars.errors.script_context): a full disk and a
path that cannot be written are one line naming the folder or the file, with the traceback in the
job's log. The lock a killed run leaves: tests/workflow/test_workflow_inputs.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalbars.errors import script_context

FULL_DISK_JOB = """
import pandas as pd
from evalbars.readings.claims.parsing import ClaimError, parse_claim
from evalbars.errors import ConfigError, InputError, script_context

class Job:
    output = [{table!r}, {table!r}.replace(".csv", ".md")]

snakemake = Job()
with script_context({log!r}):
    pd.DataFrame({{"x": range(100_000)}}).to_csv("/dev/full")
"""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_inside_a_job_is_one_line_naming_the_folder(tmp_path):
    table = tmp_path / "results" / "tables" / "plan.csv"
    log = tmp_path / "job.log"
    script = tmp_path / "job.py"
    script.write_text(FULL_DISK_JOB.format(table=str(table), log=str(log)))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == (
        f"evalbars: {table.parent} (writing this job's outputs): No space left on device (ENOSPC)\n"
    )
    assert "Traceback" in log.read_text() and "a bug" not in log.read_text()


def test_a_path_that_cannot_be_written_is_one_line_naming_it(tmp_path, capsys):
    blocker = tmp_path / "results"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(SystemExit) as stop, script_context(tmp_path / "job.log"):
        (blocker / "plan.csv").write_text("x")
    assert stop.value.code == 1
    assert (
        capsys.readouterr().err == f"evalbars: {blocker / 'plan.csv'}: Not a directory (ENOTDIR)\n"
    )
    assert blocker.read_text() == "a file where a folder should be"
