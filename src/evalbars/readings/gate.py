"""Release gate: is a candidate model worse than its baseline on the same questions?

:func:`compare_models` compares two columns of a :class:`evalbars.data.scores.WideScores` on the
questions both answered (a question's epochs averaged first): the paired difference
(candidate minus baseline) with its interval, exact McNemar, a non-inferiority test at a
margin, the verdict and its exit code, the questions that flipped, and optionally the
same per category and an anytime-valid confidence sequence
(:mod:`evalbars.stats.sequential`). :func:`compare_markdown` renders it for a pull-request
comment.

Verdicts and exit codes (:data:`EXIT_CODES`), with the two-sided (1 - alpha) interval
[low, high] of the difference and the margin m >= 0 (proportion):

- ``better`` (exit 0): low > 0, the candidate is significantly better;
- ``non-inferior`` (exit 0): low > -m, worse by less than the margin at most;
- ``regression`` (exit 1): high < -m, significantly worse than the baseline by more
  than the margin;
- ``inconclusive`` (exit 3): otherwise.

Each decision is the one-sided test at level alpha / 2 that the interval implies.
Every interval is cut to [-1, 1], what a difference of two scores in [0, 1] can be.

The reading (``se_kind``):

- ``paired``: Miller's paired SE with a normal quantile, on questions without categories (or
  in one);
- ``sign-flip``: with two or more categories while CR2's Satterthwaite degrees of freedom are
  below 30 (:data:`evalbars.stats.cluster_robust.SIGN_FLIP_BELOW_DF`; 30 or fewer categories of
  equal size), the category sign-flip randomization test and its inverted interval
  (:func:`evalbars.stats.cluster_robust.sign_flip_mean`). It is exact when each category's
  effect is symmetric about the null, whatever its distribution; with fewer than 6 categories
  it cannot reject at alpha 0.05 (its smallest one-sided p is :math:`2^{-G}`), so with 2 to 5
  categories the gate is inconclusive and says why, beside the paired reading of the same
  questions (which holds for these categories' questions, not for categories like them);
- ``clustered``: from 30 degrees of freedom, the category-clustered CR2 SE with Satterthwaite t
  (:func:`evalbars.stats.cluster_robust.cr2_mean`);
- ``exact`` or ``none``: a zero paired SE (below).

Which of these applies depends on what the verdict is about. By default
(``categories="sampled"``) the categories are read as a sample of the categories a model will
meet, and the verdict is about categories like them: hence the clustered readings. With
``categories="fixed"`` (``evalbars compare --categories fixed``) the categories are the
benchmark's own, fixed strata, and the verdict is about questions like these in these
categories: the questions are then the sampling unit and the paired reading decides, whatever
the number of categories, and the summary's note says so. That is the reading of a claim about
this benchmark (a release gate on a fixed suite of tasks), not about tasks like them.

A standard error of 0, or 0 up to round-off (:func:`evalbars.stats.cluster_robust.degenerate_se`),
supports no verdict: a zero-width interval would claim any precision whatever the flips behind
it. When the categories' mean differences are all equal the clustered spread is 0; the gate
then decides from the paired reading of the same questions, where the flips' own spread
shows, and says so (with 2 to 5 categories it stays inconclusive: no clustered reading can
reject there). A zero paired SE (one shared question, models that agree on every question, or
the same difference on every question) gives exact statements instead (:func:`_zero_se`): with
no flip, the Clopper-Pearson bound on the share of questions that could flip; with every
question flipped the same way, the exact McNemar test (0/1 scores only). One or two shared
questions are inconclusive at any margin under 97.5 points.

Flips and McNemar's counts are defined when each model has one 0/1 score per question. With
repeated samples (epochs) or partial credit the gate compares per-question means: it lists the
questions whose means differ, with their sample counts, and reports no flips, no exact McNemar
and no Bayesian 2x2 reading; the paired and clustered intervals of the mean differences stay
valid with any number of samples per model.

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language
   model evaluations. arXiv:2411.00640 (paired SE, Eq. 7; clustered SE, Eq. 4).
.. [2] McNemar, Q. (1947). Note on the sampling error of the difference between
   correlated proportions or percentages. Psychometrika 12, 153-157.
.. [3] Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform,
   nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49(2).
.. [4] Canay, I. A., Romano, J. P. and Shaikh, A. M. (2017). Randomization tests under an
   approximate symmetry assumption. Econometrica 85(3), 1013-1030.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, POWER
from evalbars.readings.gate_text import compare_csv_table, compare_json, compare_markdown
from evalbars.readings.judge_corrected import too_few_labels_note
from evalbars.stats.cluster_robust import (
    SIGN_FLIP_BELOW_DF,
    clustering_applicable,
    cr2_mean,
    degenerate_se,
    sign_flip_can_reject,
    sign_flip_clusters_needed,
    sign_flip_mean,
)
from evalbars.stats.effect_sizes import cohens_h, discordant_odds_ratio
from evalbars.stats.intervals import z_for_level
from evalbars.stats.pairwise import (
    exact_mcnemar_p,
    exact_readings_not_applicable,
    pair_statistics,
    zero_se_one_sided_p,
)
from evalbars.stats.planning.sample_size import questions_for_effect
from evalbars.stats.ppi import MIN_LABELS, labels_needed, ppi_pair_means
from evalbars.stats.repeats.run_variance import gap_sign_by_run, run_aware_difference
from evalbars.stats.sequential import empirical_bernstein_cs

__all__ = [
    "CATEGORY_READINGS",
    "EXIT_CODES",
    "Comparison",
    "compare_models",
    "verdict",
    "compare_markdown",
    "compare_json",
    "compare_csv_table",
]

#: How the categories are read: a sample of categories like them, or the benchmark's fixed strata.
CATEGORY_READINGS = ("sampled", "fixed")
#: Exit status of ``evalbars compare`` for each verdict (2 is bad input or usage).
EXIT_CODES = {"better": 0, "non-inferior": 0, "regression": 1, "inconclusive": 3}
#: What a difference of two scores in [0, 1] can be: every interval is cut to it.
FEASIBLE = (-1.0, 1.0)


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_models` found.

    Attributes
    ----------
    summary : dict
        One record: ``baseline, candidate, questions, left_out, accuracy_baseline,
        accuracy_candidate, diff, se, se_kind`` (the reading: ``paired``, ``sign-flip``,
        ``clustered``, or with a zero paired SE ``exact`` or ``none``: see the module),
        ``clusters`` (categories), ``note`` (why the reading is the one it is, or ""), ``low,
        high, level, df, margin, better_by, p_noninferiority, p_superiority, p_regression``,
        ``paired_low, paired_high, paired_verdict`` (the questions read as independent),
        ``higher, lower`` (questions on which the candidate's mean score is higher, lower),
        ``flips_apply`` (one 0/1 score per model and question) and ``flips_note`` (why not),
        ``sign_patterns`` (the sign-flip test's patterns, or None), ``fail_to_pass, pass_to_fail,
        p_mcnemar, prob_candidate_better, odds_ratio, odds_ratio_low, odds_ratio_high`` (None
        where flips do not apply), ``cohens_h, verdict, power, questions_to_decide,
        exit_code``; with the sequential mode also ``cs_low, cs_high, cs_decided_at`` (the
        first question count at which the sequence reached its verdict, or None) and the
        verdict is the sequence's. On judge scores with human labels also ``labels,
        judge_corrected_diff, judge_corrected_se, judge_corrected_low, judge_corrected_high,
        human_only_diff, human_only_se, lambda_hat, rho, effective_labels,
        judge_corrected_verdict, labels_to_decide, judge_verdict``, and the verdict is the
        judge-corrected one (PPI++).
    flips : DataFrame
        With one 0/1 score per question: ``question_id, category, baseline, candidate, flip``
        for every question on which the two scored differently (``flip`` is ``pass->fail``
        where the candidate scored lower, ``fail->pass`` where higher). With repeated samples
        or partial credit: ``question_id, category, baseline, candidate, baseline_samples,
        candidate_samples, change`` (``lower`` or ``higher``: the candidate's mean score) for
        every question whose means differ.
    by_category : DataFrame or None
        Per category: ``category, questions, accuracy_baseline, accuracy_candidate,
        diff, se, low, high`` (paired SE), then ``fail_to_pass, pass_to_fail, p_mcnemar``, or
        ``higher, lower`` where flips do not apply.
    """

    summary: dict
    flips: pd.DataFrame
    by_category: pd.DataFrame | None


