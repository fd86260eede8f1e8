"""Every example in the package's docstrings runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import evalbars

#: Every module but the ``python -m`` entry points (importing one runs the command line).
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(evalbars.__path__, "evalbars.")
    if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
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
