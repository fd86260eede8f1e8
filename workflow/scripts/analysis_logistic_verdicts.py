"""Snakemake adapter: each pair's verdict under the linear mixed model, the logistic mixed model
and GEE, side by side (results/tables/logistic_verdicts.*, results/figures/logistic_verdicts.*)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import logistic, tables
from evalbars.errors import script_context
from evalbars.figures.logistic import logistic_verdicts_figure
from evalbars.figures.style import save_figure
from evalbars.scores import SCORE_COLUMNS

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha, out = snakemake.params.alpha, snakemake.output
    items = pd.read_parquet(snakemake.input.item_table, columns=SCORE_COLUMNS)
    obstacle = logistic.fit_obstacle(items, snakemake.params.max_cells)
    if obstacle is None:
        lmm = pd.read_parquet(snakemake.input.lmm_contrasts)
        # the linear model with the logistic models' random effects
        lmm = lmm[lmm["model_spec"] == "category_question"].reset_index(drop=True)
        contrasts = pd.read_parquet(snakemake.input.logistic_contrasts)
        verdicts = logistic.verdict_table(lmm, contrasts, alpha)
    else:
        verdicts = pd.DataFrame(columns=logistic.VERDICT_COLUMNS)
    tables.write_table(
        verdicts,
        out.verdicts_csv,
        out.verdicts_md,
        out.verdicts_tex,
        parquet_path=out.verdicts_parquet,
        shown_path=out.verdicts_shown,
        caption=f"Each pair's verdict (Holm, alpha = {alpha:g}) under the linear mixed model, the "
        "logistic mixed model and GEE; differences in accuracy, logistic verdicts on the log odds "
        "ratio.",
    )
    save_figure(logistic_verdicts_figure(verdicts, obstacle), out.figure_png, out.figure_svg)
