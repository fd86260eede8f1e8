"""The analysis stage's jobs: the paper's Tables 1-4, the omnibus tests, the logistic readings
and naive versus blocked (``workflow/rules/analysis.smk``).

Each function is one rule's work, named after the rule: the adapter reads the inputs it
declares (:func:`evalbars.jobs.inputs.reads`), calls it with the rule's params and writes what it
returns (:func:`evalbars.jobs.run.run_job`).

The logistic fits' code and the judge-corrected (PPI++) readings are imported by the jobs that
use them: every job of this module is a fresh interpreter, and those imports (scipy.optimize,
the planning code) were a fifth of a second of each job's start-up.
"""

from __future__ import annotations

import logging
from functools import partial

import pandas as pd

from evalbars.data.scores import WideScores, accuracy_order, read_wide_scores, stored_labels
from evalbars.jobs.inputs import file_name, parquet, reads
from evalbars.jobs.outputs import Frame, Table
from evalbars.readings import naive_vs_blocked
from evalbars.render.tables import TableBlocks
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.accuracy import accuracy_table, sampling_variance_table

__all__ = [
    "analysis_models",
    "analysis_pairwise_shard",
    "analysis_pairwise",
    "pairwise_tests",
    "analysis_omnibus",
    "analysis_mixed",
    "analysis_logistic",
    "analysis_naive_vs_blocked",
    "analysis_judge_corrected",
    "MIXED_TERMS",
]

log = logging.getLogger("evalbars")

#: How the variance components' caption names each specification's random effects.
MIXED_TERMS = {
    "category": "(1|category)",
    "category_question": "(1|category) + (1|category:question)",
    "category_question_model": "+ (1|category:question:model)",
    "question": "(1|question)",
    "question_model": "+ (1|question:model)",
}


@reads(scores=read_wide_scores)
def analysis_models(scores: WideScores, *, level: float) -> dict:
    """``analysis_models``: per-model accuracy (the paper's Table 1, extended) and what epochs
    buy (``models``, ``sampling_variance``)."""
    accuracy = accuracy_table(scores, level)
    clustered = (
        "category-clustered SE (CR0, the paper's Table 1)"
        if len(set(scores.categories)) > 1
        else "category-clustered SE (not applicable: the questions have one category)"
    )
    return {
        "models": Table(
            accuracy,
            caption=f"Per-model accuracy over all samples, naive, question-clustered and "
            f"{clustered}, {level:.0%} Wilson and Jeffreys intervals at the effective sample "
            "size.",
        ),
        "sampling_variance": Table(
            sampling_variance_table(scores, accuracy),
            caption="Score variance between and within questions, and the SE at one epoch, the "
            "observed epochs and twice as many (empty where no question has two samples).",
        ),
    }


@reads(scores=read_wide_scores)
def analysis_pairwise_shard(scores: WideScores, *, shard: int, shards: int) -> dict:
    """``analysis_pairwise_shard``: the unadjusted tests of one block of pairs (``tests``), of
    ``shards`` blocks (:func:`evalbars.stats.pairwise.pair_range`)."""
    block = pairwise.pair_range(len(scores.models), shard, shards)
    return {"tests": Frame(pairwise.pair_tests(scores, block))}


@reads(scores=file_name, shards=file_name)
def analysis_pairwise(scores: str, shards=(), *, alpha: float) -> dict:
    """``analysis_pairwise``: every pair's tests, adjusted over the whole family
    (:func:`pairwise_tests`), computed here from the score matrix in the file ``scores``, or
    gathered from the files of ``shards`` (``analysis.shards`` > 1:
    :func:`evalbars.stats.pairwise.gather_pair_tests`). The matrix is read only if the pairs
    are computed here, or if it holds human labels."""
    wide = read_wide_scores(scores) if not shards or stored_labels(scores) else None
    if shards:
        tests = pairwise.gather_pair_tests(shards)
    else:
        assert wide is not None  # read above whenever there are no shards
        tests = pairwise.pair_tests(wide)
    return pairwise_tests(tests, alpha=alpha, wide=wide)


