"""A run in S3 storage (evalbars.pipeline.storage, `evalbars report --storage`): the location and
the plugin are checked in one line before anything is written, the run records them and hands
them to Snakemake, and a run that finds no credentials says where they come from. Hermetic: no
S3 server and no Snakemake (tests/workflow/test_s3_storage.py runs both).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from snakemake_interface_executor_plugins.settings import SharedFSUsage

from evalbars.cli import main
from evalbars.errors import ConfigError
from evalbars.pipeline import runner, smk, storage

from ...conftest import DATA

LM_EVAL = DATA / "harness" / "lm_eval"
REPORT = ["report", str(LM_EVAL), "--runs", "newest", "--id-field", "id"]


@pytest.mark.parametrize(
    ("url", "recorded"),
    [
        ("s3://evalbars-runs/paper/", "s3://evalbars-runs/paper"),
        ("s3://evalbars-runs", "s3://evalbars-runs"),
        ("s3://runs.example.org/team/2026-12/run_1", "s3://runs.example.org/team/2026-12/run_1"),
    ],
)
def test_an_s3_location_is_recorded_without_a_trailing_slash(url, recorded):
    assert storage.check_storage(url) == recorded


@pytest.mark.parametrize(
    ("url", "endpoint", "problem"),
    [
        ("gs://runs/paper", None, "not an S3 location; give s3://BUCKET/PREFIX"),
        ("runs/paper", None, "not an S3 location; give s3://BUCKET/PREFIX"),
        ("s3:///paper", None, "not an S3 location; give s3://BUCKET/PREFIX"),
        ("s3://runs/paper?versionId=1", None, "give s3://BUCKET/PREFIX, with no ? or #"),
        (
            "s3://My_Runs/paper",
            None,
            "'My_Runs' is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and "
            "hyphens, starting and ending with a letter or digit)",
        ),
        (
            "s3://runs:9000/paper",
            None,
            "'runs:9000' is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and "
            "hyphens, starting and ending with a letter or digit)",
        ),
        (
            "s3://runs/my run",
            None,
            "the prefix part 'my run' may hold letters, digits and . _ = + @ , - only (no empty "
            "part, no '..', no braces or spaces)",
        ),
        (
            "s3://runs/a//b",
            None,
            "the prefix part '' may hold letters, digits and . _ = + @ , - only (no empty part, "
            "no '..', no braces or spaces)",
        ),
        (
            "s3://runs/{sample}",
            None,
            "the prefix part '{sample}' may hold letters, digits and . _ = + @ , - only (no empty "
            "part, no '..', no braces or spaces)",
        ),
    ],
)
def test_a_bad_location_is_one_line_naming_it(url, endpoint, problem):
    with pytest.raises(ConfigError) as refused:
        storage.check_storage(url, endpoint)
    assert str(refused.value) == f"--storage {url!r}: {problem}"


@pytest.mark.parametrize("endpoint", ["localhost:9000", "ftp://127.0.0.1:9000", "http://"])
def test_a_bad_endpoint_is_one_line_naming_it(endpoint):
    with pytest.raises(ConfigError) as refused:
        storage.check_storage("s3://runs/paper", endpoint)
    assert str(refused.value) == (
        f"--storage-endpoint-url {endpoint!r}: not an http(s) URL of an S3 server; give e.g. "
        "http://127.0.0.1:9000 (none for AWS S3)"
    )


def test_report_refuses_a_bad_location_before_anything_is_written(tmp_path, capsys):
    output = tmp_path / "report"
    assert main([*REPORT, "--storage", "gs://runs/paper", "--output", str(output)]) == 1
    assert capsys.readouterr().err.strip() == (
        "evalbars report: error: --storage 'gs://runs/paper': not an S3 location; give "
        "s3://BUCKET/PREFIX"
    )
    assert not output.exists()


def test_an_endpoint_without_a_location_is_refused(tmp_path, capsys):
    output = tmp_path / "report"
    argv = [*REPORT, "--storage-endpoint-url", "http://127.0.0.1:9000", "--output", str(output)]
    assert main(argv) == 1
    assert capsys.readouterr().err.strip() == (
        "evalbars report: error: --storage-endpoint-url: give --storage s3://BUCKET/PREFIX too"
    )
    assert not output.exists()


def test_without_the_plugin_the_report_says_to_install_the_cloud_extra(
    tmp_path, capsys, monkeypatch
):
    found = storage.importlib.util.find_spec
    monkeypatch.setattr(
        storage.importlib.util,
        "find_spec",
        lambda name, *a: None if name == storage.PLUGIN else found(name, *a),
    )
    output = tmp_path / "report"
    assert main([*REPORT, "--storage", "s3://runs/paper", "--output", str(output)]) == 1
    assert capsys.readouterr().err.strip() == (
        "evalbars report: error: --storage s3://runs/paper: Snakemake's S3 storage plugin "
        "(snakemake-storage-plugin-s3) is not installed; install evalbars[cloud] (pip install "
        '"evalbars[cloud]", or uv sync --extra cloud in a clone)'
    )
    assert not output.exists()


def test_the_flags_and_the_copies_of_a_run_in_storage():
    run = {"storage": "s3://runs/team/r1", "storage_endpoint_url": "http://127.0.0.1:9000"}
    assert storage.storage_flags(run) == [
        "--default-storage-provider",
        "s3",
        "--default-storage-prefix",
        "s3://runs/team/r1",
        "--storage-s3-endpoint-url",
        "http://127.0.0.1:9000",
        "--local-storage-prefix",
        ".snakemake/storage",
        "--keep-storage-local-copies",
    ]
    assert storage.storage_flags({"storage": None, "storage_endpoint_url": None}) == []
    directory = Path("/runs/r1")
    # where the S3 plugin keeps its local copies: <local storage prefix>/s3/<bucket>/<key>
    assert storage.results_root(directory, run["storage"]) == (
        directory / ".snakemake" / "storage" / "s3" / "runs" / "team" / "r1"
    )
    assert storage.results_root(directory) == directory


@pytest.mark.parametrize(
    ("provider", "usage", "mode"),
    [
        (None, SharedFSUsage.all(), None),
        ("s3", SharedFSUsage.all(), "shared"),  # the local executor, a cluster's shared disk
        ("s3", frozenset(), "isolated"),  # Kubernetes, cloud batch: --shared-fs-usage none
        ("s3", frozenset({SharedFSUsage.PERSISTENCE, SharedFSUsage.SOURCES}), "isolated"),
    ],
)
def test_storage_mode_follows_the_shared_file_system_snakemake_assumes(provider, usage, mode):
    settings = SimpleNamespace(default_storage_provider=provider, shared_fs_usage=usage)
    assert smk.storage_mode(settings) == mode


#: A stand-in for Snakemake: it records its command line, and fails as Snakemake fails when it
#: finds no credentials for the bucket (an exception group, drawn with | and +--- margins).
NO_CREDENTIALS = """\
import json, pathlib, sys
pathlib.Path("argv.json").write_text(json.dumps(sys.argv))
print("  | snakemake_interface_common.exceptions.WorkflowError: Failed to check existence of "
      "s3://runs/r1/data/items.parquet")
