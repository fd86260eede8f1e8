"""Write ``tests/data/synthetic_runs.csv``: repeated runs with known variance components.

Columns ``model,question_id,run,sample,score``: one row per sample. Each "model" is one design
of ``score = mu + a_q + b_r + e`` with samples nested in question-by-run cells, crossed
questions and runs; ``tests/reference/make_r_run_variance_reference.R`` fits
``lmer(score ~ 1 + (1|question_id) + (1|run))`` to each and
``tests/unit/stats/test_run_variance.py`` compares :mod:`evalbars.stats.repeats.run_variance`
with lme4.

Designs (the truth: sd of a_q, b_r, e)
--------------------------------------
gaussian_balanced
    40 questions x 5 runs x 3 samples, continuous scores, sds 0.20 / 0.06 / 0.30: interior,
    balanced (REML is the ANOVA closed form).
binary_balanced
    40 x 5 x 3, 0/1 scores drawn with probability ``clip(0.6 + a_q + b_r)`` (sds 0.25 / 0.05):
    the linear-probability crossed model lme4 fits to accuracies.
binary_unbalanced
    ``binary_balanced``'s draws with 15% of the samples removed at random and run 5 missing
    questions 31-40: the numerical REML path.
gaussian_unbalanced_two_runs
    30 questions x 2 runs, 1-4 samples per cell (drawn), sds 0.15 / 0.08 / 0.25: the fewest
    runs a run variance needs, unequal cells.
binary_no_run_effect
    30 x 4 x 2, 0/1, no run shift (sd 0): the run variance's REML estimate sits at or near 0.

Run ``uv run python tests/reference/make_run_variance_fixtures.py``; byte-identical output
(one seeded generator per design, children of one ``SeedSequence``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20261206
OUT = Path(__file__).resolve().parents[1] / "data" / "synthetic_runs.csv"


def _design(rng, questions, runs, samples, sd_q, sd_r, sd_e, binary, mu=0.6):
    a = rng.normal(0, sd_q, questions)
    b = rng.normal(0, sd_r, runs)
    q, r, s = np.meshgrid(np.arange(questions), np.arange(runs), np.arange(samples), indexing="ij")
    q, r, s = q.ravel(), r.ravel(), s.ravel()
    mean = mu + a[q] + b[r]
    if binary:
        score = (rng.random(q.size) < np.clip(mean, 0.02, 0.98)).astype(float)
    else:
        score = np.round(mean + rng.normal(0, sd_e, q.size), 6)
    return pd.DataFrame(
        {
            "question_id": [f"q{i + 1:03d}" for i in q],
            "run": r + 1,
            "sample": s + 1,
            "score": score,
        }
    )


def main() -> None:
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(SEED).spawn(6)]
    frames = {
        "gaussian_balanced": _design(rngs[0], 40, 5, 3, 0.20, 0.06, 0.30, False),
        "binary_balanced": _design(rngs[1], 40, 5, 3, 0.25, 0.05, None, True),
    }
    unbalanced = frames["binary_balanced"]
    keep = rngs[2].random(len(unbalanced)) >= 0.15
    keep &= ~((unbalanced["run"] == 5) & (unbalanced["question_id"] > "q030"))
    frames["binary_unbalanced"] = unbalanced[keep]
    two = _design(rngs[3], 30, 2, 4, 0.15, 0.08, 0.25, False)
    cap = rngs[4].integers(1, 5, 30 * 2)  # 1-4 samples per (question, run) cell
    cell = (two["question_id"].str[1:].astype(int) - 1) * 2 + two["run"] - 1
    frames["gaussian_unbalanced_two_runs"] = two[two["sample"].to_numpy() <= cap[cell]]
    frames["binary_no_run_effect"] = _design(rngs[5], 30, 4, 2, 0.25, 0.0, None, True)
    table = pd.concat([f.assign(model=name) for name, f in frames.items()], ignore_index=True)
    table = table[["model", "question_id", "run", "sample", "score"]]
    table.to_csv(OUT, index=False, lineterminator="\n")
    print(table.groupby("model", sort=False).size().to_string())


if __name__ == "__main__":
    main()
