"""The accuracy table on the MMLU-Pro default subsample (1,497 questions x 6 models)."""

from __future__ import annotations

import numpy as np

from evalbars.stats.accuracy import accuracy_table


def test_real_accuracy_table(real_wide):
    table = accuracy_table(real_wide, level=0.95)
    assert table["model"].tolist()[0] == "Mistral-7B-v0.1"
    assert (table["n"] == 1497).all()
    assert table["correct"].sum() == np.nansum(real_wide.scores)
    assert table["accuracy"].is_monotonic_decreasing
    # With 14 categories of very different difficulty, clustering inflates the SE.
    assert (table["se_clustered"] > table["se_naive"]).all()
