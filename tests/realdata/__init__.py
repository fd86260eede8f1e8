"""Tests that need the MMLU-Pro archives (the realdata tier: `uv run pytest --run-realdata`)."""