def verdict(low, high, margin: float, better_by: float = 0.0) -> str:
    """The verdict of an interval [low, high] of candidate minus baseline at the
    non-inferiority ``margin`` (and the superiority margin ``better_by``)."""
    if low > better_by:
        return "better"
    if low > -margin:
        return "non-inferior"
    if high < -margin:
        return "regression"
    return "inconclusive"


def _feasible(low, high):
    """``low, high`` cut to :data:`FEASIBLE` (NaN stays NaN)."""
    floor, ceiling = FEASIBLE
    return float(np.clip(low, floor, ceiling)), float(np.clip(high, floor, ceiling))


def _zero_se(diff: float, n: int, margin: float, alpha: float, binary: bool = True):
    """``low, high, p_noninferiority, p_regression, verdict, se_kind`` when the SE is 0.

    The SE is 0 when every shared question has the same difference c; a Wald interval
    would have zero width whatever n. Exact statements instead:

    - c = 0 (no question flipped): the difference lies within the discordance rate,
      :math:`|\\Delta| \\le p_{10} + p_{01}`, and zero discordant pairs of n bound that rate
      by :math:`U = 1 - (\\alpha/2)^{1/n}` (the one-sided Clopper-Pearson bound; Clopper and
      Pearson 1934, "The use of confidence or fiducial limits illustrated in the case of the
      binomial"), so the interval is [-U, U] (``se_kind = exact``) and non-inferiority at m has
      the exact p :math:`(1 - m)^n`, the chance of no flip when a fraction m flips. One
      shared question gives U = 0.975: inconclusive at any margin under 97.5 points. This
      holds for any differences in [-1, 1] (means of epochs, partial credit):
      :math:`|\\Delta| \\le P(d \\ne 0)`.
    - c != 0 (every question flipped the same way): the exact test of the discordant
      questions, as every table decides such a pair
      (:func:`evalbars.stats.pairwise.zero_se_one_sided_p`): one-sided p = 2^{-n} for the
      sign of the difference (better, or a regression at margin 0), :math:`((1-m)/2)^n` for
      non-inferiority at margin m, :math:`((1+m)/2)^n` for a regression by more than m;
      there is no interval (``low = high = nan``, ``se_kind = none``). Two questions give
      p = 0.25: inconclusive. The sign bound needs 0/1 scores (``binary``): a mean of
      epochs can be above 0 on every question while the mean difference is 0, so without
      them the statement is p = 1 both ways (inconclusive).
    """
    if diff == 0:
        bound = 1.0 - (alpha / 2) ** (1.0 / n)
        p_noninferiority = float(zero_se_one_sided_p(0.0, n, -margin))
        return -bound, bound, p_noninferiority, 1.0, verdict(-bound, bound, margin), "exact"
    if not binary:
        return np.nan, np.nan, 1.0, 1.0, "inconclusive", "none"
    p_better = float(zero_se_one_sided_p(diff, n))
    p_noninferiority = float(zero_se_one_sided_p(diff, n, -margin))
    p_regression = float(zero_se_one_sided_p(-diff, n, margin))
    if p_better < alpha / 2:
        decision = "better"
    elif p_noninferiority < alpha / 2:
        decision = "non-inferior"
    elif p_regression < alpha / 2:
        decision = "regression"
    else:
        decision = "inconclusive"
    return np.nan, np.nan, p_noninferiority, p_regression, decision, "none"


