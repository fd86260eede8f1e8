"""Write tests/data/judged/: a judge-scored long table with human labels on a random subset.

Three models answer 240 questions in 4 categories. Each model's true score (what a person
would give) is drawn with its own accuracy; a lenient LLM judge then scores every answer,
passing a wrong answer 30% of the time and failing a right one 8% of the time, so the judge's
accuracy is biased upwards and differently per model. A person labelled a uniformly random 30%
of the questions (the same for every model): their ``human`` is the true score, empty
elsewhere. ``judged.csv`` holds the judge's scores with the labels in a ``human`` column;
``judged_scores.csv`` the same without it, and ``labels.csv`` the labels alone
(``model, question_id, human``), for ``--labels``. ``truth.csv`` holds every true score, for
the tests' oracle (the corrected reading should cover it; the judge's should not).

Run from the repository root: ``python tests/reference/make_judged_table.py``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "data" / "judged"
MODELS = {"model-a": 0.72, "model-b": 0.62, "model-c": 0.55}
QUESTIONS, CATEGORIES, LABELLED_SHARE = 240, ("arith", "code", "facts", "logic"), 0.30
FALSE_PASS, FALSE_FAIL = 0.30, 0.08


def main() -> None:
    rng = np.random.default_rng(20261202)
    ids = np.array([f"q{i:03d}" for i in range(1, QUESTIONS + 1)])
    category = np.array(CATEGORIES)[np.arange(QUESTIONS) % len(CATEGORIES)]
    difficulty = rng.normal(0.0, 0.8, QUESTIONS)
    accuracy = np.array(list(MODELS.values()))
    logit = np.log(accuracy / (1 - accuracy))[None, :] - difficulty[:, None]
    truth = rng.random((QUESTIONS, len(MODELS))) < 1 / (1 + np.exp(-logit))
    draw = rng.random(truth.shape)
    judge = np.where(truth, draw >= FALSE_FAIL, draw < FALSE_PASS)
    labelled = rng.random(QUESTIONS) < LABELLED_SHARE
    frames = []
    for k, model in enumerate(MODELS):
        frames.append(
            pd.DataFrame(
                {
                    "model": model,
                    "question_id": ids,
                    "category": category,
                    "correct": judge[:, k].astype(int),
                    "human": np.where(labelled, truth[:, k].astype(float), np.nan),
                    "truth": truth[:, k].astype(int),
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    OUT.mkdir(parents=True, exist_ok=True)
    table.drop(columns="truth").to_csv(OUT / "judged.csv", index=False, float_format="%g")
    table[["model", "question_id", "category", "correct"]].to_csv(
        OUT / "judged_scores.csv", index=False
    )
    labels = table[table["human"].notna()][["model", "question_id", "human"]]
    labels.to_csv(OUT / "labels.csv", index=False, float_format="%g")
    table[["model", "question_id", "truth"]].to_csv(OUT / "truth.csv", index=False)
    summary = table.groupby("model").agg(
        judge=("correct", "mean"), truth=("truth", "mean"), labelled=("human", "count")
    )
    print(summary)


if __name__ == "__main__":
    main()
