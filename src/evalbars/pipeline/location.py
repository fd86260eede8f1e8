"""Where the workflow evalbars runs lives: in the wheel, or beside the package in a clone.

The repository keeps one copy of the workflow (the ``Snakefile``, ``workflow/``, ``config/``
and ``profiles/`` at its top level). The build ships that tree inside the package as
``evalbars/_workflow/`` (``[tool.setuptools.package-dir]`` in ``pyproject.toml``), so an
installed evalbars (``pip install``, ``uv tool install``, ``uvx --from``) runs its own copy
from any directory. In a clone the package is installed in editable mode and the same tree is
found at the top of the repository.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from evalbars.errors import EvalbarsError

__all__ = ["workflow_root", "snakefile", "example_logs"]

#: The package folder the wheel ships the workflow in (a copy of the repository's top level).
PACKAGED = "_workflow"


def _source_tree() -> Path:
    """The repository root of a clone (``src/evalbars/pipeline/location.py`` -> root)."""
    return Path(__file__).resolve().parents[3]


def workflow_root() -> Path:
    """The folder that holds the workflow's ``Snakefile``, ``workflow/``, ``config/`` and
    ``profiles/``: the packaged copy when installed from a wheel, else the clone's top level.

    Raises :class:`evalbars.errors.EvalbarsError` when neither exists (a broken install).
    """
    packaged = Path(str(resources.files("evalbars").joinpath(PACKAGED)))
    if (packaged / "Snakefile").is_file():
        return packaged
    clone = _source_tree()
    if (clone / "Snakefile").is_file() and (clone / "workflow" / "rules").is_dir():
        return clone
    raise EvalbarsError(
        f"the evalbars workflow is missing: neither {packaged} nor {clone} holds a Snakefile; "
        "reinstall evalbars (pip install --force-reinstall evalbars)"
    )


def snakefile() -> Path:
    """The ``Snakefile`` that ``evalbars report`` and ``evalbars run`` give Snakemake."""
    return workflow_root() / "Snakefile"


def example_logs(name: str = "lm_eval") -> Path:
    """The folder of a shipped example's harness logs (``evalbars example``)."""
    packaged = Path(str(resources.files("evalbars").joinpath("_examples", name)))
    if packaged.is_dir():
        return packaged
    clone = _source_tree() / "tests" / "data" / "harness" / name
    if clone.is_dir():
        return clone
    raise EvalbarsError(f"no shipped example named {name!r}")
