"""Runs without a shared file system: the README's quickstart with its data and results in an S3
bucket (`evalbars report --storage`, docs/guides/cloud.md), against a real S3 server on 127.0.0.1
that this module starts and stops (moto's `ThreadedMotoServer`, as the S3 storage plugin's own
suite uses MinIO).

Checked: every file of the run lands in the bucket byte-identical to a local run of the same
logs (logs and benchmark timings aside); a second dry run has nothing to do; an edited claim
reruns only the jobs that read the claims, and an edited log the item table and everything after
it; the Kubernetes profile's options parse and plan the jobs without a shared file system (no
cluster: pods are not started).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest
import yaml
from moto.server import ThreadedMotoServer

from ..conftest import REPO
from ..workflow_runs import planned_jobs, report_front_page, snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
BIN = Path(sys.executable).parent
BUCKET = "evalbars-test"
#: The guide's bucket, replaced by the test server's.
GUIDE_BUCKET = "my-bucket"
#: moto accepts any credentials; the runs take them from the environment, as the guide says.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}
#: Files that hold times or this machine's paths, not the run's results.
UNCOMPARED = ("results/logs/", "results/benchmarks/")
#: Every job of the quickstart's run (one job per stage, `evalbars report`'s configuration).
QUICKSTART_JOBS = {
    "items",
    "harness_stderr",
    "subsample",
    "stage_analysis",
    "stage_readings",
    "report_landing",
    "all",
}
CLAIM = "evalbars/fake-strong > evalbars/fake-weak"


def cloud_env() -> dict:
    """The environment of a run: the test credentials, no other AWS or plugin settings."""
    env = {
        key: value
        for key, value in snakemake_env().items()
        if not key.startswith(("AWS_", "SNAKEMAKE_STORAGE_S3_"))
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env | CREDENTIALS


def guide_commands() -> list[list[str]]:
    """The guide's quickstart in a bucket: its `evalbars` commands, as words."""
    text = (REPO / "docs" / "guides" / "cloud.md").read_text()
    section = text.split("## Your logs, with the files in a bucket", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", section, re.S).group(1)
    commands = [shlex.split(line.removeprefix("$ ")) for line in block.splitlines()]
    assert [words[:2] for words in commands] == [["evalbars", "example"]] + [
        ["evalbars", "report"]
    ], block
    return commands


def run(words, cwd, check=True) -> subprocess.CompletedProcess:
    """An `evalbars` command, from PATH, with the test credentials."""
    assert words[0] == "evalbars"
    result = subprocess.run(words, capture_output=True, text=True, cwd=cwd, env=cloud_env())
    if check:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def objects(client, prefix: str) -> dict:
    """``{path under the prefix: object}`` of every object under ``prefix``."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{prefix}/")
    return {
        entry["Key"].removeprefix(f"{prefix}/"): entry
        for page in pages
        for entry in page.get("Contents", [])
    }


def body(client, prefix: str, path: str) -> bytes:
    return client.get_object(Bucket=BUCKET, Key=f"{prefix}/{path}")["Body"].read()


def last_job_stats(directory: Path) -> dict:
    """``{rule: jobs}`` of the last Snakemake run in ``directory``, from its log."""
    logs = sorted((directory / ".snakemake" / "log").glob("*.snakemake.log"))
    return planned_jobs(logs[-1].read_text())


@pytest.fixture(scope="module")
def s3():
    """A local S3 server with an empty bucket: its endpoint URL and a client of it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=CREDENTIALS["AWS_DEFAULT_REGION"],
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        client.create_bucket(Bucket=BUCKET)
        yield endpoint, client
    finally:
        server.stop()


@pytest.fixture(scope="module")
def quickstart(s3, tmp_path_factory):
    """The guide's commands (the README's quickstart with `--storage`), and the README's local
    quickstart on the same logs, side by side: the two run directories, the bucket prefix and
    what `evalbars report --storage` printed."""
    endpoint, _ = s3
    root = tmp_path_factory.mktemp("s3")
    example, stored = guide_commands()
    # the README's quickstart, with the bucket added
    assert shlex.join(stored[: stored.index("--storage")]) in (REPO / "README.md").read_text()
    run(example, root)
    url = stored[stored.index("--storage") + 1]
    assert url.startswith(f"s3://{GUIDE_BUCKET}/")
    stored[stored.index("--storage") + 1] = url.replace(GUIDE_BUCKET, BUCKET, 1)
    prefix = url.removeprefix(f"s3://{GUIDE_BUCKET}/")
    local = [*stored[: stored.index("--storage")], "--output", str(root / "local")]
    stored += ["--storage-endpoint-url", endpoint, "--output", str(root / "stored")]
    started = time.monotonic()
    runs = [
        subprocess.Popen(
            words,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
            env=cloud_env(),
        )
        for words in (local, stored)
    ]
    outputs = [process.communicate() for process in runs]
    for process, (out, err) in zip(runs, outputs, strict=True):
        assert process.returncode == 0, out[-3000:] + err[-3000:]
    print(f"\nlocal and S3 quickstarts side by side: {time.monotonic() - started:.0f} s")
    return root / "local", root / "stored", prefix, outputs[1][0]


def test_the_run_lands_in_the_bucket_byte_identical_to_a_local_run(s3, quickstart):
    _, client = s3
    local, stored, prefix, printed = quickstart
    found = objects(client, prefix)
    compared = sorted(path for path in found if not path.startswith(UNCOMPARED))
    made_here = sorted(
        str(path.relative_to(local))
        for folder in ("data", "results")
        for path in (local / folder).rglob("*")
        if path.is_file() and not str(path.relative_to(local)).startswith(UNCOMPARED)
    )
    assert compared == made_here
    different = [
        path for path in compared if body(client, prefix, path) != (local / path).read_bytes()
    ]
    assert different == []
    tables = [path for path in compared if path.startswith("results/tables/")]
    assert "results/tables/pairwise.csv" in tables and "data/items.parquet" in compared
    print(
        f"s3://{BUCKET}/{prefix}: {len(found)} objects; {len(compared)} byte-identical to the "
        f"local run ({len(tables)} tables), {len(found) - len(compared)} logs and benchmarks"
    )
    # The user's logs and evalbars' modules are read where they are, never copied to the bucket.
    assert not [path for path in found if "lm_eval-example" in path or "evalbars/" in path]
    # The run directory keeps the report, the configuration that records the bucket, and no
    # results of its own.
    assert not (stored / "results").exists()
    # The report opens on its first screen, fetched from the bucket, as the local one does.
    for directory in (local, stored):
        assert "Of 3 pairs, 2 are separated" in report_front_page(directory / "report.html")
    run_settings = yaml.safe_load((stored / "config.yaml").read_text())["run"]
    assert run_settings["storage"] == f"s3://{BUCKET}/{prefix}"
    lines = printed.splitlines()
    assert lines[0] == f"report: {stored / 'report.html'}"
    assert lines[1].startswith(f"results: s3://{BUCKET}/{prefix}/results/ ")
    assert lines[2].startswith("no claims given. Of 3 pairs, 2 are separated")
    assert (
        lines[3]
        == f"rerun or edit: evalbars run --directory {stored} --configfile {stored / 'config.yaml'}"
    )


def test_a_second_dry_run_has_nothing_to_do(quickstart):
    _, stored, _, _ = quickstart
    # The bucket the run directory records is used without being named again.
    result = run(["evalbars", "run", "--directory", str(stored), "--", "--dry-run"], stored)
    assert "Nothing to be done" in result.stdout, result.stdout[-3000:]


def test_an_edited_claim_reruns_only_the_jobs_that_read_the_claims(s3, quickstart):
    _, client = s3
    local, stored, prefix, printed = quickstart
    before = objects(client, prefix)
    config = stored / "config.yaml"
    settings = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump(settings | {"claims": [CLAIM]}, sort_keys=False))
    rerun = printed.splitlines()[3].removeprefix("rerun or edit: ")
    run(shlex.split(rerun), stored)  # as printed
    jobs = last_job_stats(stored)
    print(f"after an edit of claims, `{rerun}` ran: {sorted(jobs)}")
    assert set(jobs) == {"stage_readings", "report_landing", "all"}, jobs
    after = objects(client, prefix)
    rewritten = {path for path in after if after[path]["ETag"] != before[path]["ETag"]}
    assert "results/tables/claims.csv" in rewritten
    assert CLAIM.encode() in body(client, prefix, "results/tables/claims.csv")
    # What the analysis stage and the item table made is untouched in the bucket.
    for path in ("data/items.parquet", "results/tables/pairwise.csv", "results/tables/models.csv"):
        assert after[path]["LastModified"] == before[path]["LastModified"], path


