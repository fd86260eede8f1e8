"""The package's layering: statistics never import matplotlib, and the DAG build stays light."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import evalbars
from evalbars.pipeline.smk import _import_statements, package_files

PACKAGE = Path(evalbars.__file__).parent
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(evalbars.__path__, "evalbars.")
    if not m.name.endswith("__main__")  # importing one runs the command line
)
#: The wings that compute: data, statistics, readings, the studies, the workflow's helpers.
STATISTICS = [
    m
    for m in MODULES
    if m.startswith(("evalbars.data", "evalbars.stats", "evalbars.readings", "evalbars.studies"))
    or m in ("evalbars.pipeline.smk", "evalbars.render.tables", "evalbars.units", "evalbars.errors")
]
#: What may draw: the figures themselves, the jobs that write them, and the doors (the API and
#: the command line reach every job).
DRAWING = ("figures", "jobs", "api", "cli", "__main__.py")


def _loaded_after(statement: str, modules) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``statement``."""
    probe = f"{statement}\nimport sys\nprint(' '.join(m for m in {list(modules)!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_no_statistics_module_imports_matplotlib():
    assert "evalbars.render.figures.style" in MODULES and "evalbars.stats.mixed" in STATISTICS
    assert "evalbars.render.landing" not in STATISTICS
    statement = "\n".join(f"import {name}" for name in STATISTICS)
    assert _loaded_after(statement, ["matplotlib"]) == []


def test_only_figures_jobs_and_the_doors_depend_on_the_figures_package():
    for module in PACKAGE.rglob("*.py"):
        if any(part in module.relative_to(PACKAGE).parts for part in DRAWING):
            continue
        imported = package_files(module, PACKAGE)
        assert not [f for f in imported if "/figures/" in f], module


def test_dag_build_helpers_stay_light():
    # common.smk imports evalbars.pipeline.smk while Snakemake parses the workflow, before every run.
    heavy = ["scipy.stats", "scipy.optimize", "matplotlib", "statsmodels"]
    assert _loaded_after("from evalbars.pipeline import smk", heavy) == []


def test_package_files_follows_absolute_relative_and_package_imports(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(
        "from evalbars.readings.ranks import rank_table\nimport evalbars.stats.planning.precision\n"
    )
    found = {str(Path(f).relative_to(PACKAGE)) for f in package_files(script, PACKAGE)}
    # ranks/__init__ imports every ranks module; ranks.paired imports pairwise -> scores ...
    assert {
        "__init__.py",
        "readings/ranks/__init__.py",
        "readings/ranks/paired.py",
        "stats/pairwise.py",
    } <= found
    assert {"stats/planning/precision.py", "stats/intervals.py", "data/scores.py"} <= found
    # precision's paired sample size is planning's (one home per formula), and the planner
    # seeds through seeding; no simulation study comes with them
    assert {"stats/planning/sample_size.py", "seeding.py"} <= found
    # of render/, only the tables' text forms (render/tables.py), which readings may import
    drawn = {f for f in found if f.startswith("render/")} - {
        "render/__init__.py",
        "render/tables.py",
    }
    assert not drawn and not {f for f in found if f.startswith("stats/mixed")}
    assert not {f for f in found if f.startswith("studies/")}


def test_the_logistic_verdicts_job_imports_no_fitting_code():
    # analysis_logistic_verdicts reads the fits from their files: scipy.stats, statsmodels and
    # the fitting modules would be a second of imports for nothing
    statement = (
        "from evalbars import errors\nfrom evalbars.render import tables\n"
        "from evalbars.readings import logistic_verdicts\n"
        "import evalbars.render.figures.logistic"
    )
    heavy = ["scipy", "statsmodels", "evalbars.stats.logistic"]
    assert _loaded_after(statement, heavy) == []


def test_jobs_that_fit_nothing_import_no_optimiser():
    # Every job is a fresh interpreter: scipy.optimize and the fits' and PPI's code were a fifth
    # of a second of each analysis job's start-up. The solvers import it where they call it.
    heavy = ["scipy.optimize", "evalbars.stats.logistic.glmm", "evalbars.readings.judge_corrected"]
    assert _loaded_after("import evalbars.jobs.analysis", heavy) == []
    for module in ["ranks", "figures.analysis", "figures.ranks"]:
        assert _loaded_after(f"import evalbars.jobs.{module}", heavy[:2]) == [], module
    # the jobs that fit or solve still reach it
    assert (
        _loaded_after(
            "from evalbars.jobs.run import job_function\njob_function('analysis_logistic')\n"
            "import evalbars.stats.logistic.contrasts",
            heavy[:2],
        )
        == heavy[:2]
    )


def _whole_parse_imports(text: str) -> list[str]:
    """Every import statement of a module, found by parsing it whole (the reference)."""
    nodes = ast.walk(ast.parse(text))
    return sorted(ast.unparse(n) for n in nodes if isinstance(n, ast.Import | ast.ImportFrom))


def test_the_import_scan_finds_what_a_whole_parse_finds_in_every_module():
    # The rules' code inputs come from the lines that start an import: in the package and the
    # adapter they must be exactly a whole parse's imports. In the test suite, whose strings hold
    # scripts, the scan may find more (a string's imports), never fewer.
    adapter = PACKAGE.parents[1] / "workflow" / "scripts" / "job.py"
    modules = [*PACKAGE.rglob("*.py"), adapter]
    assert len(modules) > 150
    for path in modules:
        text = path.read_text()
        scanned = sorted(ast.unparse(node) for node in _import_statements(text))
        assert scanned == _whole_parse_imports(text), path
    for path in (PACKAGE.parents[1] / "tests").rglob("*.py"):
        text = path.read_text()
        scanned = {ast.unparse(node) for node in _import_statements(text)}
        assert set(_whole_parse_imports(text)) <= scanned, path


def test_the_import_scan_follows_continuations_and_skips_prose():
    text = (
        '"""Imports:\n\nfrom the command line import nothing.\n"""\n'
        "from evalbars.stats import (\n    mixed,\n    pairwise,\n)\n"
        "import evalbars.data.scores, \\\n    evalbars.units\n"
        "def f():\n    from .. import errors  # lazily\n"
    )
    assert [ast.unparse(node) for node in _import_statements(text)] == [
        "from evalbars.stats import mixed, pairwise",
        "import evalbars.data.scores, evalbars.units",
        "from .. import errors",
    ]
    assert _import_statements(text) and _whole_parse_imports(text) == sorted(
        ast.unparse(node) for node in _import_statements(text)
    )
