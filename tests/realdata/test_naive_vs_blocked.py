"""The naive-versus-blocked summary (evalbars.readings.naive_vs_blocked) on the real default subsample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.data.scores import wide_scores
from evalbars.readings import logistic_verdicts
from evalbars.readings import naive_vs_blocked as nvb
from evalbars.render import tables
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.logistic import contrasts as logistic

#: The procedures of the paper's design (categories): the question-only rows are for data
#: with no categories, or one.
PAPER_PROCEDURES = [p for p in nvb.PROCEDURE_LABELS if not p.startswith("lmm_question")]


@pytest.fixture(scope="module")
def real_tables(default_subsample):
    wide = wide_scores(default_subsample.items)
    fits = [mixed.fit_lmm(wide, spec) for spec in mixed.MODEL_SPECS]
    return {
        "wide": wide,
        "pairwise": pairwise.pairwise_table(wide),
        "omnibus": omnibus.omnibus_table(wide),
        "contrasts": pd.concat([mixed.lmm_contrasts(f) for f in fits], ignore_index=True),
    }


def test_naive_vs_blocked_on_real_data(real_tables):
    pw, om, mc = real_tables["pairwise"], real_tables["omnibus"], real_tables["contrasts"]
    table = nvb.naive_vs_blocked(pw, om, mc, alpha=0.05)
    logistic = ("glmm_marginal", "gee_accuracy", "glmm_holm", "gee_holm")
    assert table["procedure"].tolist() == [p for p in PAPER_PROCEDURES if p not in logistic]
    rows = table.set_index("procedure")
    assert rows.loc["unpaired_z", "value"] == pytest.approx(pw["se_unpaired"].mean())
    assert rows.loc["paired_z", "value_max"] == pytest.approx(pw["se_paired"].max())
    nested = mc[mc["model_spec"] == "category_question"]
    assert rows.loc["lmm_category_question", "value"] == pytest.approx(nested["se"].mean())
    tests = om.set_index("test")
    for name in ("oneway_anova", "rm_anova"):
        assert rows.loc[name, ["value", "df1", "df2", "p"]].tolist() == pytest.approx(
            tests.loc[name, ["statistic", "df1", "df2", "p"]].tolist()
        )
    assert rows.loc["unpaired_uncorrected", "value"] == pw["significant_unpaired"].sum()
    assert rows.loc["paired_uncorrected", "value"] == pw["significant_paired"].sum()
    assert rows.loc["paired_bonferroni", "value"] == pw["significant_bonferroni"].sum()
    assert rows.loc["paired_holm", "value"] == pw["significant_holm"].sum()
    assert rows.loc["lmm_category_question_holm", "value"] == (nested["p_holm"] < 0.05).sum()
    # Ratios are relative to the first (naive) row of each quantity.
    assert rows.loc["paired_z", "ratio_to_naive"] == pytest.approx(
        pw["se_paired"].mean() / pw["se_unpaired"].mean()
    )
    assert rows.loc["rm_anova", "ratio_to_naive"] == pytest.approx(
        tests.loc["rm_anova", "statistic"] / tests.loc["oneway_anova", "statistic"]
    )
    # The paper's finding on this design: pairing cuts the SE by about a fifth, the category-only
    # mixed model does not, and blocking raises F.
    assert rows.loc["paired_z", "ratio_to_naive"] < 0.9 < rows.loc["lmm_category", "ratio_to_naive"]
    assert rows.loc["lmm_category_question", "ratio_to_naive"] < 0.9
    assert rows.loc["rm_anova", "ratio_to_naive"] > 1


def test_logistic_rows_and_the_gee_paired_identity(real_tables, default_subsample):
    """With the logistic readings: on complete data GEE's accuracy-difference SE (exchangeable,
    robust, delta method) is the paired z-test's SE exactly, and the Holm counts are the
    verdict table's verdicts."""
    pw, om, mc = real_tables["pairwise"], real_tables["omnibus"], real_tables["contrasts"]
    nested = mc[mc["model_spec"] == "category_question"].reset_index(drop=True)
    comparison = logistic.compare_logistic(
        default_subsample.items, pairs=nested[["model_a", "model_b"]]
    )
    table = nvb.naive_vs_blocked(pw, om, mc, 0.05, comparison.contrasts)
    assert table["procedure"].tolist() == PAPER_PROCEDURES
    rows = table.set_index("procedure")
    gee = comparison.contrasts[comparison.contrasts["method"] == "gee_exchangeable"]
    merged = gee.merge(pw, on=["model_a", "model_b"], validate="one_to_one")
    np.testing.assert_allclose(merged["accuracy_difference_se"], merged["se_paired"], rtol=1e-12)
    np.testing.assert_allclose(merged["accuracy_difference"], merged["diff"], rtol=1e-10)
    assert rows.loc["gee_accuracy", "value"] == pytest.approx(rows.loc["paired_z", "value"])
    table = logistic_verdicts.verdict_table(nested, comparison.contrasts, 0.05)
    for reading in ("glmm", "gee"):
        verdicts = table[f"{reading}_verdict"]
        assert rows.loc[f"{reading}_holm", "value"] == (verdicts != "not separated").sum()
    # on the paper's six models every verdict survives the change of scale
    assert table["agree"].all() and rows.loc["glmm_holm", "value"] == 5
    # the columns the workflow reads from the Parquet files are all the summary needs
    narrow = nvb.naive_vs_blocked(
        pw[list(nvb.PAIRWISE_COLUMNS)],
        om,
        mc[list(nvb.MIXED_COLUMNS)],
        0.05,
        comparison.contrasts[list(nvb.LOGISTIC_COLUMNS)],
    )
    pd.testing.assert_frame_equal(
        narrow, nvb.naive_vs_blocked(pw, om, mc, 0.05, comparison.contrasts), check_exact=True
    )


def test_naive_vs_blocked_display_reads_well(real_tables):
    table = nvb.naive_vs_blocked(
        real_tables["pairwise"], real_tables["omnibus"], real_tables["contrasts"]
    )
    shown = nvb.naive_vs_blocked_display(table, alpha=0.05)
    assert shown.columns.tolist() == ["Quantity", "Procedure", "Accounts for", "Value", "vs naive"]
    # Each quantity named once, on its first row.
    assert (shown["Quantity"] != "").sum() == 3
    assert shown["Quantity"].iloc[6] == "Pairs declared different (α = 0.05)"
    rm = real_tables["omnibus"].set_index("test").loc["rm_anova"]
    assert (
        shown["Value"].iloc[5]
        == f"F(5, 7480) = {rm['statistic']:.2f}, p = {tables.format_p(rm['p'])}"
    )
    assert shown["Value"].iloc[6].endswith(" of 15")
    assert shown["vs naive"].iloc[0] == "1.00×"
    markdown = tables.to_markdown(shown, align_right=["Value", "vs naive"])
    assert "(1\\|category) + (1\\|category:question)" in markdown


def test_naive_vs_blocked_needs_both_mixed_models(real_tables):
    only_nested = real_tables["contrasts"][
        real_tables["contrasts"]["model_spec"] == "category_question"
    ]
    with pytest.raises(ValueError, match="model_spec 'category'"):
        nvb.naive_vs_blocked(real_tables["pairwise"], real_tables["omnibus"], only_nested)
