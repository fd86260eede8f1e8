"""Sphinx configuration of the evalbars documentation.

Build (warnings are errors, references are checked)::

    sphinx-build -n -W --keep-going -b html docs docs/_build/html

The build is offline: no intersphinx inventory is fetched. References to other libraries'
objects are checked by importing them (``_ext/evalbars_docs.py``), not linked.
"""

from __future__ import annotations

import sys
from pathlib import Path

import evalbars

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "evalbars"
author = "the evalbars authors"
copyright = "the evalbars authors (MIT licence)"
version = release = evalbars.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinxarg.ext",
    "evalbars_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]
root_doc = "index"

# --- Warnings: every reference must resolve (-n), and a warning fails the build (-W) ----------
nitpicky = True
suppress_warnings = [
    # numpydoc renames a References section's ``.. [1]`` to a unique label; the docstrings cite
    # their sources by author and year in the text, so the labels are listed, not referenced.
    "ref.citation",
]

# --- API and methods: autodoc, autosummary, numpydoc -------------------------------------------
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# --- Markdown pages -----------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "fieldlist"]
myst_heading_anchors = 3

# --- HTML ---------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"evalbars {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