def _posterior_better(cand, base, up: int, down: int):
    """The Bayesian reading: P(candidate better) under a uniform Dirichlet prior on the 2x2
    table (:func:`evalbars.stats.bayes.dirichlet_paired_posterior`; exact, from the flips
    alone)."""
    return float(special.betaincc(up + 1.0, down + 1.0, 0.5))


def _tail(df: float, statistic: float) -> float:
    """:math:`P(T \\le t)` for the gate's reference distribution: t(df), or the normal."""
    return float(special.stdtr(df, statistic) if np.isfinite(df) else special.ndtr(statistic))


def _paired_reading(d, stats: dict, margin: float, better_by: float, alpha: float, binary: bool):
    """The questions read as independent: Miller's paired SE and z, or, where that SE is 0 up
    to round-off, the exact statements of :func:`_zero_se`."""
    n, diff, se = len(d), stats["diff"], stats["se_paired"]
    if degenerate_se(se, d):
        low, high, p_noninferiority, p_regression, decision, kind = _zero_se(
            diff, n, margin, alpha, binary
        )
        p_superiority = float(zero_se_one_sided_p(diff, n, better_by)) if binary else 1.0
        if decision == "better" and p_superiority >= alpha / 2:
            decision = "non-inferior"  # better, but not by the superiority margin
        return {
            "se": 0.0,
            "df": np.inf,
            "se_kind": kind,
            "low": low,
            "high": high,
            "p_noninferiority": p_noninferiority,
            "p_superiority": p_superiority,
            "p_regression": p_regression,
            "verdict": decision,
        }
    return _t_reading(diff, se, np.inf, "paired", margin, better_by, alpha)


