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

A zero SE (one shared question, models that agree on every question, or the same difference
on every question) is no evidence of precision: the interval [d, d] would have zero width
whatever the number of questions. The gate then decides from exact statements instead
(:func:`_zero_se`): with no flip, the Clopper-Pearson bound on the share of questions that
could flip; with every question flipped the same way, the exact McNemar test. One or two
shared questions are inconclusive at any margin under 97.5 points.

Each decision is the one-sided test at level alpha / 2 that the interval implies:
non-inferiority rejects :math:`H_0: \\Delta \\le -m` when
:math:`p = \\Phi(-(\\hat\\Delta + m)/SE) < \\alpha/2` (``p_noninferiority``), and
regression rejects :math:`H_0: \\Delta \\ge -m` when
:math:`\\Phi((\\hat\\Delta + m)/SE) < \\alpha/2` (``p_regression``).

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language
   model evaluations. arXiv:2411.00640 (paired SE, Eq. 7; clustered SE, Eq. 4).
.. [2] McNemar, Q. (1947). Note on the sampling error of the difference between
   correlated proportions or percentages. Psychometrika 12, 153-157.
.. [3] Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J. (2021). Time-uniform,
   nonparametric, nonasymptotic confidence sequences. Annals of Statistics 49(2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, POWER
from evalbars.readings.judge_corrected import too_few_labels_note
from evalbars.stats.cluster_robust import clustering_applicable, cr2_mean
from evalbars.stats.effect_sizes import cohens_h, discordant_odds_ratio
from evalbars.stats.intervals import z_for_level
from evalbars.stats.pairwise import exact_mcnemar_p, pair_statistics, zero_se_one_sided_p
from evalbars.stats.planning.sample_size import questions_for_effect
from evalbars.stats.ppi import MIN_LABELS, labels_needed, ppi_pair_means
from evalbars.stats.sequential import empirical_bernstein_cs

__all__ = [
    "EXIT_CODES",
    "Comparison",
    "compare_models",
    "verdict",
    "compare_markdown",
    "compare_json",
    "compare_csv_table",
]

#: Exit status of ``evalbars compare`` for each verdict (2 is bad input or usage).
EXIT_CODES = {"better": 0, "non-inferior": 0, "regression": 1, "inconclusive": 3}


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_models` found.

    Attributes
    ----------
    summary : dict
        One record: ``baseline, candidate, questions, left_out, accuracy_baseline,
        accuracy_candidate, diff, se, se_kind (paired, clustered, or with a zero SE exact
        or none: see :func:`_zero_se`), low, high, level,
        margin, p_noninferiority, p_regression, fail_to_pass, pass_to_fail,
        p_mcnemar, verdict, exit_code``; with the sequential mode also ``cs_low,
        cs_high, cs_decided_at`` (the first question count at which the sequence
        reached its verdict, or None) and the verdict is the sequence's. On judge scores
        with human labels also ``labels, judge_corrected_diff, judge_corrected_se,
        judge_corrected_low, judge_corrected_high, human_only_diff, human_only_se,
        lambda_hat, rho, effective_labels, judge_corrected_verdict, labels_to_decide,
        judge_verdict``, and the verdict is the judge-corrected one (PPI++).
    flips : DataFrame
        ``question_id, category, baseline, candidate, flip`` for every question on
        which the two scored differently (``flip`` is ``pass->fail`` where the
        candidate scored lower, ``fail->pass`` where higher).
    by_category : DataFrame or None
        Per category: ``category, questions, accuracy_baseline, accuracy_candidate,
        diff, se, low, high, fail_to_pass, pass_to_fail, p_mcnemar`` (paired SE).
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


def _zero_se(diff: float, n: int, margin: float, alpha: float):
    """``low, high, p_noninferiority, p_regression, verdict, se_kind`` when the SE is 0.

    The SE is 0 when every shared question has the same difference c; a Wald interval
    would have zero width whatever n. Exact statements instead:

    - c = 0 (no question flipped): the difference lies within the discordance rate,
      :math:`|\\Delta| \\le p_{10} + p_{01}`, and zero discordant pairs of n bound that rate
      by :math:`U = 1 - (\\alpha/2)^{1/n}` (the one-sided Clopper-Pearson bound; Clopper and
      Pearson 1934, "The use of confidence or fiducial limits illustrated in the case of the
      binomial"), so the interval is [-U, U] (``se_kind = exact``) and non-inferiority at m has
      the exact p :math:`(1 - m)^n`, the chance of no flip when a fraction m flips. One
      shared question gives U = 0.975: inconclusive at any margin under 97.5 points.
    - c != 0 (every question flipped the same way): the exact test of the discordant
      questions, as every table decides such a pair
      (:func:`evalbars.stats.pairwise.zero_se_one_sided_p`): one-sided p = 2^{-n} for the
      sign of the difference (better, or a regression at margin 0), :math:`((1-m)/2)^n` for
      non-inferiority at margin m, :math:`((1+m)/2)^n` for a regression by more than m;
      there is no interval (``low = high = nan``, ``se_kind = none``). Two questions give
      p = 0.25: inconclusive.
    """
    if diff == 0:
        bound = 1.0 - (alpha / 2) ** (1.0 / n)
        p_noninferiority = float(zero_se_one_sided_p(0.0, n, -margin))
        return -bound, bound, p_noninferiority, 1.0, verdict(-bound, bound, margin), "exact"
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
    alone); None for partial-credit scores, which have no 2x2 table."""
    if not (np.isin(cand, (0.0, 1.0)).all() and np.isin(base, (0.0, 1.0)).all()):
        return None
    return float(special.betaincc(up + 1.0, down + 1.0, 0.5))


def _tail(df: float, statistic: float) -> float:
    """:math:`P(T \\le t)` for the gate's reference distribution: t(df), or the normal."""
    return float(special.stdtr(df, statistic) if np.isfinite(df) else special.ndtr(statistic))


def _questions_to_decide(summary: dict, stats: dict, power: float):
    """Shared questions an inconclusive comparison would need for the nearer boundary (the
    margin, or the superiority margin) to be decided at ``power`` if the true difference were
    the observed one: the planner's paired sample size
    (:func:`evalbars.stats.planning.sample_size.questions_for_effect`) at the observed variance of a
    difference, times the design effect of the clustered SE where that was used. None where
    the observed difference sits on a boundary (no sample size decides it)."""
    n, diff = summary["questions"], summary["diff"]
    variance = stats["se_paired"] ** 2 * n
    if variance <= 0:
        variance = (stats["n10"] + stats["n01"]) / n or 1.0 / n  # no spread seen: a floor
    design_effect = 1.0
    if summary["se_kind"] == "clustered" and stats["se_paired"] > 0:
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


def _by_category(d, base, cand, categories, z):
    """Per-category paired differences by bincount over category codes."""
    names, codes = np.unique(categories, return_inverse=True)
    n = np.bincount(codes, minlength=len(names)).astype(float)
    diff = np.bincount(codes, weights=d, minlength=len(names)) / n
    square = np.bincount(codes, weights=d * d, minlength=len(names)) / n
    se = np.sqrt(np.maximum(square - diff**2, 0.0) / n)
    up = np.bincount(codes, weights=(d > 0), minlength=len(names)).astype(int)
    down = np.bincount(codes, weights=(d < 0), minlength=len(names)).astype(int)
    return pd.DataFrame(
        {
            "category": names,
            "questions": n.astype(int),
            "accuracy_baseline": np.bincount(codes, weights=base, minlength=len(names)) / n,
            "accuracy_candidate": np.bincount(codes, weights=cand, minlength=len(names)) / n,
            "diff": diff,
            "se": se,
            "low": diff - z * se,
            "high": diff + z * se,
            "fail_to_pass": up,
            "pass_to_fail": down,
            "p_mcnemar": exact_mcnemar_p(up, down),
        }
    )


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

    Notes
    -----
    With :math:`d_i` = candidate minus baseline on shared question i (n of them),
    :math:`\\hat\\Delta = \\bar d`. The SE is Miller's paired SE
    :math:`\\sqrt{\\frac1n\\cdot\\frac1n\\sum(d_i - \\bar d)^2}`
    (:func:`evalbars.stats.pairwise.pair_statistics`), with the normal quantile; or, with two
    or more categories, the category-clustered CR2 SE of :math:`\\bar d` (Bell-McCaffrey) with
    Satterthwaite degrees of freedom :math:`\\nu` and the :math:`t_\\nu` quantile
    (:func:`evalbars.stats.cluster_robust.cr2_mean`, R clubSandwich's ``coef_test(vcov =
    "CR2", test = "Satterthwaite")``). CR0 with a normal quantile, the gate's reading before,
    rejected a true null 22-32% of the time with 3 categories; CR2 with Satterthwaite t keeps
    3.5-5.9% at 3 to 57 categories, with or without real clustering and with unequal category
    sizes (``python -m tests.benchmark --gate-clusters``, 4,000 nulls per setting; CR1 with
    t(G - 1) is the same with equal sizes but reaches 6.9% at 3 unequal ones). So the clustered interval
    is used alone, not the larger of it and the paired one: that rule, which patched CR0's
    optimism, makes CR2 conservative (0.2% at 3 categories).
    :math:`\\hat\\Delta \\pm q_{1-\\alpha/2} SE`, q the normal or t quantile. McNemar's exact test
    (:func:`evalbars.stats.pairwise.exact_mcnemar_p`) takes the questions the candidate
    scored higher (fail -> pass) and lower (pass -> fail). The sequential mode
    replaces the interval by the empirical-Bernstein confidence sequence of
    :func:`evalbars.stats.sequential.empirical_bernstein_cs` over the questions in the
    order they were added (``arrival``): valid at every look of a gate that reruns
    as questions are appended, since each look extends the same sequence.
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
    stats = {k: float(v[0]) for k, v in pair_statistics(pair.scores).items()}
    d = cand - base
    diff = stats["diff"]
    se, df, se_kind = stats["se_paired"], np.inf, "paired"
    if clustering_applicable(pair.categories).applicable:
        robust = cr2_mean(d, pair.categories)
        se, df, se_kind = float(robust.se), float(robust.df), "clustered"
    q = float(special.stdtrit(df, 1 - alpha / 2)) if np.isfinite(df) else z_for_level(1 - alpha)
    low, high = diff - q * se, diff + q * se
    p_superiority = float(zero_se_one_sided_p(diff, n, better_by))
    if se > 0:
        p_noninferiority = _tail(df, -(diff + margin) / se)
        p_regression = _tail(df, (diff + margin) / se)
        p_superiority = _tail(df, -(diff - better_by) / se)
        decision = verdict(low, high, margin, better_by)
    else:  # one constant difference on every shared question: no estimate of the SE
        low, high, p_noninferiority, p_regression, decision, se_kind = _zero_se(
            diff, n, margin, alpha
        )
        if decision == "better" and p_superiority >= alpha / 2:
            decision = "non-inferior"  # better, but not by the superiority margin
    up, down = int(stats["n10"]), int(stats["n01"])
    ratio = discordant_odds_ratio(up, down, 1 - alpha)
    summary = {
        "baseline": baseline,
        "candidate": candidate,
        "questions": n,
        "left_out": left_out,
        "accuracy_baseline": float(base.mean()),
        "accuracy_candidate": float(cand.mean()),
        "diff": diff,
        "se": se,
        "se_kind": se_kind,
        "level": 1 - alpha,
        "low": low,
        "high": high,
        "df": df,
        "margin": float(margin),
        "better_by": float(better_by),
        "p_noninferiority": p_noninferiority,
        "p_superiority": p_superiority,
        "p_regression": p_regression,
        "fail_to_pass": up,
        "pass_to_fail": down,
        "p_mcnemar": float(exact_mcnemar_p(up, down)),
        "prob_candidate_better": _posterior_better(cand, base, up, down),
        "odds_ratio": float(ratio.estimate),
        "odds_ratio_low": float(ratio.low),
        "odds_ratio_high": float(ratio.high),
        "cohens_h": float(cohens_h(cand.mean(), base.mean())),
        "verdict": decision,
    }
    corrected = _judge_corrected(pair, alpha, margin, better_by, power)
    if corrected:
        # On judge scores with human labels the corrected reading decides: the judge's own
        # difference is biased as the judge is. The judge's verdict stays beside it. With too
        # few labels to decide, the judge's own verdict stands, and the note says so.
        summary |= corrected | {"judge_verdict": decision}
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
    moved = d != 0
    flips = pd.DataFrame(
        {
            "question_id": pair.question_ids[moved],
            "category": pair.categories[moved],
            "baseline": base[moved],
            "candidate": cand[moved],
            "flip": np.where(d[moved] < 0, "pass->fail", "fail->pass"),
        }
    )
    table = (
        _by_category(d, base, cand, pair.categories, z_for_level(1 - alpha))
        if by_category
        else None
    )
    return Comparison(summary, flips, table)


def _ratio(value: float) -> str:
    return "inf" if value == np.inf else f"{value:.2f}"


def _points(value: float) -> str:
    return f"{100 * value:+.1f}"


def _interval(low: float, high: float) -> str:
    if not np.isfinite(low):
        return "none"
    return f"{100 * low:+.1f} to {100 * high:+.1f}"


def _kind(se_kind: str, df: float = np.inf) -> str:
    if se_kind == "clustered":
        return f"category-clustered CR2 SE, t with {df:.1f} df"
    return {"exact": "exact: no flips", "none": "SE 0"}.get(se_kind, f"{se_kind} SE")


def _corrected_row(s: dict) -> str:
    """The judge-corrected row of :func:`compare_markdown`'s table, with why it decides
    nothing where it does not."""
    shown = (
        f"{_points(s['judge_corrected_diff'])} | "
        f"{_interval(s['judge_corrected_low'], s['judge_corrected_high'])} (lambda-hat "
        f"{s['lambda_hat']:.2f}"
    )
    if not np.isfinite(s["judge_corrected_diff"]):
        shown = f"none | none ({s['judge_corrected_note']}"
    elif s.get("judge_corrected_note"):
        shown += f"; {s['judge_corrected_note']}"
    return f"| judge-corrected (PPI++, {s['labels']:,} human labels) | | | {shown}) |"


def compare_markdown(result: Comparison, flip_ids: int = 10) -> str:
    """A pull-request comment: headline, one table, flips (the first ``flip_ids`` ids of each)."""
    s = result.summary
    level = f"{100 * s['level']:g}%"
    words = {
        "better": "the candidate is significantly better"
        + (f" by more than {100 * s['better_by']:g} points" if s["better_by"] else ""),
        "non-inferior": f"no regression beyond the {100 * s['margin']:g}-point margin",
        "regression": f"the candidate is worse by more than the {100 * s['margin']:g}-point margin",
        "inconclusive": "the data cannot tell a regression from none",
    }
    if s["se_kind"] in ("exact", "none") and s["verdict"] == "inconclusive":
        words["inconclusive"] = (
            "the SE is 0 (the same difference on every shared question), and that few "
            "questions cannot bound the difference"
        )
    left = f", {s['left_out']:,} left out (not answered by both)" if s["left_out"] else ""
    lines = [
        f"**{s['verdict']}**: {words[s['verdict']]} "
        f"(`{s['candidate']}` vs baseline `{s['baseline']}`, {s['questions']:,} shared "
        f"questions{left}).",
        "",
        "| | baseline | candidate | difference (points) | " + level + " interval |",
        "|---|---:|---:|---:|---|",
        f"| accuracy | {100 * s['accuracy_baseline']:.1f}% | {100 * s['accuracy_candidate']:.1f}% "
        f"| {_points(s['diff'])} | {_interval(s['low'], s['high'])} ({_kind(s['se_kind'], s['df'])}) |",
    ]
    if "judge_corrected_diff" in s:
        lines.append(_corrected_row(s))
    if "cs_low" in s:
        decided = (
            f"decided after {s['cs_decided_at']:,} questions" if s["cs_decided_at"] else "undecided"
        )
        lines.append(
            f"| anytime-valid | | | | {_interval(s['cs_low'], s['cs_high'])} ({decided}) |"
        )
    lines += [
        "",
        f"Flips: {s['pass_to_fail']:,} pass→fail, {s['fail_to_pass']:,} fail→pass "
        f"(exact McNemar p = {s['p_mcnemar']:.3g}). Non-inferiority at "
        f"{100 * s['margin']:g} points: p = {s['p_noninferiority']:.3g} (one-sided, "
        f"level {(1 - s['level']) / 2:g}).",
    ]
    if s["prob_candidate_better"] is not None:
        lines.append(
            f"Bayesian reading (uniform Dirichlet prior on the 2x2 table): P(candidate better) = "
            f"{s['prob_candidate_better']:.3f}. Discordant odds ratio {s['odds_ratio']:.2f} "
            f"({_ratio(s['odds_ratio_low'])} to {_ratio(s['odds_ratio_high'])}), Cohen's h "
            f"{s['cohens_h']:+.2f}."
        )
    if s.get("judge_corrected_note"):
        lines.append(
            f"The scores are an LLM judge's, and the judge-corrected reading has "
            f"{s['judge_corrected_note']}: the verdict is the judge's own scores', biased as "
            f"the judge is. At least {s['labels_to_decide']:,} human labels would let the "
            "corrected reading decide."
        )
    elif "judge_corrected_diff" in s:
        lines.append(
            f"The scores are an LLM judge's: the verdict is the judge-corrected reading's "
            f"(the judge's own scores say {s['judge_verdict']}); judge-human correlation of the "
            f"differences {s['rho']:.2f}, worth {s['effective_labels']:.0f} labels alone."
            + (
                f" About {s['labels_to_decide']:,} human labels would decide it with "
                f"{s.get('power', 0.8):.0%} power."
                if s.get("labels_to_decide")
                else ""
            )
        )
    if s["questions_to_decide"]:
        lines.append(
            f"About {s['questions_to_decide']:,} shared questions would decide it with "
            f"{s.get('power', 0.8):.0%} power if the true difference were the observed one "
            f"({s['questions_to_decide'] - s['questions']:+,} on these)."
        )
    for kind in ("pass->fail", "fail->pass"):
        ids = result.flips.loc[result.flips["flip"] == kind, "question_id"].astype(str)
        if len(ids):
            more = f" and {len(ids) - flip_ids:,} more" if len(ids) > flip_ids else ""
            lines.append(f"- {kind}: {', '.join(ids.iloc[:flip_ids])}{more}")
    if result.by_category is not None:
        lines += ["", "| category | questions | difference | interval | pass→fail | fail→pass |"]
        lines.append("|---|---:|---:|---|---:|---:|")
        for row in result.by_category.itertuples():
            lines.append(
                f"| {row.category} | {row.questions:,} | {_points(row.diff)} | "
                f"{_interval(row.low, row.high)} | {row.pass_to_fail:,} | {row.fail_to_pass:,} |"
            )
    return "\n".join(lines) + "\n"


def compare_json(result: Comparison) -> str:
    """The comparison as JSON: the summary, the flipped question ids and the category table."""
    document = dict(result.summary)
    for kind in ("pass->fail", "fail->pass"):
        ids = result.flips.loc[result.flips["flip"] == kind, "question_id"]
        document[f"{kind.replace('->', '_to_').replace('-', '_')}_ids"] = [
            v.item() if hasattr(v, "item") else v for v in ids
        ]
    if result.by_category is not None:
        document["by_category"] = json.loads(result.by_category.to_json(orient="records"))
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def compare_csv_table(result: Comparison) -> pd.DataFrame:
    """One row ``scope = all`` with the summary, and one per category with ``--by-category``."""
    table = pd.DataFrame([{"scope": "all", **result.summary}])
    if result.by_category is not None:
        rows = result.by_category.rename(columns={"category": "scope"})
        table = pd.concat([table, rows], ignore_index=True)
    return table
