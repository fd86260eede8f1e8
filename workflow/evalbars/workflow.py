"""Pure functions of the workflow configuration (called from ``workflow/rules/common.smk``).

Kept in the package so they are unit-tested like the statistics.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from .fetch import DownloadError, pinned_checksums
from .io import InputError, archive_name

__all__ = ["ConfigError", "archives", "archive_checksum", "prediction_sources", "script_context"]


class ConfigError(ValueError):
    """The configuration asks for something that cannot work."""


def archives(config: dict) -> dict:
    """``{archive file name: model}`` for the configured MMLU-Pro models.

    Raises :class:`ConfigError` for a model whose archive has no pinned checksum.
    """
    known = pinned_checksums(config.get("checksums"))
    selected = {archive_name(model): model for model in config.get("models", [])}
    unknown = [f"{model} ({name})" for name, model in selected.items() if name not in known]
    if unknown:
        available = sorted(n.removeprefix("model_outputs_").removesuffix("_5shots.zip") for n in known)
        raise ConfigError(
            f"no pinned checksum for {', '.join(unknown)}. Models with pinned checksums: "
            f"{', '.join(available)}. For another upstream archive, add its sha256 under "
            "`checksums:` in config/config.yaml after checking the file yourself."
        )
    return selected


def archive_checksum(config: dict, name: str) -> str:
    """Pinned sha256 of archive ``name``."""
    return pinned_checksums(config.get("checksums"))[name]


def prediction_sources(config: dict) -> list[dict]:
    """The user's prediction files as ``[{"path": str, "model": str | None}]``.

    Raises :class:`ConfigError` when neither ``models`` nor ``predictions`` is given.
    """
    sources = [
        {"path": str(entry), "model": None} if isinstance(entry, (str, Path)) else
        {"path": str(entry["path"]), "model": entry.get("model")}
        for entry in config.get("predictions", [])
    ]
    if not sources and not config.get("models"):
        raise ConfigError("nothing to analyse: set `models:` and/or `predictions:` in the config")
    return sources


@contextmanager
def script_context(log_path):
    """Run a workflow script's body with logging to ``log_path``.

    Bad input (:class:`~evalbars.io.InputError`, :class:`~evalbars.fetch.DownloadError`,
    :class:`ConfigError`) becomes one clear line on stderr and in the log, and exit
    status 1, instead of a traceback; Snakemake then removes the job's outputs.
    Any other exception is a bug and propagates with its traceback.
    """
    logging.basicConfig(
        filename=str(log_path),
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    logging.captureWarnings(True)
    try:
        yield
    except (InputError, DownloadError, ConfigError) as exc:
        logging.getLogger("evalbars").error("%s", exc)
        print(f"evalbars: {exc}", file=sys.stderr)
        sys.exit(1)
