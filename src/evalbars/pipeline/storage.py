"""A run whose data and results live in an S3 bucket: ``evalbars report --storage s3://...``.

Executors without a shared file system (Kubernetes, the cloud batch services) exchange every
file of a run through a storage provider. A run directory records its bucket in its
configuration (``run.storage``, and ``run.storage_endpoint_url`` for an S3 server other than
AWS's); :func:`evalbars.pipeline.runner.run_workflow` then runs Snakemake with
:func:`storage_flags`: the S3 storage plugin of the ``cloud`` extra as the default storage
provider, under that prefix. The user's files and evalbars' modules are read where they are
(the workflow flags them ``local``, :func:`evalbars.pipeline.smk.storage_mode`); the HTML report,
Snakemake's records and the run lock stay in the run directory, and this machine keeps a copy
of each file it made or fetched (:func:`results_root`). Credentials come from the environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, or an AWS profile), never from the
configuration. See ``docs/guides/cloud.md``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from urllib.parse import urlsplit

from evalbars.errors import ConfigError

__all__ = ["PLUGIN", "check_storage", "storage_flags", "results_root"]

#: The module of Snakemake's S3 storage plugin (the ``cloud`` extra).
PLUGIN = "snakemake_storage_plugin_s3"

#: Where this machine keeps its copies of the bucket's files, relative to the run directory
#: (Snakemake's ``--local-storage-prefix``; the plugin adds ``s3/BUCKET/KEY``).
LOCAL_COPIES = Path(".snakemake") / "storage"

#: S3's rule for bucket names: 3 to 63 lowercase letters, digits, dots and hyphens, beginning
#: and ending with a letter or a digit.
BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")

#: What a key prefix may hold here: Snakemake reads braces as wildcards, and a local copy's path
#: repeats the key, so no white space or control characters either.
PREFIX_PART = re.compile(r"[A-Za-z0-9._=+@,-]+")


def check_storage(
    url: str, endpoint_url: str | None = None, *, names=("--storage", "--storage-endpoint-url")
) -> str:
    """``url`` as evalbars records it (no trailing slash), or :class:`ConfigError` in one line.

    ``url`` is ``s3://BUCKET`` or ``s3://BUCKET/PREFIX``; ``endpoint_url``, if given, an
    ``http://`` or ``https://`` URL of an S3 server other than AWS's (MinIO, Ceph, a local
    test server). The S3 storage plugin must be installed (the ``cloud`` extra). ``names``
    name the two settings in the message: the flags of ``evalbars report``, or the config keys.

    Examples
    --------
    >>> check_storage("s3://evalbars-runs/paper/")
    's3://evalbars-runs/paper'
    >>> check_storage("gs://evalbars-runs/paper")
    Traceback (most recent call last):
    ...
    evalbars.errors.ConfigError: --storage 'gs://evalbars-runs/paper': not an S3 location; give s3://BUCKET/PREFIX
    """
    name, endpoint_name = names
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ConfigError(f"{name} {url!r}: not an S3 location; give s3://BUCKET/PREFIX")
    if parts.query or parts.fragment:
        raise ConfigError(f"{name} {url!r}: give s3://BUCKET/PREFIX, with no ? or #")
    if not BUCKET.fullmatch(parts.netloc) or ".." in parts.netloc:
        raise ConfigError(
            f"{name} {url!r}: {parts.netloc!r} is not an S3 bucket name (3 to 63 lowercase "
            "letters, digits, dots and hyphens, starting and ending with a letter or digit)"
        )
    prefix = parts.path.strip("/")
    bad = [part for part in prefix.split("/") if not PREFIX_PART.fullmatch(part) or part == ".."]
    if prefix and bad:
        raise ConfigError(
            f"{name} {url!r}: the prefix part {bad[0]!r} may hold letters, digits and . _ = + @ , - "
            "only (no empty part, no '..', no braces or spaces)"
        )
    if endpoint_url is not None:
        endpoint = urlsplit(endpoint_url)
        if endpoint.scheme not in ("http", "https") or not endpoint.hostname:
            raise ConfigError(
                f"{endpoint_name} {endpoint_url!r}: not an http(s) URL of an S3 server; give "
                "e.g. http://127.0.0.1:9000 (none for AWS S3)"
            )
    if importlib.util.find_spec(PLUGIN) is None:
        raise ConfigError(
            f"{name} {url}: Snakemake's S3 storage plugin (snakemake-storage-plugin-s3) is not "
            'installed; install evalbars[cloud] (pip install "evalbars[cloud]", or uv sync '
            "--extra cloud in a clone)"
        )
    return f"s3://{parts.netloc}" + (f"/{prefix}" if prefix else "")


def storage_flags(run: dict) -> list[str]:
    """Snakemake's options for the storage a run records (its config's ``run`` settings):
    none without ``run.storage``.

    The S3 plugin is the default storage provider, under the recorded prefix, at the recorded
    endpoint; the copies this machine makes or fetches are kept (under
    ``.snakemake/storage`` in the run directory, :func:`results_root`), so that evalbars reads
    the run's answer there. Raises :class:`ConfigError` as :func:`check_storage` does.

    Examples
    --------
    >>> storage_flags({"stages": ["data"], "report": None})
    []
    >>> storage_flags({"storage": "s3://evalbars-runs/r1", "storage_endpoint_url": None})[:4]
    ['--default-storage-provider', 's3', '--default-storage-prefix', 's3://evalbars-runs/r1']
    """
    if not run.get("storage"):
        return []
    endpoint = run.get("storage_endpoint_url")
    url = check_storage(
        run["storage"], endpoint, names=("config key `run.storage`", "`run.storage_endpoint_url`")
    )
    return [
        "--default-storage-provider",
        "s3",
        "--default-storage-prefix",
        url,
        *(["--storage-s3-endpoint-url", endpoint] if endpoint else []),
        "--local-storage-prefix",
        str(LOCAL_COPIES),
        "--keep-storage-local-copies",
    ]


def results_root(directory, storage: str | None = None) -> Path:
    """Where this machine holds a run's ``data/`` and ``results/``: the run directory, or,
    for a run in S3 storage, its copies of the bucket's files
    (``.snakemake/storage/s3/BUCKET/PREFIX`` in the run directory).

    Examples
    --------
    >>> results_root(Path("/runs/r1"))
    PosixPath('/runs/r1')
    >>> results_root(Path("/runs/r1"), "s3://evalbars-runs/paper/r1")
    PosixPath('/runs/r1/.snakemake/storage/s3/evalbars-runs/paper/r1')
    """
    directory = Path(directory)
    if not storage:
        return directory
    parts = urlsplit(storage)
    return directory / LOCAL_COPIES / "s3" / parts.netloc / parts.path.strip("/")
