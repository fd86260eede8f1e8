"""Planning a comparison: how many questions a claim needs, and how precise a table will be.

Four modules, one job each:

:mod:`evalbars.stats.planning.sample_size`
    the closed forms: questions needed, detectable gaps, per-test levels, the pair simulation;
:mod:`evalbars.stats.planning.holm`
    Holm's requirement over K models, by simulation (no closed form exists);
:mod:`evalbars.stats.planning.precision`
    the precision study's tables: Wilson half-widths and questions to resolve a gap;
:mod:`evalbars.stats.planning.samples`
    more questions, more samples per question or more runs for a target SE (Miller's
    variance of a mean of repeated samples).

The planner's answers and tables, built on these, are :mod:`evalbars.readings.planner`.
Importing this package imports none of them: a workflow job depends only on the modules it
imports (see :mod:`evalbars.pipeline.smk`).
"""
