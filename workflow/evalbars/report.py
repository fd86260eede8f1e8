"""Rendering tables as Markdown and LaTeX, and the naive-versus-blocked summary table.

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
    "format_p",
    "format_cell",
    "format_table",
    "to_markdown",
    "to_latex",
    "write_table",
    "naive_vs_blocked",
    "naive_vs_blocked_display",
    "PROCEDURE_LABELS",
    "QUANTITY_LABELS",
]


def _is_missing(value) -> bool:
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
    if _is_missing(p):
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
        if _is_missing(value):
            return "—"
        return spec(value) if callable(spec) else format(value, spec)
    if _is_missing(value):
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
    rule = ["-" * (w - 1) + ":" if c in right else "-" * w for c, w in zip(table.columns, widths)]

    def line(cells):
        padded = [
            cell.rjust(w) if c in right else cell.ljust(w)
            for cell, w, c in zip(cells, widths, table.columns)
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


def write_table(
    table: pd.DataFrame,
    csv_path,
    markdown_path=None,
    latex_path=None,
    caption: str | None = None,
    display: pd.DataFrame | None = None,
    formats: dict | None = None,
    align_right=None,
) -> None:
    """Write ``table`` as CSV (full precision) and, if paths are given, Markdown and LaTeX.

    ``display`` (default: ``table``) is what the Markdown and LaTeX files show,
    for tables whose human-readable form differs from the tidy CSV.
    """
    shown = table if display is None else display
    Path(csv_path).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(csv_path, index=False)
    if markdown_path is not None:
        Path(markdown_path).write_text(
            to_markdown(shown, caption=caption, formats=formats, align_right=align_right)
        )
    if latex_path is not None:
        label = "tab:" + Path(csv_path).stem.replace("_", "-")
        Path(latex_path).write_text(
            to_latex(shown, caption=caption, label=label, formats=formats, align_right=align_right)
        )


# --- The naive-versus-blocked summary ------------------------------------------------------------

#: Human-readable names of the quantities in :func:`naive_vs_blocked`.
QUANTITY_LABELS = {
    "contrast_se": "Pairwise contrast SE (mean over pairs)",
    "omnibus_f": "Omnibus F test (all models equal)",
    "significant_pairs": "Pairs declared different",
}

#: Human-readable names of the procedures in :func:`naive_vs_blocked`.
PROCEDURE_LABELS = {
    "unpaired_z": "unpaired z-test (naive)",
    "lmm_category": "mixed model, (1|category) only",
    "paired_z": "paired z-test",
    "lmm_category_question": "mixed model, (1|category) + (1|category:question)",
    "oneway_anova": "one-way ANOVA (naive)",
    "rm_anova": "repeated-measures ANOVA",
    "unpaired_uncorrected": "unpaired z, uncorrected (naive)",
    "paired_uncorrected": "paired z, uncorrected",
    "paired_bonferroni": "paired z, Bonferroni",
    "paired_holm": "paired z, Holm",
    "lmm_category_question_holm": "nested mixed model, Holm",
}

_ACCOUNTS_FOR = {
    "unpaired_z": "nothing",
    "lmm_category": "category",
    "paired_z": "question",
    "lmm_category_question": "category + question",
    "oneway_anova": "nothing",
    "rm_anova": "question",
    "unpaired_uncorrected": "nothing",
    "paired_uncorrected": "question",
    "paired_bonferroni": "question + multiplicity",
    "paired_holm": "question + multiplicity",
    "lmm_category_question_holm": "category + question + multiplicity",
}


def naive_vs_blocked(
    pairwise: pd.DataFrame,
    omnibus: pd.DataFrame,
    mixed_contrasts: pd.DataFrame,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Naive and blocked versions of the same quantities, side by side, with their ratio.

    Parameters
    ----------
    pairwise : DataFrame
        :func:`evalbars.pairwise.pairwise_table`.
    omnibus : DataFrame
        :func:`evalbars.omnibus.omnibus_table`.
    mixed_contrasts : DataFrame
        :func:`evalbars.mixed.lmm_contrasts` rows for the model specs ``category`` and
        ``category_question``.
    alpha : float
        Significance level for counting significant pairs.

    Returns
    -------
    DataFrame
        One row per (quantity, procedure): ``quantity`` (``contrast_se``,
        ``omnibus_f``, ``significant_pairs``), ``procedure`` (keys of
        :data:`PROCEDURE_LABELS`), ``accounts_for`` (the structure the procedure
        uses), ``value`` (mean SE over the pairs; F; number of pairs with p < alpha),
        ``value_min``, ``value_max`` (range of the SE over pairs), ``df1``, ``df2``,
        ``p`` (for the F rows), ``n_pairs`` and ``ratio_to_naive`` (``value`` over the
        first, naive, row of the same quantity).
    """
    rows = []

    def add(quantity, procedure, values, df1=np.nan, df2=np.nan, p=np.nan, count=False):
        values = np.asarray(values, dtype=float)
        rows.append(
            {
                "quantity": quantity,
                "procedure": procedure,
                "accounts_for": _ACCOUNTS_FOR[procedure],
                "value": float(values.sum()) if count else float(values.mean()),
                "value_min": np.nan if count else float(values.min()),
                "value_max": np.nan if count else float(values.max()),
                "df1": float(df1),
                "df2": float(df2),
                "p": float(p),
                "n_pairs": len(pairwise),
            }
        )

    def spec(name):
        chosen = mixed_contrasts[mixed_contrasts["model_spec"] == name]
        if len(chosen) != len(pairwise):
            raise ValueError(
                f"mixed_contrasts has {len(chosen)} rows for model_spec {name!r}, "
                f"expected one per pair ({len(pairwise)})"
            )
        return chosen

    category, nested = spec("category"), spec("category_question")
    add("contrast_se", "unpaired_z", pairwise["se_unpaired"])
    add("contrast_se", "lmm_category", category["se"])
    add("contrast_se", "paired_z", pairwise["se_paired"])
    add("contrast_se", "lmm_category_question", nested["se"])
    tests = omnibus.set_index("test")
    for name in ("oneway_anova", "rm_anova"):
        test = tests.loc[name]
        add("omnibus_f", name, [test["statistic"]], test["df1"], test["df2"], test["p"])
    add("significant_pairs", "unpaired_uncorrected", pairwise["p_unpaired"] < alpha, count=True)
    add("significant_pairs", "paired_uncorrected", pairwise["p_paired"] < alpha, count=True)
    add("significant_pairs", "paired_bonferroni", pairwise["p_bonferroni"] < alpha, count=True)
    add("significant_pairs", "paired_holm", pairwise["p_holm"] < alpha, count=True)
    add("significant_pairs", "lmm_category_question_holm", nested["p_holm"] < alpha, count=True)
    table = pd.DataFrame(rows)
    naive = table.groupby("quantity", sort=False)["value"].transform("first")
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio_to_naive"] = np.where(naive != 0, table["value"] / naive, np.nan)
    return table


