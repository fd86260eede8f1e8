"""Rendering tidy tables as Markdown and LaTeX (evalbars.render.tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalbars.render import tables


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


# --- CSV through Arrow, byte for byte pandas' ------------------------------------------------------

TEXTS = ["plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "", " lead", "ünï", "x|y", '"']


def varied_frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 3000
    # Random bit patterns (every magnitude, NaN payloads, subnormals), powers of ten and their
    # neighbours (where repr switches notation), whole numbers, and hand-picked cases.
    bits = rng.integers(0, 2**63, n, dtype=np.uint64).view(np.float64)
    tens = 10.0 ** rng.integers(-320, 308, n).astype(float)
    tens = np.where(rng.random(n) < 0.5, np.nextafter(tens, rng.choice([0, np.inf], n)), tens)
    special = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-300, 5e-324, 0.1, 1e16, 1e15, 123.0, 1e-5]
    special += [2.5e-7, 9999999999.0, 1e10, 0.30000000000000004, 1.7976931348623157e308]
    floats = np.concatenate([special, rng.normal(0, 1e6, n - len(special))])
    # Few distinct values, each written many times (formatted once each): both zeros, NaN
    # payloads, and values where repr switches notation.
    payloads = np.array([0x7FF8000000000001, 0xFFF8000000000000], dtype=np.uint64)
    repeated = np.concatenate([special, tens[:40], -floats[-40:], payloads.view(np.float64)])
    return pd.DataFrame(
        {
            "model": np.resize(np.array(TEXTS, dtype=object), n),
            "label": pd.Series(np.resize(TEXTS[::-1], n)),  # pandas' text type (Arrow in 3.x)
            "category": pd.Categorical(np.resize(["x,y", "z", None], n)),
            "bits": bits,
            "tens": tens,
            "floats": floats,
            "whole": rng.integers(-(10**17), 10**17, n).astype(float),
            "repeated": rng.choice(repeated, n),
            "count": rng.integers(-5, 10**12, n),
            "small": rng.integers(0, 200, n).astype(np.uint8),
            "flag": rng.random(n) < 0.5,
            "note": pd.Series(np.resize(["a", None, np.nan, "b,c"], n), dtype=object),
        }
    )


def test_write_csv_is_byte_for_byte_pandas_to_csv_through_arrow(tmp_path, monkeypatch):
    frame = varied_frame()
    expected = frame.to_csv(index=False).encode()
    plain = frame.assign(model=np.resize(["plain", "", " lead", "ünï", "x|y"], len(frame)))
    plain = plain.drop(columns=["label", "category", "note"])
    plain_expected = plain.to_csv(index=False).encode()
    assert b'"a,b"' in expected and b'"say ""hi"""' in expected and b"1e-05" in expected

    def refuse(*args, **kwargs):
        raise AssertionError("pandas wrote the CSV")

    monkeypatch.setattr(pd.DataFrame, "to_csv", refuse)  # every column here is Arrow's to write
    monkeypatch.setattr(tables, "CSV_BATCH_ROWS", 1000)  # three batches
    tables.write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == expected
    tables.write_csv(frame.iloc[:0], tmp_path / "empty.csv")
    assert (tmp_path / "empty.csv").read_bytes() == expected.split(b"\n")[0] + b"\n"
    # text without a comma, quote or line break: Arrow streams every batch into the file
    tables.write_csv(plain, tmp_path / "plain.csv")
    assert (tmp_path / "plain.csv").read_bytes() == plain_expected


@pytest.mark.parametrize(
    "extra",
    [
        pd.Series([1, None, 3], dtype="Int64"),
        pd.Series([0.1, 0.25, np.nan], dtype=np.float32),
        pd.Series([1.5, "x", None], dtype=object),
        pd.Series(pd.date_range("2020-01-01", periods=3)),
        pd.Series(["\ue001 a stand-in", "b", "c"]),
    ],
)
def test_write_csv_leaves_what_arrow_cannot_format_to_pandas(tmp_path, extra):
    frame = pd.DataFrame({"model": ["a", "b,c", None], "x": [0.5, 1e-7, np.nan], "extra": extra})
    tables.write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == frame.to_csv(index=False).encode()
    lone = pd.DataFrame({"x": ["", "a", None]})  # one column: pandas quotes a lone empty field
    tables.write_csv(lone, tmp_path / "one.csv")
    assert (tmp_path / "one.csv").read_text() == 'x\n""\na\n""\n'


