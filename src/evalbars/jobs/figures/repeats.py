"""The repeats stage's job that draws (``workflow/rules/repeats.smk``): each pair's pass@k
difference over k with its band."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.render.figures.repeats import passk_curve_figure
from evalbars.render.figures.style import FigureOutput

__all__ = ["repeats_passk_figure"]


@reads(table=parquet())
def repeats_passk_figure(table: pd.DataFrame) -> dict:
    """``repeats_passk_figure``: one panel per pair of ``passk_curve.csv`` (``table``), the band
    over k shaded and the ks where it decides the sign marked (``passk_curve_figure``)."""
    return {"passk_curve_figure": FigureOutput(passk_curve_figure(table))}
