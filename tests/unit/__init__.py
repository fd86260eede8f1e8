"""Hermetic unit and reference tests: the default tier (`uv run pytest`)."""
