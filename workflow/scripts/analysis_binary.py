"""Snakemake adapter: the logistic mixed model and GEE beside the linear one (results/tables/binary_*)."""

import logging
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
    lmm = pd.read_parquet(snakemake.input.contrasts)
    # the linear model with the logistic models' random effects, and its pairs in its order
    lmm = lmm[lmm["model_spec"] == "category_question"].reset_index(drop=True)
    obstacle = binary.fit_obstacle(items, snakemake.params.max_models)
    if obstacle is None:
        result = binary.compare_binary(items, alpha, pairs=lmm[["model_a", "model_b"]])
        robustness = binary.robustness_table(lmm, result.contrasts, alpha)
    else:
        logging.warning("logistic mixed model and GEE not fitted: %s", obstacle)
        result = binary.not_fitted(obstacle)
        robustness = pd.DataFrame(columns=binary.ROBUSTNESS_COLUMNS)
    logging.info("binary fits:\n%s", result.summary.to_string())
    tables.write_table(
        robustness,
        out.models_csv,
        out.models_md,
        out.models_tex,
        parquet_path=out.models_parquet,
        shown_path=out.models_shown,
        caption=f"Each pair's verdict (Holm, alpha = {alpha:g}) under the linear mixed model, the "
        "logistic mixed model and GEE; differences in accuracy, logistic verdicts on the log odds "
        "ratio.",
    )
    tables.write_table(
        result.contrasts,
        out.contrasts_csv,
        parquet_path=out.contrasts_parquet,
    )
    tables.write_table(
        result.models,
        out.effects_csv,
        out.effects_md,
        out.effects_tex,
        caption="Per model: the logistic mixed model's fixed effect (log odds of a question with "
        "zero random effects) and marginal accuracy, and GEE's population-averaged log odds and "
        "accuracy, each with its SE.",
    )
    tables.write_table(
        result.summary,
        out.fits_csv,
        out.fits_md,
        out.fits_tex,
        caption="Logistic mixed model (Laplace) and GEE fits: variance components on the logit "
        "scale, boundary flags and fit criteria.",
    )
    save_figure(binary_models_figure(robustness, obstacle), out.figure_png, out.figure_svg)
