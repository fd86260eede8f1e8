"""Snakemake adapter: each claim's verdict under every reading
(:func:`evalbars.jobs.claims.claims_table`)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

from evalbars.data.scores import read_wide_scores
from evalbars.errors import script_context
from evalbars.jobs import claims
from evalbars.jobs.outputs import write_outputs

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    result = claims.claims_table(
        read_wide_scores(snakemake.input.scores),
        json.loads(Path(snakemake.input.checked).read_text()),
        alpha=p.alpha,
        family=p.family,
        adjust=p.adjust,
        power=p.power,
        replicates=p.replicates,
        seed=p.seed,
    )
    write_outputs(result, snakemake.output)
