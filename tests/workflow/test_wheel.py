"""The wheel, installed as users install it, run from a directory outside the clone.

The wheel is built from this checkout (``uv build --wheel``) and installed into a virtual
environment of its own; nothing below runs with the clone on the path or as the working
directory. What is checked: every module imports from the wheel; ``evalbars example`` and the
README's ``evalbars report`` on it produce a report; and ``evalbars run`` plans the paper's
workflow from the wheel's own copy with the same jobs as ``snakemake`` in the clone.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import REPO
from ..workflow_runs import snakemake_env

pytestmark = pytest.mark.workflow

UV = shutil.which("uv")


def run(command, cwd, env=None, timeout=900):
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(bin folder, an empty directory outside the clone)`` of an environment holding only
    the wheel and its dependencies."""
    if UV is None:
        pytest.fail("uv is needed to build and install the wheel (.ci/run installs it)")
    root = tmp_path_factory.mktemp("wheel")
    run([UV, "build", "--wheel", "--out-dir", root / "dist", REPO], cwd=root)
    (wheel,) = (root / "dist").glob("evalbars-*.whl")
    run([UV, "venv", "--python", sys.executable, root / "venv"], cwd=root)
    python = root / "venv" / "bin" / "python"
    run([UV, "pip", "install", "--python", python, wheel], cwd=root)
    outside = root / "elsewhere"
    outside.mkdir()
    assert REPO not in outside.parents
    return python.parent, outside


def environment(bin_folder: Path, mirror: str | None) -> dict:
    env = snakemake_env(mirror)
    env["PATH"] = f"{bin_folder}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def test_every_module_imports_from_the_wheel(installed):
    bin_folder, outside = installed
    code = (
        "import importlib, pkgutil, evalbars\n"
        "names = [m.name for m in pkgutil.walk_packages(evalbars.__path__, 'evalbars.')\n"
        "         if not m.name.startswith(('evalbars._workflow', 'evalbars._examples'))\n"
        "         and not m.name.endswith('__main__')]\n"
        "for name in names: importlib.import_module(name)\n"
        "print(len(names), evalbars.__file__)"
    )
    done = run([bin_folder / "python", "-c", code], cwd=outside)
    count, location = done.stdout.split()
    assert int(count) > 100 and "site-packages" in location and str(REPO) not in location


def test_the_version_answers_in_isolated_mode(installed):
    bin_folder, outside = installed
    done = run([bin_folder / "python", "-I", "-m", "evalbars", "--version"], cwd=outside)
    assert done.stdout.strip().endswith("0.1.0")


#: The README's quickstart report, with a claim.
QUICKSTART = [
    "report",
    "lm_eval-example",
    "--runs",
    "newest",
    "--id-field",
    "id",
    "--category-field",
    "category",
    "--claim",
    "evalbars/fake-strong > evalbars/fake-weak",
]


def tables(run_directory: Path) -> dict:
    folder = run_directory / "results" / "tables"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.csv"))}


def test_the_readme_quickstart_from_the_wheel_is_the_clones_report(installed, mirror, tmp_path):
    bin_folder, outside = installed
    env = environment(bin_folder, mirror)
    run([bin_folder / "evalbars", "example", "lm_eval-example"], cwd=outside, env=env)
    done = run([bin_folder / "evalbars", *QUICKSTART], cwd=outside, env=env)
    report = outside / "evalbars-report" / "report.html"
    assert done.stdout.startswith(f"report: {report}\n") and report.stat().st_size > 100_000
    assert "evalbars/fake-strong > evalbars/fake-weak: naive supported" in done.stdout
    assert str(REPO) not in report.read_text(errors="replace")
    # The same command from the clone's environment, on the clone's copy of the example logs.
    shutil.copytree(outside / "lm_eval-example", tmp_path / "lm_eval-example")
    clone = run(
        [sys.executable, "-m", "evalbars", *QUICKSTART], cwd=tmp_path, env=snakemake_env(mirror)
    )
    assert clone.stdout.splitlines()[1:-1] == done.stdout.splitlines()[1:-1]
    from_wheel, from_clone = (
        tables(outside / "evalbars-report"),
        tables(tmp_path / "evalbars-report"),
    )
    assert len(from_wheel) > 10 and from_wheel == from_clone


def _planned_jobs(output: str) -> int:
    return int(re.search(r"^total\s+(\d+)$", output, re.M).group(1))


def test_evalbars_run_plans_the_papers_workflow_as_the_clone_does(installed, mirror, tmp_path):
    bin_folder, outside = installed
    env = environment(bin_folder, mirror)
    done = run(
        [bin_folder / "evalbars", "run", "--directory", outside / "paper", "--", "--dry-run"],
        cwd=outside,
        env=env,
    )
    # The wheel's own copy of the workflow, not the clone's.
    assert str(REPO) not in done.stdout + done.stderr
    where = "from evalbars.pipeline.location import snakefile; print(snakefile())"
    location = Path(run([bin_folder / "python", "-c", where], cwd=outside).stdout.strip())
    assert location.parts[-3:] == ("evalbars", "_workflow", "Snakefile") and location.is_file()
    assert "site-packages" in location.parts
    clone = run(
        [Path(sys.executable).parent / "snakemake", "--dry-run", "--directory", tmp_path]
        + ["--configfile", REPO / "config" / "config.yaml"],
        cwd=REPO,
        env=snakemake_env(mirror),
    )
    assert _planned_jobs(done.stdout) == _planned_jobs(clone.stdout) > 40


def test_a_battles_report_from_the_wheel_in_an_empty_folder(installed, mirror):
    """The done criterion of pairwise battles from the installed wheel: `evalbars report` on a
    copied battles CSV, in a folder that holds nothing else, runs the wheel's battles stage."""
    bin_folder, outside = installed
    folder = outside / "battles"
    folder.mkdir()
    shutil.copy(REPO / "tests" / "data" / "battles" / "clustered.csv", folder / "battles.csv")
    done = run(
        [bin_folder / "evalbars", "report", "battles.csv", "--claim", "model-a > model-f"],
        cwd=folder,
        env=environment(bin_folder, mirror),
    )
    report = folder / "evalbars-report" / "report.html"
    lines = done.stdout.splitlines()
    assert lines[0] == f"report: {report}" and report.stat().st_size > 100_000
    assert lines[1] == "The claim is supported by the clustered reading."
    assert lines[2].startswith("  model-a > model-f: per-battle supported (p ")
    made = tables(folder / "evalbars-report")
    assert set(made) == {
        f"battles_{name}.csv"
        for name in ("claims", "leaderboard", "models", "naive_vs_blocked", "pairwise", "plan")
    }
    assert str(REPO) not in report.read_text(errors="replace")
