"""The shipped workflow profiles: each builds the whole DAG, the SLURM profile names only rules and
groups of the workflow, and `replication.jobs` sets the number of seed-chunk jobs. The run on a
real SLURM cluster: tests/cluster/test_slurm.py.
"""

from __future__ import annotations

import pytest
import yaml

from ..conftest import REPO
from ..workflow_runs import make_workdir, planned_jobs, run_snakemake

pytestmark = pytest.mark.workflow

PROFILE = REPO / "profiles" / "slurm"
#: Rules that run on the submit host (`localrule: True`, or target rules without a job body).
LOCAL_RULES = {
    "all",
    "download",
    "report_landing",
    "replication_runs",
    "replication_table",
    "replication_all",
    "sim_leaderboard_table",
    "sim_leaderboard_figures",
    "sim_precision",
    "sim_precision_figures",
    "sim_fwer_table",
    "sim_fwer_figures",
    "sim_clustered_table",
    "sim_clustered_figure",
    "simulate_all",
}


def test_replication_jobs_sets_the_number_of_seed_chunks(tmp_path):
    policies = ["wrong", "random_guess"]
    workdir = make_workdir(
        tmp_path, replication={"n_seeds": 40, "seed": 1, "policies": policies, "jobs": 3}
    )
    result = run_snakemake(workdir, "-n", "--cores", "1", "replication_all")
    planned = planned_jobs(result.stdout)
    assert planned["replication_chunk"] == 3 and planned["replication_runs"] == 1
    for chunk in range(3):
        assert f"results/replication/seeds/chunk{chunk}_of_3.parquet" in result.stdout


def test_slurm_profile_names_only_rules_and_groups_of_the_workflow(tmp_path):
    profile = yaml.safe_load((PROFILE / "profile.yaml").read_text())
    assert profile["executor"] == "slurm"
    # Without slurmdbd, sacct fails and plugin 2.8.0 waits forever (tests/slurm/README.md).
    assert profile["slurm-status-command"] == "squeue"
    assert {"mem_mb", "runtime"} <= set(profile["default-resources"])
    listed = run_snakemake(make_workdir(tmp_path), "--list-rules").stdout.split()
    assert set(profile["set-resources"]) <= set(listed), profile["set-resources"]
    grouped = dict(entry.split("=") for entry in profile["groups"])
    assert set(grouped) <= set(listed)
    components = dict(entry.split("=") for entry in profile["group-components"])
    assert set(components) <= set(grouped.values()) | {"simulation_settings"}
    rules = (REPO / "workflow" / "rules" / "simulate.smk").read_text()
    assert rules.count('group:\n        "simulation_settings"') == 3
    # A rule is local either in its rule file or here, never on the cluster by accident.
    assert not set(grouped) & LOCAL_RULES


#: Profiles whose DAG needs a bucket (no shared file system): tests/workflow/test_s3_storage.py
#: plans their jobs against a local S3 server.
STORAGE_PROFILES = {"kubernetes"}


@pytest.mark.parametrize(
    "profile",
    sorted(p.name for p in (REPO / "profiles").iterdir() if p.name not in STORAGE_PROFILES),
)
def test_every_shipped_profile_builds_the_whole_dag(tmp_path, profile):
    # The whole workflow, every job forced, as the README's commands run it: a group that a job
    # outside it both feeds and reads from (a cycle) stops the DAG build here, in seconds.
    workdir = make_workdir(tmp_path)
    result = run_snakemake(
        workdir, "-n", "--forceall", "--workflow-profile", str(REPO / "profiles" / profile)
    )
    planned = planned_jobs(result.stdout)
    assert planned["all"] == 1 and planned["analysis_logistic_verdicts"] == 1, result.stdout[-2000:]
    assert planned["report_landing"] == 1 and planned["claims_check"] == 1
