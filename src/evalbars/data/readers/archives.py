"""Zip archives, read safely: recognised by content, members checked, zstd and deflate alike.

MMLU-Pro ships predictions as zips holding one JSON file; Inspect's ``.eval``
logs are zips of JSON members, compressed with deflate by older releases and
with zstd (zip method 93) since Inspect 0.3.206. Python's :mod:`zipfile` (before
3.14) reads deflate and stored members but not zstd ones: those are read here
from their raw bytes and decompressed with the ``zstandard`` library, the zstd
binding Inspect itself depends on. Every member is refused when its name would
escape the archive or it unpacks past :data:`MAX_MEMBER_BYTES`, and a truncated
or corrupt archive is reported as damaged, never as bad JSON.
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from pathlib import PurePosixPath

import zstandard

from evalbars.errors import InputError

__all__ = [
    "MAX_MEMBER_BYTES",
    "ZIP_SIGNATURES",
    "ZSTD_METHOD",
    "is_zip_archive",
    "member_names",
    "read_member",
    "open_archive",
]

#: Largest uncompressed member we accept (the biggest MMLU-Pro member is ~40 MB).
MAX_MEMBER_BYTES = 512 * 1024**2
#: The first bytes of a zip archive (a local file header, or an empty archive's end record).
ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")
#: The zip compression method number of Zstandard (APPNOTE 6.3.7, section 4.4.5).
ZSTD_METHOD = 93
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def is_zip_archive(path) -> bool:
    """Whether a file is a zip archive by its content (its first bytes), whatever its name."""
    with open(path, "rb") as fh:
        return fh.read(4) in ZIP_SIGNATURES


def _damaged(path, exc) -> InputError:
    return InputError(
        path, f"the zip archive is damaged (truncated or corrupt; download it again): {exc}"
    )


def open_archive(path) -> zipfile.ZipFile:
    """The archive, with every member's name and size checked; a damaged one is an InputError."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, EOFError) as exc:
        # A download cut short loses the central directory at the end of the file.
        raise _damaged(path, exc) from exc
    for info in archive.infolist():
        member = PurePosixPath(info.filename.replace("\\", "/"))
        if member.is_absolute() or ".." in member.parts or re.match(r"^[A-Za-z]:", info.filename):
            raise InputError(path, f"archive member {info.filename!r} has an unsafe path")
        if info.file_size > MAX_MEMBER_BYTES:
            raise InputError(
                path,
                f"archive member {info.filename!r} would unpack to {info.file_size} bytes, "
                f"more than the {MAX_MEMBER_BYTES} allowed",
            )
    return archive


def member_names(archive: zipfile.ZipFile) -> list[str]:
    """Names of the archive's files (directories and macOS resource forks left out)."""
    return [
        info.filename
        for info in archive.infolist()
        if not info.is_dir() and not info.filename.startswith("__MACOSX/")
    ]


def read_member(archive: zipfile.ZipFile, name: str, path) -> bytes:
    """The bytes of one member, deflate, stored or zstd, capped and checked against its CRC."""
    info = archive.getinfo(name)
    try:
        if info.compress_type == ZSTD_METHOD:
            data = _read_zstd(archive, info)
        else:
            # The size in the directory can lie; stop decompressing past the limit either way.
            with archive.open(info) as fh:
                data = fh.read(MAX_MEMBER_BYTES + 1)
    except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, EOFError) as exc:
        raise _damaged(path, f"member {name!r}: {exc}") from exc
    except NotImplementedError as exc:
        raise InputError(path, f"archive member {name!r} uses an unsupported compression") from exc
    if len(data) > MAX_MEMBER_BYTES:
        raise InputError(path, f"archive member {name!r} unpacks past the size limit")
    if zlib.crc32(data) != info.CRC:
        raise _damaged(path, f"member {name!r} fails its CRC check")
    return data


def _read_zstd(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A zstd member: its raw bytes after the local header, decompressed by ``zstandard``."""
    handle = archive.fp
    handle.seek(info.header_offset)
    header = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if header[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for member {info.filename!r}")
    name_length, extra_length = header[-2:]
    handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    compressed = handle.read(info.compress_size)
    if len(compressed) < info.compress_size:
        raise EOFError(f"member {info.filename!r} is cut short")
    decompressor = zstandard.ZstdDecompressor()
    return decompressor.decompress(compressed, max_output_size=MAX_MEMBER_BYTES + 1)
