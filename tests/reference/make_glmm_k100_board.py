"""Write ``tests/data/glmm_k100.csv.gz``: a seeded board of 100 models x 500 questions.

The reference board of the logistic fits at many models (issue 23): glmer's estimates, its RX
covariance (``vcov(fit, use.hessian = FALSE)``), its log-likelihood and variance components, and
geepack's exchangeable GEE, are in ``r_output/glmm_k100_binary.json``
(``make_r_glmm_k100_reference.R``, started from ``glmm_k100_start.json``; see README_binary.md).

Board
-----
Columns ``model,question_id,category,correct`` (0/1). 100 models ``m000`` ... ``m099`` with log
odds evenly spread over [-1.5, 2.0] (so neighbours are close and far models far apart), 500
questions ``q0000`` ... in 10 categories ``c0`` ... ``c9`` of 30 to 70 questions, question
effects N(0, 1) and category effects N(0, 0.5^2) on the logit scale:

.. math::  \\Pr(y_{kq} = 1) = \\operatorname{logistic}(\\beta_k + b_q + b_{c(q)}).

5% of the model x question cells are then removed at random (47,500 rows), so that clusters
differ in size and the GEE's estimates depend on its working correlation (with complete data
they do not).

Run ``uv run python tests/reference/make_glmm_k100_board.py``; one seeded
``numpy.random.Generator``, byte-identical output (gzip without a timestamp).
"""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["SEED", "PATH", "board", "main"]

SEED = 20261201
PATH = Path(__file__).resolve().parents[1] / "data" / "glmm_k100.csv.gz"


def board(seed: int = SEED) -> pd.DataFrame:
    """The board as a long table, rows sorted by question then model."""
    rng = np.random.default_rng(seed)
    n_models, sizes = 100, np.array([30, 35, 40, 45, 50, 50, 55, 60, 65, 70])
    beta = np.linspace(-1.5, 2.0, n_models)
    category = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    effect = rng.normal(0.0, 1.0, category.size) + rng.normal(0.0, 0.5, sizes.size)[category]
    logit = beta[None, :] + effect[:, None]  # questions x models
    correct = rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))
    keep = rng.random(logit.shape) >= 0.05
    question, model = np.nonzero(keep)
    return pd.DataFrame(
        {
            "model": np.char.add("m", np.char.zfill(model.astype(str), 3)),
            "question_id": np.char.add("q", np.char.zfill(question.astype(str), 4)),
            "category": np.char.add("c", category[question].astype(str)),
            "correct": correct[question, model].astype(int),
        }
    )


def main() -> None:
    text = board().to_csv(index=False, lineterminator="\n").encode()
    PATH.write_bytes(gzip.compress(text, compresslevel=9, mtime=0))
    print(f"wrote {PATH} ({PATH.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
