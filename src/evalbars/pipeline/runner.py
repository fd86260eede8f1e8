"""Running the workflow on a run directory: ``evalbars report``, ``evalbars run`` and
:func:`evalbars.api.write_report` all call :func:`run_workflow`.

A run directory records what it is in its configuration: the stages its default target makes
(``run.stages``, which the Snakefile's ``rule all`` reads) and where its report goes
(``run.report``). Every command evalbars prints to rerun or resume a directory
(:func:`run_command`) is ``evalbars run`` on that configuration, so it makes the same targets
and writes the same report as the run it reproduces.

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

import copy
import errno
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from evalbars.errors import EvalbarsError, InputError
from evalbars.pipeline.location import snakefile, workflow_root
from evalbars.pipeline.smk import refuse_templating, validate_config
from evalbars.pipeline.storage import LOCAL_COPIES, storage_flags

__all__ = [
    "RunLock",
    "RunFailed",
    "RunInterrupted",
    "refuse_templating",
    "run_workflow",
    "recorded_run",
    "snakemake_command",
    "run_snakemake",
    "run_command",
    "rerun_hint",
    "command_line",
    "stale_snakemake_lock",
]

#: The file a run holds locked for as long as it writes in its run directory.
LOCK_NAME = ".evalbars.lock"

#: The last line of a traceback: ``  | botocore.exceptions.NoCredentialsError: Unable to ...``.
EXCEPTION_LINE = re.compile(r"^[|\s]*(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$")

#: Where a run in S3 storage takes its credentials from (evalbars.pipeline.storage).
STORAGE_CREDENTIALS = (
    "a run in S3 storage takes its credentials from the environment: AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
)


class RunFailed(EvalbarsError):
    """The workflow stopped; the message is its one-line reason."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run. ``resume`` is the command that finishes it (None when nothing was
    written: the same command starts it again). A :class:`KeyboardInterrupt`, so that code that
    stops on Ctrl-C stops on it too."""

    def __init__(self, resume: str | None = None):
        super().__init__(resume)
        self.resume = resume

    def __str__(self) -> str:
        return "interrupted" + (f"; resume with: {self.resume}" if self.resume else "")


@dataclass
class RunLock:
    """An exclusive lock of a run directory, taken before anything is written there.

    The lock is :func:`fcntl.flock` on ``<directory>/.evalbars.lock``, which holds the pid, the
    start time and the command of the run that holds it; the operating system releases it
    when that process ends, however it ends, so a killed run never leaves it behind.
    ``created`` says whether this run made the directory: a run refused or stopped before it
    wrote anything there removes it; once it holds the run's record (:meth:`keep`: its
    configuration, Snakemake's logs), it stays, failed or interrupted, so that its logs can be
    read and the printed command can resume it.
    """

    directory: Path
    command: str
    created: bool = False
    kept: bool = False
    _handle: object = None

    def keep(self) -> None:
        """From now on the directory holds the run's record: a failure leaves it in place."""
        self.kept = True

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
        """A run refused before it wrote anything leaves no run directory it made itself."""
        if self.created and not self.kept:
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


def _error_records(directory: Path) -> list[Path]:
    """The errors the jobs recorded beside their logs: in the run directory, or, for a run in
    S3 storage (evalbars.pipeline.storage), beside this machine's copies of the logs."""
    return [
        *(directory / "results" / "logs").rglob("*.error"),
        *(directory / LOCAL_COPIES).glob("s3/**/results/logs/**/*.error"),
    ]


