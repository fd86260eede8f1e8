# --- The report's first screen: the answer in words and numbers, before the rest ---------------
# workflow/report/workflow.rst embeds this file at the top of report.html.
rule report_landing:
    input:
        unpack(judge_corrected_inputs),
        unpack(repeats_landing_inputs),
        unpack(frontier_inputs),
        item_table=rules.subsample.output.item_table,
        claims=rules.claims_table.output.claims_parquet,
        checked=rules.claims_check.output.checked,
        claims_png=rules.claims_figure.output.claims_figure_png,
        naive_vs_blocked=rules.analysis_naive_vs_blocked.output.naive_vs_blocked_parquet,
        pairwise=rules.analysis_pairwise.output.pairwise_parquet,
        ranks=rules.ranks_table.output.ranks_parquet,
        models=rules.analysis_models.output.models_parquet,
        winner=rules.leaderboard_table.output.winner_parquet,
        leaderboard=rules.leaderboard_table.output.leaderboard_parquet,
        code=package_code("report_landing"),
    output:
        landing=report(
            "results/report/landing.html",
            caption="../report/report_landing.rst",
            category="0. Your claims",
            labels={"item": "summary"},
        ),
    log:
        "results/logs/report_landing/report_landing.log",
    localrule: True
    params:
        alpha=lookup(dpath="alpha", within=config),
        score=lookup(dpath="score", within=config),
        level=lookup(dpath="level", within=config),
    message:
        "--- The report's first screen."
    script:
        "../scripts/job.py"
