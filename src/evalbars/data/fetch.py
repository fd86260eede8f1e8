"""Upstream's MMLU-Pro prediction archives: their names, pinned checksums and verified fetching.

Sources, in order of precedence: the environment variable ``EVALBARS_MIRROR``, the
``mirror`` config key, then upstream GitHub at :data:`PINNED_COMMIT`. A mirror is a
local folder or a base URL holding upstream's ``eval_results/`` file names.

Downloads are atomic (temporary file, verify, rename), retried with exponential
backoff on network errors, and skipped when the destination already holds the
verified file. A checksum mismatch deletes the bad file and raises
:class:`ChecksumError`; nothing unverified is ever left at the destination.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

from evalbars.errors import ChecksumError, DownloadError

__all__ = [
    "UPSTREAM_REPOSITORY",
    "PINNED_COMMIT",
    "UPSTREAM_BASE_URL",
    "MIRROR_ENV",
    "ARCHIVE_PATTERN",
    "archive_name",
    "model_from_archive",
    "DownloadError",
    "ChecksumError",
    "pinned_checksums",
    "resolve_mirror",
    "source_location",
    "sha256_file",
    "fetch_archive",
]

log = logging.getLogger(__name__)

UPSTREAM_REPOSITORY = "TIGER-AI-Lab/MMLU-Pro"
PINNED_COMMIT = "f418b116db00b065c2aea046518d8fcf74d39872"
UPSTREAM_BASE_URL = f"https://github.com/{UPSTREAM_REPOSITORY}/raw/{PINNED_COMMIT}/eval_results"
MIRROR_ENV = "EVALBARS_MIRROR"
_CHUNK = 1 << 20

#: Upstream's archive names, ``model_outputs_<model>_5shots.zip`` (some revisions hold the
#: ``.json`` inside under the same stem). The one definition of the naming scheme.
ARCHIVE_PATTERN = re.compile(
    r"model_outputs_(?P<model>[A-Za-z0-9][A-Za-z0-9._-]*)_5shots\.(?:zip|json)"
)


def archive_name(model: str) -> str:
    """Upstream's archive file name for ``model``.

    Examples
    --------
    >>> archive_name("Yi-6B")
    'model_outputs_Yi-6B_5shots.zip'
    >>> model_from_archive("data/raw/" + archive_name("Yi-6B"))
    'Yi-6B'
    """
    return f"model_outputs_{model}_5shots.zip"


def model_from_archive(path) -> str | None:
    """The model named by an upstream archive name (any folder), or None for another name."""
    match = ARCHIVE_PATTERN.fullmatch(Path(path).name)
    return match["model"] if match else None


def pinned_checksums(extra: dict | None = None) -> dict:
    """``{archive file name: sha256}`` of the packaged list, updated with ``extra``."""
    text = (
        resources.files("evalbars.data").joinpath("resources/mmlu_pro_sha256sums.txt").read_text()
    )
    pinned = {}
    for line in text.splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            pinned[name.lstrip("*")] = digest.lower()
    pinned.update({name: digest.lower() for name, digest in (extra or {}).items()})
    return pinned


def resolve_mirror(config_mirror: str | None = None) -> str | None:
    """The mirror to use: ``$EVALBARS_MIRROR``, else ``config_mirror``, else None (upstream)."""
    return os.environ.get(MIRROR_ENV) or config_mirror or None


def _is_url(location: str) -> bool:
    return "://" in location


def source_location(name: str, mirror: str | None = None) -> str:
    """Path or URL of archive ``name`` under ``mirror`` (upstream when None)."""
    base = mirror or UPSTREAM_BASE_URL
    if _is_url(base):
        return f"{base.rstrip('/')}/{name}"
    return str(Path(base).expanduser() / name)


def sha256_file(path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _how_to_set_a_mirror(name: str, location: str, reason: str) -> str:
    return (
        f"Could not fetch {name} from {location}: {reason}. "
        "If this machine is offline or cannot reach GitHub, point evalbars at a copy of upstream's "
        f"eval_results/ folder (https://github.com/{UPSTREAM_REPOSITORY}/tree/{PINNED_COMMIT}/eval_results): "
        f"either set the environment variable {MIRROR_ENV}=/path/to/eval_results (or a base URL) before "
        "running snakemake, or set `mirror: /path/to/eval_results` in config/config.yaml. "
        "Every file is still verified against its pinned sha256."
    )


def _copy_to(location: str, target: Path, timeout: float) -> None:
    if _is_url(location):
        request = urllib.request.Request(location, headers={"User-Agent": "evalbars"})
        with (
            urllib.request.urlopen(request, timeout=timeout) as response,
            open(target, "wb") as out,
        ):
            shutil.copyfileobj(response, out, _CHUNK)
    else:
        shutil.copyfile(location, target)


def fetch_archive(
    name: str,
    destination,
    sha256: str,
    mirror: str | None = None,
    *,
    attempts: int = 4,
    backoff: float = 1.0,
    timeout: float = 60.0,
) -> Path:
    """Fetch archive ``name`` to ``destination`` and verify it.

    Parameters
    ----------
    name : str
        Upstream file name, e.g. ``model_outputs_Yi-6B_5shots.zip``.
    destination : path-like
        Where the verified file ends up.
    sha256 : str
        Expected hex digest.
    mirror : str, optional
        Folder or base URL; upstream when None.
    attempts, backoff, timeout : int, float, float
        Network attempts, first back-off in seconds (doubled each retry) and
        per-request timeout. A missing local file is not retried.

    Returns
    -------
    Path
        ``destination``.

    Raises
    ------
    ChecksumError
        The fetched bytes do not match ``sha256`` (the bad file is deleted).
    DownloadError
        The source could not be read; the message says how to set a mirror.
    """
    destination = Path(destination)
    if destination.exists() and sha256_file(destination) == sha256.lower():
        log.info("%s already present and verified; not fetched again", destination)
        return destination
    location = source_location(name, mirror)
    if not _is_url(location) and not Path(location).is_file():
        folder = Path(location).parent
        reason = (
            "no such file in the mirror folder"
            if folder.is_dir()
            else f"the mirror folder {folder} does not exist (check {MIRROR_ENV} and `mirror:`)"
        )
        raise DownloadError(_how_to_set_a_mirror(name, location, reason))
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.part-{os.getpid()}")
    try:
        for attempt in range(1, attempts + 1):
            try:
                log.info("fetching %s (attempt %d of %d)", location, attempt, attempts)
                _copy_to(location, partial, timeout)
                break
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                not_found = isinstance(exc, urllib.error.HTTPError) and exc.code in (403, 404, 410)
                if attempt == attempts or not_found or not _is_url(location):
                    raise DownloadError(_how_to_set_a_mirror(name, location, str(exc))) from exc
                wait = backoff * 2 ** (attempt - 1)
                log.warning("fetching %s failed (%s); retrying in %.1f s", location, exc, wait)
                time.sleep(wait)
        actual = sha256_file(partial)
        if actual != sha256.lower():
            raise ChecksumError(
                f"{name} from {location} has sha256 {actual}, but the pinned checksum is "
                f"{sha256.lower()}. The downloaded copy was deleted ({destination} was not "
                f"written); the source itself ({location}) was not changed. It may be corrupt or "
                "a different version of upstream's archive; check your mirror."
            )
        os.replace(partial, destination)
    finally:
        partial.unlink(missing_ok=True)
    log.info("verified %s (sha256 %s)", destination, sha256)
    return destination
