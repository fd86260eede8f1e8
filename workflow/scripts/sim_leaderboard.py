"""Snakemake adapter: one setting of the unpaired leaderboard simulation (seed 000)."""

import logging
import time
from typing import TYPE_CHECKING

from evalbars import simulate
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
    result.summary.to_csv(snakemake.output.summary, index=False)
    result.runs.to_csv(snakemake.output.runs, index=False)
    result.one_run.to_csv(snakemake.output.one_run, index=False)
