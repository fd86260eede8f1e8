"""Snakemake adapter: the scripts of one stage's rules, one after another in this process
(config `jobs: per_stage`; :func:`evalbars.workflow.stages.run_members`)."""

from pathlib import Path
from typing import TYPE_CHECKING

from evalbars.errors import script_context
from evalbars.workflow.stages import run_members

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    run_members(snakemake.params.members, Path(__file__).parent)
