"""Rendering tidy tables as Markdown and LaTeX, and writing every table a stage makes.

:func:`to_markdown` and :func:`to_latex` take any tidy DataFrame and return a
string; every stage uses them so numbers look the same everywhere. Cells are
formatted by column name (:func:`format_cell`):

- p-values (a column named ``p``, ``p_*`` or ``*_p``): four decimals, or
  scientific notation with three significant digits below 0.001;
- standard errors (``se``, ``se_*``, ``*_se``): four decimals (scientific notation below
  1e-4, where four decimals would show a nonzero SE as 0.0000);
- integers as integers, booleans as ``yes``/``no``, missing values as a dash;
- degrees of freedom and counts (``df*``, ``n``, ``n_*``): whole numbers as
  integers, fractional ones (Greenhouse-Geisser) to two decimals;
- other floats: four decimals (scientific below 0.001 or from 1e6 on).

Pass ``formats={column: callable or format spec}`` to override a column.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
import re
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

__all__ = [
    "is_missing",
    "format_p",
    "format_cell",
    "format_table",
    "to_markdown",
    "to_latex",
    "write_parquet",
    "write_table",
    "TableBlocks",
    "write_csv",
    "RENDER_ROWS",
    "CSV_ROWS",
]


def is_missing(value) -> bool:
    """True for None, pandas NA and float NaN (what a table shows as a dash)."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _is_p_column(column: str) -> bool:
    return column == "p" or column.startswith("p_") or column.endswith("_p")


def _is_se_column(column: str) -> bool:
    return column == "se" or column.startswith("se_") or column.endswith("_se")


def format_p(p: float) -> str:
    """A p-value as text: ``0.0130``, or ``4.80e-04`` below 0.001.

    Examples
    --------
    >>> format_p(0.01297), format_p(4.8e-4), format_p(1.0)
    ('0.0130', '4.80e-04', '1.0000')
    """
    if is_missing(p):
        return "—"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"


def _format_float(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) < 1e-3 or abs(value) >= 1e6:
        return f"{value:.3e}"
    return f"{value:.4f}"


def _format_se(value: float) -> str:
    # Four decimals, as every SE of a score; in scientific notation where that would show a
    # nonzero SE as 0.0000 (a cost in dollars per question).
    return f"{value:.3e}" if 0 < abs(value) < 1e-4 else f"{value:.4f}"


def _format_count(value: float) -> str:
    # Degrees of freedom and counts: whole numbers as such, else two decimals.
    return str(int(value)) if value.is_integer() else f"{value:.2f}"


def _real_format(column: str):
    """How :func:`format_cell` writes a finite real number of column ``column``."""
    if _is_p_column(column):
        return format_p
    if _is_se_column(column):
        return _format_se
    if column.startswith("df") or column.startswith("n_") or column == "n":
        return _format_count
    return _format_float


def _format_real(value: float, rule) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return rule(value)


def format_cell(column: str, value, formats: dict | None = None) -> str:
    """Format one cell of column ``column`` (see the module docstring for the rules)."""
    if formats and column in formats:
        spec = formats[column]
        if is_missing(value):
            return "—"
        return spec(value) if callable(spec) else format(value, spec)
    if is_missing(value):
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _format_real(float(value), _real_format(column))
    return str(value)


def format_table(table: pd.DataFrame, formats: dict | None = None) -> pd.DataFrame:
    """Every cell of ``table`` as text, by :func:`format_cell`."""
    return pd.DataFrame(
        {column: _format_column(str(column), table[column], formats) for column in table.columns},
        index=table.index,
        dtype=object,
    )


def _format_column(column: str, series: pd.Series, formats: dict | None) -> list:
    """:func:`format_cell` of every value of ``series``, the rule chosen once per column.

    NumPy booleans, integers and floats (whose values come out of ``tolist`` as Python
    ``bool``, ``int`` and ``float``) and text columns take the branch of :func:`format_cell`
    their type selects without testing each cell's type again; anything else (an override in
    ``formats``, objects of mixed types) goes through :func:`format_cell` cell by cell.
    """
    values = series.tolist()
    dtype = series.dtype
    kind = dtype.kind if isinstance(dtype, np.dtype) else None
    if formats and column in formats:
        kind = None
    if kind == "b":
        return ["yes" if v else "no" for v in values]
    if kind in ("i", "u"):
        return [str(v) for v in values]
    if kind == "f":
        number = _float_rule(column)
        return [
            "—" if v != v else ("∞" if v > 0 else "−∞") if math.isinf(v) else number(v)
            for v in values
        ]
    if kind is None and isinstance(dtype, pd.StringDtype):
        return [v if isinstance(v, str) else format_cell(column, v, formats) for v in values]
    return [format_cell(column, v, formats) for v in values]