def _failure_line(directory: Path, output: str) -> str:
    """The one-line reason of a failed run: the error a job recorded, else Snakemake's own. A
    job's log it names is given by its full path (the run directory stays, with its logs)."""
    records = sorted(_error_records(directory), key=lambda path: path.stat().st_mtime)
    if records:
        line = records[-1].read_text().strip()
    else:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith(("evalbars:", "ConfigError", "Error"))]
        # else the last exception a traceback names (Snakemake's checks of storage raise
        # exception groups, drawn with | and +--- margins), not a margin
        errors = errors or [
            f"{found[1]}: {found[2]}"
            for found in map(EXCEPTION_LINE.match, lines)
            if found is not None
        ]
        line = (errors or lines or ["the workflow failed"])[-1].removeprefix("evalbars: ")
        if line.startswith("NoCredentialsError"):
            line += f" ({STORAGE_CREDENTIALS})"
    return re.sub(
        r"(the job's log: )(?!/)(\S+)\)",
        lambda match: f"{match[1]}{directory / match[2]})",
        line,
    )


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
    fails.

    Snakemake runs in a process group of its own, so that Ctrl-C reaches this process alone,
    which passes it on to Snakemake and its jobs at once (:func:`_interrupt`) and waits for
    Snakemake to end them and release its lock before :class:`KeyboardInterrupt` goes on.
    """
    for stale in _error_records(directory):
        stale.unlink()  # a previous run's errors are not this run's
    lines = []
    env = dict(os.environ, EVALBARS_HINT_STYLE=hint_style)
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=directory,
        env=env,
        process_group=0,
    ) as run:
        try:
            for line in run.stdout:
                lines.append(line)
                if echo:
                    sys.stdout.write(line)
                    continue
                # Progress, and every warning a job prints (what was dropped or re-scored).
                shown = ("steps (" in line and "done" in line) or line.startswith("evalbars: ")
                if progress is not None and shown:
                    progress(line.strip().removeprefix("evalbars: "))
        except KeyboardInterrupt:
            _interrupt(run)
            raise
    if run.returncode != 0:
        raise RunFailed(_failure_line(directory, "".join(lines)))


def _interrupt(run: subprocess.Popen) -> None:
    """Ctrl-C, passed on to Snakemake and its jobs as a terminal would (SIGINT to their process
    group): Snakemake ends its jobs, marks what they left incomplete and releases its lock. Its
    output is read (and dropped) until it ends; a second Ctrl-C meanwhile ends them outright
    (SIGTERM), which leaves Snakemake's lock behind (the resume command then says --unlock)."""
    for sent in (signal.SIGINT, signal.SIGTERM):
        try:
            os.killpg(run.pid, sent)
        except ProcessLookupError:
            return
        try:
            for _ in run.stdout:
                pass
            run.wait()
            return
        except KeyboardInterrupt:
            continue
        except (OSError, ValueError):  # its output already closed
            run.wait()
            return
    run.wait()


def command_line() -> str:
    """This process's command line, for the run lock (``evalbars report ...``, or Python's)."""
    words = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    return shlex.join(words)


def run_command(
    directory: Path,
    *,
    configfiles: Sequence = (),
    targets: Sequence[str] = (),
    cores="all",
    report: bool = True,
    unlock: bool = False,
    extra: Sequence[str] = (),
) -> str:
    """The ``evalbars run`` command of a run, quoted for a shell: what evalbars prints to
    rerun, edit or resume a run directory. It reads the same configuration, so it makes the
    same targets (``run.stages``, or ``targets``) and writes the same report (``run.report``).

    Examples
    --------
    >>> run_command(Path("/tmp/my report"), configfiles=[Path("/tmp/my report/config.yaml")])
    "evalbars run --directory '/tmp/my report' --configfile '/tmp/my report/config.yaml'"
    >>> run_command(Path("paper"), cores=2, targets=["simulate_all"], extra=["--forceall"])
    'evalbars run --directory paper --cores 2 simulate_all -- --forceall'
    """
    words = ["evalbars", "run", "--directory", str(directory)]
    words += [item for path in configfiles for item in ("--configfile", str(path))]
    words += [] if str(cores) == "all" else ["--cores", str(cores)]
    words += [] if report else ["--no-report"]
    words += ["--unlock"] if unlock else []
    words += [*targets, *(["--", *extra] if extra else [])]
    return shlex.join(words)


def rerun_hint(directory: Path, config: Path, cores="all") -> str:
    """The command that reruns (or, after an edit of the config, updates) a report's run
    directory: ``evalbars run`` on its configuration, which the installed tool provides
    wherever it is (:func:`run_command`)."""
    return run_command(directory, configfiles=[config], cores=cores)


