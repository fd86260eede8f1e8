"""Write ``tests/data/glmm_k100_start.json``: evalbars' logistic mixed-model fit of the K = 100 board.

The R reference at 100 models (``make_r_glmm_k100_reference.R`` with
``EVALBARS_R_START=tests/data/glmm_k100_start.json``) rounds these estimates to 2 decimals and
starts there, because glmer's own optimisers do not finish from its default start on that board
(102 parameters, 0.6 s per deviance evaluation). Rounding puts the start up to 0.005 from this fit
in every coordinate, up to 50 times the 1e-4 the tests then ask of the agreement, so where R
stops is R's own.

Run ``uv run python tests/reference/make_glmm_k100_start.py [board.csv.gz] [start.json]``.
"""

import json
import sys
from pathlib import Path

import pandas as pd

from evalbars.stats.logistic import glmm

__all__ = ["start_values", "main"]

DATA = Path(__file__).resolve().parents[1] / "data"


def start_values(long: pd.DataFrame) -> dict:
    """theta (question, category), the fixed effect of every model, and the Laplace deviance."""
    cells = glmm.binomial_cells(long)
    fit = glmm.fit_glmm(
        cells["successes"],
        cells["trials"],
        cells["model"],
        cells["question_id"],
        cells["category"],
        hessian="schur",
    )
    return {
        "theta": [fit.theta["question"], fit.theta["category"]],
        "fixef": dict(zip(fit.names, fit.params.tolist(), strict=True)),
        "laplace_deviance": fit.laplace_deviance,
    }


def main(argv: list[str]) -> None:
    board = Path(argv[0]) if argv else DATA / "glmm_k100.csv.gz"
    out = Path(argv[1]) if len(argv) > 1 else DATA / "glmm_k100_start.json"
    out.write_text(json.dumps(start_values(pd.read_csv(board)), indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
