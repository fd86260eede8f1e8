# --- replication stage: target rule (placeholder until the stage lands) ---------------------------------
rule replication_all:
    input:
        [],