def _t_reading(diff, se, df, kind, margin, better_by, alpha) -> dict:
    """An interval :math:`\\hat\\Delta \\pm q\\,SE` (q the normal or t quantile) and its tests."""
    q = float(special.stdtrit(df, 1 - alpha / 2)) if np.isfinite(df) else z_for_level(1 - alpha)
    low, high = _feasible(diff - q * se, diff + q * se)
    return {
        "se": float(se),
        "df": float(df),
        "se_kind": kind,
        "low": low,
        "high": high,
        "p_noninferiority": _tail(df, -(diff + margin) / se),
        "p_superiority": _tail(df, -(diff - better_by) / se),
        "p_regression": _tail(df, (diff + margin) / se),
        "verdict": verdict(low, high, margin, better_by),
    }


def _clustered_reading(d, categories, paired: dict, margin, better_by, alpha) -> dict:
    """The category-clustered reading: CR2 with Satterthwaite t from
    :data:`~evalbars.stats.cluster_robust.SIGN_FLIP_BELOW_DF` degrees of freedom, the sign-flip
    test below; the paired reading where the categories' spread is 0 up to round-off and a
    clustered reading could decide."""
    robust = cr2_mean(d, categories)
    clusters = int(robust.clusters)
    base = {"clusters": clusters, "note": ""}
    if robust.df < SIGN_FLIP_BELOW_DF:
        can_reject = sign_flip_can_reject(clusters, alpha)
        if can_reject and degenerate_se(robust.se, d):
            return paired | base | {"note": _DEGENERATE}
        test = sign_flip_mean(d, categories, nulls=[-margin, better_by], level=1 - alpha)
        low, high = _feasible(test.low, test.high)
        note = "" if can_reject else _cannot_reject(clusters, alpha)
        return base | {
            "se": float(robust.se),
            "df": np.nan,
            "se_kind": "sign-flip",
            "low": low,
            "high": high,
            "p_noninferiority": float(test.p_greater[0]),
            "p_superiority": float(test.p_greater[1]),
            "p_regression": float(test.p_less[0]),
            "verdict": verdict(low, high, margin, better_by),
            "patterns": test.patterns,
            "note": note,
        }
    if degenerate_se(robust.se, d):
        return paired | base | {"note": _DEGENERATE}
    reading = _t_reading(
        robust.estimate, robust.se, robust.df, "clustered", margin, better_by, alpha
    )
    return reading | base


_DEGENERATE = (
    "the categories' mean differences are all equal (up to round-off): a clustered spread of 0 "
    "is no evidence of precision, so the paired reading decides"
)


def _cannot_reject(clusters: int, alpha: float) -> str:
    return (
        f"with {clusters} categories no category-clustered test can reject at the "
        f"{100 * alpha:g}% level: a sign-flip test's smallest one-sided p is 1/{2**clusters} "
        f"(it needs {sign_flip_clusters_needed(alpha)} categories)"
    )


def _questions_to_decide(summary: dict, stats: dict, power: float):
    """Shared questions an inconclusive comparison would need for the nearer boundary (the
    margin, or the superiority margin) to be decided at ``power`` if the true difference were
    the observed one: the planner's paired sample size
    (:func:`evalbars.stats.planning.sample_size.questions_for_effect`) at the observed variance of a
    difference, times the design effect of the clustered SE where a clustered reading was used.
    None where the observed difference sits on a boundary, or where the categories are too few
    for any clustered reading to decide (no sample size decides it)."""
    n, diff = summary["questions"], summary["diff"]
    if summary["se_kind"] == "sign-flip" and not sign_flip_can_reject(
        summary["clusters"], 1 - summary["level"]
    ):
        return None
    variance = stats["se_paired"] ** 2 * n
    if variance <= 0:
        variance = (stats["n10"] + stats["n01"]) / n or 1.0 / n  # no spread seen: a floor
    design_effect = 1.0
    if summary["se_kind"] in ("clustered", "sign-flip") and stats["se_paired"] > 0:
        design_effect = max(1.0, (summary["se"] / stats["se_paired"]) ** 2)
    distance = min(abs(diff + summary["margin"]), abs(diff - summary["better_by"]) or np.inf)
    if not np.isfinite(distance) or distance == 0:
        return None
    alpha = 1 - summary["level"]
    need = questions_for_effect(distance, variance * design_effect, alpha=alpha, power=power)
    return int(np.ceil(np.round(float(need), 6)))


