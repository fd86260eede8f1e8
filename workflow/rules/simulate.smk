# --- simulate stage: target rule (placeholder until the stage lands) ---------------------------------
rule simulate_all:
    input:
        [],
