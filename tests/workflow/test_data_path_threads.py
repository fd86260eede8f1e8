"""The item table and the subsample run with two threads (``DATA_PATH_THREADS`` in
workflow/rules/common.smk: they run alone, and Arrow decodes their Parquet columns in parallel),
and write the same files at any thread count."""

from __future__ import annotations

import pytest

from ..workflow_runs import make_workdir, output_digests, run_snakemake

pytestmark = pytest.mark.workflow

TARGET = "data/subsample/scores.npz"


def _data_digests(workdir) -> dict:
    """The subsample's files and the tables (output_digests), and the item table."""
    return output_digests(workdir) | {"items": (workdir / "data" / "items.parquet").read_bytes()}


def test_the_data_path_runs_with_two_threads_and_writes_the_same_files_with_one(tmp_path):
    two = make_workdir(tmp_path / "two")
    planned = run_snakemake(two, TARGET, "--cores", "2", "-n").stdout
    # the rules' messages say their threads
    assert "--- Building the canonical item table (threads: 2)." in planned, planned
    assert "--- Drawing the seeded category-stratified subsample (threads: 2)." in planned
    # capped at the cores given
    capped = run_snakemake(two, TARGET, "--cores", "1", "-n").stdout
    assert "--- Building the canonical item table (threads: 1)." in capped, capped
    run_snakemake(two, TARGET, "--cores", "2")
    one = make_workdir(tmp_path / "one")
    run_snakemake(one, TARGET, "--cores", "2", "--set-threads", "items=1", "subsample=1")
    assert _data_digests(two) == _data_digests(one)
    assert (two / "data" / "subsample" / "scores.npz").stat().st_size > 0
