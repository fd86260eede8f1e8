"""Archive bombs and archives that lie about their members (issue 31): each refusal is the exact
line a user sees, and memory stays bounded while a bomb that would unpack to gigabytes is refused.

Every archive is written here by a small zip writer that takes each member's compressed bytes,
CRC-32 and declared size as given (so a test can forge them), with zstd (method 93, through the
``zstandard`` package Inspect uses) or deflate members. The bombs' members are compressed from a
stream of chunks: a few hundred kilobytes on disk, never gigabytes in memory.
"""

from __future__ import annotations

import random
import struct
import time
import tracemalloc
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard

from evalbars.data.readers import SourceOptions, archives, read_source
from evalbars.data.readers.archives import open_archive, read_member
from evalbars.errors import InputError

MiB = 1024**2
ZSTD, DEFLATE, STORED = 93, 8, 0
#: A bomb member: valid JSON, one sample with a 500 MiB padding string (under the 512 MiB
#: a member may declare), so that nothing but the size gives it away.
BOMB_PAD = 500 * MiB
#: What reading a refused bomb may add to Python's peak memory.
PEAK_ALLOWED = 200 * MiB
HEADER = (
    b'{"version": 2, "status": "success", "eval": {"model": "mockllm/m", "task": "t", '
    b'"created": "2026-01-01T00:00:00+00:00"}}'
)


@dataclass
class Member:
    """One member as the writer stores it: the header's word about it is taken as given."""

    name: str
    method: int
    compressed: bytes
    crc: int
    size: int
    flags: int = 0


def compress(method: int, pieces) -> tuple[bytes, int, int]:
    """``(compressed, crc, size)`` of the bytes ``pieces`` yields, compressed a piece at a time."""
    if method == ZSTD:
        packer = zstandard.ZstdCompressor().compressobj()
    elif method == DEFLATE:
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    out, crc, size = [], 0, 0
    for piece in pieces:
        crc, size = zlib.crc32(piece, crc), size + len(piece)
        out.append(piece if method == STORED else packer.compress(piece))
    if method != STORED:
        out.append(packer.flush())
    return b"".join(out), crc, size


def member(name: str, data: bytes, method: int = ZSTD) -> Member:
    return Member(name, method, *compress(method, [data]))


def write_zip(path: Path, members: list[Member]) -> Path:
    """A zip archive of ``members``: local headers, data, central directory, end record."""
    body, directory = bytearray(), bytearray()
    for m in members:
        name = m.name.encode()
        version = 63 if m.method == ZSTD else 20
        offset = len(body)
        body += struct.pack(
            "<4s5H3L2H", b"PK\x03\x04", version, m.flags, m.method, 0, 33,
            m.crc, len(m.compressed), m.size, len(name), 0,
        )  # fmt: skip
        body += name + m.compressed
        directory += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", version, version, m.flags, m.method, 0, 33,
            m.crc, len(m.compressed), m.size, len(name), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        directory += name
    end = struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0
    )
    path.write_bytes(bytes(body + directory + end))
    return path


def sample(number: int, pad: str = "") -> bytes:
    return (
        f'{{"id": "q{number}", "epoch": 1, "scores": {{"match": {{"value": "C", '
        f'"answer": "x"}}}}, "pad": "{pad}"}}'
    ).encode()