def _judge_corrected(pair: WideScores, alpha: float, margin: float, better_by: float, power):
    """The judge-corrected reading of candidate minus baseline (PPI++ of the differences,
    :func:`evalbars.stats.ppi.ppi_pair_means`), its verdict, and, when that is inconclusive,
    the human labels that would decide it (:func:`evalbars.stats.ppi.labels_needed` at the
    observed judge-human correlation); ``{}`` without labels.

    The interval is the small-sample one (:meth:`evalbars.stats.ppi.PPIMeans.intervals`, two
    pseudo-labels), cut to [-1, 1]. With fewer than :data:`evalbars.stats.ppi.MIN_LABELS`
    labels it decides nothing: ``judge_corrected_verdict`` is None and
    ``judge_corrected_note`` says why, and the comparison keeps the judge's own verdict."""
    if not pair.has_labels:
        return {}
    reading = ppi_pair_means(pair.scores, pair.human, ([0], [1]), models=pair.models)
    estimate, se = float(reading.estimate[0]), float(reading.se[0])
    centre, centre_se = (float(v[0]) for v in reading.interval_estimate_and_se("ppi++"))
    low, high = (float(v[0]) for v in reading.intervals(1 - alpha)["ppi++"])
    low, high = float(np.clip(low, -1.0, 1.0)), float(np.clip(high, -1.0, 1.0))
    decision = verdict(low, high, margin, better_by) if np.isfinite(centre_se) else "inconclusive"
    if centre_se == 0:  # the same difference on every labelled question: the exact statements
        low, high, _, _, decision, _ = _zero_se(centre, int(reading.n_labelled[0]), margin, alpha)
    note = too_few_labels_note(int(reading.n_labelled[0]))
    fields = {
        "labels": int(reading.n_labelled[0]),
        "judge_corrected_diff": estimate,
        "judge_corrected_se": se,
        "judge_corrected_low": low,
        "judge_corrected_high": high,
        "human_only_diff": float(reading.human_only_estimate[0]),
        "human_only_se": float(reading.human_only_se[0]),
        "lambda_hat": float(reading.lambda_hat[0]),
        "rho": float(reading.rho[0]),
        "effective_labels": float(reading.n_effective[0]),
        "judge_corrected_verdict": None if note else decision,
        "judge_corrected_note": note,
        "labels_to_decide": MIN_LABELS if note else None,
    }
    distance = min(abs(estimate + margin), abs(estimate - better_by) or np.inf)
    if (note or decision == "inconclusive") and np.isfinite(distance) and distance > 0:
        variance = float(reading.human_only_se[0]) ** 2 * fields["labels"]
        plan = labels_needed(
            variance,
            np.nan_to_num(reading.rho[0]),
            gap=distance,
            alpha=alpha,
            power=power,
            questions=len(pair.scores),
        )
        need = float(plan.labels)
        if np.isfinite(need):
            fields["labels_to_decide"] = max(int(np.ceil(np.round(need, 6))), MIN_LABELS)
        elif not note:
            fields["labels_to_decide"] = None
    return fields


def _by_category(d, base, cand, categories, z, flips_apply: bool):
    """Per-category paired differences by bincount over category codes (intervals cut to
    [-1, 1]; none where a category's SE is 0 up to round-off)."""
    names, codes = np.unique(categories, return_inverse=True)
    n = np.bincount(codes, minlength=len(names)).astype(float)
    diff = np.bincount(codes, weights=d, minlength=len(names)) / n
    square = np.bincount(codes, weights=d * d, minlength=len(names)) / n
    se = np.sqrt(np.maximum(square - diff**2, 0.0) / n)
    membership = codes[None, :] == np.arange(len(names))[:, None]
    shown = ~degenerate_se(se, d[None, :], membership)
    floor, ceiling = FEASIBLE
    up = np.bincount(codes, weights=(d > 0), minlength=len(names)).astype(int)
    down = np.bincount(codes, weights=(d < 0), minlength=len(names)).astype(int)
    table = pd.DataFrame(
        {
            "category": names,
            "questions": n.astype(int),
            "accuracy_baseline": np.bincount(codes, weights=base, minlength=len(names)) / n,
            "accuracy_candidate": np.bincount(codes, weights=cand, minlength=len(names)) / n,
            "diff": diff,
            "se": se,
            "low": np.where(shown, np.clip(diff - z * se, floor, ceiling), np.nan),
            "high": np.where(shown, np.clip(diff + z * se, floor, ceiling), np.nan),
        }
    )
    if flips_apply:
        return table.assign(fail_to_pass=up, pass_to_fail=down, p_mcnemar=exact_mcnemar_p(up, down))
    return table.assign(higher=up, lower=down)


