"""Rendering tidy tables as Markdown and LaTeX (evalbars.tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars import tables


def test_format_p_switches_to_scientific_below_a_thousandth():
    assert tables.format_p(0.013) == "0.0130"
    assert tables.format_p(0.001) == "0.0010"
    assert tables.format_p(4.8e-4) == "4.80e-04"
    assert tables.format_p(3.716e-05) == "3.72e-05"
    assert tables.format_p(np.nan) == "—"


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
    assert tables.format_cell(column, value) == text


def test_format_override():
    assert tables.format_cell("paper_percentile", 26.5, {"paper_percentile": ".1f"}) == "26.5"
    assert tables.format_cell("x", 3, {"x": lambda v: f"<{v}>"}) == "<3>"


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
    text = tables.to_markdown(small_table, caption="Two pairs.")
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
    text = tables.to_latex(small_table, caption="Pairs of models_x & 5%", label="tab:pairs")
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
    tables.write_table(small_table, *paths, caption="Two pairs.")
    back = pd.read_csv(paths[0])
    assert back["p_holm"].tolist() == [2.01e-4, 0.5]  # full precision in the CSV
    assert paths[1].read_text() == tables.to_markdown(small_table, caption="Two pairs.")
    assert "\\label{tab:pairs}" in paths[2].read_text()


def test_long_tables_render_their_first_rows_and_say_what_they_left_out(tmp_path):
    table = pd.DataFrame({"pair": [f"p{i}" for i in range(7)], "p_holm": np.linspace(0, 1, 7)})
    paths = [tmp_path / f"pairs.{ext}" for ext in ("csv", "md", "tex", "parquet")]
    tables.write_table(table, *paths[:3], caption="Pairs.", parquet_path=paths[3], max_rows=3)
    pd.testing.assert_frame_equal(pd.read_parquet(paths[3]), table)
    assert len(pd.read_csv(paths[0])) == 7
    note = "Pairs. Shows the first 3 of 7 rows; every row is in pairs.csv and pairs.parquet."
    assert paths[1].read_text() == tables.to_markdown(table.iloc[:3], caption=note)
    latex = paths[2].read_text()
    assert "p2" in latex and "p3" not in latex and "Shows the first 3 of 7 rows" in latex
