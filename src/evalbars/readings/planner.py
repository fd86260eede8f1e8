"""The planner's answers: questions needed for a gap, or the gap a number of questions can find,
for ``evalbars plan`` and the workflow's ``plan.csv``.

The formulas are :mod:`evalbars.stats.planning.sample_size` (closed forms) and
:mod:`evalbars.stats.planning.holm` (Holm's requirement by simulation).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import wide_scores
from evalbars.defaults import ALPHA, POWER
from evalbars.errors import InputError
from evalbars.stats.pairwise import disagreement_rates
from evalbars.stats.planning.holm import (
    DEFAULT_MEAN_ACCURACY,
    MAX_SIMULATED_MODELS,
    holm_questions,
    holm_simulation_problem,
    simulate_holm_power,
)
from evalbars.stats.planning.sample_size import (
    all_pairs,
    detectable_gap,
    per_test_alpha,
    questions_needed,
    simulate_pair_power,
)
from evalbars.stats.ppi import labels_needed
from evalbars.units import points_hint

__all__ = ["plan", "plan_table", "data_setting", "plan_caption", "check_plan_request", "plan_text"]


def plan(
    models: int,
    gap: float | None,
    disagreement: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    procedure: str = "holm",
    tests: int | None = None,
    questions: int | None = None,
    test: str = "wald",
    judge_correlation: float | None = None,
    judged_questions: float = np.inf,
) -> dict:
    """One planning answer: questions needed for ``gap`` (a proportion), or the gap that
    ``questions`` detect.

    ``tests`` is the size of the family (default: all K(K-1)/2 pairs). Returns a
    dict with the per-test levels and, for the lowest and highest per-test level
    (equal except under Holm), ``questions_low``/``questions_high`` (questions
    needed, rounded up) or ``gap_low``/``gap_high`` (detectable gap, proportion; None
    where no gap up to the disagreement rate is found).

    With ``judge_correlation`` (the correlation of a judge's and people's scores of a pair's
    per-question differences) and a gap, the answer for a judge-scored eval:
    ``labels_low``/``labels_high``, the human labels a PPI++ reading needs, by the
    effective-sample-size rule :math:`n = n_0 (1 - \\rho^2)/(1 - n_0\\rho^2/N)`
    (:func:`evalbars.stats.ppi.labels_needed`; :math:`n_0` the questions a human-scored eval
    would need, N ``judged_questions``, every question the judge scores; default N >> n).
    """
    tests = all_pairs(models) if tests is None else int(tests)
    lowest, highest = per_test_alpha(alpha, procedure, tests)
    result = {
        "models": int(models),
        "procedure": procedure,
        "tests": tests,
        "alpha": float(alpha),
        "power": float(power),
        "disagreement": float(disagreement),
        "alpha_per_test_low": lowest,
        "alpha_per_test_high": highest,
        "test": test,
    }
    if questions is None:
        # The strictest level needs the most questions.
        need = [questions_needed(gap, disagreement, a, power, test) for a in (highest, lowest)]
        result |= {
            "gap": float(gap),
            "questions_low": _ceil(need[0]),
            "questions_high": _ceil(need[1]),
        }
        if judge_correlation is not None:
            labels = [
                labels_needed(
                    disagreement - gap**2,
                    judge_correlation,
                    gap=gap,
                    alpha=a,
                    power=power,
                    questions=judged_questions,
                ).labels
                for a in (highest, lowest)
            ]
            result |= {
                "judge_correlation": float(judge_correlation),
                "judged_questions": None
                if not np.isfinite(judged_questions)
                else int(judged_questions),
                "labels_low": _ceil(labels[0]),
                "labels_high": _ceil(labels[1]),
            }
    else:
        found = [detectable_gap(questions, disagreement, a, power, test) for a in (highest, lowest)]
        # None (JSON null) where these questions find no possible gap (see detectable_gap)
        result |= {
            "questions": int(questions),
            "gap_low": None if np.isnan(found[0]) else float(found[0]),
            "gap_high": None if np.isnan(found[1]) else float(found[1]),
        }
    return result


def _ceil(value) -> float:
    value = float(value)
    return value if not np.isfinite(value) else float(np.ceil(np.round(value, 6)))


def plan_table(
    models: int,
    gaps,
    disagreement: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    claims: int = 0,
    questions: int | None = None,
    simulate: bool = True,
    replications: int = 4000,
    mean_accuracy: float = DEFAULT_MEAN_ACCURACY,
    seed: int = 0,
) -> pd.DataFrame:
    """Questions needed per gap and procedure, with the simulation check; the workflow's plan table.

    Rows: for each gap (proportion), the procedures ``none``, ``bonferroni`` and
    ``holm`` over all K(K-1)/2 pairs and, when ``claims`` > 0, ``holm`` over the
    claims. Columns: ``gap_points, procedure, family, tests, alpha_per_test_low,
    alpha_per_test_high, disagreement, questions_closed_form`` (at the strictest
    per-test level: exact for none and Bonferroni, an upper bound for Holm),
    ``questions_lower_bound`` (Holm's most lenient level), ``questions_simulated``
    (Holm over all pairs: :func:`holm_questions`), ``power_simulated``/``power_simulated_se``
    (the simulated power at ``questions_closed_form``: :func:`simulate_pair_power`
    at the per-test level for none/Bonferroni, :func:`simulate_holm_power` for Holm
    over all pairs), and, if ``questions`` is given, ``detectable_gap_points`` at that
    many questions (strictest level), the ``mean_accuracy`` of the simulated
    models and a ``note`` (empty, or why Holm's row was not simulated). The Holm
    simulations run up to :data:`MAX_SIMULATED_MODELS` models and where the
    simulated process reaches the disagreement rate at ``mean_accuracy``
    (:func:`holm_simulation_problem`: not beyond that of independent models);
    otherwise their columns are empty, the note says why and the closed forms
    (which bracket Holm) stand alone.
    """
    simulate_holm = simulate and models <= MAX_SIMULATED_MODELS
    rows = []
    families = [("none", "all pairs", all_pairs(models))]
    families += [
        ("bonferroni", "all pairs", all_pairs(models)),
        ("holm", "all pairs", all_pairs(models)),
    ]
    if claims:
        families.append(("holm", "claims", int(claims)))
    for gap in np.atleast_1d(np.asarray(gaps, dtype=float)):
        for procedure, family, tests in families:
            lowest, highest = per_test_alpha(alpha, procedure, tests)
            closed = _ceil(questions_needed(gap, disagreement, lowest, power))
            row = {
                "gap_points": 100 * float(gap),
                "procedure": procedure,
                "family": family,
                "tests": tests,
                "alpha_per_test_low": lowest,
                "alpha_per_test_high": highest,
                "disagreement": float(disagreement),
                "power": float(power),
                "questions_closed_form": closed,
                "questions_lower_bound": _ceil(questions_needed(gap, disagreement, highest, power)),
                "questions_simulated": np.nan,
                "power_simulated": np.nan,
                "power_simulated_se": np.nan,
                "mean_accuracy": float(mean_accuracy),
            }
            holm_all = procedure == "holm" and family == "all pairs"
            problem = (
                holm_simulation_problem(gap, disagreement, mean_accuracy)
                if simulate_holm and holm_all and np.isfinite(closed)
                else None
            )
            if simulate and np.isfinite(closed):
                if holm_all and (not simulate_holm or problem is not None):
                    share, se = np.nan, np.nan
                elif holm_all:
                    row["questions_simulated"] = float(
                        holm_questions(
                            models,
                            gap,
                            disagreement,
                            alpha=alpha,
                            power=power,
                            replications=replications,
                            mean_accuracy=mean_accuracy,
                            seed=seed,
                        )
                    )
                    share, se = simulate_holm_power(
                        models,
                        int(closed),
                        gap,
                        disagreement,
                        alpha=alpha,
                        procedure="holm",
                        replications=replications,
                        mean_accuracy=mean_accuracy,
                        seed=seed,
                    )
                elif procedure != "holm":
                    share, se = simulate_pair_power(
                        int(closed),
                        gap,
                        disagreement,
                        alpha=lowest,
                        replications=replications,
                        seed=seed,
                    )
                else:
                    share, se = np.nan, np.nan
                row["power_simulated"], row["power_simulated_se"] = share, se
            if questions is not None:
                row["detectable_gap_points"] = 100 * float(
                    detectable_gap(questions, disagreement, lowest, power)
                )
            row["note"] = (
                ""
                if problem is None
                else f"not simulated ({problem}); Holm lies between the closed forms"
            )
            rows.append(row)
    table = pd.DataFrame(rows)
    for column in ("questions_closed_form", "questions_lower_bound", "questions_simulated"):
        values = table[column].to_numpy(dtype=float)
        table[column] = pd.array(np.where(np.isfinite(values), values, np.nan)).astype("Int64")
    return table


def data_setting(items: pd.DataFrame) -> dict:
    """The data's planning setting: ``models``, ``questions``, ``disagreement``, ``mean_accuracy``.

    ``disagreement`` is the median over all pairs of
    :func:`evalbars.stats.pairwise.disagreement_rates` (the mean square of the
    per-question difference, what :func:`questions_needed` needs, also for
    per-question means of epochs and partial credit); ``mean_accuracy`` the mean
    of the models' mean scores (models without a score left out). NaN where no
    pair shares a question.
    """
    wide = wide_scores(items)
    answered = np.isfinite(wide.scores)
    counts = answered.sum(axis=0)
    sums = np.where(answered, wide.scores, 0.0).sum(axis=0)
    means = sums[counts > 0] / counts[counts > 0]
    rates = disagreement_rates(items)["disagreement"].dropna()
    return {
        "models": len(wide.models),
        "questions": len(wide.question_ids),
        "disagreement": float(rates.median()) if rates.size else np.nan,
        "mean_accuracy": float(means.mean()) if means.size else np.nan,
    }


def plan_caption(table: pd.DataFrame, setting: dict, alpha: float, power: float) -> str:
    """The caption of the workflow's plan table (:func:`plan_table` on :func:`data_setting`)."""
    caption = (
        f"Questions needed for a paired test to find each gap with power {power:g} at "
        f"alpha = {alpha:g}, {setting['models']} models, at the median disagreement rate of the "
        f"data ({setting['disagreement']:.3f}); detectable gap at the data's "
        f"{setting['questions']:,} questions. Holm over all pairs is simulated with models at the "
        f"data's mean accuracy ({100 * setting['mean_accuracy']:.1f}%)."
    )
    skipped = table.loc[table["note"] != "", "gap_points"]
    if skipped.size:
        caption += (
            f" Not simulated for {', '.join(f'{g:g}' for g in skipped)} points (see the note): the "
            "closed forms bracket Holm there."
        )
    return caption


def check_plan_request(
    models: int,
    gap_points: float | None,
    questions: int | None,
    disagreement: float,
    small_gap: bool = False,
) -> None:
    """Refuse an ``evalbars plan`` question that cannot be answered, in one line naming the option.

    ``gap_points`` is in accuracy points. Refused (:class:`~evalbars.errors.InputError`):
    both or neither of a gap and a question count; fewer than 2 models; a gap not
    above 0 or above the disagreement rate (no gap can exceed it); and a gap below
    1 point unless ``small_gap``: ``--gap 0.02`` is almost always a proportion meant
    as 2 points, and would plan for a 0.02-point gap (tens of millions of questions).

    Examples
    --------
    >>> check_plan_request(6, 0.02, None, 0.25)
    Traceback (most recent call last):
    ...
    evalbars.errors.InputError: --gap 0.02: is 0.02 points; did you mean 2 points? (the gap is in accuracy points; add --small-gap to plan for a gap under 1 point)
    >>> check_plan_request(6, 0.02, None, 0.25, small_gap=True) is None
    True
    """
    if (gap_points is None) == (questions is None):
        raise InputError("--gap, --questions", "give exactly one of --gap (points) or --questions")
    if models < 2:
        raise InputError(f"--models {models}", "a comparison needs at least 2 models")
    if gap_points is None:
        return
    if not 0 < gap_points / 100 <= disagreement:
        raise InputError(
            f"--gap {gap_points:g}",
            f"must be above 0 and at most the disagreement rate ({100 * disagreement:g} points)",
        )
    hint = points_hint(gap_points)
    if hint and not small_gap:
        raise InputError(
            f"--gap {gap_points:g}",
            f"is {gap_points:g} points; {hint} (the gap is in accuracy points; add --small-gap "
            "to plan for a gap under 1 point)",
        )


def _labels_text(result: dict) -> str:
    """The judge-scored answer: how many human labels a PPI++ reading needs."""
    low, high = result["labels_low"], result["labels_high"]
    if not np.isfinite(high):
        return (
            "with a judge, labelling every question would not do (the reading is then the "
            "human-only one)"
        )
    count = f"{int(high):,}" if low == high else f"{int(low):,} to {int(high):,}"
    judged = (
        f" of {result['judged_questions']:,} judged questions" if result["judged_questions"] else ""
    )
    return (
        f"scored by a judge whose differences correlate {result['judge_correlation']:g} with "
        f"people's, {count} human labels{judged} (PPI++, chosen uniformly at random)"
    )


def plan_text(result: dict, simulated: int | None = None) -> str:
    """One paragraph answering a :func:`plan` question (``evalbars plan``)."""
    family = (
        "no multiplicity adjustment"
        if result["procedure"] == "none"
        else f"{result['procedure'].capitalize()} over {result['tests']:,} tests"
    )
    setting = (
        f"{result['models']:,} models, {family}, alpha {result['alpha']:g}, power "
        f"{result['power']:g}, disagreement rate {result['disagreement']:g} ({result['test']} test)"
    )
    if "gap" in result:
        low, high = result["questions_low"], result["questions_high"]
        gap = f"a gap of {100 * result['gap']:g} points"
        if not np.isfinite(high):
            return f"{setting}: {gap} cannot be found (it must be above 0 and below the rate).\n"
        if low == high:
            answer = f"{gap} needs {int(high):,} shared questions"
        else:
            answer = (
                f"{gap} needs between {int(low):,} (unadjusted level) and {int(high):,} "
                "(Bonferroni level) shared questions"
            )
        if simulated is not None:
            answer += f"; simulated under Holm: {int(simulated):,}"
        if "labels_high" in result:
            answer += "; " + _labels_text(result)
        return f"{setting}: {answer}.\n"
    questions = f"{result['questions']:,} shared questions"
    if result["gap_low"] is None:
        needed = [
            int(
                _ceil(
                    questions_needed(
                        result["disagreement"],
                        result["disagreement"],
                        a,
                        result["power"],
                        result["test"],
                    )
                )
            )
            for a in (result["alpha_per_test_high"], result["alpha_per_test_low"])
        ]
        least = (
            f"{needed[0]:,}"
            if needed[0] == needed[1]
            else f"{needed[0]:,} (unadjusted level) to {needed[1]:,} (Bonferroni level)"
        )
        return (
            f"{setting}: {questions} find no gap with power {result['power']:g}: no gap can "
            f"exceed the disagreement rate ({100 * result['disagreement']:g} points), and even "
            f"that largest gap needs {least} shared questions.\n"
        )
    low = 100 * result["gap_low"]
    if result["gap_high"] is None:
        found = (
            f"{low:.2f} points at the unadjusted level, and no possible gap at the Bonferroni level"
        )
    else:
        high = 100 * result["gap_high"]
        found = f"{high:.2f} points" if np.isclose(low, high) else f"{low:.2f} to {high:.2f} points"
    return f"{setting}: {questions} find a gap of {found}.\n"
