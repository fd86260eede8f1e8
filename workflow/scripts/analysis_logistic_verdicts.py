"""Snakemake adapter: each pair's verdict under the linear mixed model, the logistic mixed model
and GEE, side by side (results/tables/logistic_verdicts.*, results/figures/logistic_verdicts.*)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.errors import script_context
from evalbars.readings import logistic_verdicts
from evalbars.render.figures.logistic import logistic_verdicts_figure
from evalbars.render.figures.style import save_figure

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha, out = snakemake.params.alpha, snakemake.output
    # why the logistic models were not fitted, from their summary (not from the item table)
    obstacle = logistic_verdicts.not_fitted_reason(pd.read_csv(snakemake.input.logistic_fits))
    if obstacle is None:
        # only the columns the table reads, of the linear model with the logistic models'
        # random effects: the contrast tables hold K(K-1)/2 rows per fit
        lmm = pd.read_parquet(
            snakemake.input.lmm_contrasts,
            columns=list(logistic_verdicts.LMM_COLUMNS),
            filters=[("model_spec", "==", "category_question")],
        )
        contrasts = pd.read_parquet(
            snakemake.input.logistic_contrasts,
            columns=["method", "model_a", "model_b", *logistic_verdicts.LOGISTIC_COLUMNS],
        )
        verdicts = logistic_verdicts.verdict_table(lmm, contrasts, alpha)
    else:
        verdicts = pd.DataFrame(columns=logistic_verdicts.VERDICT_COLUMNS)
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