def pairwise_tests(tests: pd.DataFrame, *, alpha: float, wide: WideScores | None = None) -> dict:
    """Every pair's tests (:func:`evalbars.stats.pairwise.pair_tests`, of the whole matrix or
    gathered from shards) with Bonferroni and Holm over the family; where
    ``wide`` holds judge scores with human labels, the judge-corrected (PPI++) columns too
    (:func:`evalbars.readings.judge_corrected.corrected_pair_columns`)."""
    table = pairwise.adjusted_pair_table(tests, alpha)
    caption = (
        f"All pairwise comparisons; Bonferroni and Holm adjust the paired p-values; "
        f"significant at alpha = {alpha:g}."
    )
    corrected = None
    if wide is not None and wide.has_labels:
        from evalbars.readings.judge_corrected import corrected_pair_columns  # noqa: PLC0415

        corrected = corrected_pair_columns(wide, table["model_a"], table["model_b"], alpha)
    if corrected is not None:
        table = pd.concat([table, corrected], axis=1)
        caption += " The *_corrected columns: PPI++ with the human labels (Holm over all pairs)."
    return {"pairwise": Table(table, caption=caption)}


@reads(scores=read_wide_scores)
def analysis_omnibus(scores: WideScores) -> dict:
    """``analysis_omnibus``: RM-ANOVA (Greenhouse-Geisser), one-way ANOVA, Friedman, Cochran's Q."""
    return {
        "omnibus": Table(
            omnibus.omnibus_table(scores),
            caption="Omnibus tests that all models have equal accuracy "
            "(rm_anova_gg: Greenhouse-Geisser corrected degrees of freedom).",
        )
    }


@reads(scores=file_name)
def analysis_mixed(scores: WideScores | str, *, method: str, alpha: float) -> dict:
    """``analysis_mixed``: the mixed models' variance components and contrasts (the paper's
    Tables 2 and 4).

    ``scores`` is the score matrix, or the file that holds it: read here, so that nothing else
    holds it while the contrasts are computed from the fits (at 4,500 models it holds 94.5 M
    cells).

    Every specification the data support is fitted (:func:`evalbars.stats.mixed.model_specs`:
    the question-only models on data with fewer than two categories); one the data cannot
    identify (:func:`evalbars.stats.mixed.fit_obstacle`) is skipped with a note, and its
    contrast rows are empty.
    """
    wide = scores if isinstance(scores, WideScores) else read_wide_scores(scores)
    del scores
    specs = mixed.model_specs(wide)
    obstacles = {spec: mixed.fit_obstacle(wide, spec) for spec in specs}
    skipped = [spec for spec in specs if obstacles[spec]]
    for spec in skipped:
        log.warning("mixed model %s not fitted: %s", mixed.FORMULAS[spec], obstacles[spec])
    specs = [spec for spec in specs if not obstacles[spec]]
    fits = mixed.fit_lmms(wide, specs, method) if len(wide.models) > 1 else []
    order = accuracy_order(wide)
    del wide  # the contrasts need the fits only (at 4,500 models the matrix holds 94.5 M cells)
    log.info("mixed models %s fitted by the %s path", specs, [fit.method for fit in fits])
    note = "".join(f" Not fitted: {mixed.FORMULAS[spec]} ({obstacles[spec]})." for spec in skipped)
    fitted = " and ".join(MIXED_TERMS[fit.model_spec] for fit in fits) or "no specification"
    # Made and written one specification at a time: at 4,500 models each holds ten million
    # pairs (1.4 GB), so the job holds one, not both.
    blocks = [partial(mixed.contrast_table, [fit], (), alpha, order=order) for fit in fits]
    if skipped or not blocks:
        blocks.append(partial(mixed.contrast_table, [], skipped, alpha, order=order))
    contrasts = TableBlocks(blocks)
    return {
        "variance_components": Table(
            mixed.variance_components(fits),
            caption=f"REML variance components of {fitted}.{note}",
        ),
        "mixed_contrasts": Table(
            contrasts,
            caption="Pairwise contrasts of estimated marginal means; p_tukey is an approximation."
            + note.replace(").", "): its rows are empty)."),
        ),
    }


