"""The errors evalbars raises for problems the user can fix (as opposed to bugs), and how
a workflow job reports them.

Workflow scripts run their body in :func:`script_context`, which turns any
:class:`EvalbarsError` into one line on stderr and exit status 1; the command
line does the same.
"""

from __future__ import annotations

import errno
import logging
import re
import sys
import unicodedata
from contextlib import contextmanager
from pathlib import Path

import numpy as np

__all__ = [
    "EvalbarsError",
    "InputError",
    "ConfigError",
    "DownloadError",
    "ChecksumError",
    "control_character",
    "plain",
    "machine_fault",
    "error_record_path",
    "script_context",
]


class EvalbarsError(Exception):
    """Base class of user-fixable problems."""


class InputError(EvalbarsError, ValueError):
    """Bad input. The message names the file, the record (if any) and the problem."""

    def __init__(self, file, problem: str, record=None):
        self.file = str(file)
        self.record = record
        self.problem = problem
        where = f"{self.file}" + (f", record {record}" if record is not None else "")
        super().__init__(f"{where}: {problem}")


class ConfigError(EvalbarsError, ValueError):
    """The configuration asks for something that cannot work; the message names the key."""


class DownloadError(EvalbarsError, RuntimeError):
    """A file could not be fetched from its source."""


class ChecksumError(DownloadError):
    """A fetched file does not match its pinned checksum."""


#: Control characters (C0, DEL and C1): a NUL or a line break in a name breaks every table.
#: So do the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
#: U+2066-U+2069), which print as nothing and reorder the text around them.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def control_character(what: str, name: str) -> str | None:
    r"""The problem with a name holding a control character (a NUL byte, a tab, a line break),
    else None: it would end a C string, split a CSV row or a Markdown table, and print as
    nothing.

    Examples
    --------
    >>> control_character("model name", "fake\x00strong")
    "model name 'fake\\x00strong' holds the control character U+0000 (at character 5); names must be printable text"
    >>> control_character("model name", "fake\u202egnorts")
    "model name 'fake\\u202egnorts' holds the control character U+202E (right-to-left override, at character 5); names must be printable text"
    >>> control_character("model name", "fake-strong") is None
    True
    """
    found = CONTROL_CHARACTERS.search(name)
    if found is None:
        return None
    code = ord(found.group())
    # A bidirectional control is named: it reorders how the text around it prints.
    kind = f"{unicodedata.name(found.group()).lower()}, " if code > 0x9F else ""
    return (
        f"{what} {name!r} holds the control character U+{code:04X} ({kind}at character "
        f"{found.start() + 1}); names must be printable text"
    )


def plain(value):
    """A numpy scalar as the Python value it holds, so messages read ``1``, not ``np.int64(1)``."""
    return value.item() if isinstance(value, np.generic) else value


def machine_fault(exc: BaseException, outputs=()) -> str:
    """One line for a fault of the machine: the path, what went wrong, and the errno's name.

    The path is the exception's own (``open`` and ``os`` calls name it); a failed
    ``write`` names none, so the line names the folder(s) of the job's ``outputs``.

    Examples
    --------
    >>> import errno
    >>> machine_fault(OSError(errno.ENOSPC, "No space left on device"), ["results/tables/a.csv"])
    "results/tables (writing this job's outputs): No space left on device (ENOSPC)"
    >>> machine_fault(PermissionError(errno.EACCES, "Permission denied", "results/x.csv"))
    'results/x.csv: Permission denied (EACCES)'
    >>> machine_fault(MemoryError())
    'out of memory: give the job more memory or analyse fewer models or questions'
    """
    if isinstance(exc, MemoryError):
        return "out of memory: give the job more memory or analyse fewer models or questions"
    if exc.filename is not None:
        where = str(exc.filename)
        if exc.filename2 is not None:
            where += f" -> {exc.filename2}"
    else:
        folders = sorted({str(Path(path).parent) for path in outputs})
        where = (
            f"{', '.join(folders)} (writing this job's outputs)" if folders else "this job's files"
        )
    problem = exc.strerror or str(exc) or type(exc).__name__
    name = errno.errorcode.get(exc.errno) if isinstance(exc.errno, int) else None
    return f"{where}: {problem}" + (f" ({name})" if name else "")


def _job_outputs() -> list[str]:
    """The output files of the Snakemake job running this script (none outside a job)."""
    job = getattr(sys.modules.get("__main__"), "snakemake", None)
    try:
        return [str(path) for path in job.output]
    except (AttributeError, TypeError):
        return []


def error_record_path(log_path) -> Path:
    """Where a job records its one-line error, beside its log: ``<log>.error``. The runner of
    ``evalbars report`` reads it (:func:`evalbars.pipeline.runner.run_snakemake`)."""
    log_path = Path(log_path)
    return log_path.with_name(log_path.name + ".error")


def _record_error(log_path, line: str) -> None:
    """Write a job's one-line error beside its log, if the disk allows (a full disk may not)."""
    try:
        error_record_path(log_path).write_text(line + "\n")
    except OSError:
        pass


@contextmanager
def script_context(log_path):
    """Run a workflow script's body with logging to ``log_path``.

    A problem the user can fix (:class:`EvalbarsError`: bad input, a failed
    download, an impossible configuration) becomes one clear line on stderr and
    in the log, and exit status 1, instead of a traceback; Snakemake then removes
    the job's outputs. A fault of the machine (:class:`OSError`, :class:`MemoryError`:
    a full disk, a path that cannot be written) is one line too, naming the path
    (:func:`machine_fault`), with the traceback in the log only. Any other exception
    is a bug: its traceback goes to the log as well as to stderr. Warnings (log records of level WARNING) are printed on
    stderr too, as ``evalbars: <message>``.
    """
    # A log that cannot be written (a full disk) must not bury the one-line reason under
    # logging's own tracebacks: the reason still goes to stderr.
    logging.raiseExceptions = False
    logging.basicConfig(
        filename=str(log_path),
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    # Warnings (anything that drops or re-scores data) also reach the console, where the user
    # watching the run sees them, not only the log file.
    console = logging.StreamHandler(sys.stderr)
    console.addFilter(lambda record: record.levelno == logging.WARNING)
    console.setFormatter(logging.Formatter("evalbars: %(message)s"))
    logging.getLogger().addHandler(console)
    logging.captureWarnings(True)
    try:
        yield
    except EvalbarsError as exc:
        logging.getLogger("evalbars").error("%s", exc)
        print(f"evalbars: {exc}", file=sys.stderr)
        _record_error(log_path, str(exc))
        sys.exit(1)
    except (OSError, MemoryError) as exc:
        # A fault of the machine (full disk, unwritable or vanished path, no memory): not a bug.
        line = machine_fault(exc, _job_outputs())
        logging.getLogger("evalbars").error("%s", line, exc_info=True)
        print(f"evalbars: {line}", file=sys.stderr)
        _record_error(log_path, line)
        sys.exit(1)
    except Exception as exc:
        logging.getLogger("evalbars").exception("unexpected error (a bug; please report it)")
        _record_error(
            log_path,
            f"unexpected error (a bug; please report it): {exc!r} (the job's log: {log_path})",
        )
        raise
