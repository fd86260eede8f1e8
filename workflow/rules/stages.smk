# --- One job per stage (config `jobs: per_stage`; what `evalbars report` uses) -----------------
# Each rule below makes every output of its stages' rules by running their jobs one after another
# in one interpreter (evalbars.jobs.run.run_stage): the same files, a Python start-up and its
# imports once per stage instead of once per rule. The ruleorder makes Snakemake choose these
# rules for those files; the per-rule rules stay defined, so nothing else changes. A setting of
# any of a stage's rules reruns the whole stage.

STAGES = {
    "analysis": [
        rules.analysis_models,
        rules.analysis_pairwise,
        rules.analysis_omnibus,
        rules.analysis_mixed,
        rules.analysis_logistic,
        rules.analysis_logistic_verdicts,
        rules.analysis_naive_vs_blocked,
    ]
    + ([rules.analysis_judge_corrected] if LABELLED else []),
    # the claims, ranks and leaderboard stages: they share their imports
    "readings": ([rules.costs] if COSTED else [])  # first: the cost claims read its costs
    + [
        rules.claims_check,
        rules.claims_table,
        rules.claims_figure,
        rules.category_pairwise,
        rules.plan_table,
        rules.ranks_table,
        rules.ranks_figures,
        rules.leaderboard_table,
        rules.leaderboard_figure,
    ]
    + ([rules.cost_table, rules.cost_figure] if COSTED else []),
    # a battles run (data: battles)
    "battles": [
        rules.battles_read,
        rules.battles_fit,
        rules.battles_tables,
        rules.battles_claims,
        rules.battles_figures,
    ],
}


rule stage_analysis:
    input:
        unpack(lambda wildcards: stage_inputs(STAGES["analysis"])),
    output:
        **stage_outputs(STAGES["analysis"]),
    log:
        "results/logs/stage_analysis/stage_analysis.log",
    benchmark:
        "results/benchmarks/stage_analysis/stage_analysis.tsv"
    params:
        members=[smk.stage_member(rule) for rule in STAGES["analysis"]],
    message:
        "--- Analysis stage: every table of the analysis in one job."
    script:
        "../scripts/job.py"


rule stage_readings:
    input:
        unpack(lambda wildcards: stage_inputs(STAGES["readings"])),
    output:
        **stage_outputs(STAGES["readings"]),
    log:
        "results/logs/stage_readings/stage_readings.log",
    benchmark:
        "results/benchmarks/stage_readings/stage_readings.tsv"
    params:
        members=[smk.stage_member(rule) for rule in STAGES["readings"]],
    message:
        "--- Claims, ranks and leaderboard in one job."
    script:
        "../scripts/job.py"


rule stage_battles:
    input:
        unpack(lambda wildcards: stage_inputs(STAGES["battles"])),
    output:
        **stage_outputs(STAGES["battles"]),
    log:
        "results/logs/stage_battles/stage_battles.log",
    benchmark:
        "results/benchmarks/stage_battles/stage_battles.tsv"
    params:
        members=[smk.stage_member(rule) for rule in STAGES["battles"]],
    message:
        "--- Battles stage: read, fit, tables, claims and figures in one job."
    script:
        "../scripts/job.py"


ruleorder: stage_analysis > analysis_models
ruleorder: stage_analysis > analysis_pairwise
ruleorder: stage_analysis > analysis_omnibus
ruleorder: stage_analysis > analysis_mixed
ruleorder: stage_analysis > analysis_logistic
ruleorder: stage_analysis > analysis_logistic_verdicts
ruleorder: stage_analysis > analysis_naive_vs_blocked


if LABELLED:

    ruleorder: stage_analysis > analysis_judge_corrected


ruleorder: stage_readings > claims_check
ruleorder: stage_readings > claims_table
ruleorder: stage_readings > claims_figure
ruleorder: stage_readings > category_pairwise
ruleorder: stage_readings > plan_table
ruleorder: stage_readings > ranks_table
ruleorder: stage_readings > ranks_figures
ruleorder: stage_readings > leaderboard_table
ruleorder: stage_readings > leaderboard_figure
ruleorder: stage_battles > battles_read
ruleorder: stage_battles > battles_fit
ruleorder: stage_battles > battles_tables
ruleorder: stage_battles > battles_claims
ruleorder: stage_battles > battles_figures


if COSTED:

    ruleorder: stage_readings > costs
    ruleorder: stage_readings > cost_table
    ruleorder: stage_readings > cost_figure


# A rule that names another rule's output (`rules.analysis_pairwise.output...`) depends on that
# rule itself, whatever the ruleorder: point such references at the stage that now makes the file.
STAGE_OF = {
    member.rule.name: f"stage_{stage}" for stage, rules_ in STAGES.items() for member in rules_
}
for consumer in workflow.rules:
    for item, producer in list(consumer.dependencies.items()):
        if producer in STAGE_OF and not consumer.name.startswith("stage_"):
            consumer.dependencies[item] = STAGE_OF[producer]
