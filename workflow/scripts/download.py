"""Snakemake adapter: fetch one archive and verify its checksum."""

from typing import TYPE_CHECKING

from evalbars.data.fetch import fetch_archive, resolve_mirror
from evalbars.errors import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    fetch_archive(
        snakemake.wildcards.archive,
        snakemake.output.archive,
        snakemake.params.sha256,
        mirror=resolve_mirror(snakemake.params.mirror),
    )
