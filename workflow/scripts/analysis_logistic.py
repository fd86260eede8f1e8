"""Snakemake adapter: the logistic mixed model and GEE on the 0/1 samples
(results/tables/logistic_{contrasts,effects,fits}.*).

The fits only; their verdicts beside the linear mixed model are analysis_logistic_verdicts.
"""

import logging
from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import accuracy_order, read_wide_scores
from evalbars.errors import script_context
from evalbars.stats.logistic import contrasts as logistic
from evalbars.stats.pairwise import model_pairs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    alpha, out = snakemake.params.alpha, snakemake.output
    scores = read_wide_scores(snakemake.input.scores)
    obstacle = logistic.fit_obstacle(scores, snakemake.params.max_cells)
    if obstacle is None:
        # the pairs in the linear mixed model's order (accuracy order), so the tables line up
        pairs = model_pairs(accuracy_order(scores))
        result = logistic.compare_logistic(scores, alpha, pairs=pairs)
    else:
        logging.warning("logistic mixed model and GEE not fitted: %s", obstacle)
        result = logistic.not_fitted(obstacle)
    logging.info("logistic fits:\n%s", result.summary.to_string())
    tables.write_table(
        result.contrasts,
        out.contrasts_csv,
        parquet_path=out.contrasts_parquet,
    )
    tables.write_table(
        result.effects,
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
