"""The analysis stage's job that draws (``workflow/rules/analysis.smk``): each pair's verdict
under the linear mixed model, the logistic mixed model and GEE, with its figure."""

from __future__ import annotations

import pandas as pd

from evalbars.jobs.inputs import parquet, reads
from evalbars.jobs.outputs import Table
from evalbars.readings import logistic_verdicts
from evalbars.render.figures.logistic import logistic_verdicts_figure
from evalbars.render.figures.style import FigureOutput
from evalbars.stats.mixed.common import BLOCKED_SPECS

__all__ = ["analysis_logistic_verdicts"]


# Only the columns the table reads, of the linear model with the logistic models' random
# effects: the contrast tables hold K(K-1)/2 rows per fit. Their model names are read as
# categoricals: at 4,500 models a string per row of the logistic table's 20 M rows took 6 s and
# 2.8 GB to read, its codes 1.3 s.
MODEL_NAMES = ["model_a", "model_b"]


@reads(
    lmm_contrasts=parquet(
        columns=logistic_verdicts.LMM_COLUMNS,
        filters=[("model_spec", "in", list(BLOCKED_SPECS))],
        dictionary=MODEL_NAMES,
    ),
    logistic_contrasts=parquet(
        columns=["method", *MODEL_NAMES, *logistic_verdicts.LOGISTIC_COLUMNS],
        dictionary=["method", *MODEL_NAMES],
    ),
    logistic_fits=parquet(),
)
def analysis_logistic_verdicts(
    lmm_contrasts: pd.DataFrame,
    logistic_contrasts: pd.DataFrame,
    logistic_fits: pd.DataFrame,
    *,
    alpha: float,
) -> dict:
    """``analysis_logistic_verdicts``: each pair's verdict under the linear mixed model, the
    logistic mixed model and GEE, side by side, with its figure.

    ``lmm_contrasts`` holds the blocked specification's rows (the linear model with the
    logistic models' random effects).
    """
    # why the logistic models were not fitted, from their summary (not from the item table)
    obstacle = logistic_verdicts.not_fitted_reason(logistic_fits)
    if obstacle is None:
        verdicts = logistic_verdicts.verdict_table(lmm_contrasts, logistic_contrasts, alpha)
    else:
        verdicts = pd.DataFrame(columns=logistic_verdicts.VERDICT_COLUMNS)
    return {
        "logistic_verdicts": Table(
            verdicts,
            caption=f"Each pair's verdict (Holm, alpha = {alpha:g}) under the linear mixed "
            "model, the logistic mixed model and GEE; differences in accuracy, logistic verdicts "
            "on the log odds ratio.",
        ),
        "logistic_verdicts_figure": FigureOutput(logistic_verdicts_figure(verdicts, obstacle)),
    }
