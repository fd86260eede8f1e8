"""Snakemake adapter: read every prediction source into the canonical item table."""

from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.items import build_item_table, missing_prediction_counts
from evalbars.readers import read_predictions
from evalbars.sampling import require_comparison_design

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    models = snakemake.params.archive_models
    archives = snakemake.input.archives
    raw = [read_predictions(path, models[path.rsplit("/", 1)[-1]]) for path in archives]
    raw += [
        read_predictions(path, model)
        for path, model in zip(
            snakemake.input.predictions, snakemake.params.prediction_models, strict=True
        )
    ]
    items = build_item_table(raw, snakemake.params.policy, snakemake.params.seed)
    require_comparison_design(items)
    missing_prediction_counts(raw).to_csv(snakemake.output.missing, index=False)
    items.to_parquet(snakemake.output.item_table, index=False)
