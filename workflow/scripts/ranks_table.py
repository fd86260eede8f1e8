"""Snakemake adapter: unpaired and paired rank uncertainty (results/tables/ranks.*)."""

from pathlib import Path
from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.readings import ranks

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    wide = read_wide_scores(snakemake.input.scores)
    table, reports = ranks.ranks_readings(
        wide,
        level=p.level,
        draws=p.draws,
        replicates=p.replicates,
        seed=p.seed,
        stratify=p.stratify,
    )
    table.to_csv(snakemake.output.csv, index=False)
    Path(snakemake.output.md).write_text(ranks.readings_markdown(table, reports))
