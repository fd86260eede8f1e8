"""Code health checks that no linter makes: no statement is unreachable by construction."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [*(ROOT / "workflow" / "evalbars").rglob("*.py"), *(ROOT / "workflow" / "scripts").glob("*.py")]
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
