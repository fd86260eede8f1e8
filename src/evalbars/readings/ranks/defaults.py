"""Default settings of the rank-uncertainty readings (shared by every ranks module)."""

from evalbars.defaults import DRAWS, LEVEL, SEED

__all__ = [
    "DEFAULT_DRAWS",
    "MIN_DRAWS",
    "MAX_DRAWS",
    "DEFAULT_LEVEL",
    "DEFAULT_SEED",
    "DRAW_CHUNK",
]

#: Plausible worlds drawn per system when no draw count is given.
DEFAULT_DRAWS = DRAWS
#: Fewest draws accepted: the workflow schema's ``ranks.draws`` minimum.
MIN_DRAWS = 100
#: Most draws (or bootstrap replicates) accepted: the schema's ``ranks.draws`` and
#: ``ranks.replicates`` maximum. Draws are made in chunks, so more cost time, not memory, in
#: proportion (10^6 take 100 times the default's time), while the Monte Carlo error of a
#: probability from 10^6 draws is already at most 0.0005.
MAX_DRAWS = 1_000_000
#: Seed of the plausible-world generator when none is given.
DEFAULT_SEED = SEED
#: Confidence level of intervals and rank ranges when none is given.
DEFAULT_LEVEL = LEVEL
#: Plausible worlds (or bootstrap replicates) generated and ranked at a time. It bounds
#: memory (a chunk holds DRAW_CHUNK x systems draws, and the bootstrap DRAW_CHUNK x questions
#: counts) whatever the number of draws; numpy draws array arguments element by element, so
#: the chunk size does not change the numbers, which depend on the seed and the draws only.
DRAW_CHUNK = 128
