"""Running the workflow from tests: the command, its environment, scratch run directories.

Shared by the workflow, workflow-input and SLURM tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import REPO, mirror_location

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def snakemake_env(mirror=None) -> dict:
    env = dict(os.environ)
    mirror = mirror or mirror_location()
    if mirror:
        env["EVALBARS_MIRROR"] = mirror
    return env


def run_snakemake(workdir: Path, *args, check=True, mirror=None):
    result = subprocess.run(
        [*SNAKEMAKE, "-d", str(workdir), *args],
        capture_output=True,
        text=True,
        env=snakemake_env(mirror),
        cwd=REPO,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    return result


def make_workdir(tmp_path: Path, **overrides) -> Path:
    workdir = tmp_path / "work"
    (workdir / "config").mkdir(parents=True)
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if overrides.get("models") == [] and "claims" not in overrides:
        # Other data than the paper's: the shipped claims name the paper's models.
        overrides["claims"] = []
    config.update(overrides)
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    for extra in (REPO / "config").iterdir():
        if extra.is_dir():
            shutil.copytree(extra, workdir / "config" / extra.name)
    return workdir


def planned_jobs(dry_run_output: str) -> dict:
    """``{rule: jobs}`` from the job-stats table of a dry run."""
    return {
        rule: int(count)
        for rule, count in re.findall(r"^(\w+)\s+(\d+)$", dry_run_output, re.M)
        if rule != "total"
    }


def reduced_workdir(tmp_path: Path) -> Path:
    """A run directory with the committed reduced configuration, ``.test/config/`` (the default
    one made small: fewer questions, seeds, draws, runs and grid rows), as ``snakemake
    --directory .test`` runs it."""
    workdir = tmp_path / "work"
    workdir.mkdir(parents=True)
    shutil.copytree(REPO / ".test" / "config", workdir / "config")
    return workdir


def output_digests(workdir: Path) -> dict:
    folders = [
        "data/subsample",
        "results/tables",
        "results/simulations",
        "results/figures",
        "results/report",
    ]
    return {
        str(path.relative_to(workdir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for folder in folders
        for path in sorted((workdir / folder).rglob("*"))
        if path.is_file()
    }


def readme_command(*needles: str) -> list[str]:
    """The README's one shell command that contains every ``needle``, as words, with its
    leading ``uv run snakemake`` replaced by this interpreter's Snakemake (the same workflow)."""
    text = (REPO / "README.md").read_text()
    commands = [
        " ".join(shlex.split(line, comments=True))
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for line in re.sub(r"\\\n\s*", " ", block).splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    found = [c for c in commands if all(n in c for n in needles)]
    assert len(found) == 1, (needles, found)
    words = shlex.split(found[0])
    assert words[:3] == ["uv", "run", "snakemake"], found[0]
    return [*SNAKEMAKE, *words[3:]]


def report_front_page(report: Path) -> str:
    """The HTML of the report's front page (Snakemake keeps it as the string workflow_desc)."""
    text = report.read_text()
    start = text.index("var workflow_desc = ") + len("var workflow_desc = ")
    return json.JSONDecoder().raw_decode(text, start)[0]


def embedded_results(report: Path) -> set[str]:
    """The file names of the results a Snakemake HTML report embeds (its ``categories``)."""
    listed = re.search(r"var categories = (\{.*?\});", report.read_text())
    return {
        Path(p).name for group in json.loads(listed[1]).values() for v in group.values() for p in v
    }
