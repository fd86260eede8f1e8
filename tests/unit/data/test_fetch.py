"""Verified downloads (evalbars.data.fetch) against a local HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import threading
import zipfile

import pytest

from evalbars.data import fetch

from ...helpers import ArchiveServer

NAME = "model_outputs_Fixture_5shots.zip"


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    with zipfile.ZipFile(root / NAME, "w") as zf:
        zf.writestr("model_outputs_Fixture_5shots.json", '[{"question_id": 1}]')
    server = ArchiveServer(root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    digest = hashlib.sha256((root / NAME).read_bytes()).hexdigest()
    yield server, f"http://127.0.0.1:{server.server_address[1]}/eval_results", digest, root
    server.shutdown()
    server.server_close()


def test_download_verifies_and_lands_atomically(served, tmp_path):
    server, base, digest, _ = served
    target = tmp_path / "raw" / NAME
    fetch.fetch_archive(NAME, target, digest, mirror=base)
    assert fetch.sha256_file(target) == digest
    assert server.requests == [f"/eval_results/{NAME}"]
    assert [p.name for p in target.parent.iterdir()] == [NAME]  # no partial file left


def test_verified_file_is_not_fetched_again(served, tmp_path):
    server, base, digest, _ = served
    target = tmp_path / NAME
    fetch.fetch_archive(NAME, target, digest, mirror=base)
    fetch.fetch_archive(NAME, target, digest, mirror=base)
    assert len(server.requests) == 1


def test_checksum_mismatch_deletes_and_fails_loudly(served, tmp_path):
    _, base, digest, _ = served
    target = tmp_path / "raw" / NAME
    wrong = "0" * 64
    with pytest.raises(
        fetch.ChecksumError, match=f"has sha256 {digest}, but the pinned checksum is {wrong}"
    ):
        fetch.fetch_archive(NAME, target, wrong, mirror=base)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_checksum_mismatch_says_which_copy_was_deleted(served, tmp_path):
    _, _, _, root = served
    target = tmp_path / "raw" / NAME
    with pytest.raises(fetch.ChecksumError) as caught:
        fetch.fetch_archive(NAME, target, "0" * 64, mirror=str(root))
    message = str(caught.value)
    assert f"The downloaded copy was deleted ({target} was not written)" in message
    assert f"the source itself ({root / NAME}) was not changed" in message
    assert (root / NAME).exists()  # the mirror's copy is untouched


def test_corrupt_existing_file_is_replaced(served, tmp_path):
    _, base, digest, _ = served
    target = tmp_path / NAME
    target.write_bytes(b"truncated")
    fetch.fetch_archive(NAME, target, digest, mirror=base)
    assert fetch.sha256_file(target) == digest


def test_transient_errors_are_retried_with_backoff(served, tmp_path):
    server, base, digest, _ = served
    server.fail_first = 2
    fetch.fetch_archive(NAME, tmp_path / NAME, digest, mirror=base, backoff=0.01)
    assert len(server.requests) == 3


def test_missing_file_fails_with_mirror_advice(served, tmp_path):
    server, base, digest, _ = served
    with pytest.raises(fetch.DownloadError) as info:
        fetch.fetch_archive(
            "model_outputs_Nope_5shots.zip", tmp_path / "x.zip", digest, mirror=base, backoff=0.01
        )
    message = str(info.value)
    assert "Could not fetch model_outputs_Nope_5shots.zip" in message and "404" in message
    assert (
        "EVALBARS_MIRROR=/path/to/eval_results" in message
        and "`mirror: /path/to/eval_results`" in message
    )
    assert len(server.requests) == 1  # a 404 is final, not retried
    assert not (tmp_path / "x.zip").exists()


def test_unreachable_host_fails_after_retries(tmp_path):
    # Port 9 on loopback: nothing listens, so the connection is refused at once.
    with pytest.raises(fetch.DownloadError, match="offline or cannot reach GitHub"):
        fetch.fetch_archive(
            NAME, tmp_path / NAME, "0" * 64, mirror="http://127.0.0.1:9/x", attempts=2, backoff=0.01
        )


def test_folder_mirror_and_environment_precedence(served, tmp_path, monkeypatch):
    _, _, digest, root = served
    fetch.fetch_archive(NAME, tmp_path / NAME, digest, mirror=str(root))
    assert fetch.sha256_file(tmp_path / NAME) == digest
    with pytest.raises(fetch.DownloadError, match="no such file in the mirror folder"):
        fetch.fetch_archive(
            "model_outputs_Nope_5shots.zip", tmp_path / "n.zip", digest, mirror=str(root)
        )
    monkeypatch.setenv(fetch.MIRROR_ENV, "/from/env")
    assert fetch.resolve_mirror("/from/config") == "/from/env"
    monkeypatch.delenv(fetch.MIRROR_ENV)
    assert fetch.resolve_mirror("/from/config") == "/from/config"
    assert fetch.resolve_mirror("") is None
    assert fetch.source_location(NAME, None) == f"{fetch.UPSTREAM_BASE_URL}/{NAME}"
    assert fetch.UPSTREAM_BASE_URL == (
        "https://github.com/TIGER-AI-Lab/MMLU-Pro/raw/f418b116db00b065c2aea046518d8fcf74d39872/eval_results"
    )


def test_pinned_checksums_cover_the_default_models():
    pinned = fetch.pinned_checksums()
    assert len(pinned) == 29
    assert (
        pinned["model_outputs_Yi-6B_5shots.zip"]
        == "2a85c02303f8e9b98ebd689f239c9fa7bf329014ec911c589f2a91fa47bc377d"
    )
    assert (
        fetch.pinned_checksums({"model_outputs_X_5shots.zip": "AB" * 32})[
            "model_outputs_X_5shots.zip"
        ]
        == "ab" * 32
    )
