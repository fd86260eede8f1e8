"""Snakemake adapter: the mixed models' variance components and contrasts (the paper's Table 4)."""

import logging
from typing import TYPE_CHECKING

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.stats import mixed

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    # the model-by-question term only where cells hold repeated samples (epochs)
    specs = mixed.model_specs(wide)
    # a specification the data cannot identify is skipped with a note; the others are fitted
    obstacles = {spec: mixed.fit_obstacle(wide, spec) for spec in specs}
    skipped = [spec for spec in specs if obstacles[spec]]
    for spec in skipped:
        logging.warning("mixed model %s not fitted: %s", mixed.FORMULAS[spec], obstacles[spec])
    specs = [spec for spec in specs if not obstacles[spec]]
    fits = mixed.fit_lmms(wide, specs, snakemake.params.method)
    logging.info("mixed models %s fitted by the %s path", specs, [fit.method for fit in fits])
    note = "".join(f" Not fitted: {mixed.FORMULAS[spec]} ({obstacles[spec]})." for spec in skipped)
    terms = {
        "category": "(1|category)",
        "category_question": "(1|category) + (1|category:question)",
        "category_question_model": "+ (1|category:question:model)",
    }
    out = snakemake.output
    tables.write_table(
        mixed.variance_components(fits),
        out.components_csv,
        out.components_md,
        out.components_tex,
        caption="REML variance components of "
        + " and ".join(terms[spec] for spec in specs)
        + "."
        + note,
    )
    del wide  # the contrasts need the fits only (at 4,500 models the matrix holds 94.5 M cells)
    tables.write_table(
        mixed.contrast_table(fits, skipped, snakemake.params.alpha),
        out.contrasts_csv,
        out.contrasts_md,
        out.contrasts_tex,
        parquet_path=out.contrasts_parquet,
        shown_path=out.contrasts_shown,
        caption="Pairwise contrasts of estimated marginal means; p_tukey is an approximation."
        + note.replace(").", "): its rows are empty)."),
    )
