"""No docstring holds a control character: a backslash escape in a non-raw docstring
(``\\theta``, ``\\rho``, ``\\bar`` written with one backslash) turns LaTeX into a tab, a carriage
return or a backspace, which renders as garbage and which no linter flags (they are valid
escapes, unlike ``\\s``)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "evalbars"
CONTROL = "\x07\x08\x0b\x0c\r\t"


def docstrings():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node, clean=False)
                if text:
                    yield f"{path.relative_to(PACKAGE)}:{getattr(node, 'name', '<module>')}", text


def test_the_package_has_docstrings_to_check():
    assert sum(1 for _ in docstrings()) > 500


def test_no_docstring_holds_a_control_character():
    offenders = [where for where, text in docstrings() if any(c in text for c in CONTROL)]
    assert offenders == []
