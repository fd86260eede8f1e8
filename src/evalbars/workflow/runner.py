"""Running the workflow on a run directory: ``evalbars report``, ``evalbars run`` and
:func:`evalbars.api.write_report`.

Snakemake runs as a subprocess of this interpreter on the packaged Snakefile
(``sys.executable -m snakemake --snakefile <evalbars>/_workflow/Snakefile --directory RUN``,
as snakePipes and the NBIS workflow template do), so an installed evalbars works from any
directory. Before anything is written the run directory is locked (:class:`RunLock`): a second
run into the same directory is refused in one line naming the one that holds it, instead of
two runs overwriting each other's configuration and outputs. Every configuration given to
Snakemake is refused first if it asks for YTE templating (:func:`refuse_templating`): a config
is data, and Snakemake would evaluate its expressions even in a dry run.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from evalbars.errors import EvalbarsError, InputError
from evalbars.workflow.location import snakefile
from evalbars.workflow.smk import refuse_templating

__all__ = [
    "RunLock",
    "RunFailed",
    "refuse_templating",
    "snakemake_command",
    "run_snakemake",
    "rerun_hint",
    "command_line",
    "stale_snakemake_lock",
]

#: The file a run holds locked for as long as it writes in its run directory.
LOCK_NAME = ".evalbars.lock"


class RunFailed(EvalbarsError):
    """The workflow stopped; the message is its one-line reason."""


@dataclass
class RunLock:
    """An exclusive lock of a run directory, taken before anything is written there.

    The lock is :func:`fcntl.flock` on ``<directory>/.evalbars.lock``, which holds the pid, the
    start time and the command of the run that holds it; the operating system releases it
    when that process ends, however it ends, so a killed run never leaves it behind.
    ``created`` says whether this run made the directory (a failed run then removes it).
    """

    directory: Path
    command: str
    created: bool = False
    _handle: object = None

    def __enter__(self) -> RunLock:
        try:
            self.directory.mkdir(parents=True)
            self.created = True
        except FileExistsError:
            if not self.directory.is_dir():
                raise InputError(self.directory, "is a file, not a run directory") from None
        except OSError as exc:
            raise InputError(
                self.directory, f"cannot make the run directory: {_reason(exc)}"
            ) from None
        path = self.directory / LOCK_NAME
        try:
            self._handle = open(path, "a+")  # held open for the run
        except OSError as exc:
            self._remove_created()
            raise InputError(
                self.directory, f"cannot write in the run directory: {_reason(exc)}"
            ) from None
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            self._handle.seek(0)
            holder = _holder_text(self._handle.read())
            self._handle.close()
            raise InputError(
                self.directory,
                f"another evalbars run is writing in this directory ({holder}); wait for it to "
                "finish, or give this run another directory",
            ) from None
        self._handle.seek(0)
        self._handle.truncate()
        record = {"pid": os.getpid(), "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        self._handle.write(json.dumps(record | {"command": self.command}) + "\n")
        self._handle.flush()
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
        if kind is not None:
            self._remove_created()

    def _remove_created(self) -> None:
        """A refused or failed run leaves no run directory it made itself."""
        if self.created:
            shutil.rmtree(self.directory, ignore_errors=True)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _holder_text(text: str) -> str:
    """``pid 123, started 2026-12-02 10:12:03: evalbars report ...`` from a lock file."""
    try:
        record = json.loads(text.splitlines()[0])
        return f"pid {record['pid']}, started {record['started']}: {record['command']}"
    except (IndexError, ValueError, KeyError, TypeError):
        return "its details were not recorded"


def stale_snakemake_lock(directory: Path) -> bool:
    """Whether Snakemake's own lock of ``directory`` is held (``.snakemake/locks``): with the
    run lock taken, by a plain ``snakemake`` there or by a run that was killed."""
    locks = directory / ".snakemake" / "locks"
    return locks.is_dir() and any(locks.iterdir())


def snakemake_command(
    directory: Path,
    *,
    configfiles: Sequence = (),
    targets: Sequence[str] = (),
    cores="all",
    report: Path | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The Snakemake command line of a run: this interpreter's Snakemake on the packaged
    Snakefile, in ``directory``."""
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(snakefile()),
        "--directory",
        str(directory),
        *(item for path in configfiles for item in ("--configfile", str(path))),
        "--cores",
        str(cores),
        *targets,
        *extra,
    ]
    if report is not None:
        command += ["--report", str(report), "--report-after-run"]
    return command


def _failure_line(directory: Path, output: str) -> str:
    """The one-line reason of a failed run: the error a job recorded, else Snakemake's own."""
    records = sorted(
        (directory / "results" / "logs").rglob("*.error"), key=lambda path: path.stat().st_mtime
    )
    if records:
        return records[-1].read_text().strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("evalbars:", "ConfigError", "Error"))]
    line = (errors or lines or ["the workflow failed"])[-1]
    return line.removeprefix("evalbars: ")


def run_snakemake(
    command: list[str],
    directory: Path,
    *,
    progress: Callable[[str], None] | None = None,
    hint_style: str = "config",
    echo: bool = False,
) -> None:
    """Run ``command`` (:func:`snakemake_command`) in ``directory``, passing each progress
    line and each warning a job prints to ``progress``; with ``echo``, Snakemake's whole output
    goes to stdout instead (what a user who passes Snakemake's own options, ``--dry-run``,
    ``--summary``, asked for). Raises :class:`RunFailed` with the one-line reason when the run
    fails."""
    for stale in (directory / "results" / "logs").rglob("*.error"):
        stale.unlink()  # a previous run's errors are not this run's
    lines = []
    env = dict(os.environ, EVALBARS_HINT_STYLE=hint_style)
    with subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=directory,
        env=env,
    ) as run:
        for line in run.stdout:
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                continue
            # Progress, and every warning a job prints (what was dropped or re-scored).
            shown = ("steps (" in line and "done" in line) or line.startswith("evalbars: ")
            if progress is not None and shown:
                progress(line.strip().removeprefix("evalbars: "))
    if run.returncode != 0:
        raise RunFailed(_failure_line(directory, "".join(lines)))


def command_line() -> str:
    """This process's command line, for the run lock (``evalbars report ...``, or Python's)."""
    words = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    return shlex.join(words)


def rerun_hint(directory: Path, config: Path) -> str:
    """The command that reruns (or, after an edit of the config, updates) a run, quoted for a
    shell: ``evalbars run``, which the installed tool provides wherever it is."""
    return f"evalbars run --directory {shlex.quote(str(directory))} --configfile " + shlex.quote(
        str(config)
    )
