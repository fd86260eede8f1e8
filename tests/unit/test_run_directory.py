"""One run per run directory, configs read as data: refused in one line before anything is
written (evalbars.workflow.runner.RunLock, evalbars.workflow.smk.refuse_templating).

Hermetic: each refusal comes before Snakemake would start.
"""

from __future__ import annotations

import os

import pytest
import yaml

from evalbars.cli import main
from evalbars.errors import InputError
from evalbars.workflow import runner

from ..conftest import DATA
from ..helpers import digest

LM_EVAL = DATA / "harness" / "lm_eval"
CLAIM = "evalbars/fake-strong > evalbars/fake-weak"


def test_a_second_report_into_a_running_directory_is_refused_naming_the_first(tmp_path, capsys):
    directory = tmp_path / "shared-report"
    first = f"evalbars report {LM_EVAL} --claim 'A > B' --output {directory}"
    with runner.RunLock(directory, command=first):
        written = (directory / runner.LOCK_NAME).read_text()
        status = main(
            ["report", str(LM_EVAL), "--runs", "newest", "--claim", CLAIM]
            + ["--output", str(directory)]
        )
        error = capsys.readouterr().err.strip()
        started = yaml.safe_load(written)["started"]
        assert status != 0 and error == (
            f"evalbars report: error: {directory}: another evalbars run is writing in this "
            f"directory (pid {os.getpid()}, started {started}: {first}); wait for it to finish, "
            "or give this run another directory"
        )
        # The running one's files are its own: no config.yaml written under it, its lock kept.
        assert sorted(p.name for p in directory.iterdir()) == [runner.LOCK_NAME]
        assert (directory / runner.LOCK_NAME).read_text() == written
    # Released with the run: the directory takes the next one.
    with runner.RunLock(directory, command="next"):
        pass


def test_the_lock_is_released_when_its_run_ends_however_it_ends(tmp_path):
    directory = tmp_path / "run"
    with pytest.raises(RuntimeError), runner.RunLock(directory, command="first"):
        raise RuntimeError("the run failed")
    # a failed run that made the directory removes it (nothing partial left)
    assert not directory.exists()
    with runner.RunLock(directory, command="second") as lock:
        assert lock.created
        with pytest.raises(InputError, match="another evalbars run is writing"):
            runner.RunLock(directory, command="third").__enter__()


def test_the_remedies_printed_for_a_stale_lock_are_flags_that_exist(capsys):
    for command in ("report", "run"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--unlock" in capsys.readouterr().out


YTE = """\
__use_yte__: true
models: []
claims:
  - ?__import__('pathlib').Path('{marker}').write_text('ran')
"""


def test_a_config_asking_for_yte_templating_is_refused_and_nothing_runs(tmp_path, capsys):
    marker = tmp_path / "code-ran"
    config = tmp_path / "shared.yaml"
    config.write_text(YTE.format(marker=marker))
    before = digest(tmp_path)
    directory = tmp_path / "run"
    status = main(["run", "--configfile", str(config), "--directory", str(directory)])
    assert status != 0 and capsys.readouterr().err.strip() == (
        f"evalbars run: error: {config}: `__use_yte__` asks Snakemake to evaluate the file as a "
        "YTE template (Python expressions run as it is read); evalbars reads configurations as "
        "data: remove the key"
    )
    assert not marker.exists() and not directory.exists() and digest(tmp_path) == before
