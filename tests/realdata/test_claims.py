"""The README's claims read on the MMLU-Pro default subsample (the paper's six models)."""

from __future__ import annotations

import pytest

from evalbars.stats.pairwise import pairwise_table

from ..unit.readings.test_claims import evaluate_claims, rows

README_CLAIMS = [
    "best: Mistral-7B-v0.1",
    "Mistral-7B-Instruct-v0.2 > Qwen1.5-7B-Chat",
    "Mistral-7B-v0.1 > Yi-6B in math",
]


def test_readme_claims_on_the_default_subsample(real_wide):
    table = evaluate_claims(real_wide, README_CLAIMS)
    pairs = pairwise_table(real_wide).set_index(["model_a", "model_b"])
    pair = pairs.loc[("Mistral-7B-Instruct-v0.2", "Qwen1.5-7B-Chat")]
    paired = rows(table, README_CLAIMS[1], "paired")
    assert paired["p"] == pytest.approx(pair["p_paired"], rel=1e-12)
    assert rows(table, README_CLAIMS[1], "mcnemar")["p"] == pytest.approx(pair["p_mcnemar"])
    verdicts = table.pivot(index="claim", columns="reading", values="verdict")
    assert verdicts.loc[README_CLAIMS[1], "paired"] == "supported"
    assert verdicts.loc[README_CLAIMS[1], "paired_holm"] == "not supported"
    # The Dirichlet posterior is a pair reading: it does not read "best" claims.
    best = verdicts.loc[README_CLAIMS[0]]
    assert best["bayes"] == "n/a" and best.drop("bayes").eq("not supported").all()
    assert rows(table, README_CLAIMS[2], "paired")["questions"] == 168
