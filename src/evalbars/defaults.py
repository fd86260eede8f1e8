"""The defaults every reading shares, in one place.

The config schema (``workflow/schemas/config.schema.yaml``) repeats them as its defaults, so
that a run's configuration states them; a test keeps the two equal.
"""

__all__ = ["ALPHA", "LEVEL", "POWER", "SEED", "DRAWS", "SPLITS"]

#: Family-wise significance level of tests and verdicts (config ``alpha``).
ALPHA = 0.05
#: Confidence level of intervals and rank ranges (config ``level``).
LEVEL = 0.95
#: Power at which questions needed are computed (``claims_options.power``,
#: ``leaderboard.power``).
POWER = 0.8
#: Seed of the rank draws, bootstraps and split halves (``ranks.seed``, ``leaderboard.seed``).
SEED = 2024
#: Plausible worlds, or bootstrap replicates, drawn (``ranks.draws``, ``ranks.replicates``).
DRAWS = 10_000
#: Seeded split halves of the leaderboard's stability (``leaderboard.splits``).
SPLITS = 50
