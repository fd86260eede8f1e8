"""The jobs that draw, one module per stage (``evalbars.jobs.figures.<stage>`` for
``workflow/rules/<stage>.smk``): every figure of the workflow, and the tables drawn in the same
job as their figure (the logistic verdicts, every pair in every category, the replication
check). Only these import matplotlib, so that the other jobs start faster and an edit of a
figure reruns no table job."""
