"""A documented command is a tested command: every shell command in README.md, config/README.md
and the documentation's pages (docs/**/*.md) runs here, in a scratch copy of the repository, as a
newcomer would type it, in that order (the docs' pages sorted by path: getting started before
the guides, which rerun its report).

Each fenced ``bash`` block is split into commands (``\\`` continuations joined, ``&&`` chains
split, trailing comments dropped). Full-line comments right after a command are its documented
output and must equal what it prints. How each kind of command runs:

- ``evalbars ...``, ``mkdir``, ``cp``: literally;
- ``snakemake ...``: as a dry run (``-n``, without ``--report``): the full runs of these command lines are the default
  workflow test (tests/workflow/test_default_run.py) and the example tests (tests/workflow/test_workflow_inputs.py);
- ``python -m tests.benchmark ...``: with ``--dry-run`` (its timings are minutes of work);
- ``uv sync ...``: with ``--dry-run --locked``; ``uv run pytest`` is this suite itself.

``uv run X`` runs ``X`` from the environment the tests run in. Files the README names as
placeholders of the user's own (``mine.csv``, ``logs/``, ``board.csv``, ...) are made from the
shipped examples first.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ..conftest import DATA, REPO
from ..workflow_runs import snakemake_env

#: Every page whose ``bash`` and ``python`` blocks run (``console`` and ``text`` blocks are shown,
#: not run; the ``.rst`` pages hold none, and the text they ``include`` is not theirs).
DOCUMENTS = (
    "README.md",
    "config/README.md",
    *sorted(
        str(page.relative_to(REPO))
        for page in (REPO / "docs").rglob("*.md")
        if "_build" not in page.relative_to(REPO / "docs").parts
    ),
)
BIN = Path(sys.executable).parent

#: The README's placeholders for the user's own files, and the shipped file each stands for.
PLACEHOLDERS = {
    "/path/to/MMLU-Pro/eval_results": None,  # the archives' mirror
    "logs/": "tests/data/harness/inspect/eval_zstd",
    "board.csv": "tests/data/calculator_example.csv",
}


def documented_commands() -> list[tuple[str, str, list[str]]]:
    """``(document, command, documented output lines)`` for every shell command."""
    found = []
    for document in DOCUMENTS:
        text = (REPO / document).read_text()
        for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.S):
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                stripped = line.strip()
                if stripped.startswith("#"):
                    if found and found[-1][0] == document and line.startswith("# "):
                        found[-1][2].append(stripped[2:])
                    continue
                if not stripped:
                    continue
                words = shlex.split(stripped, comments=True)
                for part in " ".join(shlex.quote(w) for w in words).split(" '&&' "):
                    found.append((document, part, []))
    return found


COMMANDS = documented_commands()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, mirror) -> Path:
    """A copy of the repository's files (as a fresh clone has them), with the data stage built
    (the claims examples read its subsample) and the README's placeholder files."""
    root = tmp_path_factory.mktemp("readme") / "evalbars"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in listed:
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    shutil.copytree(REPO / PLACEHOLDERS["logs/"], root / "logs")
    shutil.copy(REPO / PLACEHOLDERS["board.csv"], root / "board.csv")
    # mine.csv: a long table of the user's, and their claims, one a line.
    shutil.copy(DATA / "synthetic_balanced.csv", root / "mine.csv")
    models = pd.read_csv(root / "mine.csv")["model"].drop_duplicates().tolist()
    (root / "my_claims.txt").write_text(f"# my claims\n{models[0]} > {models[1]}\n")
    subprocess.run(
        [str(BIN / "snakemake"), "--cores", "2", "data_all"],
        cwd=root,
        env=snakemake_env(mirror),
        capture_output=True,
        check=True,
    )
    return root


def runnable(command: str, mirror: str | None) -> tuple[list[str], dict] | None:
    """The command as this test runs it, and its environment (None: the suite itself)."""
    env = snakemake_env(mirror)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    words = shlex.split(command)
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = mirror if value == "/path/to/MMLU-Pro/eval_results" else value
    if words[:2] == ["uv", "run"]:
        words = words[2:]
    if words[:1] == ["pytest"]:
        return None
    if words[:2] == ["uv", "sync"]:
        words += ["--dry-run", "--locked"]
    elif words[:1] == ["snakemake"]:
        # A dry run plans the jobs; the report needs their outputs, so it is left out.
        if "--report" in words:
            at = words.index("--report")
            del words[at : at + 2]
        words = [word for word in words if word != "--report-after-run"] + ["-n"]
    elif words[:3] == ["python", "-m", "tests.benchmark"]:
        words.append("--dry-run")
    return words, env


def documented_python() -> list[tuple[str, str]]:
    """``(document, code)`` of every fenced ``python`` block."""
    return [
        (document, block)
        for document in DOCUMENTS
        for block in re.findall(r"```python\n(.*?)```", (REPO / document).read_text(), re.S)
    ]


def test_every_block_holds_commands_we_know():
    # Extraction must find the README's two commands and every example it documents.
    commands = [command for _, command, _ in COMMANDS]
    assert "uv run snakemake --cores all --report results/report.html --report-after-run" in (
        commands
    )
    assert "uv run pytest" in commands
    assert len(commands) >= 20
    for command in commands:
        words = shlex.split(command)
        while re.fullmatch(r"[A-Z_]+=.*", words[0]):
            words.pop(0)
        assert words[0] in {"uv", "mkdir", "cp"}, command


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("document", "command", "output"), COMMANDS, ids=[c for _, c, _ in COMMANDS]
)
def test_documented_command_runs(scratch, mirror, document, command, output):
    planned = runnable(command, mirror)
    if planned is None:
        return  # `uv run pytest`: this suite
    words, env = planned
    if words[0] == "uv" and shutil.which("uv") is None:
        pytest.fail("uv is needed for the README's `uv sync` command (.ci/run installs it)")
    result = subprocess.run(
        words, cwd=scratch, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, (
        f"{document}: `{command}` exited {result.returncode}:\n"
        f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )
    if output:
        assert " ".join(result.stdout.split()) == " ".join(" ".join(output).split())


@pytest.mark.workflow
@pytest.mark.parametrize(("document", "code"), documented_python())
def test_documented_python_runs(scratch, mirror, document, code):
    # In the scratch copy, as a notebook there would run it (after the shell commands above,
    # so the report it writes is the `evalbars report` run's, brought up to date).
    env = snakemake_env(mirror)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"{document}:\n{code}\n{result.stderr[-3000:]}"