def _float_rule(column: str):
    """The text of a finite float of ``column``, as :func:`format_cell` writes it."""
    if _is_p_column(column):
        return format_p
    if _is_se_column(column):
        return _format_se
    if column.startswith("df") or column.startswith("n_") or column == "n":
        return lambda value: str(int(value)) if value.is_integer() else f"{value:.2f}"
    return _format_float


def _numeric_columns(table: pd.DataFrame) -> set:
    return {
        c
        for c in table.columns
        if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
    }


def to_markdown(
    table: pd.DataFrame,
    caption: str | None = None,
    formats: dict | None = None,
    align_right=None,
) -> str:
    """A GitHub/pandoc pipe table of ``table``.

    Parameters
    ----------
    table : DataFrame
        Rendered as is (the index is ignored; reset it first to show it).
    caption : str, optional
        Written after the table as pandoc's ``Table: caption`` line.
    formats : dict, optional
        Per-column format overrides (see :func:`format_cell`).
    align_right : iterable of str, optional
        Columns to right-align; default: the numeric columns.

    Returns
    -------
    str
        The table, ending in a newline.
    """
    return _markdown(table, format_table(table, formats), caption, align_right)


def _markdown(table: pd.DataFrame, text: pd.DataFrame, caption, align_right) -> str:
    """:func:`to_markdown` of ``table`` from its cells as text (:func:`format_table`), built a
    column at a time."""
    right = set(align_right) if align_right is not None else _numeric_columns(table)

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    header = [escape(str(c)) for c in table.columns]
    cells = [[escape(cell) for cell in text.iloc[:, i].tolist()] for i in range(text.shape[1])]
    widths = [max(len(h), 3, *map(len, column)) for h, column in zip(header, cells, strict=True)]
    rule = [
        "-" * (w - 1) + ":" if c in right else "-" * w
        for c, w in zip(table.columns, widths, strict=True)
    ]
    header = [
        h.rjust(w) if c in right else h.ljust(w)
        for h, w, c in zip(header, widths, table.columns, strict=True)
    ]
    padded = [
        [cell.rjust(w) for cell in column] if c in right else [cell.ljust(w) for cell in column]
        for column, w, c in zip(cells, widths, table.columns, strict=True)
    ]
    rows = zip(*padded, strict=True) if padded else [()] * len(text)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if caption:
        lines += ["", f"Table: {caption}"]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "—": "--",
    "–": "--",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "−": "$-$",
    "∞": r"$\infty$",
    "×": r"$\times$",
    "≤": r"$\le$",
    "α": r"$\alpha$",
    "χ²": r"$\chi^2$",
    "²": r"$^2$",
    "σ": r"$\sigma$",
    "τ": r"$\tau$",
}
_LATEX_PATTERN = re.compile(
    "|".join(re.escape(k) for k in sorted(_LATEX_SPECIAL, key=len, reverse=True))
)
_SCIENTIFIC = re.compile(r"^(-?\d\.\d+)e([+-])0*(\d+)$")


def _latex_escape(text: str) -> str:
    return _LATEX_PATTERN.sub(lambda m: _LATEX_SPECIAL[m.group(0)], text)


def _latex_cell(text: str) -> str:
    # 4.80e-04 -> $4.80\times10^{-4}$
    match = _SCIENTIFIC.match(text)
    if match:
        mantissa, sign, exponent = match.groups()
        sign = "-" if sign == "-" else ""
        return f"${mantissa}\\times10^{{{sign}{exponent}}}$"
    return _latex_escape(text)


def to_latex(
    table: pd.DataFrame,
    caption: str | None = None,
    label: str | None = None,
    formats: dict | None = None,
    align_right=None,
) -> str:
    """A booktabs ``table`` environment of ``table`` (needs ``\\usepackage{booktabs}``).

    Cells are formatted as in :func:`to_markdown`; LaTeX special
    characters are escaped and scientific p-values written as :math:`4.80\\times10^{-4}`.
    """
    return _latex(table, format_table(table, formats), caption, label, align_right)


