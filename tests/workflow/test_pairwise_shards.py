"""`analysis.shards`: the pairwise table computed in blocks of pairs by separate jobs and gathered
is the table one job computes, byte for byte (the SLURM run of it: tests/cluster/test_slurm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..benchmark import synthetic_items
from ..workflow_runs import make_workdir, output_digests, planned_jobs, run_snakemake


def leaderboard_workdir(tmp_path: Path, models: int, questions: int, shards: int) -> Path:
    """A run directory analysing a seeded synthetic leaderboard, its pairs in ``shards`` jobs."""
    workdir = make_workdir(
        tmp_path,
        models=[],
        predictions=["leaderboard.parquet"],
        subsample={"n": "all", "seed": 1},
        analysis={"shards": shards},
    )
    synthetic_items(models, questions=questions).to_parquet(workdir / "leaderboard.parquet")
    return workdir


def pairwise_digests(workdir: Path) -> dict:
    return {path: digest for path, digest in output_digests(workdir).items() if "pairwise" in path}


@pytest.mark.workflow
def test_three_shards_write_the_bytes_of_one_job(tmp_path):
    one = leaderboard_workdir(tmp_path / "one", models=30, questions=200, shards=1)
    three = leaderboard_workdir(tmp_path / "three", models=30, questions=200, shards=3)
    planned = planned_jobs(run_snakemake(three, "-n", "analysis_pairwise").stdout)
    assert planned["analysis_pairwise_shard"] == 3 and planned["analysis_pairwise"] == 1
    assert "analysis_pairwise_shard" not in planned_jobs(
        run_snakemake(one, "-n", "analysis_pairwise").stdout
    )
    for workdir in (one, three):
        run_snakemake(workdir, "--cores", "2", "analysis_pairwise")
    shards = sorted(p.name for p in (three / "results" / "pairwise").iterdir())
    assert shards == [f"shard{s}_of_3.parquet" for s in range(3)]
    digests = pairwise_digests(one)
    assert set(digests) == {
        "results/tables/pairwise.csv",
        "results/tables/pairwise.md",
        "results/tables/pairwise.tex",
        "results/tables/pairwise.parquet",
        "results/report/pairwise.csv",
    }
    assert digests == pairwise_digests(three)
