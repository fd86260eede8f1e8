"""arena-rank 0.1.1 (LMArena's rating code) on the committed battle fixtures: the oracle numbers.

Runs in a throwaway venv, never the project's (arena-rank needs JAX)::

    python3 -m venv /tmp/arena && /tmp/arena/bin/pip install arena-rank==0.1.1 jax jaxlib
    /tmp/arena/bin/python tests/reference/battles/make_arena_rank_reference.py

and writes ``tests/reference/battles/arena_rank_output.json``: for each fixture, arena-rank's
ratings (Elo scale: 400/ln 10 per log-odds unit, offset 1000) and the variances of its
``ci_method="sandwich"`` (per-battle HC0 with the ridge 1e-5 N on the Hessian's diagonal).
Its fit has no ridge; it starts at 0 and every gradient step keeps the strengths' sum at 0,
so its ratings are the maximum-likelihood estimate with mean 1000. Ties (``tie``) count 1/2.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "data" / "battles"
FIXTURES = ("worked_example", "clustered")


def main() -> int:
    out = {
        "versions": {p: version(p) for p in ("arena-rank", "jax", "jaxlib", "optax")},
        "python": sys.version.split()[0],
    }
    for name in FIXTURES:
        frame = pd.read_csv(DATA / f"{name}.csv", dtype=str)
        dataset = PairDataset.from_pandas(frame)
        model = BradleyTerry(n_competitors=len(dataset.competitors))
        result = model.compute_ratings_and_cis(dataset, ci_method="sandwich")
        out[name] = {
            "competitors": list(result["competitors"]),
            "ratings": np.asarray(result["ratings"]).tolist(),
            "variances": np.asarray(result["variances"]).tolist(),
            "rating_lower": np.asarray(result["rating_lower"]).tolist(),
            "battles": int(np.asarray(dataset.counts).sum()),
        }
        ratings = np.round(out[name]["ratings"], 6)
        print(name, dict(zip(out[name]["competitors"], ratings, strict=True)))
    (HERE / "arena_rank_output.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
