"""What a job returns.

A job function (one per rule, :mod:`evalbars.jobs.registry`) returns a mapping from output names
to :class:`Table`, :class:`Frame`, :class:`Text` or
:class:`evalbars.render.figures.style.FigureOutput` items (or another item with ``suffixes`` and
``write``). :func:`evalbars.jobs.run.write_outputs` writes each item to the rule's outputs named
after it: a table ``models`` goes to ``models_csv`` and, where the rule declares them,
``models_parquet`` (what other jobs read: types survive, and a model named ``NA`` stays a name),
``models_md``, ``models_tex`` and ``models_shown`` (the first rows the HTML report embeds); a
figure ``claims`` to ``claims_png`` and ``claims_svg``; a text ``claims`` to the output
``claims``. The Python API
(:mod:`evalbars.api`) takes the same items' frames, so that it cannot disagree with the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evalbars.render import tables

__all__ = ["Table", "Frame", "Text"]


@dataclass(frozen=True)
class Table:
    """A table a job writes.

    Attributes
    ----------
    rows : DataFrame or TableBlocks
        The tidy table: the CSV for people (full precision) and the Parquet for other jobs; or
        a :class:`evalbars.render.tables.TableBlocks` of its rows, made and written a block at
        a time (a pair table of thousands of models).
    frame : DataFrame
        The table whole (``rows``, or its blocks end to end): what the Python API returns.
    caption : str, optional
        The caption of its Markdown and LaTeX renderings.
    display : DataFrame, optional
        What the Markdown and LaTeX show, where it differs from the tidy frame.
    formats, align_right : optional
        Cell formats and right-aligned columns of the renderings (:func:`evalbars.render.tables.write_table`).
    markdown, latex : str, optional
        A whole Markdown (or LaTeX) text instead of the frame's rendering.
    """

    rows: pd.DataFrame | tables.TableBlocks
    caption: str | None = None
    display: pd.DataFrame | None = None
    formats: dict | None = None
    align_right: list | None = None
    markdown: str | None = None
    latex: str | None = None

    suffixes = ("csv", "md", "tex", "parquet", "shown")

    @property
    def frame(self) -> pd.DataFrame:
        """The table whole: ``rows``, or its blocks made and put end to end."""
        return self.rows.whole() if isinstance(self.rows, tables.TableBlocks) else self.rows

    def write(self, csv, md=None, tex=None, parquet=None, shown=None) -> None:
        """Write the CSV and whichever renderings the rule declares (blocks one at a time)."""
        tables.write_table(
            self.rows,
            csv,
            None if self.markdown is not None else md,
            None if self.latex is not None else tex,
            caption=self.caption,
            display=self.display,
            formats=self.formats,
            align_right=self.align_right,
            parquet_path=parquet,
            shown_path=shown,
        )
        for path, text in ((md, self.markdown), (tex, self.latex)):
            if path is not None and text is not None:
                Path(path).write_text(text)


@dataclass(frozen=True)
class Frame:
    """A table only other jobs read: one Parquet file (types survive, names stay names)."""

    frame: pd.DataFrame

    suffixes = ("",)

    def write(self, path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tables.write_parquet(self.frame, path)


@dataclass(frozen=True)
class Text:
    """A text file a job writes whole (a JSON document, an HTML page)."""

    text: str

    suffixes = ("",)

    def write(self, path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(self.text)
