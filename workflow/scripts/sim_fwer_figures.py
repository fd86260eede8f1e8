"""Snakemake adapter: FWER by method, FWER across K and power figures, PNG and SVG."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.render.figures.fwer import methods_figure, models_figure, power_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = pd.read_csv(snakemake.input.table)
    shown, out = snakemake.params.figure, snakemake.output
    models, questions = shown["models"], shown["questions"]
    save_figure(methods_figure(table, models, questions), out.methods_png, out.methods_svg)
    save_figure(models_figure(table, questions), out.models_png, out.models_svg)
    save_figure(power_figure(table, models), out.power_png, out.power_svg)