def test_a_pair_table_keeps_every_row_in_parquet_and_caps_its_csv(tmp_path):
    table = pd.DataFrame({"pair": [f"p{i}" for i in range(9)], "p_holm": np.linspace(0, 1, 9)})
    paths = [tmp_path / f"pairs.{ext}" for ext in ("csv", "md", "tex", "parquet")]
    tables.write_table(
        table,
        *paths[:3],
        parquet_path=paths[3],
        shown_path=tmp_path / "shown.csv",
        max_rows=3,
        csv_rows=5,
    )
    pd.testing.assert_frame_equal(pd.read_parquet(paths[3]), table)
    assert (tmp_path / "pairs.csv").read_bytes() == table.iloc[:5].to_csv(index=False).encode()
    assert (tmp_path / "shown.csv").read_bytes() == table.iloc[:3].to_csv(index=False).encode()
    note = "Shows the first 3 of 9 rows; every row is in pairs.parquet (the first 5 in pairs.csv)."
    assert paths[1].read_text() == tables.to_markdown(table.iloc[:3], caption=note)
    # Without Parquet the CSV is the table, whatever its length.
    tables.write_table(table, tmp_path / "all.csv", csv_rows=5)
    assert len(pd.read_csv(tmp_path / "all.csv")) == 9


def _typed_table(rows: int, seed: int = 0) -> pd.DataFrame:
    """A table of every column kind a pair table holds: text, floats with NaN, whole numbers,
    flags and categories."""
    rng = np.random.default_rng(seed)
    names = np.array([f"model-{i}" for i in range(500)])
    estimate = rng.normal(size=rows)
    estimate[rng.random(rows) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "model_a": pd.Series(names[rng.integers(0, 500, rows)], dtype=str),
            "estimate": estimate,
            "p_holm": np.minimum(1.0, rng.random(rows) * 3),
            "n": rng.integers(0, 10_000, rows),
            "converged": rng.random(rows) < 0.9,
            "verdict": pd.Categorical(rng.choice(["a > b", "a < b", "tie"], rows)),
        }
    )


def test_a_table_written_in_blocks_is_byte_for_byte_the_whole_table(tmp_path):
    # Blocks that end inside a row group, one that fills several and one smaller than a row
    # group: the file is the whole table's, byte for byte.
    rows = tables.PARQUET_ROW_GROUP_ROWS
    table = _typed_table(2 * rows + rows // 2 + 7)
    cuts = [0, 700_001, 700_001 + rows + 3, 700_001 + rows + 3 + 999, len(table)]
    blocks = [table.iloc[start:stop] for start, stop in zip(cuts, cuts[1:], strict=False)]
    tables.write_parquet(table, tmp_path / "whole.parquet")
    tables.write_parquet(iter(blocks), tmp_path / "blocks.parquet")
    assert (tmp_path / "blocks.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "blocks.parquet"), table)
    with pytest.raises(ValueError, match="at least one block"):
        tables.write_parquet(iter([]), tmp_path / "none.parquet")


def test_table_blocks_write_the_files_of_their_whole_table(tmp_path):
    table = _typed_table(23, seed=1)
    blocks = tables.TableBlocks(
        [lambda: table.iloc[:4], lambda: table.iloc[4:5], lambda: table.iloc[5:]]
    )
    pd.testing.assert_frame_equal(blocks.whole(), table)
    for name, source in (("whole", table), ("blocks", blocks)):
        folder = tmp_path / name
        folder.mkdir()
        tables.write_table(
            source,
            folder / "pairs.csv",
            folder / "pairs.md",
            folder / "pairs.tex",
            caption="Pairs.",
            parquet_path=folder / "pairs.parquet",
            shown_path=folder / "shown.csv",
            max_rows=6,
            csv_rows=10,
        )
    for file in ("pairs.csv", "pairs.md", "pairs.tex", "pairs.parquet", "shown.csv"):
        assert (tmp_path / "blocks" / file).read_bytes() == (tmp_path / "whole" / file).read_bytes()
    assert "Shows the first 6 of 23 rows" in (tmp_path / "blocks" / "pairs.md").read_text()
    # Without a Parquet file the blocks are made whole: the CSV holds every row.
    tables.write_table(blocks, tmp_path / "all.csv", csv_rows=10)
    assert (tmp_path / "all.csv").read_bytes() == table.to_csv(index=False).encode()
