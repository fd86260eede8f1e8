"""How the rank-uncertainty readings draw (shared by every ranks module).

Their defaults (draws, seed, level) and the bounds on the draws are :mod:`evalbars.defaults`'s.
"""

__all__ = ["DRAW_CHUNK"]

#: Plausible worlds (or bootstrap replicates) generated and ranked at a time. It bounds
#: memory (a chunk holds DRAW_CHUNK x systems draws, and the bootstrap DRAW_CHUNK x questions
#: counts) whatever the number of draws; numpy draws array arguments element by element, so
#: the chunk size does not change the numbers, which depend on the seed and the draws only.
DRAW_CHUNK = 128
