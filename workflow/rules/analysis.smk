# --- analysis stage: target rule (placeholder until the stage lands) ---------------------------------
rule analysis_all:
    input:
        [],
