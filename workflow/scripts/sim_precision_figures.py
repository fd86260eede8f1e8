"""Snakemake adapter: half-width curve and questions-needed figure, PNG and SVG."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.render.figures.precision import halfwidth_figure, questions_needed_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    precision = pd.read_csv(snakemake.input.precision)
    needed = pd.read_csv(snakemake.input.questions_needed)
    level, out = snakemake.params.level, snakemake.output
    save_figure(halfwidth_figure(precision, level), out.halfwidth_png, out.halfwidth_svg)
    rate = float(precision["rate"].iloc[0])
    figure = questions_needed_figure(needed, rate)
    save_figure(figure, out.questions_needed_png, out.questions_needed_svg)
