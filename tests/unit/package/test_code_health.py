"""Code health checks that no linter makes: no statement is unreachable by construction, and every
cross-reference in a docstring names an object that exists."""

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SOURCES = sorted(
    [*(ROOT / "src" / "evalbars").rglob("*.py"), *(ROOT / "workflow" / "scripts").glob("*.py")]
)
TERMINAL = (ast.Return, ast.Raise, ast.Continue, ast.Break)
BLOCKS = ("body", "orelse", "finalbody")


def unreachable_statements(source: str) -> list[int]:
    """Line numbers of statements that follow a return, raise, continue or break in one block.

    Every statement list of the tree is walked (bodies, ``else`` and ``finally`` blocks, the
    bodies of exception handlers and of ``match`` cases); the first statement after a terminal
    one is reported, once per block.
    """
    lines = []
    for node in ast.walk(ast.parse(source)):
        blocks = [getattr(node, name, None) for name in BLOCKS]
        for block in blocks:
            if not isinstance(block, list):
                continue
            for before, after in zip(block, block[1:], strict=False):
                if isinstance(before, TERMINAL):
                    lines.append(after.lineno)
                    break
    return sorted(lines)


def test_the_check_sees_every_kind_of_block():
    source = (
        "def f(x):\n"
        "    for i in x:\n"
        "        continue\n"
        "        print(i)\n"  # 4
        "    while x:\n"
        "        break\n"
        "        x = 0\n"  # 7
        "    try:\n"
        "        raise ValueError\n"
        "        x = 1\n"  # 10
        "    except ValueError:\n"
        "        raise\n"
        "        x = 2\n"  # 13
        "    finally:\n"
        "        pass\n"
        "    if x:\n"
        "        return 1\n"
        "    else:\n"
        "        return 2\n"
        "        x = 3\n"  # 20
        "    match x:\n"
        "        case 1:\n"
        "            return 1\n"
        "            x = 4\n"  # 24
        "    return x\n"
        "    x = 5\n"  # 26
    )
    assert unreachable_statements(source) == [4, 7, 10, 13, 20, 24, 26]
    assert unreachable_statements("def f(x):\n    if x:\n        return 1\n    return 2\n") == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_unreachable_statements(path):
    assert len(SOURCES) > 50
    assert unreachable_statements(path.read_text()) == [], path


# --- Cross-references: every :func:/:mod:/:class: target in a docstring exists -------------------
PACKAGE = ROOT / "src" / "evalbars"
ROLE = re.compile(r":(func|mod|class|meth|attr|data):`~?([^`<>\s]+)`")


def resolves(name: str) -> bool:
    """Whether a dotted name is an importable module, or an attribute chain below one; a
    dataclass field counts as an attribute of its class."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            fields = getattr(obj, "__dataclass_fields__", {})
            if attr in fields and not hasattr(obj, attr):
                obj = fields[attr]
                continue
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def cross_references(path: Path, package: Path = PACKAGE):
    """``(module, line, target, candidates)`` for every cross-reference in the docstrings of
    ``path``: a target is looked up as written, in its module, in its module's package, in the
    class whose docstring holds it (methods, attributes) and among the builtins, as Sphinx
    looks up a Python cross-reference."""
    dotted = path.relative_to(package.parent).with_suffix("").parts
    module = ".".join(dotted).removesuffix(".__init__")
    parent = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def walk(node, classes):
        doc = ast.get_docstring(node, clean=False) if hasattr(node, "body") else None
        for match in ROLE.finditer(doc or ""):
            target = match[2]
            if target.startswith("."):
                names = [parent + target, module + target]
            else:
                names = [target, f"{module}.{target}", f"{parent}.{target}", f"builtins.{target}"]
                names += [f"{module}.{'.'.join(classes)}.{target}"] if classes else []
            yield module, getattr(node, "lineno", 1), target, names
        for child in getattr(node, "body", []):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [*classes, child.name] if isinstance(child, ast.ClassDef) else classes
                yield from walk(child, inner)

    yield from walk(ast.parse(path.read_text()), [])


def broken_references(package: Path = PACKAGE) -> list[tuple]:
    return [
        (module, line, target)
        for path in sorted(package.rglob("*.py"))
        for module, line, target, names in cross_references(path, package)
        if not any(resolves(name) for name in names)
    ]


def test_the_cross_reference_check_finds_stale_targets(tmp_path, monkeypatch):
    # The stale references of the review (a deleted function, a class named in the wrong
    # module, an unqualified name the module does not hold, a renamed module) are all found;
    # the live forms next to them are not.
    package = tmp_path / "stale_package"
    (package / "ranks").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    (package / "__init__.py").write_text("")
    (package / "ranks" / "__init__.py").write_text('"""See :mod:`.tables` and :mod:`.figs`."""\n')
    (package / "ranks" / "figs.py").write_text(
        "class Board:\n"
        '    """Drawn from :class:`evalbars.studies.LeaderboardResult`."""\n\n'
        "    def draw(self):\n"
        '        """As :meth:`draw`, :func:`ranks_readings`, :class:`ValueError`."""\n\n\n'
        "def old():\n"
        '    """:func:`evalbars.stats.intervals.newcombe_interval`, :func:`~numpy.sqrt`."""\n'
    )
    stale = {target for _, _, target in broken_references(package)}
    assert stale == {
        ".tables",
        "evalbars.studies.LeaderboardResult",
        "ranks_readings",
        "evalbars.stats.intervals.newcombe_interval",
    }


def test_every_docstring_cross_reference_resolves():
    count = sum(1 for path in PACKAGE.rglob("*.py") for _ in cross_references(path))
    assert count > 300
    assert broken_references() == []
