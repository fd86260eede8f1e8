# --- Imports, config validation and helpers shared by every stage -------------------------------
# Helpers delegate to evalbars.workflow, where they are unit-tested. No rules in this file.

import pandas as pd
from snakemake.utils import Paramspace, validate

import evalbars
from evalbars import workflow as wf

validate(config, schema="../schemas/config.schema.yaml")

ARCHIVES = wf.archives(config)
PREDICTION_SOURCES = wf.prediction_sources(config)
EVALBARS_VERSION = evalbars.__version__
# The replication check compares with the paper, so it runs only on the paper's data.
REPLICATION_APPLIES = wf.replication_applies(config)


wildcard_constraints:
    archive=r"model_outputs_[A-Za-z0-9._-]+_5shots\.zip",


def archive_sha256(wildcards):
    """Pinned checksum of the archive a download job fetches."""
    return wf.archive_checksum(config, wildcards.archive)


def item_inputs(wildcards):
    """Everything the item table is built from: verified archives and the user's files."""
    return {
        "archives": [f"data/raw/{name}" for name in ARCHIVES],
        "predictions": [source["path"] for source in PREDICTION_SOURCES],
    }
