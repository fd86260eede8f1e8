"""Import discipline: jobs that need numpy only must not pay for pandas, scipy.stats or matplotlib."""

import subprocess
import sys

import pytest

from evalbars import _lazy

HEAVY = ("pandas.core", "scipy.special._ufuncs", "scipy.stats", "scipy.optimize", "matplotlib")


def _loaded_after(statement: str) -> list[str]:
    """Heavy modules actually executed by ``statement`` in a fresh interpreter."""
    probe = (
        f"{statement}\nimport sys\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules and "
        "type(sys.modules[m]).__name__ != '_LazyModule'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def test_simulation_setting_path_imports_numpy_only():
    # What the leaderboard and clustered jobs import, and run.
    statement = (
        "from evalbars import simulate\nfrom evalbars.workflow import script_context\n"
        "simulate.simulate_leaderboard(50, 1.0, runs=20)\n"
        "simulate.simulate_clustered(4, 0.3, 40, 20)"
    )
    assert _loaded_after(statement) == []


def test_fwer_setting_needs_scipy_special_only():
    statement = "from evalbars import simulate\nsimulate.simulate_fwer(3, 20, 0.5, replications=10)"
    assert _loaded_after(statement) == ["scipy.special._ufuncs"]


def test_dag_build_helpers_stay_light():
    # common.smk calls these while Snakemake parses the workflow, before every run.
    statement = "from evalbars import workflow, mixed\nworkflow.replication_applies({'models': []})"
    assert not {"scipy.stats", "scipy.optimize", "matplotlib"} & set(_loaded_after(statement))


def test_lazy_load_defers_execution_until_attribute_access():
    statement = (
        "from evalbars import _lazy\nimport sys\nm = _lazy.load('email.mime.text')\n"
        "assert type(sys.modules['email.mime.text']).__name__ == '_LazyModule'\n"
        "assert m.MIMEText.__name__ == 'MIMEText'\n"
        "from email.mime import text\nassert text is m and text.MIMEText is m.MIMEText"
    )
    subprocess.run([sys.executable, "-c", statement], check=True)


def test_lazy_load_returns_an_imported_module_and_rejects_a_missing_one():
    assert _lazy.load("sys") is sys
    with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
        _lazy.load("no_such_module_here")
