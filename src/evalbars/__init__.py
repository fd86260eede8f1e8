"""evalbars: which ranking claims do item-level benchmark data support?

The public API is :mod:`evalbars.api`, re-exported here: ``import evalbars as eb;
eb.read_items(...)``, ``eb.check_claims(...)``. The names load on first use (PEP 562), so that
``import evalbars`` (every workflow job, the DAG build) costs no statistics imports.
"""

import importlib

__version__ = "0.1.0"

#: The names of :mod:`evalbars.api` available as ``evalbars.<name>``.
_API = (
    "read_items",
    "read_preview",
    "read_sources",
    "attach_labels",
    "scores",
    "accuracy_table",
    "pairwise_table",
    "omnibus_table",
    "mixed_contrasts",
    "variance_components",
    "rank_table",
    "check_claims",
    "compare_models",
    "leaderboard_table",
    "judge_corrected_table",
    "stderr_audit",
    "ReportRun",
    "report_config",
    "write_report",
    "read_battles",
    "battles_table",
    "battle_claims",
    "battles_report_config",
    "score_matrix",
    "pass_at_k_table",
    "passk_curve_table",
    "run_variance_table",
    "sampling_plan",
    "winner_table",
    "best_set_table",
    "cost_table",
    "frontier_table",
    "cost_readings",
    "question_costs",
)

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        # importlib, not an import statement: the workflow lists a job's code inputs by reading
        # its imports (evalbars.pipeline.smk.package_files), and every module imports this
        # package; an import statement here would make every job depend on all of evalbars.
        return getattr(importlib.import_module("evalbars.api"), name)
    raise AttributeError(f"module 'evalbars' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(__all__)
