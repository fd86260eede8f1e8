"""The public API's documentation: every name of :mod:`evalbars.api` has a numpydoc docstring
whose Parameters are its signature's, a Returns, a See Also and an example that runs
(tests/unit/package/test_docstrings.py runs them), one page of the docs, and ``evalbars`` re-exports
exactly these names."""

from __future__ import annotations

import doctest
import inspect
import re

import pytest

import evalbars
import evalbars.api as api

from ...conftest import REPO

NAMES = list(api.__all__)
#: The one example that is shown but not run: it starts Snakemake (the workflow tier runs
#: ``evalbars report``, which calls it).
NOT_RUN = {"write_report"}


def sections(obj) -> dict[str, list[str]]:
    """A numpydoc docstring's sections (``Parameters``, ``Returns``, ...) and their lines."""
    lines = inspect.cleandoc(obj.__doc__ or "").splitlines()
    found: dict[str, list[str]] = {"summary": []}
    current = "summary"
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"-{3,}", following.strip()):
            current = line.strip()
            found[current] = []
        elif not re.fullmatch(r"-{3,}", line.strip()):
            found[current].append(line)
    return found


def documented_parameters(lines: list[str]) -> list[str]:
    """The names a Parameters section documents (``a, b : int`` documents two)."""
    names = []
    for line in lines:
        if line and not line[0].isspace():
            names += [name.strip() for name in line.split(" : ")[0].split(",")]
    return names


def signature_parameters(obj) -> list[str]:
    kinds = {inspect.Parameter.VAR_KEYWORD: "**", inspect.Parameter.VAR_POSITIONAL: "*"}
    return [
        kinds.get(parameter.kind, "") + name
        for name, parameter in inspect.signature(obj).parameters.items()
    ]


def test_evalbars_reexports_exactly_the_api():
    # evalbars/__init__.py keeps its own copy of the names, so that `import evalbars` loads none
    # of the API's imports
    assert list(evalbars._API) == NAMES
    assert set(evalbars.__all__) == {"__version__", *NAMES}
    assert all(getattr(evalbars, name) is getattr(api, name) for name in NAMES)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        evalbars.nope  # noqa: B018


@pytest.mark.parametrize("name", NAMES)
def test_every_public_name_has_a_full_numpydoc_docstring(name):
    obj = getattr(api, name)
    found = sections(obj)
    summary = [line for line in found["summary"] if line.strip()]
    assert summary and summary[0].endswith((".", ":")), name
    assert {"See Also"} <= set(found), name
    if inspect.isclass(obj):
        assert "Attributes" in found, name
        return
    assert {"Parameters", "Returns", "Examples"} <= set(found), name
    assert documented_parameters(found["Parameters"]) == signature_parameters(obj)
    returned = [line for line in found["Returns"] if line.strip()]
    assert len(returned) >= 2, f"{name}: Returns gives a type and says what it holds"


@pytest.mark.parametrize("name", [n for n in NAMES if inspect.isfunction(getattr(api, n))])
def test_every_function_has_an_example_that_runs(name):
    (test,) = doctest.DocTestFinder().find(getattr(api, name), name)
    run = [e for e in test.examples if not e.options.get(doctest.SKIP)]
    if name in NOT_RUN:
        assert test.examples and not run
    else:
        # a call of the function itself, with the output it prints
        assert any(f"eb.{name}(" in e.source for e in run), name
        assert any(e.want for e in run), name


def test_the_api_page_lists_every_name_once():
    page = (REPO / "docs" / "reference" / "api.rst").read_text()
    listed = re.findall(r"^   (\w+)$", page, flags=re.MULTILINE)
    assert sorted(listed) == sorted(NAMES) and len(listed) == len(set(listed))
