"""The workflow on a real one-node SLURM cluster (the slurm tier: `uv run pytest --run-slurm`)."""
