# --- Fetch upstream MMLU-Pro archives, verified against pinned checksums ------------------------
# The source (mirror or upstream) is resolved inside the job, so changing the mirror never
# re-downloads a file that is already verified.
rule download:
    input:
        code=package_code("download"),
    output:
        archive="data/raw/{archive}",
    log:
        "results/logs/download/{archive}.log",
    localrule: True
    params:
        archive=lambda wildcards: wildcards.archive,
        sha256=archive_sha256,
        mirror=lookup(dpath="mirror", within=config),
    message:
        "--- Fetching and verifying {wildcards.archive}."
    script:
        "../scripts/job.py"
