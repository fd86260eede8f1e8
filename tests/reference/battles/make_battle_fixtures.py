"""Seeded generator of the plain battle fixtures under tests/data/battles/ (byte-identical).

- ``worked_example.csv``: the methods notes' worked example, 600 battles of 4 models with fixed
  counts (A>B 60:40, A>C 70:30, A>D 80:20, B>C 55:45, B>D 65:35, C>D 60:40); columns
  ``model_a, model_b, winner``.
- ``clustered.csv``: 6 models, 150 prompts, 4 battles per prompt between pairs drawn at
  random, with a prompt-by-model effect (so battles of one prompt are correlated), ties from
  Rao-Kupper's model (threshold 0.35), sides drawn at random, 25 voters and 2 categories;
  columns ``model_a, model_b, winner, prompt_id, judge, category``. It is the data of the R
  (BradleyTerry2, sandwich) and arena-rank oracles.

Run from the repository root: ``uv run python tests/reference/battles/make_battle_fixtures.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[2] / "data" / "battles"
WORKED_COUNTS = {
    ("A", "B"): (60, 40),
    ("A", "C"): (70, 30),
    ("A", "D"): (80, 20),
    ("B", "C"): (55, 45),
    ("B", "D"): (65, 35),
    ("C", "D"): (60, 40),
}
SEED = 20261206
MODELS = ("model-a", "model-b", "model-c", "model-d", "model-e", "model-f")
STRENGTHS = np.array([0.8, 0.5, 0.3, 0.2, 0.0, -0.4])
PROMPTS, PER_PROMPT, VOTERS = 150, 4, 25
PROMPT_EFFECT_SD, TIE_THRESHOLD = 0.8, 0.35


def worked_example() -> pd.DataFrame:
    rows = []
    for (a, b), (wins, losses) in WORKED_COUNTS.items():
        rows += [(a, b, "model_a")] * wins + [(a, b, "model_b")] * losses
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def clustered() -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    k = len(MODELS)
    effect = PROMPT_EFFECT_SD * rng.standard_normal((PROMPTS, k))
    prompt = np.repeat(np.arange(PROMPTS), PER_PROMPT)
    first = rng.integers(0, k, prompt.size)
    second = (first + rng.integers(1, k, prompt.size)) % k
    strength = STRENGTHS + effect[prompt]  # battles x models
    rows = np.arange(prompt.size)
    eta = strength[rows, first] - strength[rows, second]
    won = 1 / (1 + np.exp(-(eta - TIE_THRESHOLD)))
    lost = 1 / (1 + np.exp(-(-eta - TIE_THRESHOLD)))
    u = rng.random(prompt.size)
    winner = np.where(u < won, "model_a", np.where(u < won + lost, "model_b", "tie"))
    return pd.DataFrame(
        {
            "model_a": np.array(MODELS)[first],
            "model_b": np.array(MODELS)[second],
            "winner": winner,
            "prompt_id": [f"q{p + 1:03d}" for p in prompt],
            "judge": [f"voter-{v + 1:02d}" for v in rng.integers(0, VOTERS, prompt.size)],
            "category": np.where(prompt % 3 == 0, "math", "writing"),
        }
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    worked_example().to_csv(OUT / "worked_example.csv", index=False, lineterminator="\n")
    clustered().to_csv(OUT / "clustered.csv", index=False, lineterminator="\n")


if __name__ == "__main__":
    main()