def naive_vs_blocked_display(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The human-readable form of :func:`naive_vs_blocked` for Markdown and LaTeX.

    Each quantity is named once, each value carries its context (the SE range
    over pairs; ``F(df1, df2)`` and p; the number of pairs compared) and the
    ratio is written as ``0.82×``.
    """
    shown = []
    previous = None
    for row in table.itertuples(index=False):
        if row.quantity == "contrast_se":
            value = f"{row.value:.4f}"
            if f"{row.value_min:.4f}" != f"{row.value_max:.4f}":
                value += f" (range {row.value_min:.4f}–{row.value_max:.4f})"
        elif row.quantity == "omnibus_f":
            value = f"F({row.df1:g}, {row.df2:g}) = {row.value:.2f}, p = {format_p(row.p)}"
        else:
            value = f"{row.value:.0f} of {row.n_pairs}"
        quantity = QUANTITY_LABELS.get(row.quantity, row.quantity)
        if row.quantity == "significant_pairs":
            quantity += f" (α = {alpha:g})"
        shown.append(
            {
                "Quantity": quantity if row.quantity != previous else "",
                "Procedure": PROCEDURE_LABELS.get(row.procedure, row.procedure),
                "Accounts for": row.accounts_for,
                "Value": value,
                "vs naive": "—"
                if _is_missing(row.ratio_to_naive)
                else f"{row.ratio_to_naive:.2f}×",
            }
        )
        previous = row.quantity
    return pd.DataFrame(shown)
