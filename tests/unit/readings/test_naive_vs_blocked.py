"""Naive vs blocked: the same table from the tables a job reads back from Parquet.

The jobs read the pair tables from Parquet, where a column may come back Arrow-backed; the
summary must be the same numbers as from NumPy columns (and must not walk the ten million
pairs of 4,500 models one Python object at a time to get them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.testing import assert_frame_equal

from evalbars.readings.naive_vs_blocked import naive_vs_blocked


def _inputs():
    """Pair, omnibus and mixed-model tables of four models (six pairs), values known."""
    rng = np.random.default_rng(7)
    pairs = pd.DataFrame(
        {
            "model_a": ["a", "a", "a", "b", "b", "c"],
            "model_b": ["b", "c", "d", "c", "d", "d"],
            "se_unpaired": rng.uniform(0.02, 0.03, 6),
            "se_paired": rng.uniform(0.01, 0.02, 6),
            "p_unpaired": [0.001, 0.2, 0.04, 0.5, 0.03, 0.9],
            "p_paired": [0.0001, 0.1, 0.01, 0.4, 0.02, 0.8],
        }
    )
    pairs["p_bonferroni"] = np.minimum(1.0, 6 * pairs["p_paired"])
    pairs["p_holm"] = [0.0006, 0.3, 0.04, 0.8, 0.06, 0.8]
    omnibus = pd.DataFrame(
        {
            "test": ["oneway_anova", "rm_anova"],
            "statistic": [2.5, 7.5],
            "df1": [3.0, 3.0],
            "df2": [396.0, 297.0],
            "p": [0.06, 0.0001],
        }
    )
    mixed = pd.concat(
        [
            pairs[["model_a", "model_b"]].assign(
                model_spec=spec, se=rng.uniform(0.01, 0.03, 6), p_holm=holm
            )
            for spec, holm in (
                ("category", [0.01, 0.5, 0.2, 0.9, 0.3, 0.9]),
                ("category_question", [0.001, 0.4, 0.03, 0.9, 0.07, 0.9]),
            )
        ],
        ignore_index=True,
    )
    return pairs, omnibus, mixed


def _read_back(frame: pd.DataFrame, folder) -> pd.DataFrame:
    """``frame`` written to Parquet and read back with Arrow-backed columns."""
    path = folder / "table.parquet"
    frame.to_parquet(path, index=False)
    return pd.read_parquet(path, dtype_backend="pyarrow")


def test_arrow_backed_tables_give_the_numpy_tables_numbers(tmp_path):
    pairs, omnibus, mixed = _inputs()
    expected = naive_vs_blocked(pairs, omnibus, mixed, alpha=0.05)
    arrow = [_read_back(frame, tmp_path) for frame in (pairs, omnibus, mixed)]
    assert isinstance(arrow[0]["se_paired"].dtype, pd.ArrowDtype)
    assert_frame_equal(naive_vs_blocked(*arrow, alpha=0.05), expected, check_exact=True)
    rows = expected.set_index(["quantity", "procedure"])
    # exact identities of the summary: the mean SE over the pairs, the counts below alpha
    assert rows.loc[("contrast_se", "paired_z"), "value"] == pairs["se_paired"].to_numpy().mean()
    assert rows.loc[("contrast_se", "unpaired_z"), "value_max"] == pairs["se_unpaired"].max()
    assert rows.loc[("significant_pairs", "paired_holm"), "value"] == 2
    assert rows.loc[("significant_pairs", "lmm_category_question_holm"), "value"] == 2
    assert rows.loc[("significant_pairs", "unpaired_uncorrected"), "value"] == 3
    assert rows.loc[("omnibus_f", "rm_anova"), "ratio_to_naive"] == 7.5 / 2.5
