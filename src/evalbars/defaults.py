"""The defaults every reading shares, and the bounds put on them, in one place.

The config schema (``workflow/schemas/config.schema.yaml``) repeats them as its defaults and
bounds, so that a run's configuration states them; a test keeps the two equal. The command
line and the Python API take their defaults from here.
"""

__all__ = [
    "ALPHA",
    "LEVEL",
    "POWER",
    "SEED",
    "DRAWS",
    "SPLITS",
    "TOP_K",
    "MISSING_SEED",
    "MIN_DRAWS",
    "MAX_DRAWS",
    "MAX_SPLITS",
]

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
#: k of the leaderboard's confidence set for the top k (``leaderboard.top_k``).
TOP_K = 3
#: Seed of the ``random_guess`` policy for missing predictions (``missing_prediction_seed``).
MISSING_SEED = 12345

#: Fewest draws accepted: the schema's ``ranks.draws`` and ``ranks.replicates`` minimum.
MIN_DRAWS = 100
#: Most draws (or bootstrap replicates) accepted: the schema's ``ranks.draws`` and
#: ``ranks.replicates`` maximum. Draws are made in chunks, so more cost time, not memory, in
#: proportion (10^6 take 100 times the default's time), while the Monte Carlo error of a
#: probability from 10^6 draws is already at most 0.0005.
MAX_DRAWS = 1_000_000
#: Most split-half splits accepted (the schema's ``leaderboard.splits`` maximum): with 10,000
#: splits the Monte Carlo error of a share is below 0.005, and memory grows with splits.
MAX_SPLITS = 10_000
