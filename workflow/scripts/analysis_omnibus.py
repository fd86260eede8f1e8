"""Snakemake adapter: the omnibus tests (:func:`evalbars.jobs.analysis.omnibus_tests`)."""

from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import analysis
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    wide = read_wide_scores(snakemake.input.scores)
    write_outputs(analysis.omnibus_tests(wide), snakemake.output)