def _latex(table: pd.DataFrame, text: pd.DataFrame, caption, label, align_right) -> str:
    """:func:`to_latex` of ``table`` from its cells as text (:func:`format_table`)."""
    right = set(align_right) if align_right is not None else _numeric_columns(table)
    spec = "".join("r" if c in right else "l" for c in table.columns)
    lines = [r"\begin{table}[htbp]", r"\centering"]
    if caption:
        lines.append(f"\\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(f"\\label{{{label}}}")
    lines += [f"\\begin{{tabular}}{{{spec}}}", r"\toprule"]
    lines.append(" & ".join(_latex_escape(str(c)) for c in table.columns) + r" \\")
    lines.append(r"\midrule")
    for row in text.itertuples(index=False):
        lines.append(" & ".join(_latex_cell(cell) for cell in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# --- CSV files: pandas' text, Arrow's writer --------------------------------------------------------

#: Rows :func:`write_csv` formats and writes at a time (bounds its memory: ~200 MB of text).
CSV_BATCH_ROWS = 250_000
#: Arrow's writer refuses these in unquoted fields (RFC 4180's structural characters); a field
#: that holds them is written with a private-use stand-in that the written bytes swap back.
_STRUCTURAL = {",": "\ue000", '"': "\ue001", "\n": "\ue002", "\r": "\ue003"}
#: A regular expression matching any of those stand-ins.
_STAND_IN = "[\ue000-\ue003]"
#: :func:`_float_text` formats each distinct value of a batch once when its first this many
#: values hold at most half as many distinct ones (a shorter probe misses the repeats of a
#: pair table: its first 4,096 differences are nearly all distinct, its first 65,536 a third).
DISTINCT_PROBE = 65_536
#: Arrow writes a float in fixed notation for decimal exponents -6 to 9 (double-conversion's
#: shortest digits); Python's repr, which pandas writes, from -4 to 15. Where they differ:
_ARROW_TO_REPR = [
    (r"^(-?)0\.00000([1-9])$", r"\1\2e-06"),
    (r"^(-?)0\.00000([1-9])(\d+)$", r"\1\2.\3e-06"),
    (r"^(-?)0\.0000([1-9])$", r"\1\2e-05"),
    (r"^(-?)0\.0000([1-9])(\d+)$", r"\1\2.\3e-05"),
    (r"e-([1-9])$", r"e-0\1"),  # exponents of two digits at least
]


#: First characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"):
#: a model named ``=cmd|' /C calc'!A0`` would run in Excel or LibreOffice when the CSV opens.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralised(text: str) -> str:
    """``text`` as a CSV for people holds it: a text that starts like a formula
    (:data:`FORMULA_STARTS`) is prefixed with ``'``, which spreadsheets show as text and
    OWASP's CSV-injection guidance recommends; anything else as it is. Parquet files, which
    other jobs read, keep every name as it is.

    >>> neutralised("=HYPERLINK(x)"), neutralised("fake-strong")
    ("'=HYPERLINK(x)", 'fake-strong')
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _csv_field(text: str) -> str:
    """``text`` as Python's csv module writes one field of a row (QUOTE_MINIMAL, as pandas),
    :func:`neutralised` and, when it was, quoted (OWASP: quote the prefixed cell too)."""
    safe = neutralised(text)
    if safe is not text:
        return '"' + safe.replace('"', '""') + '"'
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text, ""])
    return buffer.getvalue()[:-2]


def _float_text(values: np.ndarray) -> pa.Array:
    """float64 values as pandas writes them (``numpy.ndarray.astype(str)``: the shortest digits
    that read back to the same float, as Python's repr), NaN as null (an empty field).

    Where at most half the values are distinct (bit for bit, so that ``-0.0`` stays apart from
    ``0.0``) each distinct one is formatted once and its text gathered: a table of pairs repeats
    its differences of accuracies ``k / Q`` and its p-values of 0 and 1 many times over. Values
    are hashed for that only when the first :data:`DISTINCT_PROBE` of them repeat so (hashing
    costs half as much as formatting where every value differs; the probe a twentieth).
    """
    bits = values.view(np.int64)
    if 2 * len(pd.unique(bits[:DISTINCT_PROBE])) <= min(len(bits), DISTINCT_PROBE):
        codes, distinct = pd.factorize(bits)
        if 2 * len(distinct) <= len(bits):
            return _shortest_text(distinct.view(np.float64)).take(pa.array(codes))
    return _shortest_text(values)


def _shortest_text(values: np.ndarray) -> pa.Array:
    """:func:`_float_text` of every value.

    Arrow casts to the same shortest digits in C++; its notation is put into repr's: ``123``
    -> ``123.0``, ``0.00001`` -> ``1e-05``, ``2.5e-7`` -> ``2.5e-07``, and the rare values from
    about 1e10 to 1e16, which repr writes in fixed notation, are formatted by numpy.
    """
    text = pc.cast(pa.array(values, from_pandas=True), pa.string())
    with np.errstate(invalid="ignore"):
        size = np.abs(values)
        whole = (values == np.trunc(values)) & (size < 9.9e9)
        near = (size >= 9.9e-11) & (size < 1.01e-4)
        large = (size >= 9.9e9) & (size < 1.01e16)
    if whole.any():
        ends = pc.binary_join_element_wise(text.filter(whole), ".0", "")
        text = pc.replace_with_mask(text, pa.array(whole), ends)
    if near.any():
        changed = text.filter(near)
        for pattern, replacement in _ARROW_TO_REPR:
            changed = pc.replace_substring_regex(changed, pattern, replacement)
        text = pc.replace_with_mask(text, pa.array(near), changed)
    if large.any():
        text = pc.replace_with_mask(text, pa.array(large), pa.array(values[large].astype(str)))
    return text


def _text_column(series: pd.Series):
    """A text or categorical column as a dictionary of csv fields, or None if some value is
    neither text nor missing (the caller then lets pandas write the table)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy()
        labels = series.cat.categories.to_numpy(dtype=object)
    elif getattr(series.dtype, "storage", None) == "pyarrow":  # Arrow strings: no Python objects
        encoded = pc.dictionary_encode(pa.chunked_array(pa.array(series))).combine_chunks()
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        codes = np.where(encoded.indices.is_null().to_numpy(zero_copy_only=False), -1, codes)
        labels = encoded.dictionary.to_pylist()
    else:
        codes, labels = pd.factorize(series.to_numpy(dtype=object), use_na_sentinel=True)
    labels = list(labels)
    if not all(isinstance(label, str) for label in labels):
        return None
    fields = [_csv_field(label) for label in labels]
    if any(stand_in in field for field in fields for stand_in in _STRUCTURAL.values()):
        return None
    fields = [field.translate(str.maketrans(_STRUCTURAL)) for field in fields]
    mask = codes < 0
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, mask=mask, type=pa.int32()), pa.array(fields, type=pa.string())
    )


_BOOL_WORDS = pa.array(["False", "True"])


def _integer_text(values: np.ndarray, rows: slice) -> pa.Array:
    return pa.array(values[rows])  # Arrow writes integers as str() does


def _bool_text(codes: np.ndarray, rows: slice) -> pa.Array:
    return pa.DictionaryArray.from_arrays(codes[rows], _BOOL_WORDS)


def _float_rows(values: np.ndarray, rows: slice) -> pa.Array:
    return _float_text(values[rows])


def _dictionary_rows(text: pa.DictionaryArray, rows: slice) -> pa.Array:
    return text[rows.start : rows.stop]


def _arrow_columns(table: pd.DataFrame):
    """Per column, a function of a row slice giving its CSV text as Arrow writes it, and whether
    some text holds a stand-in of :data:`_STRUCTURAL`; or None when some column is of a kind
    only pandas formats (the caller then lets pandas write)."""
    columns, stand_ins = [], False
    for _, series in table.items():
        dtype = series.dtype
        kind = dtype.kind if isinstance(dtype, np.dtype) else None
        if kind in ("i", "u"):
            columns.append(partial(_integer_text, series.to_numpy()))
        elif kind == "b":
            columns.append(partial(_bool_text, series.to_numpy().view(np.int8)))
        elif kind == "f" and dtype.itemsize == 8:
            columns.append(partial(_float_rows, series.to_numpy()))
        elif kind == "O" or isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
            text = _text_column(series)
            if text is None:
                return None
            columns.append(partial(_dictionary_rows, text))
            stand_ins = stand_ins or bool(
                pc.any(pc.match_substring_regex(text.dictionary, _STAND_IN)).as_py()
            )
        else:
            return None
    return columns, bool(stand_ins)


def neutralised_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its text cells :func:`neutralised` (a copy only where one changes)."""
    changed = {}
    for column in table.columns:
        values = table[column]
        if isinstance(values.dtype, pd.CategoricalDtype):  # each category once
            names = [neutralised(c) if isinstance(c, str) else c for c in values.cat.categories]
            if names != list(values.cat.categories):
                changed[column] = values.cat.rename_categories(names)
        elif values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            codes, uniques = pd.factorize(values)  # each distinct text once
            safe = [neutralised(u) if isinstance(u, str) else u for u in uniques]
            if safe != list(uniques):
                changed[column] = pd.Series(
                    np.asarray(safe + [None], dtype=object)[codes], index=values.index
                )
    return table.assign(**changed) if changed else table


def write_csv(table: pd.DataFrame, path) -> None:
    """Write ``table`` with Arrow's CSV writer, byte for byte as ``table.to_csv(path, index=False)``
    but for text that starts like a spreadsheet formula (:func:`neutralised`, quoted).

    pandas writes each cell as Python's csv module would (QUOTE_MINIMAL: a field is quoted
    when it holds a comma, a quote or a line feed), floats as their shortest round-trip repr
    (``0.1``, ``1e-05``, ``123.0``), booleans as ``True``/``False`` and missing values as empty
    fields. Here each column is formatted vectorised into that text (:func:`_float_text`;
    integers as Arrow writes them; text through the csv module once per distinct value) and
    Arrow writes it unquoted, :data:`CSV_BATCH_ROWS` rows at a time, straight into the file
    (through memory only when some text holds a stand-in to swap back). Column kinds that only
    pandas formats (dates, nullable extension types, objects that are not text), frames of one
    column (a lone empty field is quoted) and text holding the stand-ins of
    :data:`_STRUCTURAL` are written by pandas itself.
    """
    arrow = _arrow_columns(table) if table.shape[1] > 1 else None
    header = [label for label in table.columns]
    if arrow is None or not all(isinstance(label, str) for label in header):
        neutralised_table(table).to_csv(path, index=False)
        return
    columns, stand_ins = arrow
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(header)
    names = [f"c{i}" for i in range(len(columns))]
    options = pa_csv.WriteOptions(include_header=False, quoting_style="none")
    swap = [(s.encode(), c.encode()) for c, s in _STRUCTURAL.items()]
    with open(path, "wb") as handle:
        handle.write(buffer.getvalue().encode())
        writer = None
        for start in range(0, len(table), CSV_BATCH_ROWS):
            rows = slice(start, min(start + CSV_BATCH_ROWS, len(table)))
            batch = pa.table([column(rows) for column in columns], names=names)
            if not stand_ins:
                writer = writer or pa_csv.CSVWriter(handle, batch.schema, write_options=options)
                writer.write_table(batch)
                continue
            text = io.BytesIO()
            pa_csv.write_csv(batch, text, options)
            data = text.getvalue()
            for stand_in, character in swap:
                data = data.replace(stand_in, character)
            handle.write(data)
        if writer is not None:
            writer.close()


#: Rows a Markdown or LaTeX rendering shows at most. A longer table (a thousand models make
#: half a million pairs) is for reading by program, from its CSV and Parquet files; the
#: rendering shows its first rows and says what it left out.
RENDER_ROWS = 2000
#: Rows the CSV of a table that also has a Parquet file holds at most (:func:`write_table`):
#: every pair of up to 447 models. A CSV is for spreadsheets and eyes; 100,000 rows of a pair
#: table (about 27 columns) stay within what spreadsheets open (Excel's 1,048,576 rows, Google
#: Sheets' 10 million cells), and its float text costs about 4 s a million rows to write. The
#: Parquet file holds every row.
CSV_ROWS = 100_000


#: Bytes of a Parquet column chunk's dictionary before Arrow gives up on it and writes the
#: values plain. Arrow's default (1 MiB) hashes about 131,000 distinct doubles of every row group
#: before giving up; a pair table's estimates, SEs and bounds are all distinct, and that hashing
#: cost more than the encoding: the 20 M contrasts of 4,500 models took 12.6 s to write with it
#: and 8.3 s at 64 KiB, the same size. Columns with few distinct values (the names, most
#: adjusted p-values, counts) still fit a dictionary of 64 KiB.
PARQUET_DICTIONARY_BYTES = 64 * 1024


class TableBlocks:
    """A table made a block of rows at a time, for a table too large to hold whole twice.

    ``makers`` are functions of no arguments, each returning the next block of rows: DataFrames
    with the same columns and dtypes. They are called in order each time the table is iterated,
    so that :func:`write_table` (and :func:`write_parquet`) holds one block at a time; the
    files are byte for byte those of the whole table, :meth:`whole`.

    Examples
    --------
    >>> blocks = TableBlocks([lambda: pd.DataFrame({"x": [1]}), lambda: pd.DataFrame({"x": [2]})])
    >>> blocks.whole()["x"].tolist()
    [1, 2]
    """

    def __init__(self, makers):
        self.makers = tuple(makers)

    def __iter__(self):
        return (make() for make in self.makers)

    def whole(self) -> pd.DataFrame:
        """Every block's rows in one frame, numbered from 0 (what the Parquet file reads back
        as)."""
        return pd.concat(list(self), ignore_index=True)


#: Rows of a Parquet row group: pyarrow's default (``pyarrow.parquet.write_table``'s
#: ``row_group_size``), stated so that a table written block by block (:func:`write_parquet`)
#: cuts its row groups where a write of the whole table would.
PARQUET_ROW_GROUP_ROWS = 1024 * 1024


def write_parquet(table, path) -> None:
    """Write ``table`` to ``path`` as Parquet, without its index (pandas' ``to_parquet`` with
    Arrow and Snappy; dictionaries capped at :data:`PARQUET_DICTIONARY_BYTES`).

    ``table`` is a DataFrame, or an iterable of DataFrames with the same columns and dtypes
    (:class:`TableBlocks`: a table made a block of rows at a time). Blocks are written a row
    group (:data:`PARQUET_ROW_GROUP_ROWS` rows) at a time, the rows that straddle two blocks
    joined first, so that the file is byte for byte the one their concatenation would give,
    while only one block is held: at 4,500 models a table of two fits' ten million pairs each
    then holds one fit's rows, not both.

    Examples
    --------
    >>> import tempfile
    >>> table = pd.DataFrame({"model_a": ["a", "a"], "diff": [0.25, -0.5]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     write_parquet(table, f"{folder}/pairs.parquet")
    ...     write_parquet([table.iloc[:1], table.iloc[1:]], f"{folder}/blocks.parquet")
    ...     whole = Path(f"{folder}/pairs.parquet").read_bytes()
    ...     (pd.read_parquet(f"{folder}/pairs.parquet").equals(table),
    ...      Path(f"{folder}/blocks.parquet").read_bytes() == whole)
    (True, True)
    """
    if isinstance(table, pd.DataFrame):
        table.to_parquet(path, index=False, dictionary_pagesize_limit=PARQUET_DICTIONARY_BYTES)
        return
    # as pandas' to_parquet does: only a job that writes blocks pays its import (0.2 s)
    import pyarrow.parquet as pq  # noqa: PLC0415

    schema = writer = pending = None
    try:
        for block in table:
            if schema is None:
                schema = pa.Schema.from_pandas(block, preserve_index=False)
                writer = pq.ParquetWriter(
                    path,
                    schema,
                    compression="snappy",
                    dictionary_pagesize_limit=PARQUET_DICTIONARY_BYTES,
                )
            rows = pa.Table.from_pandas(block, schema=schema, preserve_index=False)
            del block
            if pending is not None:
                rows = pa.concat_tables([pending, rows])
            whole_groups = len(rows) - len(rows) % PARQUET_ROW_GROUP_ROWS
            if whole_groups:
                writer.write_table(rows.slice(0, whole_groups), PARQUET_ROW_GROUP_ROWS)
            # The rest waits for the next block's first rows, as one row group; copied if the
            # block's other rows were written, since a slice would hold its buffers.
            pending = rows.slice(whole_groups)
            if whole_groups:
                pending = pa.concat_tables([pending, pending.slice(0, 0)]).combine_chunks()
            del rows
        if writer is None:
            raise ValueError("a table of blocks needs at least one block (its columns)")
        if len(pending):
            writer.write_table(pending, PARQUET_ROW_GROUP_ROWS)
    finally:
        if writer is not None:
            writer.close()


def _write_blocks(blocks: TableBlocks, parquet_path, head: int) -> tuple[pd.DataFrame, int]:
    """Write ``blocks`` to ``parquet_path`` (:func:`write_parquet`); return their first ``head``
    rows and how many rows they hold."""
    first, rows = [], 0

    def counted():
        nonlocal rows
        for block in blocks:
            if rows < head:  # taken (copied): a slice of text columns holds the whole block
                first.append(block.take(np.arange(min(len(block), head - rows))))
            rows += len(block)
            yield block
            del block  # before the next block is made: one block held at a time

    write_parquet(counted(), parquet_path)
    return pd.concat(first, ignore_index=True), rows


def write_table(
    table: pd.DataFrame | TableBlocks,
    csv_path,
    markdown_path=None,
    latex_path=None,
    *,
    caption: str | None = None,
    display: pd.DataFrame | None = None,
    formats: dict | None = None,
    align_right=None,
    parquet_path=None,
    shown_path=None,
    max_rows: int = RENDER_ROWS,
    csv_rows: int = CSV_ROWS,
) -> None:
    """Write ``table`` as CSV (full precision) and, if paths are given, Parquet, Markdown and LaTeX.

    ``display`` (default: ``table``) is what the Markdown and LaTeX files show,
    for tables whose human-readable form differs from the tidy CSV. They show at
    most ``max_rows`` rows; beyond that the caption says how many rows were left
    out and where they all are. ``shown_path`` receives the first ``max_rows``
    rows of ``table`` as CSV (what the HTML report embeds, so that a table of half
    a million pairs does not make it unopenable).

    ``table`` is a DataFrame, or a :class:`TableBlocks` (a table made a block of rows at a
    time): with a Parquet file and no ``display``, its blocks are written there one at a time
    and only its first rows are kept, for the CSV and the renderings; otherwise it is made
    whole first.

    A table with a Parquet file is written there first, whole; its CSV then holds at most
    ``csv_rows`` rows (:data:`CSV_ROWS`: every pair of up to 447 models; the 10 million pairs
    of 4,500 models would make 2.4 GB of text). Every CSV is written by :func:`write_csv`.
    """
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    if isinstance(table, TableBlocks) and (parquet_path is None or display is not None):
        table = table.whole()
    if isinstance(table, TableBlocks):
        # Every row goes to the Parquet file, a block at a time; the CSV and the renderings
        # need only the first rows.
        table, rows = _write_blocks(table, parquet_path, max(csv_rows, max_rows))
    else:
        rows = len(table)
        if parquet_path is not None:
            write_parquet(table, parquet_path)
    shown = table if display is None else display
    shown_rows = rows if display is None else len(display)
    capped = parquet_path is not None and rows > csv_rows
    write_csv(table.iloc[:csv_rows] if capped else table, csv_path)
    if shown_path is not None:
        Path(shown_path).parent.mkdir(parents=True, exist_ok=True)
        write_csv(table.iloc[:max_rows], shown_path)
    if shown_rows > max_rows:
        files = " and ".join(Path(f).name for f in (csv_path, parquet_path) if f is not None)
        if capped:
            files = f"{Path(parquet_path).name} (the first {csv_rows:,} in {Path(csv_path).name})"
        note = f"Shows the first {max_rows:,} of {shown_rows:,} rows; every row is in {files}."
        caption = f"{caption} {note}" if caption else note
        shown = shown.iloc[:max_rows]
    # Formatted once for both renderings.
    text = None if markdown_path is None and latex_path is None else format_table(shown, formats)
    if markdown_path is not None:
        Path(markdown_path).write_text(_markdown(shown, text, caption, align_right))
    if latex_path is not None:
        label = "tab:" + Path(csv_path).stem.replace("_", "-")
        Path(latex_path).write_text(_latex(shown, text, caption, label, align_right))
