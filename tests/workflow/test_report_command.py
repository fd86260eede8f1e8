"""`evalbars report`: the workflow on a harness's own logs, in one command, as a newcomer types it.

The lm-eval example is run by the README's own command in
tests/workflow/test_documented_commands.py; here the Inspect logs, with a claim, and bad input;
the command it prints to rerun the run, run as printed; and Ctrl-C, then the command it prints
to resume.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalbars.pipeline import runner

from ..conftest import DATA
from ..workflow_runs import embedded_results, report_front_page, snakemake_env

pytestmark = pytest.mark.workflow

EVALBARS = [sys.executable, "-m", "evalbars.cli"]
INSPECT = DATA / "harness" / "inspect" / "eval_zstd"
CLAIM = "mockllm/fake-strong > mockllm/fake-weak"
#: Where the installed `evalbars` command is: a printed command runs as printed, from PATH.
BIN = Path(sys.executable).parent


def digests(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def tables(output: Path) -> dict:
    """Every table of a run, by name, as bytes' digests."""
    folder = output / "results" / "tables"
    return {path.relative_to(folder): digest for path, digest in digests(folder).items()}


def run_as_printed(line: str) -> subprocess.CompletedProcess:
    """A command evalbars printed, run as a user pastes it: split as a shell splits it, with
    the installed `evalbars` first on PATH."""
    words = shlex.split(line)
    assert words[0] == "evalbars" and (BIN / "evalbars").is_file()
    env = snakemake_env()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(words, capture_output=True, text=True, env=env)


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


@pytest.fixture(scope="module")
def first_tables(inspect_report):
    """The report's tables as its first run wrote them (a test below edits its claims)."""
    return tables(inspect_report[0])


def test_report_prints_the_path_and_one_line_per_claim(inspect_report):
    output, result = inspect_report
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == f"report: {output / 'report.html'}"
    # 20 questions: the headline leads with the exact and Bayesian readings (small n).
    assert lines[1].startswith("With 20 questions (fewer than 332) the z readings' intervals")
    assert "0 of 1 by the exact McNemar reading, 1 of 1 by the Bayesian reading" in lines[1]
    assert lines[2].startswith(f"  {CLAIM}: naive ")
    assert "paired, Holm" in lines[2] and "mixed, Holm" in lines[2]
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


def test_the_same_options_in_another_order_rerun_nothing(inspect_report):
    # `evalbars report` and `evalbars.api.write_report` write a source's options in different
    # orders; so may a user. The item table's params were order-sensitive, so the README's
    # `evalbars report` followed by its Python example reran the whole workflow.
    output, result = inspect_report
    command = shlex.split(result.stdout.splitlines()[3].removeprefix("rerun or edit: "))[1:]
    config_path = output / "config.yaml"
    written = config_path.read_text()
    config = yaml.safe_load(written)
    # the schema's defaults, which the workflow appends after the given keys, given first
    config["predictions"] = [{"allow_partial": False, "format": "auto", "path": str(INSPECT)}]
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    try:
        rerun = subprocess.run(
            [*EVALBARS, *command, "--", "-n"],
            capture_output=True,
            text=True,
            env=snakemake_env(),
        )
    finally:
        config_path.write_text(written)
    assert rerun.returncode == 0 and "Nothing to be done" in rerun.stdout + rerun.stderr, (
        rerun.stdout[-2000:]
    )


def test_ctrl_c_prints_one_line_and_its_command_resumes_the_run(tmp_path, first_tables):
    # The same report, in another directory, interrupted once its first job is done, as Ctrl-C
    # in a terminal would (SIGINT to evalbars; it passes it on to Snakemake and its jobs).
    output = tmp_path / "interrupted"
    process = subprocess.Popen(
        [*EVALBARS, "report", str(INSPECT), "--claim", CLAIM, "--output", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=snakemake_env(),
        # as a terminal's shell starts it (a suite started with `&` would pass SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    shown = []
    for line in process.stderr:
        shown.append(line)
        if "steps (" in line:
            break
    process.send_signal(signal.SIGINT)
    out, rest = process.communicate(timeout=300)
    err = "".join(shown) + rest
    assert process.returncode == 130, err[-3000:]
    assert out == "" and "Traceback" not in err
    resume = f"evalbars run --directory {output} --configfile {output / 'config.yaml'}"
    assert err.splitlines()[-1] == f"evalbars report: interrupted; resume with: {resume}"
    assert not (output / "report.html").exists()
    assert not runner.stale_snakemake_lock(output)  # Snakemake released its lock
    # The printed command, as printed: it finishes the run, with the first run's bytes.
    resumed = run_as_printed(resume)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stdout == f"report: {output / 'report.html'}\n"
    assert tables(output) == first_tables


def test_the_printed_rerun_command_reruns_the_run_and_then_only_a_claims_edit(
    inspect_report, first_tables
):
    # The command `evalbars report` prints, as printed, on the unchanged run directory: the
    # same targets (nothing to do), and the report rewritten where `report` wrote it.
    output, result = inspect_report
    line = result.stdout.splitlines()[3].removeprefix("rerun or edit: ")
    report = output / "report.html"
    written = report.stat().st_mtime_ns
    files = {p: p.stat().st_mtime_ns for p in (output / "data").rglob("*") if p.is_file()}
    files |= {p: p.stat().st_mtime_ns for p in (output / "results").rglob("*") if p.is_file()}
    rerun = run_as_printed(line)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert rerun.stdout == f"report: {report}\n"
    assert "steps (" not in rerun.stderr  # no job ran
    assert {p: p.stat().st_mtime_ns for p in files} == files
    assert report.stat().st_mtime_ns > written
    assert not (output / "results" / "report.html").exists()
    # After an edit of its config.yaml (a second claim), the same command reruns the claims
    # stage and the report's first screen, nothing before them.
    config_path = output / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config["claims"].append("best: mockllm/fake-strong")
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    edited = run_as_printed(line)
    assert edited.returncode == 0, edited.stderr[-3000:]
    changed = {p.relative_to(output) for p in files if p.stat().st_mtime_ns != files[p]}
    assert Path("results/tables/claims.csv") in changed
    before_claims = {"data", "analysis", "subsample", "stage_analysis"}
    assert not {p for p in changed if before_claims & set(p.parts)}, sorted(changed)
    assert not {p for p in changed if p.name.startswith(("models.", "pairwise.", "omnibus."))}
    claims = pd.read_csv(output / "results" / "tables" / "claims.csv")
    assert set(claims["claim"]) == {CLAIM, "best: mockllm/fake-strong"}
    assert "best: mockllm/fake-strong" in report_front_page(report)
    assert tables(output)[Path("pairwise.csv")] == first_tables[Path("pairwise.csv")]


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
