"""Tests that run the workflow, the documented commands and the installed command (the workflow
tier: `uv run pytest --run-workflow -n 2 --dist loadfile --no-loadscope-reorder`)."""