print("  | NoCredentialsError: Unable to locate credentials")
print("  +------------------------------------")
sys.exit(1)
"""


def test_a_run_hands_its_recorded_bucket_to_snakemake_and_names_missing_credentials(
    tmp_path, capsys, monkeypatch
):
    directory = tmp_path / "run"
    directory.mkdir()
    config = {
        "models": [],
        "predictions": [str(LM_EVAL)],
        "run": {"report": None, "storage": "s3://runs/r1", "storage_endpoint_url": None},
    }
    (directory / "config.yaml").write_text(yaml.safe_dump(config))
    given = []

    def stand_in(*args, **kwargs):
        given.append(kwargs["extra"])
        return [sys.executable, "-c", NO_CREDENTIALS]

    monkeypatch.setattr(runner, "snakemake_command", stand_in)
    assert main(["run", "--directory", str(directory)]) == 1
    assert given == [storage.storage_flags(config["run"])]
    assert capsys.readouterr().err.strip() == (
        "evalbars run: error: NoCredentialsError: Unable to locate credentials (a run in S3 "
        "storage takes its credentials from the environment: AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
    )


def test_a_bad_recorded_bucket_is_refused_naming_the_config_key(tmp_path, capsys):
    directory = tmp_path / "run"
    directory.mkdir()
    config = {"models": [], "predictions": [str(LM_EVAL)], "run": {"storage": "s3://Runs/r1"}}
    (directory / "config.yaml").write_text(yaml.safe_dump(config))
    assert main(["run", "--directory", str(directory)]) == 1
    assert capsys.readouterr().err.strip() == (
        "evalbars run: error: config key `run.storage` 's3://Runs/r1': 'Runs' is not an S3 "
        "bucket name (3 to 63 lowercase letters, digits, dots and hyphens, starting and ending "
        "with a letter or digit)"
    )
    assert sorted(path.name for path in directory.iterdir()) == ["config.yaml"]
