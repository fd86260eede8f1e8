"""`evalbars report`: the workflow on a harness's own logs, in one command, as a newcomer types it.

The lm-eval example is run by the README's own command in
tests/workflow/test_documented_commands.py; here the Inspect logs, with a claim, and bad input.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ..conftest import DATA
from ..workflow_runs import embedded_results, report_front_page, snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
INSPECT = DATA / "harness" / "inspect" / "eval_zstd"
CLAIM = "mockllm/fake-strong > mockllm/fake-weak"


def digests(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def inspect_report(tmp_path_factory):
    output = tmp_path_factory.mktemp("report") / "inspect-report"
    before = digests(INSPECT)
    result = subprocess.run(
        [*EVALBARS, "report", str(INSPECT), "--claim", CLAIM, "--output", str(output)],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert digests(INSPECT) == before  # the user's logs are never modified
    return output, result


def test_report_prints_the_path_and_one_line_per_claim(inspect_report):
    output, result = inspect_report
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == f"report: {output / 'report.html'}"
    # 20 questions: the headline leads with the exact and Bayesian readings (small n).
    assert lines[1].startswith("With 20 questions (fewer than 332) the z readings' intervals")
    assert "0 of 1 by the exact McNemar reading, 1 of 1 by the Bayesian reading" in lines[1]
    assert lines[2].startswith(f"  {CLAIM}: naive ")
    assert "paired holm" in lines[2] and "mixed holm" in lines[2]
    assert lines[3] == f"rerun or edit: evalbars run --directory {output} --configfile " + str(
        output / "config.yaml"
    )
    # progress, as it runs
    assert "steps (100%) done" in result.stderr


def test_report_writes_the_config_it_used_and_fits_it_to_the_data(inspect_report):
    output, _ = inspect_report
    config = yaml.safe_load((output / "config.yaml").read_text())
    assert config["models"] == [] and config["claims"] == [CLAIM]
    assert config["predictions"] == [{"path": str(INSPECT.resolve())}]
    assert config["subsample"] == {"n": "all"}
    claims = pd.read_csv(output / "results" / "tables" / "claims.csv")
    assert set(claims["claim"]) == {CLAIM}
    # no comparison with the paper on other data
    assert not (output / "results" / "tables" / "replication.csv").exists()


def test_report_opens_on_the_verdicts(inspect_report):
    output, _ = inspect_report
    front = report_front_page(output / "report.html")
    headline = front.index("With 20 questions (fewer than 332)")
    assert headline < front.index("Naive versus blocked") < front.index("How this report was made")
    assert "3 models read: mockllm/fake-strong" in front
    assert "data:image/png;base64," in front  # the claims figure, inline


def test_the_report_embeds_every_stages_tables_and_figures(inspect_report):
    # One job per stage (`jobs: per_stage`): the stage rules must keep each output's report().
    output, _ = inspect_report
    embedded = embedded_results(output / "report.html")
    wanted = {"claims.csv", "claims.png", "naive_vs_blocked.csv", "models.csv", "pairwise.csv"}
    wanted |= {"ranks.csv", "leaderboard.csv", "landing.html", "subsample_allocation.csv"}
    assert wanted <= embedded, sorted(wanted - embedded)


def test_rerun_with_plain_snakemake_is_a_no_op(inspect_report):
    output, result = inspect_report
    command = result.stdout.splitlines()[3].removeprefix("rerun or edit: ").split()
    assert command[:2] == ["evalbars", "run"]
    rerun = subprocess.run(
        [*EVALBARS, *command[1:], "data_all", "analysis_all", "claims_all", "--", "-n"],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert rerun.returncode == 0 and "Nothing to be done" in rerun.stdout + rerun.stderr


def test_the_same_options_in_another_order_rerun_nothing(inspect_report):
    # `evalbars report` and `evalbars.api.write_report` write a source's options in different
    # orders; so may a user. The item table's params were order-sensitive, so the README's
    # `evalbars report` followed by its Python example reran the whole workflow.
    output, result = inspect_report
    command = result.stdout.splitlines()[3].removeprefix("rerun or edit: ").split()[1:]
    config_path = output / "config.yaml"
    written = config_path.read_text()
    config = yaml.safe_load(written)
    # the schema's defaults, which the workflow appends after the given keys, given first
    config["predictions"] = [{"allow_partial": False, "format": "auto", "path": str(INSPECT)}]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        rerun = subprocess.run(
            [*EVALBARS, *command, "data_all", "analysis_all", "claims_all", "--", "-n"],
            capture_output=True,
            text=True,
            env=snakemake_env(),
        )
    finally:
        config_path.write_text(written)
    assert rerun.returncode == 0 and "Nothing to be done" in rerun.stdout + rerun.stderr, (
        rerun.stdout[-2000:]
    )


def test_report_on_bad_input_is_one_line_and_a_nonzero_exit(tmp_path):
    output = tmp_path / "out"
    result = subprocess.run(
        [*EVALBARS, "report", str(tmp_path / "missing"), "--output", str(output)],
        capture_output=True,
        text=True,
        env=snakemake_env(),
    )
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors == [f"evalbars report: error: {tmp_path / 'missing'}: file does not exist"]
    assert "Traceback" not in result.stderr
    assert not (output / "results" / "tables").exists()


def test_report_prints_an_input_error_once(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalbars.cli",
            "report",
            str(empty),
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"evalbars report: error: {empty}: the directory holds no prediction file or log "
        "evalbars reads"
    ]
