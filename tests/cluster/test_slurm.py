"""Running on a cluster: the workflow really runs as SLURM jobs with the shipped profile, and
spreading the replication seeds, the simulation settings and the pairwise shards over cluster jobs
changes no byte.

The cluster tests start a one-node SLURM cluster on 127.0.0.1 with ``.ci/slurm/start``, run every
rule of a reduced configuration (data, analysis with the logistic readings, claims, ranks,
replication, simulations, the report) with ``--workflow-profile profiles/slurm`` beside a local run
of the same configuration, and compare every output byte for byte. ``.ci/slurm/start`` installs
Debian's packages when they are missing and writes /etc/slurm/slurm.conf (as root) only with
``EVALBARS_SLURM_INSTALL=1``, which .ci/run sets; without it, it refuses in one line (exit 3)
unless a cluster is already up. When the cluster cannot be started, the tests fail in CI (root,
Debian's mirror reachable, installing asked for: it should start) and skip elsewhere, with start's
one-line reason either way. Measured facts behind it: tests/slurm/README.md. The profiles' DAG
builds: tests/workflow/test_profiles.py; the seeds' chunks: tests/unit/readings/test_replication.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ..conftest import REPO
from ..workflow.test_pairwise_shards import leaderboard_workdir, pairwise_digests
from ..workflow.test_profiles import LOCAL_RULES, PROFILE
from ..workflow_runs import (
    SNAKEMAKE,
    output_digests,
    reduced_workdir,
    run_snakemake,
    snakemake_env,
)

START = REPO / ".ci" / "slurm" / "start"
STOP = REPO / ".ci" / "slurm" / "stop"
#: The whole workflow: every rule of the reduced configuration.
TARGETS = ("all",)
#: The one-line Snakemake prints for each cluster job it submits.
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+) \(log: (\S+)\)")
#: The jobs a cluster job runs, from the Snakemake command in its SLURM log.
TARGET_JOBS = re.compile(r"--target-jobs (.+?) --")
#: The rules of the profile's `analysis` group: one cluster job runs them all.
ANALYSIS_GROUP = {
    entry.split("=")[0]
    for entry in yaml.safe_load((PROFILE / "profile.yaml").read_text())["groups"]
    if entry.endswith("=analysis")
}
#: Hard limit of the cluster run (the whole reduced workflow took 455 s at load 8 on 2 cores): the
#: plugin can wait forever for jobs it lost, and ignores SIGTERM.
SLURM_TIMEOUT = 900


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
            # CI runs as root with Debian's mirror reachable and asks for the install (.ci/run sets
            # EVALBARS_SLURM_INSTALL=1): a cluster that does not start is a failure to see, not a
            # test to skip.
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
