"""The errors evalbars raises for problems the user can fix (as opposed to bugs).

Workflow scripts turn any :class:`EvalbarsError` into one line on stderr and exit
status 1 (see :func:`evalbars.workflow.script_context`); the command line does the same.
"""

from __future__ import annotations

__all__ = ["EvalbarsError", "InputError", "ConfigError", "DownloadError", "ChecksumError"]


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