@reads(scores=read_wide_scores)
def analysis_logistic(scores: WideScores, *, alpha: float, max_cells: int) -> dict:
    """``analysis_logistic``: the logistic mixed model (Laplace) and GEE on the 0/1 samples,
    or why they are not fitted (:func:`evalbars.stats.logistic.contrasts.fit_obstacle`). The
    fits only; their verdicts beside the linear mixed model are ``analysis_logistic_verdicts``."""
    from evalbars.stats.logistic import contrasts as logistic  # noqa: PLC0415 - see the top

    obstacle = logistic.fit_obstacle(scores, max_cells)
    if obstacle is None:
        fits = logistic.fit_logistic(scores)
        # compare_logistic's tables, the contrasts made and written one fit at a time (at 4,500
        # models each fit's ten million pairs hold 1.5 GB); the pairs in the linear mixed
        # model's order (accuracy order), so that the tables line up
        contrasts = TableBlocks(
            logistic.contrast_blocks(*fits, alpha, pair_order=accuracy_order(scores))
        )
        effects, summary = logistic.effect_table(*fits), logistic.fit_summary(*fits)
    else:
        log.warning("logistic mixed model and GEE not fitted: %s", obstacle)
        contrasts, effects, summary = logistic.not_fitted(obstacle)
    log.info("logistic fits:\n%s", summary.to_string())
    return {
        "logistic_contrasts": Table(contrasts),
        "logistic_effects": Table(
            effects,
            caption="Per model: the logistic mixed model's fixed effect (log odds of a question "
            "with zero random effects) and marginal accuracy, and GEE's population-averaged log "
            "odds and accuracy, each with its SE.",
        ),
        "logistic_fits": Table(
            summary,
            caption="Logistic mixed model (Laplace) and GEE fits: variance components on the "
            "logit scale, boundary flags and fit criteria.",
        ),
    }


# Only the columns the summary reads: the pair tables hold K(K-1)/2 rows per fit.
@reads(
    pairwise_table=parquet(columns=naive_vs_blocked.PAIRWISE_COLUMNS),
    omnibus_table=parquet(),
    mixed_contrasts=parquet(columns=naive_vs_blocked.MIXED_COLUMNS, dictionary=["model_spec"]),
    logistic_contrasts=parquet(columns=naive_vs_blocked.LOGISTIC_COLUMNS, dictionary=["method"]),
)
def analysis_naive_vs_blocked(
    pairwise_table: pd.DataFrame,
    omnibus_table: pd.DataFrame,
    mixed_contrasts: pd.DataFrame,
    logistic_contrasts: pd.DataFrame,
    *,
    alpha: float,
) -> dict:
    """``analysis_naive_vs_blocked``: naive versus blocked SEs, F tests and significance
    counts, side by side."""
    table = naive_vs_blocked.naive_vs_blocked(
        pairwise_table, omnibus_table, mixed_contrasts, alpha, logistic_contrasts
    )
    return {
        "naive_vs_blocked": Table(
            table,
            caption="Naive versus blocked analyses of the same data; ratios are relative to the "
            "naive row.",
            display=naive_vs_blocked.naive_vs_blocked_display(table, alpha),
            align_right=["Value", "vs naive"],
        )
    }


@reads(scores=read_wide_scores)
def analysis_judge_corrected(scores: WideScores, *, level: float, alpha: float) -> dict:
    """``analysis_judge_corrected``: judge-only, human-only and judge-corrected (PPI++)
    readings of every model and pair (:func:`evalbars.readings.judge_corrected.judge_vs_corrected`),
    the sibling of naive versus blocked where the scores are a judge's with human labels."""
    from evalbars.readings.judge_corrected import judge_vs_corrected  # noqa: PLC0415

    table = judge_vs_corrected(scores, level=level, alpha=alpha, adjust="holm")
    return {
        "judge_corrected": Table(
            table,
            caption=f"Judge-only, human-only and judge-corrected (PPI++) accuracy of every model "
            f"and difference of every pair, {level:.0%} normal intervals; pairs Holm-adjusted "
            f"over all pairs within each reading, significant at alpha = {alpha:g}.",
        )
    }