def bomb_member(method: int) -> tuple[bytes, int, int]:
    """A sample whose padding is :data:`BOMB_PAD` bytes of ``a``, compressed as a stream."""
    head, tail = sample(0).split(b'"pad": "')
    chunk = b"a" * MiB
    return compress(method, [head + b'"pad": "', *[chunk] * (BOMB_PAD // MiB), tail])


@pytest.fixture(scope="module")
def bombs() -> dict:
    """The compressed bomb member, by method (made once: about a second for deflate)."""
    return {method: bomb_member(method) for method in (ZSTD, DEFLATE)}


def bomb_log(path: Path, kernel, method: int, count: int, declared=None) -> Path:
    """An Inspect .eval log whose ``count`` samples are each the bomb member."""
    compressed, crc, size = kernel
    samples = [
        Member(f"samples/q{i:02d}_epoch_1.json", method, compressed, crc, declared or size)
        for i in range(1, count + 1)
    ]
    return write_zip(path, [member("header.json", HEADER, method), *samples])


def refusal_and_peak(path: Path) -> tuple[str, int, float]:
    """``(message, peak bytes Python allocated, seconds)`` of reading a log that must fail."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(InputError) as caught:
            read_source(path)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(caught.value), peak, seconds


def plain_log(path: Path, method: int, samples: int = 4, pad: int = 0) -> Path:
    """A small, honest Inspect .eval log; ``pad`` bytes of hex (compresses only twofold) each."""
    rng = random.Random(0)
    members = [member("header.json", HEADER, method)]
    members += [
        member(f"samples/q{i}_epoch_1.json", sample(i, rng.randbytes(pad // 2).hex()), method)
        for i in range(1, samples + 1)
    ]
    return write_zip(path, members)


# --- bombs: refused at once, memory bounded ------------------------------------------------------


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_a_bomb_of_many_members_is_refused_at_the_first_with_bounded_memory(
    tmp_path, bombs, method
):
    count = 8 if method == ZSTD else 4  # 4 GB and 2 GB unpacked
    path = bomb_log(tmp_path / "bomb.eval", bombs[method], method, count)
    assert path.stat().st_size < (200_000 if method == ZSTD else 3_000_000)
    compressed = len(bombs[method][0])
    message, peak, _ = refusal_and_peak(path)
    assert message == (
        f"{path}: archive member 'samples/q01_epoch_1.json' unpacks to more than 200 times its "
        f"{compressed} compressed bytes, as only a zip bomb does; it is not read"
    )
    assert peak < PEAK_ALLOWED


def test_the_archive_limit_bounds_memory_whatever_the_members_ratio(tmp_path, bombs, monkeypatch):
    # Without the expansion guard, the total still stops the read a chunk past the limit.
    monkeypatch.setattr(archives, "MAX_EXPANSION", 10**9)
    monkeypatch.setattr(archives, "MAX_ARCHIVE_BYTES", 64 * MiB)
    path = bomb_log(tmp_path / "bomb.eval", bombs[ZSTD], ZSTD, 8)
    message, peak, _ = refusal_and_peak(path)
    assert message == (
        f"{path}: archive member 'samples/q01_epoch_1.json' takes the archive past 64 MiB "
        "unpacked, the limit for one archive; it is not read"
    )
    assert peak < PEAK_ALLOWED


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_the_archive_limit_counts_every_member_read_and_names_the_one_past_it(
    tmp_path, monkeypatch, method
):
    # header.json and three samples of ~300 KB fit in 1 MiB; the fourth sample passes it.
    path = plain_log(tmp_path / "big.eval", method, samples=4, pad=300_000)
    assert len(read_source(path)[0]) == 4
    monkeypatch.setattr(archives, "MAX_ARCHIVE_BYTES", MiB)
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == (
        f"{path}: archive member 'samples/q4_epoch_1.json' takes the archive past 1 MiB unpacked, "
        "the limit for one archive; it is not read"
    )


def test_an_opened_archive_counts_the_bytes_unpacked_from_it(tmp_path):
    path = plain_log(tmp_path / "log.eval", ZSTD, samples=3, pad=1000)
    with open_archive(path) as archive:
        sizes = [len(read_member(archive, name, path)) for name in archive.namelist()]
        assert archive.unpacked_bytes == sum(sizes) == sum(i.file_size for i in archive.infolist())


def test_a_legitimate_log_reads_as_before(tmp_path):
    for method in (ZSTD, DEFLATE, STORED):
        frame = read_source(plain_log(tmp_path / f"log{method}.eval", method, pad=100))[0]
        assert sorted(frame["question_id"]) == ["q1", "q2", "q3", "q4"]
        assert frame["correct"].tolist() == [1.0] * 4


# --- members whose header lies: damaged or forged, not "download it again" ----------------------


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_a_member_larger_than_its_header_declares_is_called_forged(tmp_path, bombs, method):
    # The bomb again, its header declaring 1000 bytes: refused within the first chunk.
    path = bomb_log(tmp_path / "liar.eval", bombs[method], method, 4, declared=1000)
    message, peak, _ = refusal_and_peak(path)
    assert message == (
        f"{path}: archive member 'samples/q01_epoch_1.json' unpacks to more than the 1000 bytes "
        "its header declares: the archive is damaged or forged; it is not read"
    )
    assert peak < 20 * MiB


@pytest.mark.parametrize("method", [ZSTD, DEFLATE, STORED], ids=["zstd", "deflate", "stored"])
def test_a_member_smaller_than_its_header_declares_is_called_forged(tmp_path, method):
    data = sample(1)
    forged = member("samples/q1_epoch_1.json", data, method)
    forged.size = len(data) + 10
    path = write_zip(tmp_path / "liar.eval", [member("header.json", HEADER, method), forged])
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == (
        f"{path}: archive member 'samples/q1_epoch_1.json' unpacks to {len(data)} bytes, fewer "
        f"than the {len(data) + 10} its header declares: the archive is damaged or forged; "
        "it is not read"
    )


@pytest.mark.parametrize("method", [ZSTD, DEFLATE, STORED], ids=["zstd", "deflate", "stored"])
def test_a_member_failing_its_crc_is_called_forged_not_a_bad_download(tmp_path, method):
    forged = member("samples/q1_epoch_1.json", sample(1), method)
    forged.crc ^= 1
    path = write_zip(tmp_path / "liar.eval", [member("header.json", HEADER, method), forged])
    with pytest.raises(InputError) as caught:
        read_source(path)
    assert str(caught.value) == (
        f"{path}: archive member 'samples/q1_epoch_1.json' does not match the CRC-32 its header "
        "declares: the archive is damaged or forged; it is not read"
    )
    assert "download it again" not in str(caught.value)


@pytest.mark.parametrize("method", [ZSTD, DEFLATE], ids=["zstd", "deflate"])
def test_a_member_that_is_not_compressed_data_is_called_damaged_or_forged(tmp_path, method):
    garbage = Member("samples/q1_epoch_1.json", method, b"\xff" * 64, 0, 100)
    path = write_zip(tmp_path / "garbage.eval", [member("header.json", HEADER, method), garbage])
    name = {ZSTD: "zstd", DEFLATE: "deflate"}[method]
    with pytest.raises(InputError) as caught:
        read_source(path)
    message = str(caught.value)
    assert message.startswith(
        f"{path}: archive member 'samples/q1_epoch_1.json' is not valid {name} data ("
    )
    assert message.endswith("): the archive is damaged or forged; it is not read")


def test_an_encrypted_member_is_refused_by_name(tmp_path):
    locked = member("samples/q1_epoch_1.json", sample(1), DEFLATE)
    locked.flags = 0x1
    path = write_zip(tmp_path / "locked.eval", [member("header.json", HEADER, DEFLATE), locked])
    with pytest.raises(InputError) as caught:
        read_source(path, SourceOptions())
    assert str(caught.value) == (
        f"{path}: archive member 'samples/q1_epoch_1.json' is encrypted; evalbars reads "
        "unencrypted archives"
    )


def test_a_truncated_archive_is_still_a_bad_download(tmp_path):
    whole = plain_log(tmp_path / "whole.eval", ZSTD).read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match=r"cut\.eval: the zip archive is damaged \(truncated or "):
        read_source(cut, SourceOptions(format="inspect"))
