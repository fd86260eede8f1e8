"""Markdown/LaTeX rendering and the naive-versus-blocked table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars import io, mixed, omnibus, pairwise, report


def test_format_p_switches_to_scientific_below_a_thousandth():
    assert report.format_p(0.013) == "0.0130"
    assert report.format_p(0.001) == "0.0010"
    assert report.format_p(4.8e-4) == "4.80e-04"
    assert report.format_p(3.716e-05) == "3.72e-05"
    assert report.format_p(np.nan) == "—"


@pytest.mark.parametrize(
    "column, value, text",
    [
        ("p", 0.5, "0.5000"),
        ("p_holm", 2e-7, "2.00e-07"),
        ("se_paired", 0.012812345, "0.0128"),
        ("se", 0.0157, "0.0157"),
        ("n10", np.int64(217), "217"),
        ("df2", 7480.0, "7480"),
        ("df2", 7321.8210, "7321.82"),
        ("significant_holm", np.True_, "yes"),
        ("significant_holm", False, "no"),
        ("statistic", 22.2115, "22.2115"),
        ("accuracy", 0.28323313, "0.2832"),
        ("estimate", 4.2e-5, "4.200e-05"),
        ("estimate", 0.0, "0"),
        ("epsilon", np.nan, "—"),
        ("model", "Yi-6B", "Yi-6B"),
    ],
)
def test_format_cell_rules(column, value, text):
    assert report.format_cell(column, value) == text


def test_format_override():
    assert report.format_cell("paper_percentile", 26.5, {"paper_percentile": ".1f"}) == "26.5"
    assert report.format_cell("x", 3, {"x": lambda v: f"<{v}>"}) == "<3>"


@pytest.fixture
def small_table():
    return pd.DataFrame(
        {
            "model_a": ["Mistral-7B-v0.1", "a|b"],
            "diff": [0.0541, 0.01],
            "n10": [217, 3],
            "p_holm": [2.01e-4, 0.5],
            "significant_holm": [True, False],
        }
    )


def test_to_markdown_layout(small_table):
    text = report.to_markdown(small_table, caption="Two pairs.")
    lines = text.splitlines()
    assert lines[0].startswith("| model_a") and lines[0].endswith("significant_holm |")
    # Numeric columns right-aligned, text and flags left-aligned.
    assert lines[1].split("|")[1:-1] == [
        " " + "-" * 15 + " ",
        " -----: ",
        " --: ",
        " -------: ",
        " " + "-" * 16 + " ",
    ]
    assert "| Mistral-7B-v0.1 | 0.0541 | 217 | 2.01e-04 | yes" in lines[2]
    assert "a\\|b" in lines[3]  # a pipe inside a cell is escaped
    assert lines[-1] == "Table: Two pairs."
    assert len({len(line) for line in lines[:4]}) == 1  # columns padded to one width
    assert text.endswith("\n")


def test_to_latex_escapes_and_formats(small_table):
    text = report.to_latex(small_table, caption="Pairs of models_x & 5%", label="tab:pairs")
    assert text.startswith("\\begin{table}[htbp]\n\\centering\n")
    assert "\\caption{Pairs of models\\_x \\& 5\\%}" in text
    assert "\\label{tab:pairs}" in text
    assert "\\begin{tabular}{lrrrl}" in text
    assert "model\\_a & diff & n10 & p\\_holm & significant\\_holm \\\\" in text
    assert "Mistral-7B-v0.1 & 0.0541 & 217 & $2.01\\times10^{-4}$ & yes \\\\" in text
    assert "a\\textbar{}b" in text
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "\\end{tabular}", "\\end{table}"):
        assert rule in text


def test_write_table_writes_three_renderings(tmp_path, small_table):
    paths = [tmp_path / f"pairs.{ext}" for ext in ("csv", "md", "tex")]
    report.write_table(small_table, *paths, caption="Two pairs.")
    back = pd.read_csv(paths[0])
    assert back["p_holm"].tolist() == [2.01e-4, 0.5]  # full precision in the CSV
    assert paths[1].read_text() == report.to_markdown(small_table, caption="Two pairs.")
    assert "\\label{tab:pairs}" in paths[2].read_text()


# --- Naive versus blocked ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_tables(default_subsample):
    wide = io.wide_scores(default_subsample.items)
    fits = [mixed.fit_lmm(wide, spec) for spec in mixed.MODEL_SPECS]
    return {
        "wide": wide,
        "pairwise": pairwise.pairwise_table(wide),
        "omnibus": omnibus.omnibus_table(wide),
        "contrasts": pd.concat([mixed.lmm_contrasts(f) for f in fits], ignore_index=True),
    }


def test_naive_vs_blocked_on_real_data(real_tables):
    pw, om, mc = real_tables["pairwise"], real_tables["omnibus"], real_tables["contrasts"]
    table = report.naive_vs_blocked(pw, om, mc, alpha=0.05)
    assert table["procedure"].tolist() == list(report.PROCEDURE_LABELS)
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


def test_naive_vs_blocked_display_reads_well(real_tables):
    table = report.naive_vs_blocked(
        real_tables["pairwise"], real_tables["omnibus"], real_tables["contrasts"]
    )
    shown = report.naive_vs_blocked_display(table, alpha=0.05)
    assert shown.columns.tolist() == ["Quantity", "Procedure", "Accounts for", "Value", "vs naive"]
    # Each quantity named once, on its first row.
    assert (shown["Quantity"] != "").sum() == 3
    assert shown["Quantity"].iloc[6] == "Pairs declared different (α = 0.05)"
    rm = real_tables["omnibus"].set_index("test").loc["rm_anova"]
    assert (
        shown["Value"].iloc[5]
        == f"F(5, 7480) = {rm['statistic']:.2f}, p = {report.format_p(rm['p'])}"
    )
    assert shown["Value"].iloc[6].endswith(" of 15")
    assert shown["vs naive"].iloc[0] == "1.00×"
    markdown = report.to_markdown(shown, align_right=["Value", "vs naive"])
    assert "(1\\|category) + (1\\|category:question)" in markdown


def test_naive_vs_blocked_needs_both_mixed_models(real_tables):
    only_nested = real_tables["contrasts"][
        real_tables["contrasts"]["model_spec"] == "category_question"
    ]
    with pytest.raises(ValueError, match="model_spec 'category'"):
        report.naive_vs_blocked(real_tables["pairwise"], real_tables["omnibus"], only_nested)
