"""Reference values of the winner's-curse readings from honestboard 0.6.1 (PyPI).

honestboard is never a dependency of evalbars: run this script once, in a throwaway virtual
environment, and commit what it writes (``winners_output/honestboard.json``)::

    python3 -m venv /tmp/hb && /tmp/hb/bin/pip install honestboard==0.6.1
    /tmp/hb/bin/python tests/reference/make_winners_reference.py

Five boards, each scores and a covariance: the worked example of the methods notes (scores
0.80, 0.78, 0.75, 0.70 with SE 0.02, independent and with correlation 0.6), and three of our
own making (six models under a one-factor correlation, ten models with three near-tied at the
top, three models with a clear winner). For each, honestboard's ``winner_adjusted``
(conditional), ``winner_hybrid`` and ``winner_zoom`` with their defaults (alpha 0.05,
beta = nu = alpha/10, 20,000 draws, seed 0). honestboard's simultaneous critical values are
quantiles of 20,000 plain draws, so they carry Monte Carlo error (about 0.02 at the hybrid's
beta = 0.005); the tests compare to 1e-3.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import numpy as np
from honestboard import selective


def boards() -> dict:
    """The boards: name -> (scores, covariance)."""
    independent = np.eye(4) * 0.02**2
    correlated = 0.02**2 * (0.6 * np.ones((4, 4)) + 0.4 * np.eye(4))
    rng = np.random.default_rng(20261206)
    loadings = rng.uniform(0.3, 0.8, 6)
    corr6 = np.outer(loadings, loadings)
    np.fill_diagonal(corr6, 1.0)
    sd6 = np.array([0.015, 0.016, 0.014, 0.015, 0.017, 0.018])
    sd10 = np.full(10, 0.012)
    corr10 = 0.4 * np.ones((10, 10)) + 0.6 * np.eye(10)
    sd3 = np.array([0.01, 0.015, 0.015])
    corr3 = 0.3 * np.ones((3, 3)) + 0.7 * np.eye(3)
    return {
        "worked_independent": ([0.80, 0.78, 0.75, 0.70], independent),
        "worked_correlated": ([0.80, 0.78, 0.75, 0.70], correlated),
        "six_one_factor": ([0.71, 0.705, 0.69, 0.68, 0.60, 0.55], corr6 * np.outer(sd6, sd6)),
        "ten_near_tie": (
            [0.640, 0.638, 0.635, 0.61, 0.60, 0.58, 0.57, 0.55, 0.52, 0.50],
            corr10 * np.outer(sd10, sd10),
        ),
        "three_clear": ([0.90, 0.70, 0.65], corr3 * np.outer(sd3, sd3)),
    }


def main() -> None:
    out = {"honestboard": metadata.version("honestboard"), "boards": {}}
    for name, (scores, cov) in boards().items():
        scores = np.asarray(scores, float)
        conditional = selective.winner_adjusted(scores, cov)
        hybrid = selective.winner_hybrid(scores, cov)
        zoom = selective.winner_zoom(scores, cov)
        out["boards"][name] = {
            "scores": scores.tolist(),
            "cov": np.asarray(cov).tolist(),
            "conditional": {"estimate": conditional["estimate"], "ci": list(conditional["ci"])},
            "hybrid": {
                "estimate": hybrid["estimate"],
                "ci": list(hybrid["ci"]),
                "projection_ci": list(hybrid["projection_ci"]),
            },
            "zoom": {"ci": list(zoom["ci"]), "plausible": zoom["n_plausible"]},
        }
        print(name, json.dumps(out["boards"][name]["hybrid"]), out["boards"][name]["zoom"])
    path = Path(__file__).parent / "winners_output" / "honestboard.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
