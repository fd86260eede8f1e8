"""Rendering tidy tables as Markdown and LaTeX, and writing every table a stage makes.

:func:`to_markdown` and :func:`to_latex` take any tidy DataFrame and return a
string; every stage uses them so numbers look the same everywhere. Cells are
formatted by column name (:func:`format_cell`):

- p-values (a column named ``p``, ``p_*`` or ``*_p``): four decimals, or
  scientific notation with three significant digits below 0.001;
- standard errors (``se``, ``se_*``, ``*_se``): four decimals;
- integers as integers, booleans as ``yes``/``no``, missing values as a dash;
- degrees of freedom and counts (``df*``, ``n``, ``n_*``): whole numbers as
  integers, fractional ones (Greenhouse-Geisser) to two decimals;
- other floats: four decimals (scientific below 0.001 or from 1e6 on).

Pass ``formats={column: callable or format spec}`` to override a column.
"""

from __future__ import annotations

import math
import numbers
import re
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "is_missing",
    "format_p",
    "format_cell",
    "format_table",
    "to_markdown",
    "to_latex",
    "write_table",
    "RENDER_ROWS",
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
        value = float(value)
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if _is_p_column(column):
            return format_p(value)
        if _is_se_column(column):
            return f"{value:.4f}"
        if column.startswith("df") or column.startswith("n_") or column == "n":
            # Degrees of freedom and counts: whole numbers as such, else two decimals.
            return str(int(value)) if value.is_integer() else f"{value:.2f}"
        return _format_float(value)
    return str(value)


def format_table(table: pd.DataFrame, formats: dict | None = None) -> pd.DataFrame:
    """Every cell of ``table`` as text, by :func:`format_cell`."""
    return pd.DataFrame(
        {
            column: [format_cell(str(column), v, formats) for v in table[column].tolist()]
            for column in table.columns
        },
        index=table.index,
        dtype=object,
    )


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
    text = format_table(table, formats)
    right = set(align_right) if align_right is not None else _numeric_columns(table)

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    header = [escape(str(c)) for c in table.columns]
    rows = [[escape(cell) for cell in row] for row in text.itertuples(index=False)]
    widths = [max([len(h), 3] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    rule = [
        "-" * (w - 1) + ":" if c in right else "-" * w
        for c, w in zip(table.columns, widths, strict=True)
    ]

    def line(cells):
        padded = [
            cell.rjust(w) if c in right else cell.ljust(w)
            for cell, w, c in zip(cells, widths, table.columns, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    lines = [line(header), "| " + " | ".join(rule) + " |"] + [line(r) for r in rows]
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

    Cells are formatted as in :func:`to_markdown`; LaTeX special characters are
    escaped and scientific p-values written as :math:`4.80\\times10^{-4}`.
    """
    text = format_table(table, formats)
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


#: Rows a Markdown or LaTeX rendering shows at most. A longer table (a thousand models make
#: half a million pairs) is for reading by program, from its CSV and Parquet files; the
#: rendering shows its first rows and says what it left out.
RENDER_ROWS = 2000


def write_table(
    table: pd.DataFrame,
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
) -> None:
    """Write ``table`` as CSV (full precision) and, if paths are given, Parquet, Markdown and LaTeX.

    ``display`` (default: ``table``) is what the Markdown and LaTeX files show,
    for tables whose human-readable form differs from the tidy CSV. They show at
    most ``max_rows`` rows; beyond that the caption says how many rows were left
    out and where they all are. ``shown_path`` receives the first ``max_rows``
    rows of ``table`` as CSV (what the HTML report embeds, so that a table of half
    a million pairs does not make it unopenable).
    """
    shown = table if display is None else display
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(csv_path, index=False)
    if parquet_path is not None:
        table.to_parquet(parquet_path, index=False)
    if shown_path is not None:
        Path(shown_path).parent.mkdir(parents=True, exist_ok=True)
        table.iloc[:max_rows].to_csv(shown_path, index=False)
    if len(shown) > max_rows:
        files = " and ".join(Path(f).name for f in (csv_path, parquet_path) if f is not None)
        note = f"Shows the first {max_rows:,} of {len(shown):,} rows; every row is in {files}."
        caption = f"{caption} {note}" if caption else note
        shown = shown.iloc[:max_rows]
    if markdown_path is not None:
        Path(markdown_path).write_text(
            to_markdown(shown, caption=caption, formats=formats, align_right=align_right)
        )
    if latex_path is not None:
        label = "tab:" + Path(csv_path).stem.replace("_", "-")
        Path(latex_path).write_text(
            to_latex(shown, caption=caption, label=label, formats=formats, align_right=align_right)
        )
