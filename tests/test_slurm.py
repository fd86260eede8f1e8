"""Running on a cluster: spreading the replication seeds and the simulation settings over cluster
jobs changes no byte, and the workflow really runs as SLURM jobs with the shipped profile.

The cluster test starts a one-node SLURM cluster on 127.0.0.1 with ``.ci/slurm/start`` (which
installs Debian's packages when they are missing, as root), runs every rule of a reduced
configuration (data, analysis with the logistic readings, claims, ranks, replication, simulations,
the report) with ``--workflow-profile profiles/slurm`` beside a local run of the same
configuration, and compares every output byte for byte. When the cluster cannot be
started, it fails in CI (root, Debian's mirror reachable: it should start) and skips elsewhere,
with start's one-line reason either way. Measured facts behind it: tests/slurm/README.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbars.readings import replication

from .conftest import REPO
from .test_pairwise_shards import leaderboard_workdir, pairwise_digests
from .workflow_runs import (
    SNAKEMAKE,
    make_workdir,
    output_digests,
    planned_jobs,
    reduced_workdir,
    run_snakemake,
    snakemake_env,
)

START = REPO / ".ci" / "slurm" / "start"
STOP = REPO / ".ci" / "slurm" / "stop"
PROFILE = REPO / "profiles" / "slurm"
#: The whole workflow: every rule of the reduced configuration.
TARGETS = ("all",)
#: The one-line Snakemake prints for each cluster job it submits.
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")
#: The jobs a cluster job runs, from the Snakemake command in its SLURM log.
TARGET_JOBS = re.compile(r"--target-jobs (.+?) --")
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
#: The rules of the profile's `analysis` group: one cluster job runs them all.
ANALYSIS_GROUP = {
    entry.split("=")[0]
    for entry in yaml.safe_load((PROFILE / "profile.yaml").read_text())["groups"]
    if entry.endswith("=analysis")
}
#: Hard limit of the cluster run (the whole reduced workflow took 455 s at load 8 on 2 cores): the
#: plugin can wait forever for jobs it lost, and ignores SIGTERM.
SLURM_TIMEOUT = 900


def test_seed_chunks_are_contiguous_and_cover_the_seed_list():
    for n_seeds, jobs in [(200, 1), (200, 3), (40, 7), (5, 9), (10, 4)]:
        chunks = replication.seed_chunks(n_seeds, jobs)
        assert len(chunks) == min(jobs, n_seeds)
        assert [i for chunk in chunks for i in chunk] == list(range(n_seeds))
        sizes = [len(chunk) for chunk in chunks]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    with pytest.raises(ValueError, match="jobs >= 1"):
        replication.seed_chunks(40, 0)


@pytest.mark.realdata
def test_replication_seeds_table_is_byte_identical_for_any_number_of_jobs(default_items, tmp_path):
    options = {
        "policies": ["wrong", "random_guess"],
        "n": 1497,
        "configured_seed": 2024,
        "items_policy": "wrong",
        "policy_seed": 12345,
    }
    n_seeds, seed = 5, 1
    whole = replication.replication_runs(
        default_items, seeds=replication.subsample_seeds(n_seeds, seed), **options
    ).to_csv(index=False)
    for jobs in (2, 5):
        chunks = []
        for chunk in range(jobs):
            # As in the workflow: each job writes Parquet, the combining job reads them back.
            path = tmp_path / f"chunk{chunk}_of_{jobs}.parquet"
            replication.replication_chunk(
                default_items, n_seeds=n_seeds, seed=seed, jobs=jobs, chunk=chunk, **options
            ).to_parquet(path, index=False)
            chunks.append(pd.read_parquet(path))
        # Only the first chunk carries the configured seed (2 policies x 14 quantities).
        assert [int(chunk["configured"].sum()) for chunk in chunks] == [28] + [0] * (jobs - 1)
        combined = replication.combine_chunks(chunks, options["policies"])
        assert combined.to_csv(index=False) == whole


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


@pytest.mark.parametrize("profile", sorted(p.name for p in (REPO / "profiles").iterdir()))
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


@pytest.fixture(scope="module")
def slurm_cluster():
    """The one-node test cluster, started for this module and stopped after it, even on failure.

    A cluster that was already up (started by someone else) is used and left running.
    """
    started = subprocess.run([str(START)], capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        lines = started.stderr.strip().splitlines() or [f"no message, exit {started.returncode}"]
        reason = f".ci/slurm/start could not start the test cluster: {lines[-1]}"
        if os.environ.get("CI"):
            # CI runs as root with Debian's mirror reachable: a cluster that does not start is a
            # failure to see, not a test to skip.
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    ours = "already up" not in started.stdout
    yield started.stdout.strip()
    if ours:
        stopped = subprocess.run([str(STOP)], capture_output=True, text=True, timeout=300)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def cluster_workdir(tmp_path: Path, jobs: int) -> Path:
    """The reduced configuration of the workflow tests, its seeds spread over ``jobs`` jobs."""
    workdir = reduced_workdir(tmp_path)
    path = workdir / "config" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["replication"]["jobs"] = jobs
    path.write_text(yaml.safe_dump(config))
    return workdir


def slurm(*args) -> str:
    return subprocess.run(args, capture_output=True, text=True, timeout=30, check=True).stdout


@pytest.mark.slurm
@pytest.mark.workflow
@pytest.mark.realdata  # the reduced configuration analyses the paper's archives
def test_every_rule_runs_as_slurm_jobs_with_the_outputs_of_a_local_run(slurm_cluster, tmp_path):
    # The same configuration twice: locally with the seeds in one job, and on the cluster with
    # the seeds in 2 chunks and the 6 simulation settings grouped 3 per cluster job.
    local = cluster_workdir(tmp_path / "local", jobs=1)
    on_slurm = cluster_workdir(tmp_path / "slurm", jobs=2)
    command = [
        "timeout",
        "-k",
        "10",
        str(SLURM_TIMEOUT),
        *SNAKEMAKE,
        "-d",
        str(on_slurm),
        *TARGETS,
        "--workflow-profile",
        str(PROFILE),
        "--group-components",
        "simulation_settings=3",
        "analysis=16",
        "--report",
        str(on_slurm / "report.html"),
        "--report-after-run",
    ]
    start = time.monotonic()
    # The cluster run mostly waits (for SLURM to start jobs, for the plugin's status checks), so
    # the local run goes meanwhile.
    cluster = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=snakemake_env(),
        cwd=REPO,
    )
    try:
        run_snakemake(local, "--cores", "2", *TARGETS)
        log = cluster.communicate(timeout=SLURM_TIMEOUT + 30)[0]
    finally:
        if cluster.poll() is None:
            cluster.kill()
    seconds = time.monotonic() - start
    (tmp_path / "slurm.log").write_text(log)
    assert cluster.returncode == 0, (
        f"snakemake on SLURM exited {cluster.returncode} after {seconds:.0f} s (124 or 137: "
        f"killed by the timeout, the plugin hung):\n{log[-5000:]}"
    )

    # Every cluster job Snakemake submitted: its SLURM log, state and working directory.
    submitted = SUBMITTED.findall(log)
    slurm_logs = on_slurm / ".snakemake" / "slurm_logs"
    # The log folder names the rule, or the group and its rules: group_data_items_subsample,
    # group_simulation_settings_<rules of the settings in it>.
    kinds = Counter(
        re.sub(
            r"^(group_(data|simulation_settings|analysis))_.*",
            r"\1",
            Path(path).relative_to(slurm_logs).parts[0],
        )
        for _, path in submitted
    )
    assert kinds == {
        "group_data": 1,
        "group_analysis": 1,
        "group_simulation_settings": 2,
        "rule_replication_chunk": 2,
    }, log[-3000:]
    ran_on_slurm = Counter()
    for job_id, path in submitted:
        assert slurm("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T").strip() == "COMPLETED"
        details = slurm("scontrol", "show", "job", job_id)
        assert f"WorkDir={on_slurm}" in details, details
        # SLURM names the log after the job id; in it, the Snakemake command that ran the jobs.
        assert Path(path).name == f"{job_id}.log"
        targets = set()
        for found in TARGET_JOBS.findall(Path(path).read_text()):
            targets |= set(found.split())
        ran_on_slurm.update(target.split(":")[0] for target in targets)
    analysis = {rule: 1 for rule in ANALYSIS_GROUP}
    assert ran_on_slurm == {
        "items": 1,
        "subsample": 1,
        **analysis,
        "replication_chunk": 2,
        "sim_leaderboard": 2,
        "sim_fwer": 3,
        "sim_clustered": 1,
    }
    # Every other job that ran is a local one.
    finished = Counter(re.findall(r"Finished jobid: \S+ \(Rule: (\w+)\)", log))
    assert set(finished) - set(ran_on_slurm) <= LOCAL_RULES, finished
    assert not set(ran_on_slurm) & LOCAL_RULES

    # The outputs: byte for byte those of the local run; the report, made on the submit host.
    assert (on_slurm / "report.html").stat().st_size > 100_000
    digests = output_digests(on_slurm)
    assert len(digests) > 20
    assert digests == output_digests(local)


def cluster_log_kinds(log: str, workdir: Path) -> Counter:
    """Cluster jobs Snakemake submitted, by the folder of their SLURM log: the rule
    (``rule_<name>``) or the group (``group_<name>``, its rules' names cut off)."""
    slurm_logs = workdir / ".snakemake" / "slurm_logs"
    return Counter(
        re.sub(r"^(group_(data|analysis))_.*", r"\1", Path(path).relative_to(slurm_logs).parts[0])
        for _, path in SUBMITTED.findall(log)
    )


@pytest.mark.slurm
@pytest.mark.workflow
def test_pairwise_shards_run_as_slurm_jobs_with_the_bytes_of_one_local_job(slurm_cluster, tmp_path):
    # A 500-model board (124,750 pairs): on the cluster in 4 shard jobs, locally in one job.
    local = leaderboard_workdir(tmp_path / "local", models=500, questions=400, shards=1)
    on_slurm = leaderboard_workdir(tmp_path / "slurm", models=500, questions=400, shards=4)
    command = [
        "timeout",
        "-k",
        "10",
        str(SLURM_TIMEOUT),
        *SNAKEMAKE,
        "-d",
        str(on_slurm),
        "analysis_pairwise",
        "--workflow-profile",
        str(PROFILE),
    ]
    start = time.monotonic()
    cluster = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=snakemake_env(),
        cwd=REPO,
    )
    try:
        run_snakemake(local, "--cores", "2", "analysis_pairwise")
        log = cluster.communicate(timeout=SLURM_TIMEOUT + 30)[0]
    finally:
        if cluster.poll() is None:
            cluster.kill()
    seconds = time.monotonic() - start
    (tmp_path / "slurm.log").write_text(log)
    assert cluster.returncode == 0, (
        f"snakemake on SLURM exited {cluster.returncode} after {seconds:.0f} s:\n{log[-5000:]}"
    )
    # Each shard is a cluster job of its own; the gather runs in the profile's analysis group.
    assert cluster_log_kinds(log, on_slurm) == {
        "group_data": 1,
        "rule_analysis_pairwise_shard": 4,
        "group_analysis": 1,
    }, log[-3000:]
    for job_id, _ in SUBMITTED.findall(log):
        assert slurm("squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T").strip() == "COMPLETED"
    shards = sorted(p.name for p in (on_slurm / "results" / "pairwise").iterdir())
    assert shards == [f"shard{s}_of_4.parquet" for s in range(4)]
    digests = pairwise_digests(on_slurm)
    assert len(digests) == 5 and digests == pairwise_digests(local)