def _changes(pair: WideScores, d, base, cand, flips_apply: bool) -> pd.DataFrame:
    """The questions on which the two scored differently: flips, or differing means."""
    moved = d != 0
    columns = {
        "question_id": pair.question_ids[moved],
        "category": pair.categories[moved],
        "baseline": base[moved],
        "candidate": cand[moved],
    }
    if flips_apply:
        columns["flip"] = np.where(d[moved] < 0, "pass->fail", "fail->pass")
    else:
        samples = pair.sample_counts[moved]
        columns["baseline_samples"] = samples[:, 1].astype(int)
        columns["candidate_samples"] = samples[:, 0].astype(int)
        columns["change"] = np.where(d[moved] < 0, "lower", "higher")
    return pd.DataFrame(columns)


def _runs_reading(samples, baseline: str, candidate: str, summary: dict, alpha: float) -> dict:
    """The gap with runs as a random effect, where both models were read in two or more runs:
    the candidate minus the baseline over every run and sample, its interval with each model's
    run-to-run variance (:func:`evalbars.stats.repeats.run_variance.run_aware_difference`),
    the verdict that interval gives at the margins (``runs_verdict``), whether it is the
    gate's (``survives_rerun``), and the gap's sign in every pair of runs."""
    if samples is None or "run" not in samples.columns:
        return {}
    pair = samples[samples["model"].isin([baseline, candidate])]
    runs = pair.groupby("model")["run"].nunique()
    if runs.get(baseline, 0) < 2 or runs.get(candidate, 0) < 2:
        return {}
    clusters = "category" if clustering_applicable(pair["category"]).applicable else None
    fit = run_aware_difference(pair, candidate, baseline, clusters=clusters, level=1 - alpha)
    signs = gap_sign_by_run(pair, candidate, baseline)
    low, high = _feasible(fit.ci_low, fit.ci_high)
    found = verdict(low, high, summary["margin"], summary["better_by"])
    return {
        "runs_baseline": int(runs[baseline]),
        "runs_candidate": int(runs[candidate]),
        "runs_diff": fit.difference,
        "runs_se": fit.se_with_runs,
        "runs_df": fit.df,
        "runs_low": low,
        "runs_high": high,
        "runs_verdict": found,
        # a decided verdict survives a rerun when the interval with runs gives it too
        "survives_rerun": None
        if summary["verdict"] == "inconclusive"
        else found == summary["verdict"],
        "holds_in_every_run": signs.holds_in_every_run,
        "run_signs": "".join({1: "+", -1: "-", 0: "0"}[int(s)] for s in signs.table["sign"]),
    }


