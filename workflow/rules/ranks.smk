# --- ranks stage: target rule (placeholder until the stage lands) ---------------------------------
rule ranks_all:
    input:
        [],
