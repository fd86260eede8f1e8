"""What the wheel ships: every package under src/, the whole workflow, the example logs; and the
layout's ceilings (no folder of more than 15 modules, no module over 800 lines).

The installed wheel itself is run from outside the clone in tests/workflow/test_wheel.py.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import yaml

from evalbars.data.readers import FORMATS, READERS

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "src" / "evalbars"
SETUP = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_the_packages_list_is_every_package_under_src():
    found = {
        ".".join(("evalbars", *path.parent.relative_to(PACKAGE).parts)).rstrip(".")
        for path in PACKAGE.rglob("__init__.py")
    }
    listed = set(SETUP["packages"]) - {"evalbars._workflow", "evalbars._examples"}
    assert listed == found


def _shipped(package: str, root: Path) -> set[str]:
    patterns = SETUP["package-data"][package]
    return {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and any(fnmatch.fnmatch(str(path.relative_to(root)), p) for p in patterns)
    }


def test_the_wheel_carries_every_file_the_workflow_reads():
    shipped = _shipped("evalbars._workflow", REPO)
    needed = {"Snakefile", "config/config.yaml"}
    for folder, suffix in (
        ("workflow/rules", ".smk"),
        ("workflow/scripts", ".py"),
        ("workflow/schemas", ".yaml"),
        ("workflow/report", ".rst"),
        ("config/simulation", ".tsv"),
    ):
        needed |= {str(p.relative_to(REPO)) for p in (REPO / folder).glob(f"*{suffix}")}
    needed |= {str(p.relative_to(REPO)) for p in (REPO / "profiles").glob("*/*.yaml")}
    assert needed <= shipped, sorted(needed - shipped)
    # The workflow folder holds Snakemake's files only: nothing there goes unshipped.
    everything = {
        str(p.relative_to(REPO))
        for p in (REPO / "workflow").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert everything <= shipped, sorted(everything - shipped)


def test_the_example_logs_are_shipped():
    examples = REPO / "tests" / "data" / "harness"
    shipped = _shipped("evalbars._examples", examples)
    logs = {str(p.relative_to(examples)) for p in (examples / "lm_eval").rglob("*") if p.is_file()}
    assert logs and logs <= shipped


def test_the_schema_formats_are_the_reader_registry():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    entry = schema["properties"]["predictions"]["items"]["oneOf"][1]["properties"]["format"]
    assert entry["enum"] == list(FORMATS) == ["auto", *READERS]


def test_no_folder_holds_more_than_15_modules_and_no_module_exceeds_800_lines():
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    crowded = {
        str(folder.relative_to(PACKAGE)): n
        for folder in folders
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 15
    }
    assert crowded == {}
    long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 800
    }
    assert long == {}
