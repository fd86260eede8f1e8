"""Snakemake adapter: one family-wise error setting (K models, n questions, rho, gap), paper section 5.1."""

import logging
import time
from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.studies.fwer import simulate_fwer

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    params = snakemake.params
    start = time.perf_counter()
    table = simulate_fwer(
        **params.setting,
        replications=params.replications,
        alpha=params.alpha,
        mean_accuracy=params.mean_accuracy,
        concentration=params.concentration,
        seed=params.seed,
    )
    logging.info("simulated %s in %.3f s", params.setting, time.perf_counter() - start)
    table.to_csv(snakemake.output.summary, index=False)
