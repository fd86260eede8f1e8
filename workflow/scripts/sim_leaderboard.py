"""Snakemake adapter: one setting of the unpaired leaderboard simulation (seed 000)."""

import logging
import time
from typing import TYPE_CHECKING

from evalbars import simulate
from evalbars.io import write_columns
from evalbars.workflow import script_context

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    setting, params = snakemake.params.setting, snakemake.params
    start = time.perf_counter()
    result = simulate.simulate_leaderboard(
        setting["questions"],
        setting["spread"],
        params.runs,
        params.seed,
        params.true_rates,
        params.level,
    )
    logging.info("simulated %s in %.3f s", setting, time.perf_counter() - start)
    for name, table in result._asdict().items():
        write_columns(table, snakemake.output[name])
