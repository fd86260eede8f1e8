"""One run per run directory, configs read as data: refused in one line before anything is
written (evalbars.pipeline.runner.RunLock, evalbars.pipeline.smk.refuse_templating); what a run
directory records (its stages and its report), the commands that rerun it, a failed run's
message, and Ctrl-C.

Hermetic: each refusal comes before Snakemake would start, and where a run must start, a small
Python stand-in takes Snakemake's place.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from evalbars import api
from evalbars.cli import main
from evalbars.errors import InputError
from evalbars.pipeline import runner

from ...conftest import DATA, REPO
from ...helpers import digest

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
    # a run that made the directory and fails before it wrote its record there removes it
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


# --- What a run directory records, and the commands that rerun it ------------------------------


def test_a_report_records_its_stages_and_report_and_the_shipped_config_every_stage(tmp_path):
    shipped = runner.recorded_run(tmp_path, [REPO / "config" / "config.yaml"])
    assert shipped == {
        "stages": ["data", "analysis", "replication", "ranks", "simulations", "claims"]
        + ["repeats", "leaderboard"],
        "report": "results/report.html",
    }
    # a config that leaves the key out takes the same (the schema's defaults)
    assert runner.recorded_run(tmp_path, config={"models": []}) == shipped
    report = api.report_config([LM_EVAL])["run"]
    assert report == {
        "stages": ["data", "analysis", "ranks", "claims", "repeats", "leaderboard"],
        "report": "report.html",
    }
    with_simulations = api.report_config([LM_EVAL], simulations=True)["run"]
    assert with_simulations["stages"] == [*report["stages"], "simulations"]
    # A --configfile merges over the run directory's own config/config.yaml, as in Snakemake.
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("run:\n  stages: [data]\n")
    over = tmp_path / "over.yaml"
    over.write_text("run:\n  report: mine.html\n")
    assert runner.recorded_run(tmp_path, [over]) == {"stages": ["data"], "report": "mine.html"}


def test_a_bad_run_key_is_refused_before_anything_is_written(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("run:\n  stages: [data, simulation]\n")
    directory = tmp_path / "run"
    assert main(["run", "--directory", str(directory), "--configfile", str(config)]) == 1
    assert capsys.readouterr().err.strip() == (
        'evalbars run: error: config key `run.stages[1]`: "simulation" is not allowed; allowed: '
        "one of 'data', 'analysis', 'replication', 'ranks', 'simulations', 'claims', "
        "'repeats', 'leaderboard', 'battles'"
    )
    assert not directory.exists()


def test_the_rerun_command_reads_the_run_directorys_config_and_its_options():
    directory = Path("/tmp/my report")
    assert runner.rerun_hint(directory, directory / "config.yaml") == (
        "evalbars run --directory '/tmp/my report' --configfile '/tmp/my report/config.yaml'"
    )
    assert runner.rerun_hint(directory, directory / "config.yaml", cores=2).endswith(" --cores 2")
    assert runner.run_command(
        Path("paper"), targets=["simulate_all"], report=False, unlock=True, extra=["-n"]
    ) == ("evalbars run --directory paper --no-report --unlock simulate_all -- -n")


#: A stand-in for Snakemake (the default tier starts none): a job that fails with a bug, as
#: evalbars.errors.script_context records it, its log relative to the run directory.
FAILING_JOB = """\
import pathlib, sys
log = pathlib.Path("results/logs/claims_table/claims_table.log")
log.parent.mkdir(parents=True)
log.write_text("Traceback (most recent call last): ...\\nValueError: boom\\n")
log.with_name(log.name + ".error").write_text(
    f"unexpected error (a bug; please report it): ValueError('boom') (the job's log: {log})\\n"
)
sys.exit(1)
"""


def test_a_failed_first_report_keeps_the_log_its_message_names(tmp_path, capsys, monkeypatch):
    # The run directory is new: once the workflow has started in it, a failure keeps it, with
    # the configuration that resumes the run and the logs its one-line reason points at.
    monkeypatch.setattr(
        runner, "snakemake_command", lambda *a, **k: [sys.executable, "-c", FAILING_JOB]
    )
    directory = tmp_path / "new-report"
    argv = ["report", str(LM_EVAL), "--runs", "newest", "--id-field", "id"]
    assert main([*argv, "--output", str(directory)]) == 1
    log = directory / "results" / "logs" / "claims_table" / "claims_table.log"
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "evalbars report: error: unexpected error (a bug; please report it): "
        f"ValueError('boom') (the job's log: {log})"
    )
    assert "ValueError: boom" in log.read_text()
    assert (directory / "config.yaml").is_file()
    with runner.RunLock(directory, command="next") as lock:  # released
        assert not lock.created


#: A stand-in for Snakemake that reports progress, then waits for Ctrl-C and says it got it.
WAITING_RUN = """\
import pathlib, signal, sys, time
def stop(*_):
    pathlib.Path("got-sigint").write_text("yes")
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
print("1 of 9 steps (11%) done", flush=True)
pathlib.Path("started").write_text("")
time.sleep(120)
"""

#: `evalbars run` in a child process, with the stand-in for Snakemake.
RUN_WITH_STAND_IN = """\
import sys
from evalbars.cli import main
from evalbars.pipeline import runner
runner.snakemake_command = lambda *a, **k: [sys.executable, "-c", {job!r}]
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_is_one_line_with_the_command_that_resumes(tmp_path):
    directory = tmp_path / "paper"
    command = [sys.executable, "-c", RUN_WITH_STAND_IN.format(job=WAITING_RUN)]
    process = subprocess.Popen(
        [*command, "run", "--directory", str(directory), "--cores", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal's shell starts it (a suite started with `&` would pass SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (directory / "started").exists():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # to evalbars alone: it passes Ctrl-C on
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and out == ""
    assert err.splitlines() == [
        "evalbars run: 1 of 9 steps (11%) done",
        f"evalbars run: interrupted; resume with: evalbars run --directory {directory} --cores 2",
    ]
    assert (directory / "got-sigint").read_text() == "yes"  # the run was stopped, not left
    with runner.RunLock(directory, command="next") as lock:  # released, and the run kept
        assert not lock.created
