"""Whole-package checks: layering, packaging, code health, docstrings and the API docs."""