def test_an_edited_log_reruns_the_item_table_and_everything_after_it(quickstart):
    local, stored, _, _ = quickstart
    log = next((local.parent / "lm_eval-example").rglob("samples_toyarith_*.jsonl"))
    original = log.read_bytes()
    try:
        log.write_bytes(original + b"\n")
        result = run(["evalbars", "run", "--directory", str(stored), "--", "--dry-run"], stored)
    finally:
        log.write_bytes(original)
    jobs = planned_jobs(result.stdout)
    print(f"after an edit of {log.name}, a dry run plans: {sorted(jobs)}")
    assert set(jobs) == QUICKSTART_JOBS, result.stdout[-3000:]


def test_the_kubernetes_profile_plans_the_jobs_without_a_shared_file_system(s3, quickstart):
    endpoint, _ = s3
    _, stored, _, _ = quickstart
    workdir = stored.parent / "kubernetes"
    workdir.mkdir()
    settings = yaml.safe_load((stored / "config.yaml").read_text())
    settings["run"] = {"stages": settings["run"]["stages"], "report": None}
    (workdir / "config.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    # As the profile's header runs it, on a prefix of its own (nothing made yet).
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
        "--directory", str(workdir), "--configfile", str(workdir / "config.yaml"),
        "--workflow-profile", str(REPO / "profiles" / "kubernetes"),
        "--default-storage-prefix", f"s3://{BUCKET}/kubernetes",
        "--storage-s3-endpoint-url", endpoint, "--dry-run",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env=cloud_env())
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"profile {REPO / 'profiles' / 'kubernetes'}" in result.stdout + result.stderr
    assert set(planned_jobs(result.stdout)) == QUICKSTART_JOBS
    assert f"s3://{BUCKET}/kubernetes/data/items.parquet (in storage)" in result.stdout
