"""Snakemake adapter: the board with intervals and letters, and the resolution strip."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars.errors import script_context
from evalbars.render.figures.style import save_figure
from evalbars.render.figures.verdicts import verdicts_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    table = pd.read_csv(snakemake.input.table, dtype={"letters": str})
    out, p = snakemake.output, snakemake.params
    save_figure(verdicts_figure(table, p.level, p.max_systems), out.png, out.svg)
