"""Write the small fixtures for the logistic mixed model and GEE under ``tests/data/binary_*.csv``.

The fixtures of ``make_synthetic_fixtures.py`` already give two boundary cases of the logistic
model ``correct ~ 0 + model + (1|category) + (1|category:question)``: ``synthetic_boundary``
(category variance on the boundary, lme4 stops at a variance of ~5e-10) and
``synthetic_boundary_question`` (question variance exactly 0). What they do not give is a
category variance that is small but interior, where the Laplace likelihood is nearly flat in the
category standard deviation and an optimiser that stops early is visibly off; nor several 0/1
samples (epochs) per model x question cell. These two fixtures fill those gaps.

Fixtures
--------
binary_near_boundary.csv
    Columns ``model,question_id,category,correct``. Five models (one strong, accuracy ~0.9, so
    fitted probabilities come close to 1), 16 categories of 8 to 24 questions (249 questions), a
    question standard deviation of 1.0 and category effects of standard deviation only 0.25 on the
    logit scale, every model answers every question. With this seed the estimated category standard
    deviation is small but interior (about 0.055, a variance of ~0.003; see
    ``r_output/binary_near_boundary_binary.txt``): the Laplace likelihood is nearly flat there.
binary_epochs.csv
    Columns ``model,question_id,category,epoch,correct``: three models, 6 categories (60 questions),
    up to four independent 0/1 samples (epochs 1-4) per model x question cell drawn from the same
    logistic model; 15% of the samples are then removed at random (each cell keeps at least one),
    so cells carry different numbers of trials (2 to 4 with this seed).

Run ``uv run python tests/reference/make_binary_fixtures.py``; the output is byte-identical on every
run (one seeded ``numpy.random.Generator`` per fixture, children of one ``SeedSequence``).
"""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

__all__ = ["SEED", "FIXTURES", "main"]

SEED = 20261130
DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def _logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _layout(rng: np.random.Generator, sizes: list[int]):
    """Category name per question (shuffled) and sorted, non-contiguous integer question ids."""
    names = [f"cat{index:02d}" for index in range(len(sizes))]
    categories = rng.permutation(np.repeat(names, sizes))
    question_ids = np.sort(
        rng.choice(np.arange(1_000, 20_000), size=categories.size, replace=False)
    )
    return names, categories, question_ids


def near_boundary(rng: np.random.Generator) -> pd.DataFrame:
    """Complete 0/1 table from a logistic model with a small category standard deviation."""
    models = ["Strong-9B", "Mid-7B-v0.2", "Mid-7B-v0.1", "Base-7B", "Weak-3B"]
    model_logit = np.array([2.4, 0.35, 0.2, 0.0, -0.5])
    sizes = [24, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8]
    names, categories, question_ids = _layout(rng, sizes)
    # Category effects: the normal quantiles scaled to standard deviation exactly 0.25, in a
    # random order. Between-category noise from ~15 questions of sd 1.0 per category is as large as
    # this signal, so the estimate lands near (but, with this seed, not on) zero.
    quantiles = norm.ppf((np.arange(len(names)) + 0.5) / len(names))
    category_effect = dict(
        zip(names, rng.permutation(0.25 * quantiles / quantiles.std()), strict=True)
    )
    question_effect = rng.normal(0.0, 1.0, size=categories.size)
    logit = (
        np.array([category_effect[c] for c in categories])[:, None]
        + question_effect[:, None]
        + model_logit[None, :]
    )
    scores = (rng.random(logit.shape) < _logistic(logit)).astype(np.int8)
    n_questions, n_models = scores.shape
    return pd.DataFrame(
        {
            "model": np.tile(models, n_questions),
            "question_id": np.repeat(question_ids, n_models),
            "category": np.repeat(categories, n_models),
            "correct": scores.reshape(-1),
        }
    )


def epochs(rng: np.random.Generator) -> pd.DataFrame:
    """Up to four 0/1 samples per cell; 15% of samples dropped, never a cell's last one."""
    models = ["Gamma-2B", "Alpha-7B", "Beta-7B"]
    model_logit = np.array([-0.6, 0.5, 0.1])
    n_epochs = 4
    names, categories, question_ids = _layout(rng, [14, 12, 10, 9, 8, 7])
    category_effect = dict(zip(names, rng.normal(0.0, 0.6, size=len(names)), strict=True))
    question_effect = rng.normal(0.0, 1.1, size=categories.size)
    logit = (
        np.array([category_effect[c] for c in categories])[:, None]
        + question_effect[:, None]
        + model_logit[None, :]
    )
    n_questions, n_models = logit.shape
    # samples are conditionally independent given the question: same logit, fresh Bernoulli draws
    scores = rng.random((n_questions, n_models, n_epochs)) < _logistic(logit)[:, :, None]
    frame = pd.DataFrame(
        {
            "model": np.tile(np.repeat(models, n_epochs), n_questions),
            "question_id": np.repeat(question_ids, n_models * n_epochs),
            "category": np.repeat(categories, n_models * n_epochs),
            "epoch": np.tile(np.arange(1, n_epochs + 1), n_questions * n_models),
            "correct": scores.reshape(-1).astype(np.int8),
        }
    )
    # Drop 15% of the samples; the first epoch of every cell is never a candidate, so every cell
    # keeps at least one sample.
    candidates = np.flatnonzero(frame["epoch"].to_numpy() > 1)
    drop = rng.choice(candidates, size=round(0.15 * len(frame)), replace=False)
    return frame.drop(index=drop).reset_index(drop=True)


FIXTURES = {
    "binary_near_boundary": (near_boundary, 0),
    "binary_epochs": (epochs, 1),
}


def main() -> None:
    children = np.random.SeedSequence(SEED).spawn(len(FIXTURES))
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for name, (make, child) in FIXTURES.items():
        frame = make(np.random.default_rng(children[child]))
        frame.to_csv(DATA_DIR / f"{name}.csv", index=False, lineterminator="\n")
        print(f"{name}: {len(frame)} rows, {frame['question_id'].nunique()} questions")


if __name__ == "__main__":
    main()
