"""Snakemake adapter: one setting of the unpaired leaderboard simulation (leaderboard luck)."""

import logging
import time
from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.studies.leaderboard import simulate_leaderboard

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    setting, params = snakemake.params.setting, snakemake.params
    start = time.perf_counter()
    result = simulate_leaderboard(
        setting["questions"],
        spread=setting["spread"],
        runs=params.runs,
        seed=params.seed,
        base_rates=params.true_rates,
        level=params.level,
    )
    logging.info("simulated %s in %.3f s", setting, time.perf_counter() - start)
    for name, table in result._asdict().items():
        table.to_csv(snakemake.output[name], index=False)
