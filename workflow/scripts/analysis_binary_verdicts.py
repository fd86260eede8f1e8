"""Snakemake adapter: each pair's verdict under the linear mixed model, the logistic mixed model
and GEE, side by side (results/tables/binary_models.*, results/figures/binary_models.*)."""

from typing import TYPE_CHECKING

import pandas as pd

from evalbars import binary, tables
from evalbars.errors import script_context
from evalbars.figures.binary import binary_models_figure
from evalbars.figures.style import save_figure
from evalbars.scores import SCORE_COLUMNS

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha, out = snakemake.params.alpha, snakemake.output
    items = pd.read_parquet(snakemake.input.item_table, columns=SCORE_COLUMNS)
    obstacle = binary.fit_obstacle(items, snakemake.params.max_models)
    if obstacle is None:
        lmm = pd.read_parquet(snakemake.input.lmm_contrasts)
        # the linear model with the logistic models' random effects
        lmm = lmm[lmm["model_spec"] == "category_question"].reset_index(drop=True)
        logistic = pd.read_parquet(snakemake.input.logistic_contrasts)
        robustness = binary.robustness_table(lmm, logistic, alpha)
    else:
        robustness = pd.DataFrame(columns=binary.ROBUSTNESS_COLUMNS)
    tables.write_table(
        robustness,
        out.csv,
        out.md,
        out.tex,
        parquet_path=out.parquet,
        shown_path=out.shown,
        caption=f"Each pair's verdict (Holm, alpha = {alpha:g}) under the linear mixed model, the "
        "logistic mixed model and GEE; differences in accuracy, logistic verdicts on the log odds "
        "ratio.",
    )
    save_figure(binary_models_figure(robustness, obstacle), out.png, out.svg)
