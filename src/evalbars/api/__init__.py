"""The Python front door: read results, compute the workflow's tables as DataFrames, check claims,
compare two models, write the report. For notebooks.

Every table here is the one a workflow job writes: each function calls that job's own function
(:mod:`evalbars.jobs`) on the same data, with the same checks, so a table computed here equals
the file the workflow writes (``results/tables/<name>.parquet`` as pandas reads it back, dtypes
included, and its CSV) for the same data and settings; the workflow test
``tests/workflow/test_api_equals_workflow.py`` holds each equal on the default run, both shipped
examples and a judge's scores with human labels, and those of the other stages on the runs that
make them (a table of battles, repeated samples and runs, logs with prices). Data are read the
way ``evalbars report`` reads them: every question any model answered (``question_set="all"``;
pairs use the questions both answered), after the checks of the workflow's item table.
Defaults are :mod:`evalbars.defaults`'s, as the config's.

The table functions take ``items``, an item table (:func:`read_items`) or its score matrix
(:func:`scores`, computed once and reused). Bad input raises
:class:`evalbars.errors.EvalbarsError` with the one-line message the command line prints.
Import every name from here (or ``import evalbars as eb``): the modules that define them
(``_read``, ``_tables``, ``_report``) are private.

Examples
--------
>>> import evalbars.api as eb
>>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
...                       category_field="category")
>>> eb.accuracy_table(items)[["model", "n", "accuracy"]].round(3)
                  model   n  accuracy
0  evalbars/fake-strong  39     0.744
1     evalbars/fake-mid  39     0.462
2    evalbars/fake-weak  39     0.462
>>> eb.pairwise_table(items)[["model_a", "model_b", "n10", "n01", "p_holm"]].round(4)
                model_a             model_b  n10  n01  p_holm
0  evalbars/fake-strong   evalbars/fake-mid   16    5   0.028
1  evalbars/fake-strong  evalbars/fake-weak   17    6   0.028
2     evalbars/fake-mid  evalbars/fake-weak   11   11   1.000
>>> verdicts = eb.check_claims(items, ["evalbars/fake-strong > evalbars/fake-weak"])
>>> paired_holm = (verdicts["reading"] == "paired") & (verdicts["adjustment"] == "holm")
>>> verdicts.loc[paired_holm, "verdict"].item()
'supported'
"""

from __future__ import annotations

from evalbars.api._battles import BATTLE_DEFAULTS as BATTLE_DEFAULTS  # the battles settings
from evalbars.api._battles import (
    battle_claims,
    battles_report_config,
    battles_table,
    read_battles,
)
from evalbars.api._best import (
    best_set_table,
    cost_readings,
    cost_table,
    frontier_table,
    question_costs,
    winner_table,
)
from evalbars.api._read import (
    attach_labels,
    read_items,
    read_preview,
    read_sources,
    scores,
    stderr_audit,
)
from evalbars.api._repeats import (
    pass_at_k_table,
    passk_curve_table,
    run_variance_table,
    sampling_plan,
    score_matrix,
)
from evalbars.api._report import REPORT_STAGES as REPORT_STAGES  # the stages of a report run
from evalbars.api._report import ReportRun, report_config, write_report
from evalbars.api._tables import (
    accuracy_table,
    check_claims,
    compare_models,
    judge_corrected_table,
    leaderboard_table,
    mixed_contrasts,
    omnibus_table,
    pairwise_table,
    rank_table,
    variance_components,
)

__all__ = [
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
]
