"""Every example in the package's docstrings runs and prints what it shows.

Examples that read a shipped file name it from the repository's root (``tests/data/...``), as
the docs show them; they run from there whatever the directory pytest was started in.
"""

import doctest
import importlib
import pkgutil

import pytest

import evalbars

from ...conftest import REPO

#: Every module but the ``python -m`` entry points (importing one runs the command line).
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(evalbars.__path__, "evalbars.")
    if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(REPO)
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_examples_exist_where_the_formulas_are():
    attempted = {
        name: doctest.testmod(importlib.import_module(name), report=False).attempted
        for name in (
            "evalbars.stats.intervals",
            "evalbars.stats.pairwise",
            "evalbars.readings.ranks.unpaired",
        )
    }
    assert all(attempted.values()), attempted
