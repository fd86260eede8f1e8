"""Pure functions of the workflow configuration (called from ``workflow/rules/common.smk``).

Kept in the package so they are unit-tested like the statistics.
"""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager
from pathlib import Path

from .errors import ConfigError, EvalbarsError
from .fetch import pinned_checksums
from .io import archive_name

__all__ = [
    "ConfigError",
    "archives",
    "archive_checksum",
    "prediction_sources",
    "replication_applies",
    "script_context",
]


def archives(config: dict) -> dict:
    """``{archive file name: model}`` for the configured MMLU-Pro models.

    Raises :class:`ConfigError` for a model whose archive has no pinned checksum.
    """
    known = pinned_checksums(config.get("checksums"))
    selected = {archive_name(model): model for model in config.get("models", [])}
    unknown = [f"{model} ({name})" for name, model in selected.items() if name not in known]
    if unknown:
        available = sorted(
            n.removeprefix("model_outputs_").removesuffix("_5shots.zip") for n in known
        )
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
        {"path": str(entry), "model": None}
        if isinstance(entry, (str, Path))
        else {"path": str(entry["path"]), "model": entry.get("model")}
        for entry in config.get("predictions", [])
    ]
    if not sources and not config.get("models"):
        raise ConfigError("nothing to analyse: set `models:` and/or `predictions:` in the config")
    return sources


def replication_applies(config: dict) -> bool:
    """Whether the replication check against the paper's numbers makes sense for ``config``.

    It does when the data are the paper's: exactly its six MMLU-Pro models, no
    prediction files of the user's, and missing predictions re-scorable (any
    policy but ``exclude``, which drops them from the item table).
    """
    from .replication import PAPER_MODELS

    return (
        sorted(config.get("models", [])) == sorted(PAPER_MODELS)
        and not config.get("predictions")
        and config.get("missing_prediction", "wrong") != "exclude"
    )


@contextmanager
def script_context(log_path):
    """Run a workflow script's body with logging to ``log_path``.

    A problem the user can fix (:class:`~evalbars.errors.EvalbarsError`: bad input,
    a failed download, an impossible configuration) becomes one clear line on
    stderr and in the log, and exit status 1, instead of a traceback; Snakemake
    then removes the job's outputs. Any other exception is a bug: its traceback
    goes to the log as well as to stderr.
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
    except EvalbarsError as exc:
        logging.getLogger("evalbars").error("%s", exc)
        print(f"evalbars: {exc}", file=sys.stderr)
        sys.exit(1)
    except Exception:
        logging.getLogger("evalbars").exception("unexpected error (a bug; please report it)")
        raise
