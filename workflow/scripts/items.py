"""Snakemake adapter: read every prediction source into the canonical item table.

Everything that can make the run fail is checked before anything is written: the sources
against each other (ids, categories, coverage) and the design the analysis will compare.
"""

import logging
from typing import TYPE_CHECKING

from evalbars.data.items import (
    join_sources,
    missing_prediction_counts,
    score_sources,
    write_item_table,
)
from evalbars.data.question_coverage import (
    check_source_coverage,
    coverage_table,
    data_changes,
    presence,
)
from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.sampling import check_design
from evalbars.errors import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    raw = [
        frame
        for path in snakemake.input.archives
        for frame in read_source(
            path, SourceOptions(model=p.archive_models[path.rsplit("/", 1)[-1]])
        )
    ]
    raw += [
        frame
        for source in p.sources
        for frame in read_source(source["path"], SourceOptions.from_entry(source))
    ]
    combined = join_sources(raw)
    in_source = presence(combined)  # which questions each model's source holds
    if p.question_set == "shared":
        check_source_coverage(combined, p.max_unshared_share, in_source)
    items = score_sources(combined, p.policy, p.seed)
    check_design(items, p.subsample_n, p.question_set)
    missing = missing_prediction_counts(raw, p.policy)
    coverage = coverage_table(combined, items, in_source)
    for line in data_changes(missing, coverage, p.question_set):
        logging.getLogger("evalbars").warning("%s", line)
    missing.to_csv(snakemake.output.missing, index=False)
    coverage.to_csv(snakemake.output.coverage, index=False)
    write_item_table(items, snakemake.output.item_table)
