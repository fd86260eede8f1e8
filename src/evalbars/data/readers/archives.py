"""Zip archives, read safely: recognised by content, members checked, zstd and deflate alike.

MMLU-Pro ships predictions as zips holding one JSON file; Inspect's ``.eval``
logs are zips of JSON members, compressed with deflate by older releases and
with zstd (zip method 93) since Inspect 0.3.206. Python's :mod:`zipfile` (before
3.14) reads deflate and stored members but not zstd ones. Every member is read
here from its raw bytes and decompressed a chunk at a time (deflate by :mod:`zlib`,
zstd by the ``zstandard`` library, the zstd binding Inspect itself depends on), and
the bytes are counted as they come out, never taken from the header's word.

What is fatal, each an :class:`~evalbars.errors.InputError` naming the file and the member:

- a member whose name would escape the archive, or whose header declares more than
  :data:`MAX_MEMBER_BYTES` (when the archive is opened, before anything is unpacked);
- a member that unpacks past :data:`MAX_MEMBER_BYTES`, one that takes the bytes unpacked
  from its archive (over every member read from that opened archive) past
  :data:`MAX_ARCHIVE_BYTES`, and one past :data:`EXPANSION_CHECKED_FROM` bytes that has
  grown to more than :data:`MAX_EXPANSION` times its compressed size (no JSON log does;
  zip bombs do): reading stops there, within a chunk of the limit, so memory stays bounded
  by the limits and not by what the archive would unpack to;
- a member whose content contradicts its header (it unpacks to more or fewer bytes than
  declared, fails its CRC-32, is not valid deflate or zstd data, or lies outside the
  file): the archive is damaged or forged, and it is not read;
- an encrypted member, or one compressed by a method other than stored, deflate, bzip2,
  lzma and zstd;
- an archive that cannot be opened at all (no central directory: a download cut short),
  reported as damaged, never as bad JSON.

Nothing is skipped: the reader that asked for a member gets all of its bytes or an error.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from pathlib import PurePosixPath

import zstandard

from evalbars.errors import InputError

__all__ = [
    "MAX_MEMBER_BYTES",
    "MAX_ARCHIVE_BYTES",
    "MAX_EXPANSION",
    "EXPANSION_CHECKED_FROM",
    "ZIP_SIGNATURES",
    "ZSTD_METHOD",
    "CountedArchive",
    "is_zip_archive",
    "member_names",
    "read_member",
    "open_archive",
]

#: Largest uncompressed member we accept (the biggest MMLU-Pro member is ~40 MB).
MAX_MEMBER_BYTES = 512 * 1024**2
#: Most bytes unpacked from one opened archive, over all the members read from it.
MAX_ARCHIVE_BYTES = 1024**3
#: Most a member may grow over its compressed size (JSON logs grow 4 to 13 times; a zip bomb
#: of repeated bytes grows 1,000 times under deflate and 30,000 times under zstd) ...
MAX_EXPANSION = 200
#: ... judged once it has unpacked this much (a small, very repetitive member is no threat).
EXPANSION_CHECKED_FROM = 32 * 1024**2
#: The first bytes of a zip archive (a local file header, or an empty archive's end record).
ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")
#: The zip compression method number of Zstandard (APPNOTE 6.3.7, section 4.4.5).
ZSTD_METHOD = 93
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
#: Bytes read from the file, and at most unpacked, per step.
_RAW_CHUNK = 256 * 1024
_UNPACKED_CHUNK = 1024**2
_METHOD_NAMES = {zipfile.ZIP_DEFLATED: "deflate", ZSTD_METHOD: "zstd"}


class CountedArchive(zipfile.ZipFile):
    """A zip archive opened by :func:`open_archive`: ``unpacked_bytes`` counts the bytes
    :func:`read_member` has unpacked from it, which :data:`MAX_ARCHIVE_BYTES` bounds."""

    def __init__(self, file):
        super().__init__(file)
        self.unpacked_bytes = 0


def is_zip_archive(path) -> bool:
    """Whether a file is a zip archive by its content (its first bytes), whatever its name."""
    with open(path, "rb") as fh:
        return fh.read(4) in ZIP_SIGNATURES


def _damaged(path, exc) -> InputError:
    return InputError(
        path, f"the zip archive is damaged (truncated or corrupt; download it again): {exc}"
    )


def _forged(path, name: str, problem: str) -> InputError:
    """A member whose bytes contradict its header: damage inside an archive that still opens,
    or a forged one; another download of it would not help."""
    return InputError(
        path, f"archive member {name!r} {problem}: the archive is damaged or forged; it is not read"
    )


def _size_text(size: int) -> str:
    """``1 GiB``, ``512 MiB``, else ``1000 bytes``."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def open_archive(path) -> CountedArchive:
    """The archive, with every member's name and declared size checked.

    Raises
    ------
    InputError
        When the archive cannot be opened (damaged: download it again), or a member's name
        would escape it, or its header declares more than :data:`MAX_MEMBER_BYTES`.
    """
    try:
        archive = CountedArchive(path)
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
    """The bytes of one member, unpacked a chunk at a time and checked against its header.

    Parameters
    ----------
    archive : zipfile.ZipFile
        The archive, from :func:`open_archive` (which counts what is unpacked from it against
        :data:`MAX_ARCHIVE_BYTES`; another ZipFile is held to that limit one member at a time).
    name : str
        The member.
    path : path-like
        The archive's file, for messages.

    Raises
    ------
    InputError
        Fatal, naming the file and the member (see the module docstring): the member passes
        :data:`MAX_MEMBER_BYTES`, takes the archive past :data:`MAX_ARCHIVE_BYTES` or grows
        more than :data:`MAX_EXPANSION` times (reading stops at once); its content
        contradicts its header (damaged or forged); it is encrypted or uses an unsupported
        compression.
    """
    info = archive.getinfo(name)
    if info.flag_bits & 0x1:
        raise InputError(
            path, f"archive member {name!r} is encrypted; evalbars reads unencrypted archives"
        )
    unpacked_before = getattr(archive, "unpacked_bytes", 0)
    unpacked = io.BytesIO()
    crc = 0
    try:
        for chunk in _unpacked_chunks(archive, info, path):
            crc = zlib.crc32(chunk, crc)
            unpacked.write(chunk)
            _check_growth(path, info, unpacked.tell(), unpacked_before)
    except (zlib.error, zstandard.ZstdError) as exc:
        method = _METHOD_NAMES.get(info.compress_type, "compressed")
        raise _forged(path, name, f"is not valid {method} data ({exc})") from exc
    except (zipfile.BadZipFile, EOFError) as exc:  # bzip2 and lzma members, through zipfile
        raise _forged(path, name, f"cannot be unpacked ({exc})") from exc
    except NotImplementedError as exc:
        raise InputError(path, f"archive member {name!r} uses an unsupported compression") from exc
    size = unpacked.tell()
    if size < info.file_size:
        raise _forged(
            path,
            name,
            f"unpacks to {size} bytes, fewer than the {info.file_size} its header declares",
        )
    if crc != info.CRC:
        raise _forged(path, name, "does not match the CRC-32 its header declares")
    if isinstance(archive, CountedArchive):
        archive.unpacked_bytes = unpacked_before + size
    return unpacked.getvalue()