def compare_models(
    wide: WideScores,
    baseline: str,
    candidate: str,
    *,
    margin: float = 0.0,
    better_by: float = 0.0,
    alpha: float = ALPHA,
    power: float = POWER,
    by_category: bool = False,
    sequential: bool = False,
    arrival=None,
    categories: str = "sampled",
    samples: pd.DataFrame | None = None,
) -> Comparison:
    """Paired comparison of ``candidate`` against ``baseline`` on their shared questions.

    Parameters
    ----------
    wide : WideScores
        Scores of at least the two models (cells averaged over epochs).
    baseline, candidate : str
        Column names in ``wide``.
    margin : float
        Non-inferiority margin as a proportion (0.01 = 1 point), >= 0.
    better_by : float
        Superiority margin (proportion, >= 0): ``better`` means better by more than it.
    alpha : float
        The interval is two-sided at level 1 - alpha.
    power : float
        Power at which an inconclusive comparison says how many questions would decide it.
    by_category, sequential : bool
        Add the per-category table; decide by the confidence sequence.
    arrival : array_like, optional
        Question ids in the order the questions were added (the sequential mode runs
        over them in this order; ids not shared are skipped). Default: the table's
        order (category, then id).
    categories : {"sampled", "fixed"}
        Whether the categories are a sample of categories like them (the clustered readings
        decide) or the benchmark's fixed strata (the paired reading of the questions decides;
        see the module docstring).
    samples : DataFrame, optional
        The two models' sample rows (``model, question_id, category, run, correct``). Where
        both were read in two or more runs the summary gains the reading with runs as a random
        effect (:func:`_runs_reading`): ``runs_*`` keys, ``survives_rerun`` and
        ``holds_in_every_run``. The verdict stays the reading's above.

    Returns
    -------
    Comparison

    Notes
    -----
    With :math:`d_i` = candidate minus baseline on shared question i (n of them; each model's
    samples of a question averaged first), :math:`\\hat\\Delta = \\bar d`. The paired SE is
    Miller's :math:`\\sqrt{\\frac1n\\cdot\\frac1n\\sum(d_i - \\bar d)^2}`
    (:func:`evalbars.stats.pairwise.pair_statistics`), with the normal quantile. It needs no
    equal number of samples: the :math:`d_i` are independent across questions whatever each
    model's samples, so neither model is favoured by having fewer.

    With two or more categories the reading is clustered. While CR2's Satterthwaite df
    :math:`\\nu` (:func:`evalbars.stats.cluster_robust.cr2_mean`) is below 30, the category
    sign-flip test decides: with :math:`U_j` the sum of :math:`d_i - \\Delta_0` over category
    j, :math:`p = \\#\\{\\varepsilon: \\sum_j \\varepsilon_j U_j \\ge \\sum_j U_j\\}/2^G`,
    exact when each :math:`U_j` is symmetric about 0 under the null
    (:func:`evalbars.stats.cluster_robust.sign_flip_mean`; Canay, Romano and Shaikh 2017), and
    the interval inverts it. From 30 df on, :math:`\\hat\\Delta \\pm t_{\\nu, 1-\\alpha/2}
    SE_{CR2}` (R clubSandwich's ``coef_test(vcov = "CR2", test = "Satterthwaite")``). CR2
    with t at every G, the gate's reading before, rejected a true null 10.9-11.8% of the time
    at 3 categories with intra-category correlation 0.3, 9.4-9.6% at 4 and up to 7.3% at 8;
    CR0 with a normal quantile, the reading before that, 25-36% at 3 categories. The gate
    rejects 0% with 3 to 5 categories (it cannot reject), 1.8-2.8% at 6 (at most 3.1% by
    construction) and 3.9-5.8% from 8 to 57 categories, at intra-category correlations from 0
    to 0.3 with equal or unequal category sizes (``python -m tests.benchmark
    --gate-clusters``: 48 settings of 4,000 nulls; :mod:`evalbars.studies.cluster_type1`).

    McNemar's exact test (:func:`evalbars.stats.pairwise.exact_mcnemar_p`) takes the questions
    the candidate scored higher (fail -> pass) and lower (pass -> fail), with one 0/1 score per
    model and question. The sequential mode replaces the interval by the empirical-Bernstein
    confidence sequence of :func:`evalbars.stats.sequential.empirical_bernstein_cs` over the
    questions in the order they were added (``arrival``): valid at every look of a gate that
    reruns as questions are appended, since each look extends the same sequence.

    Examples
    --------
    Twenty questions, 8 fail -> pass and 2 pass -> fail: better on the paired reading; in two
    categories no clustered test can reject, so the gate is inconclusive and says why:

    >>> import numpy as np
    >>> from evalbars.data.scores import WideScores
    >>> scores = np.array([[0, 1]] * 8 + [[1, 0]] * 2 + [[1, 1]] * 10, float)
    >>> wide = WideScores(scores, ["base", "cand"], np.arange(20), np.array(["all"] * 20))
    >>> s = compare_models(wide, "base", "cand").summary
    >>> s["verdict"], s["se_kind"], round(s["low"], 3), round(s["high"], 3)
    ('better', 'paired', 0.019, 0.581)
    >>> two = WideScores(scores, ["base", "cand"], np.arange(20), np.repeat(["x", "y"], 10))
    >>> s = compare_models(two, "base", "cand").summary
    >>> s["verdict"], s["se_kind"], (s["low"], s["high"]), s["paired_verdict"]
    ('inconclusive', 'sign-flip', (-1.0, 1.0), 'better')
    """
    if margin < 0:
        raise ValueError(f"the margin must be >= 0, got {margin!r}")
    pair = wide.columns([candidate, baseline])
    answered = np.isfinite(pair.scores)
    shared = answered.all(axis=1)
    left_out = int((answered.any(axis=1) & ~shared).sum())
    pair = pair.rows(shared)
    cand, base = pair.scores[:, 0], pair.scores[:, 1]
    n = int(shared.sum())
    if n == 0:
        raise ValueError(f"{baseline!r} and {candidate!r} share no question")
    # The one rule of when the 2x2 readings (flips, McNemar, the Bayesian reading) apply.
    flips_note = exact_readings_not_applicable(pair, candidate, baseline) or ""
    flips_apply = not flips_note
    stats = {k: float(v[0]) for k, v in pair_statistics(pair.scores).items()}
    d = cand - base
    diff = stats["diff"]
    paired = _paired_reading(d, stats, margin, better_by, alpha, flips_apply)
    if categories not in CATEGORY_READINGS:
        raise ValueError(f"categories must be one of {CATEGORY_READINGS}, got {categories!r}")
    reading = paired | {"clusters": 1, "note": ""}
    if categories == "fixed":
        reading["note"] = (
            "categories read as fixed: a verdict about these categories' questions, not about "
            "categories like them"
        )
    elif clustering_applicable(pair.categories).applicable:
        reading = _clustered_reading(d, pair.categories, paired, margin, better_by, alpha)
    up, down = int(stats["n10"]), int(stats["n01"])
    ratio = discordant_odds_ratio(up, down, 1 - alpha) if flips_apply else None
    summary = {
        "baseline": baseline,
        "candidate": candidate,
        "questions": n,
        "left_out": left_out,
        "accuracy_baseline": float(base.mean()),
        "accuracy_candidate": float(cand.mean()),
        "diff": diff,
        "se": reading["se"],
        "se_kind": reading["se_kind"],
        "clusters": reading["clusters"],
        "note": reading["note"],
        "level": 1 - alpha,
        "low": reading["low"],
        "high": reading["high"],
        "df": reading["df"],
        "margin": float(margin),
        "better_by": float(better_by),
        "p_noninferiority": reading["p_noninferiority"],
        "p_superiority": reading["p_superiority"],
        "p_regression": reading["p_regression"],
        "paired_low": paired["low"],
        "paired_high": paired["high"],
        "paired_verdict": paired["verdict"],
        "higher": up,
        "lower": down,
        "flips_apply": flips_apply,
        "flips_note": flips_note,
        "fail_to_pass": up if flips_apply else None,
        "pass_to_fail": down if flips_apply else None,
        "p_mcnemar": float(exact_mcnemar_p(up, down)) if flips_apply else None,
        "prob_candidate_better": _posterior_better(cand, base, up, down) if flips_apply else None,
        "odds_ratio": float(ratio.estimate) if flips_apply else None,
        "odds_ratio_low": float(ratio.low) if flips_apply else None,
        "odds_ratio_high": float(ratio.high) if flips_apply else None,
        "cohens_h": float(cohens_h(cand.mean(), base.mean())),
        "verdict": reading["verdict"],
    }
    summary["sign_patterns"] = reading.get("patterns")
    corrected = _judge_corrected(pair, alpha, margin, better_by, power)
    if corrected:
        # On judge scores with human labels the corrected reading decides: the judge's own
        # difference is biased as the judge is. The judge's verdict stays beside it. With too
        # few labels to decide, the judge's own verdict stands, and the note says so.
        summary |= corrected | {"judge_verdict": summary["verdict"]}
        if corrected["judge_corrected_verdict"] is not None:
            summary["verdict"] = corrected["judge_corrected_verdict"]
    if sequential:
        steps = d
        if arrival is not None:
            position = pd.Index(pair.question_ids).get_indexer(pd.unique(np.asarray(arrival)))
            steps = d[position[position >= 0]]
        _, cs_low, cs_high = empirical_bernstein_cs(steps, alpha=alpha)
        decided = (cs_low > -margin) | (cs_high < -margin)
        summary |= {
            "cs_low": float(cs_low[-1]),
            "cs_high": float(cs_high[-1]),
            "cs_decided_at": int(np.argmax(decided)) + 1 if decided.any() else None,
            "verdict": verdict(cs_low[-1], cs_high[-1], margin, better_by),
        }
    summary["power"] = float(power)
    summary["questions_to_decide"] = (
        _questions_to_decide(summary, stats, power)
        if summary["verdict"] == "inconclusive"
        else None
    )
    summary["exit_code"] = EXIT_CODES[summary["verdict"]]
    summary |= _runs_reading(samples, baseline, candidate, summary, alpha)
    flips = _changes(pair, d, base, cand, flips_apply)
    table = (
        _by_category(d, base, cand, pair.categories, z_for_level(1 - alpha), flips_apply)
        if by_category
        else None
    )
    return Comparison(summary, flips, table)
