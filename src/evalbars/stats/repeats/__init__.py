"""Repeated samples of a question: item scores over k samples, curves over k, and run-to-run
noise.

:mod:`evalbars.stats.repeats.pass_at_k`
    pass@k, pass^k, majority@k and the mean of each question's samples, and each model's
    curve of a score over k with its CR2 interval;
:mod:`evalbars.stats.repeats.passk_band`
    two models' pass@k compared at every k: pointwise intervals and a simultaneous band;
:mod:`evalbars.stats.repeats.run_variance`
    the score variance split into questions, runs and samples, and what it means for a gap.

Importing this package imports none of them (see :mod:`evalbars.pipeline.smk`).
"""