def _check_growth(path, info: zipfile.ZipInfo, size: int, unpacked_before: int) -> None:
    """Refuse a member, as soon as it has unpacked ``size`` bytes, that passes a limit or
    its declared size."""
    name = info.filename
    if unpacked_before + size > MAX_ARCHIVE_BYTES:
        raise InputError(
            path,
            f"archive member {name!r} takes the archive past {_size_text(MAX_ARCHIVE_BYTES)} "
            "unpacked, the limit for one archive; it is not read",
        )
    if size > info.file_size:
        raise _forged(
            path, name, f"unpacks to more than the {info.file_size} bytes its header declares"
        )
    if size > MAX_MEMBER_BYTES:
        raise InputError(
            path,
            f"archive member {name!r} unpacks past {_size_text(MAX_MEMBER_BYTES)}, the limit "
            "for one member; it is not read",
        )
    if size > EXPANSION_CHECKED_FROM and size > MAX_EXPANSION * max(info.compress_size, 1):
        raise InputError(
            path,
            f"archive member {name!r} unpacks to more than {MAX_EXPANSION} times its "
            f"{info.compress_size} compressed bytes, as only a zip bomb does; it is not read",
        )


class _RawMember:
    """The compressed bytes of one member, read from the archive's file on demand."""

    def __init__(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, path):
        handle = archive.fp
        handle.seek(info.header_offset)
        header = handle.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise _forged(path, info.filename, "has no local header where the directory puts it")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
        self.handle = handle
        self.position = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        self.left = info.compress_size
        self.path, self.name = path, info.filename

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        if not size:
            return b""
        self.handle.seek(self.position)
        data = self.handle.read(size)
        if not data:
            raise _forged(self.path, self.name, "runs past the end of the file")
        self.position += len(data)
        self.left -= len(data)
        return data


def _unpacked_chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path):
    """The member's bytes, at most :data:`_UNPACKED_CHUNK` at a time, whatever the header
    says they add up to."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, ZSTD_METHOD):
        # bzip2, lzma: zipfile's reader stops at the declared size and checks the CRC.
        with archive.open(info) as member:
            while chunk := member.read(_UNPACKED_CHUNK):
                yield chunk
        return
    raw = _RawMember(archive, info, path)
    if info.compress_type == zipfile.ZIP_STORED:
        while chunk := raw.read(_UNPACKED_CHUNK):
            yield chunk
    elif info.compress_type == ZSTD_METHOD:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        while chunk := reader.read(_UNPACKED_CHUNK):
            yield chunk
    else:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # a zip member is a raw deflate stream
        while not inflater.eof:
            pending = inflater.unconsumed_tail or raw.read(_RAW_CHUNK)
            chunk = inflater.decompress(pending, _UNPACKED_CHUNK)
            if not chunk and not pending:
                break  # the compressed bytes end before the stream does: fewer bytes than declared
            if chunk:
                yield chunk
