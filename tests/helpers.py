"""Helpers that several test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

import logging
import runpy
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"


def run_workflow_script(name: str, *, log, input: dict, output: dict, params: dict) -> None:
    """Run ``workflow/scripts/<name>.py`` in this process with a stand-in ``snakemake`` object.

    The adapter sees ``snakemake.log[0]``, ``snakemake.input.<key>``, ``snakemake.output.<key>``
    and ``snakemake.params.<key>`` as Snakemake would set them, so its decisions are tested
    without a workflow run. The root logger, which ``script_context`` reconfigures, is
    restored afterwards.
    """
    fake = SimpleNamespace(
        log=[str(log)],
        input=SimpleNamespace(**{k: str(v) for k, v in input.items()}),
        output=SimpleNamespace(**{k: str(v) for k, v in output.items()}),
        params=SimpleNamespace(**params),
    )
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        runpy.run_path(str(SCRIPTS / f"{name}.py"), init_globals={"snakemake": fake})
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)
