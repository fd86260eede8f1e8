"""Write the small synthetic long-format fixtures under ``tests/data/``.

Each CSV has the columns ``model,question_id,category,correct`` (0/1 scores, integer question
ids, string categories), the long format that ``tests/reference/make_r_reference.R`` reads to
produce R reference values and that the analysis tests read to compare against them.

Fixtures
--------
synthetic_balanced.csv
    Four models, eight categories of unequal size (5 to 40 questions, 150 in total), every model
    answers every question. Scores are Bernoulli draws from a logistic model with a model effect,
    a category effect and a question effect, so all three REML variance components of the nested
    model ``(1|category) + (1|category:question)`` are interior.
synthetic_boundary.csv
    Complete data whose category means are all exactly 0.5 (each category has exactly half of its
    cells correct), so the between-category sum of squares is zero and the REML category variance
    sits exactly on the boundary (lme4 reports a singular fit) for any optimiser.
synthetic_boundary_question.csv
    Complete data in which every question of category ``c`` has exactly ``k_c`` of the four models
    correct, so question means do not vary within a category: the REML question variance sits
    exactly on the boundary (sigma_q^2 = 0) while the category variance stays interior.
synthetic_incomplete.csv
    ``synthetic_balanced`` with 5% of its (model, question) cells removed at random (each question
    keeps at least one answer), for the general, non-exact fitting path.
synthetic_epochs_balanced.csv
    Repeated samples (epochs): four models, six categories of 10 to 32 questions (120 in total),
    every model answers every question three times (column ``epoch``, 1 to 3). Scores are Bernoulli
    draws from a logistic model with model, category, question and model-by-question effects, so
    the model ``(1|category) + (1|category:question) + (1|category:question:model)`` has all four
    variance components interior; complete and balanced, for the exact path.
synthetic_epochs.csv
    ``synthetic_epochs_balanced`` with some cells cut to one or two samples (about 10%) and a few
    cells removed (about 3%, never a whole question), for the general path with cell weights.

Run ``uv run python tests/reference/make_synthetic_fixtures.py``; the output is byte-identical on
every run (one seeded ``numpy.random.Generator`` per fixture, children of one ``SeedSequence``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["SEED", "FIXTURES", "main"]

SEED = 20240917
DATA_DIR = Path(__file__).resolve().parents[1] / "data"

# Names with dashes and dots like the real MMLU-Pro models (emmeans puts such labels in
# parentheses); alphabetical order differs from accuracy order on purpose.
MODELS = ["Orca-2-7B", "Falcon-7B", "Zephyr-7B-beta", "Alpaca-7B-v0.1"]
MODEL_LOGIT = np.array([0.45, 0.15, 0.0, -0.3])
CATEGORY_SIZES = {
    "law": 40,
    "math": 30,
    "biology": 22,
    "history": 18,
    "physics": 15,
    "economics": 12,
    "philosophy": 8,
    "other": 5,
}


def _long_table(scores: np.ndarray, categories: np.ndarray, question_ids: np.ndarray):
    """Long table from a (n_questions, K) 0/1 matrix; NaN cells are dropped."""
    n_questions, n_models = scores.shape
    frame = pd.DataFrame(
        {
            "model": np.tile(MODELS, n_questions),
            "question_id": np.repeat(question_ids, n_models),
            "category": np.repeat(categories, n_models),
            "correct": scores.reshape(-1),
        }
    )
    frame = frame.dropna(subset=["correct"])
    frame["correct"] = frame["correct"].astype(np.int8)
    return frame.reset_index(drop=True)


def _layout(rng: np.random.Generator):
    """Category label per question and shuffled, non-contiguous integer question ids."""
    categories = np.repeat(list(CATEGORY_SIZES), list(CATEGORY_SIZES.values()))
    question_ids = np.sort(rng.choice(np.arange(100, 10_000), size=categories.size, replace=False))
    return rng.permutation(categories), question_ids


def balanced(rng: np.random.Generator) -> np.ndarray:
    """Logistic model: intercept + model + category (sd 0.9) + question (sd 1.2) effects."""
    categories, question_ids = _layout(rng)
    names = list(CATEGORY_SIZES)
    category_effect = dict(zip(names, rng.normal(0.0, 0.9, size=len(names)), strict=True))
    question_effect = rng.normal(0.0, 1.2, size=categories.size)
    logit = (
        0.2
        + np.array([category_effect[c] for c in categories])[:, None]
        + question_effect[:, None]
        + MODEL_LOGIT[None, :]
    )
    scores = (rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))).astype(float)
    return scores, categories, question_ids


def boundary_category(rng: np.random.Generator):
    """Question and model effects, no category effect; then flip cells so each category mean is
    exactly 0.5 (category sizes times four models is even, so half the cells is an integer)."""
    categories, question_ids = _layout(rng)
    logit = rng.normal(0.0, 1.2, size=categories.size)[:, None] + MODEL_LOGIT[None, :]
    scores = (rng.random(logit.shape) < 1.0 / (1.0 + np.exp(-logit))).astype(float)
    for name in CATEGORY_SIZES:
        rows = np.flatnonzero(categories == name)
        block = scores[rows]
        excess = int(block.sum()) - block.size // 2
        value = 1.0 if excess > 0 else 0.0
        candidates = np.flatnonzero(block.reshape(-1) == value)
        flip = rng.choice(candidates, size=abs(excess), replace=False)
        flat = block.reshape(-1)
        flat[flip] = 1.0 - value
        scores[rows] = flat.reshape(block.shape)
    return scores, categories, question_ids


def boundary_question(rng: np.random.Generator):
    """Every question of category c has exactly k_c of the four models correct (k_c in 1..3);
    which models are correct is drawn without replacement with weights favouring stronger
    models, so model effects exist but question means are constant within each category."""
    categories, question_ids = _layout(rng)
    names = list(CATEGORY_SIZES)
    correct_per_question = dict(zip(names, [1, 3, 2, 1, 3, 2, 3, 1], strict=True))
    weights = np.exp(MODEL_LOGIT)
    # Gumbel-top-k: the k largest of log(w) + Gumbel noise are a weighted draw without replacement.
    keys = np.log(weights)[None, :] + rng.gumbel(size=(categories.size, len(MODELS)))
    ranks = np.argsort(np.argsort(-keys, axis=1), axis=1)
    k = np.array([correct_per_question[c] for c in categories])
    scores = (ranks < k[:, None]).astype(float)
    return scores, categories, question_ids


def incomplete(rng: np.random.Generator):
    """``balanced`` (same draws) with 5% of cells set missing, never a whole question."""
    scores, categories, question_ids = balanced(rng)
    n_cells = scores.size
    n_drop = round(0.05 * n_cells)
    while True:
        drop = rng.choice(n_cells, size=n_drop, replace=False)
        mask = np.zeros(n_cells, dtype=bool)
        mask[drop] = True
        if not mask.reshape(scores.shape).all(axis=1).any():
            break
    scores = scores.copy()
    scores.reshape(-1)[mask] = np.nan
    return scores, categories, question_ids


EPOCH_CATEGORY_SIZES = {
    "law": 32,
    "math": 26,
    "biology": 20,
    "history": 18,
    "physics": 14,
    "other": 10,
}
EPOCHS = 3


def epochs_balanced(rng: np.random.Generator):
    """Logistic model with a model-by-question effect (sd 0.9), three Bernoulli draws per cell.

    Returns the (n_questions, K, EPOCHS) score array, categories and question ids.
    """
    categories = np.repeat(list(EPOCH_CATEGORY_SIZES), list(EPOCH_CATEGORY_SIZES.values()))
    question_ids = np.sort(rng.choice(np.arange(100, 10_000), size=categories.size, replace=False))
    categories = rng.permutation(categories)
    names = list(EPOCH_CATEGORY_SIZES)
    category_effect = dict(zip(names, rng.normal(0.0, 0.8, size=len(names)), strict=True))
    question_effect = rng.normal(0.0, 1.2, size=categories.size)
    cell_effect = rng.normal(0.0, 0.9, size=(categories.size, len(MODELS)))
    logit = (
        0.2
        + np.array([category_effect[c] for c in categories])[:, None]
        + question_effect[:, None]
        + MODEL_LOGIT[None, :]
        + cell_effect
    )
    chance = 1.0 / (1.0 + np.exp(-logit))
    scores = (rng.random((*logit.shape, EPOCHS)) < chance[:, :, None]).astype(float)
    return scores, categories, question_ids


def epochs_unbalanced(rng: np.random.Generator):
    """``epochs_balanced`` (same draws) with 10% of cells cut to one or two samples and 3% of
    cells removed, never every cell of a question."""
    scores, categories, question_ids = epochs_balanced(rng)
    n_questions, n_models, _ = scores.shape
    cells = n_questions * n_models
    order = rng.permutation(cells)
    n_missing, n_cut = round(0.03 * cells), round(0.10 * cells)
    keep = np.full(cells, EPOCHS)
    keep[order[:n_missing]] = 0
    keep[order[n_missing : n_missing + n_cut]] = rng.integers(1, EPOCHS, size=n_cut)
    keep = keep.reshape(n_questions, n_models)
    assert (keep.sum(axis=1) > 0).all(), "a question lost every cell"
    scores = scores.copy()
    scores[np.arange(EPOCHS)[None, None, :] >= keep[:, :, None]] = np.nan
    return scores, categories, question_ids


def _long_epochs(scores: np.ndarray, categories: np.ndarray, question_ids: np.ndarray):
    """Long table with an ``epoch`` column from a (n_questions, K, EPOCHS) array; NaN dropped."""
    n_questions, n_models, n_epochs = scores.shape
    frame = pd.DataFrame(
        {
            "model": np.tile(np.repeat(MODELS, n_epochs), n_questions),
            "question_id": np.repeat(question_ids, n_models * n_epochs),
            "category": np.repeat(categories, n_models * n_epochs),
            "epoch": np.tile(np.arange(1, n_epochs + 1), n_questions * n_models),
            "correct": scores.reshape(-1),
        }
    )
    frame = frame.dropna(subset=["correct"])
    frame["correct"] = frame["correct"].astype(np.int8)
    return frame.reset_index(drop=True)


FIXTURES = {
    "synthetic_balanced": (balanced, 0),
    "synthetic_boundary": (boundary_category, 1),
    "synthetic_boundary_question": (boundary_question, 2),
    # same child seed as balanced, so it is balanced's data with cells removed
    "synthetic_incomplete": (incomplete, 0),
    # one child for both, so the unbalanced fixture is the balanced one with samples removed
    "synthetic_epochs_balanced": (epochs_balanced, 3),
    "synthetic_epochs": (epochs_unbalanced, 3),
}


def main() -> None:
    children = np.random.SeedSequence(SEED).spawn(max(i for _, i in FIXTURES.values()) + 1)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for name, (make, child) in FIXTURES.items():
        scores, categories, question_ids = make(np.random.default_rng(children[child]))
        table = _long_epochs if scores.ndim == 3 else _long_table
        frame = table(scores, categories, question_ids)
        frame.to_csv(DATA_DIR / f"{name}.csv", index=False, lineterminator="\n")
        print(f"{name}: {len(frame)} rows, {frame['question_id'].nunique()} questions")


if __name__ == "__main__":
    main()
