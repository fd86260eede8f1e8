"""The download stage's job (``workflow/rules/download.smk``): one upstream archive, fetched and
verified against its pinned checksum.

Its own module, importing the fetching code only: an edit of the readers or the statistics
never fetches an archive again.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalbars.data.fetch import fetch_archive, resolve_mirror

__all__ = ["Archive", "download"]


@dataclass(frozen=True)
class Archive:
    """An archive a job fetches to its output and verifies
    (:func:`evalbars.data.fetch.fetch_archive`); the source, ``$EVALBARS_MIRROR``, else
    ``mirror``, else upstream, is resolved as it is written."""

    name: str
    sha256: str
    mirror: str | None = None

    suffixes = ("",)

    def write(self, path) -> None:
        fetch_archive(self.name, path, self.sha256, mirror=resolve_mirror(self.mirror))


def download(*, archive: str, sha256: str, mirror: str | None) -> dict:
    """``download``: the archive named ``archive`` (``archive``), checked against ``sha256``."""
    return {"archive": Archive(archive, sha256, mirror)}
