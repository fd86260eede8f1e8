"""Snakemake adapter: one clustered-questions setting (naive vs clustered vs mixed-model SE)."""

import logging
import time
from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.studies.clustered import simulate_clustered

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    params = snakemake.params
    start = time.perf_counter()
    table = simulate_clustered(
        **params.setting,
        questions=params.questions,
        replications=params.replications,
        mean_accuracy=params.mean_accuracy,
        level=params.level,
        seed=params.seed,
    )
    logging.info("simulated %s in %.3f s", params.setting, time.perf_counter() - start)
    table.to_csv(snakemake.output.summary, index=False)
