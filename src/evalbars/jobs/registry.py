"""Where each workflow rule's job lives: ``JOBS[rule]`` is the module that holds it.

A rule's job is the function of that module named after the rule
(``JOBS["claims_table"]`` is ``evalbars.jobs.claims``: :func:`evalbars.jobs.claims.claims_table`).
Every rule runs the same adapter, ``workflow/scripts/job.py``, which looks its rule up here and
runs the job (:func:`evalbars.jobs.run.run_job`): its inputs read as the job declares
(:func:`evalbars.jobs.inputs.reads`), the rule's ``params:`` as keywords, what it returns written
to the rule's outputs.

The jobs of ``workflow/rules/<stage>.smk`` live in ``evalbars.jobs.<stage>``, and those that draw
in ``evalbars.jobs.figures.<stage>``, so that no table job imports matplotlib (a second of
start-up, and a rerun of the table at every edit of a figure). The module named here is what a
rule's code inputs follow (:func:`evalbars.pipeline.smk.job_code`): an edit of it, or of a module
it imports, reruns its jobs. This file itself is not a job's code: it imports nothing, and a rule
that moves to another module gets that module's files as inputs, which reruns it.
"""

from __future__ import annotations

__all__ = ["JOBS"]

#: ``{rule: module}``, in the order of the rule files.
JOBS: dict[str, str] = {
    # download.smk: its own module, so that no edit of the readers fetches an archive again
    "download": "evalbars.jobs.download",
    # items.smk, subsample.smk
    "items": "evalbars.jobs.data",
    "harness_stderr": "evalbars.jobs.data",
    "subsample": "evalbars.jobs.data",
    # analysis.smk
    "analysis_models": "evalbars.jobs.analysis",
    "analysis_pairwise_shard": "evalbars.jobs.analysis",
    "analysis_pairwise": "evalbars.jobs.analysis",
    "analysis_omnibus": "evalbars.jobs.analysis",
    "analysis_mixed": "evalbars.jobs.analysis",
    "analysis_logistic": "evalbars.jobs.analysis",
    "analysis_logistic_verdicts": "evalbars.jobs.figures.analysis",
    "analysis_naive_vs_blocked": "evalbars.jobs.analysis",
    "analysis_judge_corrected": "evalbars.jobs.analysis",
    # replication.smk
    "replication_chunk": "evalbars.jobs.replication",
    "replication_runs": "evalbars.jobs.replication",
    "replication_table": "evalbars.jobs.figures.replication",
    # ranks.smk
    "ranks_table": "evalbars.jobs.ranks",
    "ranks_figures": "evalbars.jobs.figures.ranks",
    # simulate.smk
    "sim_leaderboard": "evalbars.jobs.simulate",
    "sim_leaderboard_table": "evalbars.jobs.simulate",
    "sim_leaderboard_figures": "evalbars.jobs.figures.simulate",
    "sim_precision": "evalbars.jobs.simulate",
    "sim_precision_figures": "evalbars.jobs.figures.simulate",
    "sim_fwer": "evalbars.jobs.simulate",
    "sim_fwer_table": "evalbars.jobs.simulate",
    "sim_fwer_figures": "evalbars.jobs.figures.simulate",
    "sim_clustered": "evalbars.jobs.simulate",
    "sim_clustered_table": "evalbars.jobs.simulate",
    "sim_clustered_figure": "evalbars.jobs.figures.simulate",
    # claims.smk
    "claims_check": "evalbars.jobs.claims",
    "claims_table": "evalbars.jobs.claims",
    "claims_figure": "evalbars.jobs.figures.claims",
    "category_pairwise": "evalbars.jobs.figures.claims",
    "plan_table": "evalbars.jobs.claims",
    # repeats.smk
    "repeats_pass_at_k": "evalbars.jobs.repeats",
    "repeats_passk_curve": "evalbars.jobs.repeats",
    "repeats_passk_figure": "evalbars.jobs.figures.repeats",
    "repeats_sampling_plan": "evalbars.jobs.repeats",
    "repeats_run_variance": "evalbars.jobs.repeats",
    # leaderboard.smk
    "leaderboard_table": "evalbars.jobs.leaderboard",
    "leaderboard_figure": "evalbars.jobs.figures.leaderboard",
    "costs": "evalbars.jobs.leaderboard",
    "cost_table": "evalbars.jobs.leaderboard",
    "cost_figure": "evalbars.jobs.figures.leaderboard",
    # report.smk
    "report_landing": "evalbars.jobs.report",
    # battles.smk (a battles run, config `data: battles`)
    "battles_read": "evalbars.jobs.battles",
    "battles_fit": "evalbars.jobs.battles",
    "battles_tables": "evalbars.jobs.battles",
    "battles_claims": "evalbars.jobs.battles",
    "battles_figures": "evalbars.jobs.figures.battles",
    "battles_landing": "evalbars.jobs.battles",
}
