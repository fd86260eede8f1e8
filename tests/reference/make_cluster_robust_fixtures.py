"""Write the small fixtures of the cluster-robust mean under ``tests/data/cluster_robust_*.csv``.

Each CSV has the columns ``question_id,cluster,score,weight``: one row per question, ``score``
the mean of ``weight`` samples (or a paired difference), ``weight`` the samples behind it. The R
script ``make_r_cluster_robust_reference.R`` fits ``lm(score ~ 1)`` and ``lm(score ~ 1, weights =
weight)`` to each and records clubSandwich's and sandwich's cluster-robust SEs, df, intervals and
p; ``tests/unit/stats/test_cluster_robust.py`` compares :mod:`evalbars.stats.cluster_robust`
with them.

Fixtures
--------
cluster_robust_g3
    3 clusters of 4, 7 and 12 questions; each score the mean of 1-4 Bernoulli samples with a
    cluster-specific pass rate (so the scores are fractions k/w).
cluster_robust_g6
    6 clusters of 3 to 24 questions, 0/1 scores of one sample each, but weights 1-5 (the
    weighted fit then weights 0/1 scores unequally), and one question of weight 0.
cluster_robust_g14_paired
    14 clusters sized like MMLU-Pro's categories divided by 40 (10 to 34 questions, 300 in all):
    paired differences candidate minus baseline in {-1, 0, 1} with a candidate x category effect,
    weights 1-3.
cluster_robust_equal
    6 clusters of 8 questions each, continuous scores: the equal-size closed forms (CR2 = CR1,
    Satterthwaite df = G - 1 = 5) hold for the unweighted fit.
cluster_robust_singletons
    10 questions, each its own cluster: unweighted CR2 is the HC2 variance of the mean.
cluster_robust_g2
    2 clusters of 5 and 9 questions: the smallest estimable case (unweighted df exactly 1).

Run ``uv run python tests/reference/make_cluster_robust_fixtures.py``; the output is byte-identical
on every run (one seeded generator per fixture, children of one ``SeedSequence``).
"""

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["SEED", "FIXTURES", "main"]

SEED = 20261202
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
# MMLU-Pro's 14 category sizes (12,032 questions) divided by 40 and rounded.
MMLU_PRO_SIZES_BY_40 = [34, 32, 28, 28, 24, 23, 21, 20, 20, 20, 18, 12, 10, 10]


def _frame(sizes, scores, weights) -> pd.DataFrame:
    clusters = np.repeat([f"c{j:02d}" for j in range(len(sizes))], sizes)
    return pd.DataFrame(
        {
            "question_id": [f"q{i:03d}" for i in range(len(clusters))],
            "cluster": clusters,
            "score": scores,
            "weight": weights,
        }
    )


def _epoch_means(rng, sizes, max_samples):
    rates = np.repeat(rng.uniform(0.3, 0.9, len(sizes)), sizes)
    weights = rng.integers(1, max_samples + 1, rates.size)
    return rng.binomial(weights, rates) / weights, weights


def g3(rng):
    sizes = [4, 7, 12]
    return _frame(sizes, *_epoch_means(rng, sizes, 4))


def g6(rng):
    sizes = [3, 5, 8, 10, 15, 24]
    rates = np.repeat(rng.uniform(0.2, 0.9, len(sizes)), sizes)
    scores = (rng.random(rates.size) < rates).astype(float)
    weights = rng.integers(1, 6, rates.size).astype(float)
    weights[7] = 0.0  # a question left out (cluster c02 keeps 7 others)
    return _frame(sizes, scores, weights)


def g14_paired(rng):
    sizes = MMLU_PRO_SIZES_BY_40
    # P(candidate right, baseline wrong | discordant) varies by category around 1/2.
    up_share = np.repeat(rng.beta(4, 4, len(sizes)), sizes)
    discordant = rng.random(up_share.size) < 0.3
    up = rng.random(up_share.size) < up_share
    differences = np.where(discordant, np.where(up, 1.0, -1.0), 0.0)
    return _frame(sizes, differences, rng.integers(1, 4, up_share.size))


def equal(rng):
    sizes = [8] * 6
    effects = np.repeat(rng.normal(0, 0.1, len(sizes)), sizes)
    scores = np.round(0.6 + effects + rng.normal(0, 0.2, effects.size), 6)
    return _frame(sizes, scores, rng.integers(1, 4, effects.size))


def singletons(rng):
    sizes = [1] * 10
    return _frame(sizes, np.round(rng.uniform(0, 1, 10), 6), rng.integers(1, 5, 10))


def g2(rng):
    sizes = [5, 9]
    return _frame(sizes, *_epoch_means(rng, sizes, 3))


FIXTURES = {
    "cluster_robust_g3": g3,
    "cluster_robust_g6": g6,
    "cluster_robust_g14_paired": g14_paired,
    "cluster_robust_equal": equal,
    "cluster_robust_singletons": singletons,
    "cluster_robust_g2": g2,
}


def main() -> None:
    children = np.random.SeedSequence(SEED).spawn(len(FIXTURES))
    for (name, make), child in zip(FIXTURES.items(), children, strict=True):
        frame = make(np.random.default_rng(child))
        frame.to_csv(DATA_DIR / f"{name}.csv", index=False, lineterminator="\n")
        print(f"{name}: {len(frame)} questions, {frame['cluster'].nunique()} clusters")


if __name__ == "__main__":
    main()
