"""Snakemake adapter: each configured claim's verdict under every reading (tables/claims.*)."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from evalbars import tables
from evalbars.data.scores import read_wide_scores
from evalbars.errors import ConfigError, script_context
from evalbars.readings import claims
from evalbars.render import landing

if TYPE_CHECKING:
    from snakemake.iocontainers import snakemake

with script_context(snakemake.log[0]):
    p = snakemake.params
    checked = json.loads(Path(snakemake.input.claims).read_text())
    wide = read_wide_scores(snakemake.input.scores)
    try:
        table = claims.evaluate_claims(
            wide,
            checked["claims"],
            alpha=p.alpha,
            family=p.family,
            power=p.power,
            replicates=p.replicates,
            seed=p.seed,
        )
    except claims.ClaimError as exc:
        raise ConfigError(f"{exc}; edit `claims:` in the config to name the analysed data") from exc
    table.to_csv(snakemake.output.csv, index=False)
    markdown = claims.claims_markdown(table, p.alpha, p.family)
    if table.empty:
        markdown = landing.no_claims_text(checked["notes"], checked["example"])
    Path(snakemake.output.md).write_text(markdown)
    shown = claims.claims_display(table) if len(table) else pd.DataFrame({"note": ["no claims"]})
    Path(snakemake.output.tex).write_text(
        tables.to_latex(shown, caption=claims.claims_headline(table), label="tab:claims")
    )