def _merged(base: dict, update: dict) -> dict:
    """``update`` over ``base``, mappings merged key by key (Snakemake's ``update_config``)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merged(base[key], value)
        else:
            base[key] = value
    return base


def recorded_run(directory: Path, configfiles: Sequence = (), config: dict | None = None) -> dict:
    """The ``run`` settings (``stages``, ``report``) of a run in ``directory``: of ``config``,
    or of the configuration Snakemake merges there (the Snakefile's ``config/config.yaml`` of
    the run directory, if it exists, then each of ``configfiles``), with the schema's defaults.

    The configuration is validated as the workflow validates it, so an invalid one is refused
    here in the workflow's own line (:class:`~evalbars.errors.ConfigError`), before anything is
    written; a file that cannot be read as a YAML mapping is left to Snakemake, which names it.
    """
    files = []
    if config is None:
        config = {}
        directive = Path(directory) / "config" / "config.yaml"
        for path in [*([directive] if directive.is_file() else []), *map(Path, configfiles)]:
            try:
                loaded = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
            except (OSError, UnicodeDecodeError, yaml.YAMLError):
                loaded = None
            if not isinstance(loaded, dict):
                config, files = {}, []  # Snakemake says what is wrong with the file
                break
            _merged(config, loaded)
            files.append(path)
    schema = workflow_root() / "workflow" / "schemas" / "config.schema.yaml"
    return validate_config(copy.deepcopy(config), schema, config_files=files)["run"]


def run_workflow(
    directory,
    *,
    configfiles: Sequence = (),
    config: dict | None = None,
    targets: Sequence[str] = (),
    report: bool = True,
    cores: int | str = "all",
    unlock: bool = False,
    extra: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    hint_style: str = "config",
    echo: bool = False,
    unlock_remedy: str = "add --unlock",
) -> Path | None:
    """Run the workflow in a run directory: the one path of ``evalbars report``, ``evalbars
    run`` and :func:`evalbars.api.write_report`.

    1. The configuration: ``config`` (a mapping, written to ``directory/config.yaml`` once the
       directory is locked: what a report does), else ``configfiles`` (by default
       ``directory/config.yaml`` if it exists, else the shipped one), each checked to exist and
       refused if it asks for YTE templating; then validated (:func:`recorded_run`).
    2. The run directory is locked (:class:`RunLock`); a Snakemake lock left there is refused
       unless ``unlock``, which removes it first.
    3. Snakemake makes ``targets``, or the default target (the stages ``run.stages``
       records), and then the report at ``run.report`` (relative to the run directory): none
       with ``report`` False, with ``targets`` (the report is the whole run's) or in a dry run.
       A run that records an S3 bucket (``run.storage``) keeps its data and results there
       (:func:`evalbars.pipeline.storage.storage_flags`); the report stays in the directory.

    Parameters
    ----------
    directory : path-like
        The run directory (created if needed).
    configfiles : sequence of path-like
        Configurations merged in order (Snakemake's ``--configfile``).
    config : dict, optional
        The configuration to write to ``directory/config.yaml`` and run.
    targets : sequence of str
        Rules or files to make instead of the default target.
    report : bool
        Write the report the configuration records.
    cores : int or "all"
        Snakemake's ``--cores``.
    unlock : bool
        First remove a Snakemake lock left in the run directory by a run that was killed.
    extra : sequence of str
        Snakemake's own options, passed on as they are.
    progress : callable, optional
        Called with each progress line and each warning a job prints.
    hint_style : {"config", "cli"}
        How the jobs word a remedy.
    echo : bool
        Snakemake's whole output to stdout instead of ``progress``.
    unlock_remedy : str
        How the refusal of a Snakemake lock words ``unlock``.

    Returns
    -------
    Path or None
        The report, or None when none was written.

    Raises
    ------
    EvalbarsError
        Bad input, or the run failed (:class:`RunFailed`, its one-line reason). A run directory
        this run made is removed if the run is refused before Snakemake starts, and kept once it
        holds the run's configuration and logs.
    RunInterrupted
        Ctrl-C; its ``resume`` is the command that finishes the run.
    """
    directory = Path(directory).resolve()
    given = [Path(path).resolve() for path in configfiles]
    if config is not None:
        files = [directory / "config.yaml"]
        settings = recorded_run(directory, config=config)
    else:
        own = directory / "config.yaml"
        files = given or [own if own.is_file() else workflow_root() / "config" / "config.yaml"]
        for path in files:
            if not path.is_file():
                raise InputError(path, "--configfile: file does not exist")
            refuse_templating(path)
        settings = recorded_run(directory, files)
    # The bucket a run records (run.storage), checked with the rest before anything is written.
    storage = storage_flags(settings)
    snakefile()  # a broken install says so before anything is written
    dry = any(flag in extra for flag in ("-n", "--dry-run", "--dryrun"))
    wanted = report and not targets and not dry and settings["report"] is not None
    report_path = directory / settings["report"] if wanted else None

    def resume(unlock: bool = False) -> str:
        return run_command(
            directory,
            configfiles=files if config is not None else given,
            targets=targets,
            cores=cores,
            report=report,
            unlock=unlock,
            extra=extra,
        )

    with RunLock(directory, command=command_line()) as lock:
        try:
            if stale_snakemake_lock(directory) and not unlock:
                raise InputError(
                    directory,
                    "holds a Snakemake lock (.snakemake/locks) of another snakemake run there, "
                    f"or of one that was killed; if none is running, {unlock_remedy}",
                )
            if config is not None:
                partial = directory / ".config.yaml.partial"
                partial.write_text(yaml.safe_dump(config, sort_keys=False))
                partial.replace(files[0])
            lock.keep()
            if unlock:
                unlocking = snakemake_command(directory, configfiles=files, extra=["--unlock"])
                run_snakemake(unlocking, directory)
            command = snakemake_command(
                directory,
                configfiles=files,
                targets=targets,
                cores=cores,
                report=report_path,
                extra=[*storage, *extra],
            )
            run_snakemake(command, directory, progress=progress, hint_style=hint_style, echo=echo)
        except KeyboardInterrupt:
            if not lock.kept:
                raise RunInterrupted(None) from None
            raise RunInterrupted(resume(unlock=stale_snakemake_lock(directory))) from None
    return report_path
