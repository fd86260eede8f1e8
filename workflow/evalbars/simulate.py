"""Simulation studies: leaderboard luck, precision, family-wise error and clustered questions.

Every study is a pure function of its parameters and a seed. Randomness comes only
from :class:`numpy.random.Generator` objects built by :func:`setting_rng`, whose
:class:`numpy.random.SeedSequence` entropy is ``[seed, study code, *parameter values]``:
a setting is reproducible on its own, whatever order (or machine, or core count)
the settings run in, and adding or reordering rows of a parameter grid changes no
other setting's numbers. Nothing loops over replicates or questions in Python;
the only loops are over a handful of model counts K or output rows.

Studies
-------
1. **The unpaired leaderboard** (seed 000): :func:`simulate_leaderboard`. Five
   models are coins with true pass rates 82, 80, 79, 77 and 72 % (``spread = 1``);
   ``spread`` scales every rate's distance from their mean (78 %), so 0 makes the
   five identical. Each run draws ``questions`` fresh questions per model, so
   each model's count is an independent Binomial(N, p) draw (drawn directly; the
   question-level detail is needed only for the one run played out).
2. **Precision and questions needed**: :func:`precision_table`,
   :func:`questions_to_resolve_unpaired`, :func:`questions_to_resolve_paired`,
   :func:`disagreement_rates` (closed forms).
3. **Family-wise error of pairwise claims** (paper section 5.1):
   :func:`simulate_fwer` under the data-generating process of
   :func:`draw_shared_scores`, against the exact studentized-range value
   :func:`studentized_range_fwer`.
4. **Clustered questions**: :func:`simulate_clustered`, comparing the naive SE,
   Miller's clustered SE (:func:`evalbars.intervals.clustered_se`) and the SE of
   the balanced random-intercept model (:func:`balanced_random_intercept_se`).

The studies return tidy tables as column mappings ``{column: values}``
(``pandas.DataFrame(table)`` makes one a frame): a setting's Snakemake job then
writes its CSV with :func:`evalbars.io.write_columns` and never imports pandas,
which would cost it more than the simulation itself. Figures for each study are
built by the ``*_figures`` functions at the end of the module; they import
matplotlib lazily so that simulation jobs do not pay for it either.

``uv run python -m evalbars.simulate`` (from the repository root) runs every
configured setting once in one process and prints its time (:func:`time_settings`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import omnibus
from ._lazy import load
from .intervals import clustered_se, wilson_interval, z_for_level
from .io import wide_scores
from .pairwise import accuracy_order, adjust_pvalues, model_pairs, pair_statistics, paired_z_tests

# A simulation setting's job needs numpy only; pandas and scipy load on first use (evalbars._lazy).
pd = load("pandas")
special = load("scipy.special")

__all__ = [
    "LEADERBOARD_RATES",
    "DECISION_RULES",
    "setting_seed_sequence",
    "setting_rng",
    "leaderboard_rates",
    "LeaderboardResult",
    "simulate_leaderboard",
    "wilson_halfwidth",
    "precision_table",
    "questions_to_resolve_unpaired",
    "questions_to_resolve_paired",
    "disagreement_rates",
    "questions_needed_table",
    "PrecisionTables",
    "precision_tables",
    "shared_component_weight",
    "draw_conditional_means",
    "draw_shared_scores",
    "studentized_range_fwer",
    "independent_tests_fwer",
    "simulate_fwer",
    "balanced_random_intercept_se",
    "simulate_clustered",
    "combine_settings",
    "time_settings",
    "leaderboard_figures",
    "precision_figures",
    "fwer_figures",
    "clustered_figure",
]

#: True pass rates of the five seed models at ``spread = 1``, best first (seed 000).
LEADERBOARD_RATES = (0.82, 0.80, 0.79, 0.77, 0.72)

#: Decision rules for picking between the truly best (A) and second-best (B) model.
DECISION_RULES = ("higher_score_wins", "intervals_must_not_overlap")

_STUDY_CODES = {"leaderboard": 1, "fwer": 3, "clustered": 4}
_FWER_METHODS = ("uncorrected", "bonferroni", "holm", "rm_anova", "friedman")


# --- Seeding ----------------------------------------------------------------------------------------


def _encode_parameter(value) -> int:
    """A non-negative parameter as an integer in millionths (0.5 and 0.05 stay distinct)."""
    encoded = round(float(value) * 1_000_000)
    if encoded < 0:
        raise ValueError(f"seeded parameters must be non-negative, got {value!r}")
    return encoded


def setting_seed_sequence(seed: int, study: str, *parameters) -> np.random.SeedSequence:
    """Seed sequence of one simulation setting, independent of every other setting.

    The entropy is ``[seed, study code, *parameters]`` with each parameter in
    millionths, so the stream depends only on what the setting *is* (its
    parameter values), not on where it sits in a grid or when it runs.
    ``study`` is one of ``"leaderboard"``, ``"fwer"``, ``"clustered"``.
    """
    entropy = [int(seed), _STUDY_CODES[study], *(_encode_parameter(p) for p in parameters)]
    return np.random.SeedSequence(entropy)


def setting_rng(seed: int, study: str, *parameters) -> np.random.Generator:
    """:class:`numpy.random.Generator` on :func:`setting_seed_sequence`."""
    return np.random.default_rng(setting_seed_sequence(seed, study, *parameters))


def _columns(rows: list[dict]) -> dict[str, list]:
    """Rows (dicts with the same keys) as a column mapping, the form every study returns."""
    return {key: [row[key] for row in rows] for key in rows[0]}


def _share_and_se(indicator) -> tuple[float, float]:
    """Share of True and its Monte Carlo SE :math:`\\sqrt{p(1-p)/R}`."""
    indicator = np.asarray(indicator, dtype=bool)
    share = float(indicator.mean())
    return share, float(np.sqrt(share * (1 - share) / indicator.size))


# --- 1. The unpaired leaderboard --------------------------------------------------------------------


def leaderboard_rates(spread: float, base_rates=LEADERBOARD_RATES) -> np.ndarray:
    """True pass rates at a given spread: :math:`\\bar p + s (p_k - \\bar p)`.

    ``spread = 1`` returns ``base_rates`` (sorted best first), 0 makes every model
    the mean (78 % for the seed's rates), 2 doubles every distance from the mean.
    """
    base = np.sort(np.asarray(base_rates, dtype=float))[::-1]
    rates = base.mean() + float(spread) * (base - base.mean())
    if spread < 0 or rates.min() < 0 or rates.max() > 1:
        raise ValueError(f"spread {spread!r} puts pass rates outside [0, 1]: {rates.round(3)}")
    return rates


def _model_labels(k: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(k)]


class LeaderboardResult(NamedTuple):
    """One leaderboard setting.

    Each attribute is a tidy table as a column mapping ``{column: values}``.

    Attributes
    ----------
    summary : dict
        One row per decision rule (see :func:`simulate_leaderboard`).
    runs : dict
        One row per run: ``run, a_minus_b_points, top_model``.
    one_run : dict
        One run played out question by question: ``model, true_rate, question,
        correct, final_rank`` (one row per model and question).
    """

    summary: dict
    runs: dict
    one_run: dict


def simulate_leaderboard(
    questions: int,
    spread: float = 1.0,
    runs: int = 10_000,
    seed: int = 0,
    base_rates=LEADERBOARD_RATES,
    level: float = 0.95,
) -> LeaderboardResult:
    """The unpaired leaderboard of seed 000: who ranks first, and how often a rule picks wrong.

    Parameters
    ----------
    questions : int
        Questions per model per run (N); each model gets its own questions.
    spread : float
        Scale of the true rates' distances from their mean (:func:`leaderboard_rates`).
    runs : int
        Independent runs.
    seed : int
        Root seed; the setting's stream is :func:`setting_rng` ``(seed,
        "leaderboard", questions, spread)``.
    base_rates : sequence of float
        True rates at ``spread = 1``; the best is model A, the second-best B.
    level : float
        Level of the Wilson intervals (whiskers and the non-overlap rule).

    Returns
    -------
    LeaderboardResult
        ``summary`` has one row per rule in :data:`DECISION_RULES` with ``questions,
        spread, runs, rule, top1, top1_se, mean_a_minus_b_points,
        mean_a_minus_b_se, sd_a_minus_b_points, b_above_a, b_above_a_se, tie,
        wrong, wrong_se, undecided, undecided_se, mean_whisker_points``.

    Notes
    -----
    Per run, model k's count is :math:`X_k \\sim \\mathrm{Bin}(N, p_k)`.

    - ``top1``: share of runs in which A has the highest count; ties for first are
      broken uniformly at random (a random key below 1 added to each count).
    - ``a_minus_b_points``: :math:`100 (X_A - X_B)/N`; ``b_above_a`` is the share
      with :math:`X_B > X_A` (ties excluded, reported in ``tie``).
    - HIGHER SCORE WINS picks the larger count, a fair coin on a tie; INTERVALS
      MUST NOT OVERLAP picks a model only when its Wilson interval lies wholly
      above the other's, otherwise it makes no decision. ``wrong`` is the share of
      runs that pick B, ``undecided`` the share that pick neither.
    - ``mean_whisker_points``: mean Wilson half-width, :math:`100 (U - L)/2`, over
      runs and models.
    - Every ``*_se`` is a Monte Carlo SE, :math:`\\sqrt{p(1-p)/R}` for shares and
      :math:`\\mathrm{SD}/\\sqrt R` for the mean difference.
    """
    rates = leaderboard_rates(spread, base_rates)
    k = rates.size
    runs_seq, one_run_seq = setting_seed_sequence(seed, "leaderboard", questions, spread).spawn(2)
    rng = np.random.default_rng(runs_seq)
    counts = rng.binomial(questions, rates, size=(runs, k))
    tie_keys = rng.random((runs, k))
    coin_picks_b = rng.random(runs) < 0.5

    # A key in [0, 0.5) reorders only models with equal counts: a random tie-break.
    first = np.argmax(counts + 0.5 * tie_keys, axis=1)
    top1, top1_se = _share_and_se(first == 0)
    count_a, count_b = counts[:, 0], counts[:, 1]
    diff_points = 100.0 * (count_a - count_b) / questions
    b_above, b_above_se = _share_and_se(count_b > count_a)
    tie = float((count_a == count_b).mean())
    low, high = wilson_interval(counts, questions, level)
    whisker = float(100.0 * ((high - low) / 2).mean())

    picks_b = {
        "higher_score_wins": (count_b > count_a) | ((count_a == count_b) & coin_picks_b),
        "intervals_must_not_overlap": low[:, 1] > high[:, 0],
    }
    undecided = {
        "higher_score_wins": np.zeros(runs, dtype=bool),
        "intervals_must_not_overlap": ~((low[:, 0] > high[:, 1]) | (low[:, 1] > high[:, 0])),
    }
    rows = []
    for rule in DECISION_RULES:
        wrong, wrong_se = _share_and_se(picks_b[rule])
        undecided_share, undecided_se = _share_and_se(undecided[rule])
        rows.append(
            {
                "questions": int(questions),
                "spread": float(spread),
                "runs": int(runs),
                "rule": rule,
                "top1": top1,
                "top1_se": top1_se,
                "mean_a_minus_b_points": float(diff_points.mean()),
                "mean_a_minus_b_se": float(diff_points.std(ddof=1) / np.sqrt(runs)),
                "sd_a_minus_b_points": float(diff_points.std(ddof=1)),
                "b_above_a": b_above,
                "b_above_a_se": b_above_se,
                "tie": tie,
                "wrong": wrong,
                "wrong_se": wrong_se,
                "undecided": undecided_share,
                "undecided_se": undecided_se,
                "mean_whisker_points": whisker,
            }
        )
    labels = np.asarray(_model_labels(k))
    run_table = {
        "run": np.arange(1, runs + 1),
        "a_minus_b_points": diff_points,
        "top_model": labels[first],
    }

    # The single run played out needs question-level outcomes: K x N draws, once.
    one_rng = np.random.default_rng(one_run_seq)
    outcomes = one_rng.random((k, questions)) < rates[:, None]
    final_key = outcomes.sum(axis=1) + 0.5 * one_rng.random(k)
    final_rank = np.empty(k, dtype=int)
    final_rank[np.argsort(-final_key, kind="stable")] = np.arange(1, k + 1)
    one_run = {
        "model": np.repeat(labels, questions),
        "true_rate": np.repeat(rates, questions),
        "question": np.tile(np.arange(1, questions + 1), k),
        "correct": outcomes.ravel().astype(np.int8),
        "final_rank": np.repeat(final_rank, questions),
    }
    return LeaderboardResult(_columns(rows), run_table, one_run)


# --- 2. Precision and questions needed -------------------------------------------------------------


def wilson_halfwidth(rate, questions, level: float = 0.95):
    """Half-width :math:`(U - L)/2` of the Wilson interval at observed score ``rate`` out of ``questions``.

    Uses :func:`evalbars.intervals.wilson_interval` with the fractional count
    ``rate * questions``; at 80 % and 95 % it is 7.8, 5.5, 2.5 and 1.1 points for
    100, 200, 1,000 and 5,000 questions (seed 000).
    """
    questions = np.asarray(questions, dtype=float)
    low, high = wilson_interval(np.asarray(rate, dtype=float) * questions, questions, level)
    return (high - low) / 2


def precision_table(
    questions=(100, 200, 1000, 5000), rate: float = 0.8, level: float = 0.95
) -> pd.DataFrame:
    """Wilson interval and half-width of an observed score ``rate`` at several question counts.

    Returns ``questions, rate, level, ci_low, ci_high, half_width_points``.
    """
    n = np.asarray(questions, dtype=float)
    low, high = wilson_interval(rate * n, n, level)
    return pd.DataFrame(
        {
            "questions": n.astype(int),
            "rate": float(rate),
            "level": float(level),
            "ci_low": low,
            "ci_high": high,
            "half_width_points": 100 * (high - low) / 2,
        }
    )


def questions_to_resolve_unpaired(gap, rate: float = 0.8, sds: float = 2.0):
    """Questions per model for an unpaired gap to span ``sds`` standard deviations.

    With both models near ``rate`` and independent question sets, the score
    difference has SD :math:`\\sqrt{2 p (1-p) / N}`; requiring
    :math:`\\text{gap} \\ge k \\cdot \\mathrm{SD}` gives

    .. math:: N = \\frac{2 k^2 p (1 - p)}{\\text{gap}^2},

    which at p = 0.8, k = 2 is :math:`1.28/\\text{gap}^2`: 128, 512, 3,200 and 12,800
    questions for gaps of 10, 5, 2 and 1 points (seed 000 rounds them to 130, 500,
    3,200, 12,800). ``gap`` is a proportion (0.02 = 2 points).
    """
    gap = np.asarray(gap, dtype=float)
    return 2 * sds**2 * rate * (1 - rate) / gap**2


def questions_to_resolve_paired(gap, disagreement, sds: float = 2.0):
    """Shared questions for a paired gap to span ``sds`` standard deviations.

    On shared questions the per-question difference :math:`d_i \\in \\{-1, 0, 1\\}`
    is nonzero on the share :math:`\\delta` of questions where the two models
    disagree, with :math:`P(d = \\pm 1) = (\\delta \\pm \\text{gap})/2`, so
    :math:`\\mathrm{Var}(d) = \\delta - \\text{gap}^2` and

    .. math:: N = \\frac{k^2 (\\delta - \\text{gap}^2)}{\\text{gap}^2}.

    Two independent models at 80 % disagree on :math:`\\delta = 2 \\cdot 0.8 \\cdot 0.2 = 0.32`
    of questions, and then this is :func:`questions_to_resolve_unpaired` minus
    :math:`k^2`; models that agree more need fewer questions. A gap larger than
    the disagreement rate is impossible (NaN).

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 4
       (paired differences).
    """
    gap = np.asarray(gap, dtype=float)
    disagreement = np.asarray(disagreement, dtype=float)
    needed = sds**2 * (disagreement - gap**2) / gap**2
    return np.where(gap <= disagreement, needed, np.nan)


def disagreement_rates(items: pd.DataFrame, models=None) -> pd.DataFrame:
    """Share of shared questions on which each pair of models differs.

    Parameters
    ----------
    items : DataFrame
        Canonical item table (:data:`evalbars.io.ITEM_COLUMNS`).
    models : list, optional
        Models to compare (default: all in ``items``).

    Returns
    -------
    DataFrame
        ``model_a, model_b, questions, diff, disagreement`` in the pair convention
        of :mod:`evalbars.pairwise` (model_a the more accurate), over the questions
        both models answered.
    """
    wide = wide_scores(items, models)
    order = accuracy_order(wide)
    stats = pair_statistics(wide.scores[:, [wide.models.index(m) for m in order]])
    pairs = model_pairs(order)
    pairs["questions"] = stats["n"].astype(int)
    pairs["diff"] = stats["diff"]
    # For 0/1 scores two models differ exactly where one is right and the other wrong.
    pairs["disagreement"] = (stats["n10"] + stats["n01"]) / stats["n"]
    return pairs


def _whole_questions(values) -> pd.Series:
    """Round a question count up to a whole question (ignoring float noise such as 128.00000000001)."""
    return pd.Series(np.ceil(np.round(np.asarray(values, dtype=float), 6))).astype("Int64")


def questions_needed_table(
    gaps=(0.10, 0.05, 0.02, 0.01),
    rate: float = 0.8,
    sds: float = 2.0,
    disagreements: dict | None = None,
) -> pd.DataFrame:
    """Questions needed to resolve each gap, unpaired and paired.

    ``disagreements`` maps a label (e.g. ``"data: median of 15 pairs"``) to a
    disagreement rate. Counts are rounded up to whole questions (missing where a
    gap exceeds the disagreement rate). Returns ``gap_points, design, disagreement, source, rate,
    sds, questions_per_model`` with ``design`` ``"unpaired"`` (both models near
    ``rate``) or ``"paired"``.
    """
    gaps = np.asarray(gaps, dtype=float)
    frames = [
        pd.DataFrame(
            {
                "gap_points": 100 * gaps,
                "design": "unpaired",
                "disagreement": np.nan,
                "source": f"independent questions, both near {rate:.0%}",
                "rate": float(rate),
                "sds": float(sds),
                "questions_per_model": _whole_questions(
                    questions_to_resolve_unpaired(gaps, rate, sds)
                ),
            }
        )
    ]
    for source, delta in (disagreements or {}).items():
        frames.append(
            pd.DataFrame(
                {
                    "gap_points": 100 * gaps,
                    "design": "paired",
                    "disagreement": float(delta),
                    "source": source,
                    "rate": float(rate),
                    "sds": float(sds),
                    "questions_per_model": _whole_questions(
                        questions_to_resolve_paired(gaps, delta, sds)
                    ),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


class PrecisionTables(NamedTuple):
    """Output of :func:`precision_tables`."""

    precision: pd.DataFrame
    questions_needed: pd.DataFrame


def precision_tables(
    questions=(100, 200, 1000, 5000),
    gaps=(0.10, 0.05, 0.02, 0.01),
    rate: float = 0.8,
    sds: float = 2.0,
    level: float = 0.95,
    disagreements=(0.15, 0.30),
    items: pd.DataFrame | None = None,
) -> PrecisionTables:
    """Both precision tables; with ``items``, also the median disagreement of the real models' pairs.

    ``disagreements`` are illustrative rates (labelled ``"illustrative"``); when
    an item table is given, the median of :func:`disagreement_rates` over all
    pairs is added (labelled ``"data: median of N pairs"``).
    """
    labelled = {f"illustrative, {d:.0%} disagree": float(d) for d in disagreements}
    if items is not None:
        rates = disagreement_rates(items)["disagreement"]
        labelled[f"data: median of {rates.size} pairs"] = float(rates.median())
    return PrecisionTables(
        precision_table(questions, rate, level),
        questions_needed_table(gaps, rate, sds, labelled),
    )


# --- 3. Family-wise error of pairwise claims --------------------------------------------------------


def shared_component_weight(rho: float) -> float:
    """Weight w of the shared component giving conditional-mean correlation ``rho``.

    With :math:`x_{ik} = w A_i + (1 - w) B_{ik}` and A, B i.i.d.,
    :math:`\\mathrm{Corr}(x_{ik}, x_{il}) = w^2 / (w^2 + (1-w)^2) = \\rho` for
    :math:`w = \\sqrt\\rho / (\\sqrt\\rho + \\sqrt{1-\\rho})` (w = 1/2 at rho = 0.5).
    """
    if not 0 <= rho <= 1:
        raise ValueError(f"rho must be in [0, 1], got {rho!r}")
    return float(np.sqrt(rho) / (np.sqrt(rho) + np.sqrt(1 - rho)))


def _beta_parameters(mean_accuracy: float, concentration: float) -> tuple[float, float]:
    if not 0 < mean_accuracy < 1 or concentration <= 0:
        raise ValueError("need 0 < mean_accuracy < 1 and concentration > 0")
    return mean_accuracy * concentration, (1 - mean_accuracy) * concentration


def _headroom_shift(models: int, gap: float, mean_accuracy: float) -> np.ndarray:
    """Per-model c_k of the affine shift x -> c + (1 - c) x that raises model 0's mean by ``gap``."""
    if gap < 0 or mean_accuracy + gap > 1:
        raise ValueError(f"need 0 <= gap <= 1 - mean_accuracy, got gap {gap!r}")
    shift = np.zeros(models)
    shift[0] = gap / (1 - mean_accuracy)
    return shift


def draw_conditional_means(
    rng: np.random.Generator,
    size,
    models: int,
    rho: float,
    gap: float = 0.0,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
) -> np.ndarray:
    """Question-level conditional mean scores :math:`x_{ik}`, shape ``(*size, models)``.

    :math:`x_{ik} = c_k + (1 - c_k)\\,[w A_i + (1 - w) B_{ik}]` with :math:`A_i`,
    :math:`B_{ik}` i.i.d. Beta(:math:`\\mu\\kappa, (1-\\mu)\\kappa`) (mean
    ``mean_accuracy`` :math:`\\mu`, ``concentration`` :math:`\\kappa`), w from
    :func:`shared_component_weight` and :math:`c_0 = \\text{gap}/(1-\\mu)`,
    :math:`c_{k>0} = 0`. Every :math:`x` lies in [0, 1], model k's mean is
    :math:`\\mu` (model 0's :math:`\\mu + \\text{gap}`), and any two models'
    conditional means have correlation exactly ``rho`` (the shift is affine).
    """
    size = tuple(np.atleast_1d(size))
    a, b = _beta_parameters(mean_accuracy, concentration)
    w = shared_component_weight(rho)
    shared = rng.beta(a, b, size=(*size, 1))
    own = rng.beta(a, b, size=(*size, models))
    shift = _headroom_shift(models, gap, mean_accuracy)
    return shift + (1 - shift) * (w * shared + (1 - w) * own)


def draw_shared_scores(
    rng: np.random.Generator,
    replications: int,
    questions: int,
    models: int,
    rho: float,
    gap: float = 0.0,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
) -> np.ndarray:
    """0/1 scores of K models on the same questions, shape ``(replications, questions, models)``.

    The data-generating process of the paper's section 5.1 in Miller's
    conditional-mean framing: question i has a conditional mean score
    :math:`x_{ik}` for model k (:func:`draw_conditional_means`, pairwise
    correlation ``rho`` across models), and the observed score is
    :math:`s_{ik} \\sim \\mathrm{Bernoulli}(x_{ik})`, independently given the
    :math:`x`.

    Because each :math:`B_{ik}` enters one Bernoulli draw only, it is integrated
    out exactly: given :math:`A_i`, the :math:`s_{ik}` are independent
    Bernoulli(:math:`c_k + (1-c_k)[w A_i + (1-w)\\mu]`). Only :math:`A_i` is
    drawn, which halves the work and gives the same joint distribution of scores.
    The correlation of two models' scores on a question is then
    :math:`w^2 / (\\kappa + 1)` under the null (0.125 at rho = 0.5, kappa = 1).
    """
    a, b = _beta_parameters(mean_accuracy, concentration)
    w = shared_component_weight(rho)
    shift = _headroom_shift(models, gap, mean_accuracy)
    shared = rng.beta(a, b, size=(replications, questions, 1))
    success = shift + (1 - shift) * (w * shared + (1 - w) * mean_accuracy)
    # float32 uniforms: the comparison needs no more resolution and halves memory.
    return rng.random((replications, questions, models), dtype=np.float32) < success


def studentized_range_fwer(models, alpha: float = 0.05):
    """Exact FWER of uncorrected all-pairs z-tests for K independent equal-precision estimates.

    Under the global null the K estimates are i.i.d. normal, and some pair is
    declared different when the range exceeds :math:`z_{1-\\alpha/2}\\sqrt2` SEs:

    .. math::

        \\mathrm{FWER}_K = 1 - K \\int \\varphi(x)\\,[\\Phi(x + w) - \\Phi(x)]^{K-1}\\,dx,
        \\qquad w = z_{1-\\alpha/2}\\sqrt2,

    the upper tail of the studentized range with infinite degrees of freedom
    (Tukey 1953). Evaluated by the trapezoid rule on [-10, 10] (step 1e-3); at
    alpha = 0.05 it is 0.1223, 0.2033, 0.2858, 0.3656, 0.5093, 0.6274, 0.7208 for
    K = 3, 4, 5, 6, 8, 10, 12. With ``alpha`` divided by the K(K-1)/2 tests it is the
    exact FWER of Bonferroni (and of Holm, whose first step is Bonferroni's, under
    the global null): 0.0415 for K = 4. ``models`` and ``alpha`` broadcast. It also holds for paired tests on shared questions
    when the models are exchangeable: the shared part of their means cancels in
    every difference.

    References
    ----------
    .. [1] Hochberg, Y., Tamhane, A. C. (1987). Multiple Comparison Procedures.
       Wiley, section 3.2 (range distribution).
    """
    k = np.asarray(models, dtype=float)[..., None]
    width = special.ndtri(1 - np.asarray(alpha, dtype=float)[..., None] / 2) * np.sqrt(2)
    x = np.linspace(-10, 10, 20_001)
    inside = np.clip(special.ndtr(x + width) - special.ndtr(x), 0, 1)
    integrand = k * np.exp(-(x**2) / 2) / np.sqrt(2 * np.pi) * inside ** (k - 1)
    return 1 - np.trapezoid(integrand, x, axis=-1)


def independent_tests_fwer(models, alpha: float = 0.05):
    """The independence benchmark :math:`1 - (1-\\alpha)^{K(K-1)/2}` (0.265 for K = 4)."""
    k = np.asarray(models, dtype=float)
    return 1 - (1 - alpha) ** (k * (k - 1) / 2)


def simulate_fwer(
    models: int,
    questions: int = 400,
    rho: float = 0.5,
    gap: float = 0.0,
    replications: int = 2000,
    alpha: float = 0.05,
    mean_accuracy: float = 0.6,
    concentration: float = 1.0,
    seed: int = 0,
) -> dict[str, list]:
    """Family-wise error and power of pairwise and omnibus tests on shared questions.

    Parameters
    ----------
    models : int
        K >= 2 models.
    questions : int
        Shared questions per replication.
    rho : float
        Pairwise correlation of the models' conditional mean scores.
    gap : float
        True accuracy gap of model 0 over the others (0: the global null).
    replications, alpha : int, float
        Monte Carlo replications and significance level.
    mean_accuracy, concentration : float
        Mean and concentration of the Beta law of the conditional means.
    seed : int
        Root seed; the stream is :func:`setting_rng` ``(seed, "fwer", models,
        questions, rho, gap, mean_accuracy, concentration)``.

    Returns
    -------
    dict
        Tidy table as ``{column: values}``, one row per method (``uncorrected``, ``bonferroni``, ``holm``, ``rm_anova``,
        ``friedman``) with ``models, questions, rho, gap, replications, alpha,
        method, family, tests, fwer, fwer_se, power_any, power_any_se, power_all,
        power_all_se, studentized_range_fwer, studentized_range_fwer_bonferroni,
        independent_tests_fwer`` (the last three: exact values for K independent
        equal-precision estimates, :func:`studentized_range_fwer`).

    Notes
    -----
    Data from :func:`draw_shared_scores`. Pairwise methods run the K(K-1)/2
    paired z-tests of :func:`paired_z_tests` and reject where ``p < alpha``, after
    Bonferroni or Holm adjustment for those rows. ``rm_anova`` is the
    repeated-measures F test (question as subject, sphericity assumed, which the
    exchangeable design satisfies) of :func:`evalbars.omnibus.rm_anova`;
    ``friedman`` is the tie-corrected Friedman test, computed as Cochran's Q
    (:func:`evalbars.omnibus.cochran_q`), to which it is identical on 0/1 scores.

    - ``fwer``: share of replications with at least one false claim: a rejected
      pair of equally good models, or a rejected pair in the wrong direction. For
      omnibus tests it is the rejection rate under the null (NaN when gap > 0).
    - ``power_any`` / ``power_all``: share of replications in which at least one /
      every pair (0, k) is rejected in the right direction (gap > 0 only); for
      omnibus tests ``power_any`` is the rejection rate.
    - ``*_se``: Monte Carlo SE :math:`\\sqrt{p(1-p)/R}`.
    """
    if models < 2:
        raise ValueError(f"need at least 2 models, got {models}")
    rng = setting_rng(seed, "fwer", models, questions, rho, gap, mean_accuracy, concentration)
    scores = draw_shared_scores(
        rng, replications, questions, models, rho, gap, mean_accuracy, concentration
    )
    z, p = paired_z_tests(scores)
    first, _ = np.triu_indices(models, k=1)
    true_gap = (first == 0) & (gap > 0)
    pvalues = {
        "uncorrected": p,
        "bonferroni": adjust_pvalues(p, "bonferroni"),
        "holm": adjust_pvalues(p, "holm"),
    }
    numeric = scores.astype(np.float64)
    omnibus_p = {
        "rm_anova": omnibus.rm_anova(numeric).p,
        "friedman": omnibus.cochran_q(numeric).p,
    }
    del numeric
    setting = {
        "models": int(models),
        "questions": int(questions),
        "rho": float(rho),
        "gap": float(gap),
        "replications": int(replications),
        "alpha": float(alpha),
    }
    # The exact benchmarks depend on the setting only: computed once, not per method.
    exact = {
        "studentized_range_fwer": float(studentized_range_fwer(models, alpha)),
        "studentized_range_fwer_bonferroni": float(
            studentized_range_fwer(models, alpha / (models * (models - 1) / 2))
        ),
        "independent_tests_fwer": float(independent_tests_fwer(models, alpha)),
    }
    nan_pair = (np.nan, np.nan)
    rows = []
    for method in _FWER_METHODS:
        row = setting | {"method": method}
        if method in pvalues:
            reject = pvalues[method] < alpha
            false_claim = reject & (~true_gap | (z < 0))
            found = reject & true_gap & (z > 0)
            fwer = _share_and_se(false_claim.any(axis=-1))
            power_any = _share_and_se(found.any(axis=-1)) if gap > 0 else nan_pair
            power_all = _share_and_se((found | ~true_gap).all(axis=-1)) if gap > 0 else nan_pair
            row |= {"family": "pairwise", "tests": int(p.shape[-1])}
        else:
            reject = omnibus_p[method] < alpha
            fwer = _share_and_se(reject) if gap == 0 else nan_pair
            power_any = _share_and_se(reject) if gap > 0 else nan_pair
            power_all = nan_pair
            row |= {"family": "omnibus", "tests": 1}
        row |= {
            "fwer": fwer[0],
            "fwer_se": fwer[1],
            "power_any": power_any[0],
            "power_any_se": power_any[1],
            "power_all": power_all[0],
            "power_all_se": power_all[1],
        } | exact
        rows.append(row)
    return _columns(rows)


# --- 4. Clustered questions ------------------------------------------------------------------------


def balanced_random_intercept_se(scores) -> tuple[np.ndarray, np.ndarray]:
    """SE of the mean under the balanced random-intercept model, REML, in closed form.

    Parameters
    ----------
    scores : array_like, shape (..., C, m)
        C clusters of m questions each (balanced).

    Returns
    -------
    se : ndarray
        SE of :math:`\\hat\\mu` with the leading shape.
    boundary : ndarray of bool
        True where the REML cluster variance is 0 (MSB < MSW).

    Notes
    -----
    For :math:`s_{ic} = \\mu + u_c + e_{ic}`, :math:`u_c \\sim N(0, \\tau^2)`,
    :math:`e_{ic} \\sim N(0, \\sigma^2)`, balanced, the GLS estimate of
    :math:`\\mu` is the grand mean with variance :math:`(\\sigma^2 + m\\tau^2)/(Cm)`.
    REML gives the ANOVA estimates :math:`\\hat\\sigma^2 = MSW`,
    :math:`\\hat\\tau^2 = (MSB - MSW)/m` when :math:`MSB \\ge MSW`, so
    :math:`SE^2 = MSB/(Cm)`; otherwise :math:`\\hat\\tau^2 = 0`,
    :math:`\\hat\\sigma^2 = SS_{total}/(n-1)` and SE is the naive (ddof=1) SE.
    In the interior this is Miller's clustered SE times :math:`\\sqrt{C/(C-1)}`
    (the CR1 convention), the matching stated in the paper's section 3.

    References
    ----------
    .. [1] Searle, S. R., Casella, G., McCulloch, C. E. (1992). Variance
       Components. Wiley, sections 3.5-3.7 (balanced one-way classification) and
       6.7 (REML estimates for balanced data).
    """
    x = np.asarray(scores, dtype=float)
    c, m = x.shape[-2:]
    n = c * m
    grand = x.mean(axis=(-2, -1))
    cluster_means = x.mean(axis=-1)
    ss_between = m * ((cluster_means - grand[..., None]) ** 2).sum(axis=-1)
    ss_within = ((x - cluster_means[..., None]) ** 2).sum(axis=(-2, -1))
    ms_between = ss_between / (c - 1)
    ms_within = ss_within / (c * (m - 1))
    boundary = ms_between < ms_within
    variance = np.where(boundary, (ss_between + ss_within) / (n - 1) / n, ms_between / n)
    return np.sqrt(variance), boundary


def simulate_clustered(
    cluster_size: int,
    icc: float,
    questions: int = 1200,
    replications: int = 2000,
    mean_accuracy: float = 0.6,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, list]:
    """Naive, clustered (Miller) and mixed-model SEs of one model's mean score on clustered questions.

    Parameters
    ----------
    cluster_size : int
        Questions per cluster, m (must divide ``questions``).
    icc : float
        Within-cluster correlation of two questions' 0/1 scores, in (0, 1).
    questions, replications : int
        Questions per replication and replications.
    mean_accuracy : float
        True mean score :math:`\\mu` (the target of every interval).
    level : float
        Level of the intervals whose coverage is reported.
    seed : int
        Root seed; the stream is :func:`setting_rng` ``(seed, "clustered",
        cluster_size, icc, questions, mean_accuracy)``.

    Returns
    -------
    dict
        Tidy table as ``{column: values}``, one row per estimator (``naive``, ``clustered_miller``, ``mixed_model``) with
        ``cluster_size, icc, clusters, questions, replications, mean_accuracy,
        design_effect, analytic_se_ratio, true_se, estimator, se_mean,
        se_ratio_to_naive, se_ratio_to_naive_se, coverage, coverage_se,
        boundary_share``.

    Notes
    -----
    Data: cluster c has a pass rate :math:`\\pi_c \\sim
    \\mathrm{Beta}(\\mu\\kappa, (1-\\mu)\\kappa)` with :math:`\\kappa = 1/\\mathrm{icc} - 1`,
    and its m questions are Bernoulli(:math:`\\pi_c`), so two questions of a
    cluster correlate at :math:`1/(\\kappa + 1) = \\mathrm{icc}`. The true SE of
    the mean is :math:`\\sqrt{\\mu(1-\\mu)\\,\\mathrm{DEFF}/n}` with the design
    effect :math:`\\mathrm{DEFF} = 1 + (m - 1)\\,\\mathrm{icc}` (Kish 1965), so
    the clustered-to-naive SE ratio is about :math:`\\sqrt{\\mathrm{DEFF}}`.

    Estimators: ``naive`` :math:`\\mathrm{sd}(s, \\mathrm{ddof}=1)/\\sqrt n`;
    ``clustered_miller`` :func:`evalbars.intervals.clustered_se` (Miller 2024,
    Eq. 4, no C/(C-1) factor); ``mixed_model``
    :func:`balanced_random_intercept_se`. Coverage is the share of replications
    whose interval :math:`\\bar s \\pm z\\,SE` contains :math:`\\mu`;
    ``se_ratio_to_naive`` is the mean over replications of SE / naive SE.
    """
    if questions % cluster_size:
        raise ValueError(f"cluster_size {cluster_size} must divide questions {questions}")
    if not 0 < icc < 1:
        raise ValueError(f"icc must be in (0, 1), got {icc!r}")
    clusters = questions // cluster_size
    concentration = 1 / icc - 1
    rng = setting_rng(seed, "clustered", cluster_size, icc, questions, mean_accuracy)
    pass_rates = rng.beta(
        mean_accuracy * concentration,
        (1 - mean_accuracy) * concentration,
        size=(replications, clusters, 1),
    )
    nested = rng.random((replications, clusters, cluster_size), dtype=np.float32) < pass_rates
    scores = nested.reshape(replications, questions).astype(float)
    mean = scores.mean(axis=-1)
    se = {
        "naive": scores.std(axis=-1, ddof=1) / np.sqrt(questions),
        "clustered_miller": clustered_se(scores, np.repeat(np.arange(clusters), cluster_size)),
    }
    se["mixed_model"], boundary = balanced_random_intercept_se(nested)
    z = z_for_level(level)
    design_effect = 1 + (cluster_size - 1) * icc
    rows = []
    for estimator, values in se.items():
        ratio = values / se["naive"]
        coverage = _share_and_se(np.abs(mean - mean_accuracy) <= z * values)
        rows.append(
            {
                "cluster_size": int(cluster_size),
                "icc": float(icc),
                "clusters": int(clusters),
                "questions": int(questions),
                "replications": int(replications),
                "mean_accuracy": float(mean_accuracy),
                "design_effect": design_effect,
                "analytic_se_ratio": float(np.sqrt(design_effect)),
                "true_se": float(
                    np.sqrt(mean_accuracy * (1 - mean_accuracy) * design_effect / questions)
                ),
                "estimator": estimator,
                "se_mean": float(values.mean()),
                "se_ratio_to_naive": float(ratio.mean()),
                "se_ratio_to_naive_se": float(ratio.std(ddof=1) / np.sqrt(replications)),
                "coverage": coverage[0],
                "coverage_se": coverage[1],
                "boundary_share": float(boundary.mean()) if estimator == "mixed_model" else np.nan,
            }
        )
    return _columns(rows)


# --- Aggregation ----------------------------------------------------------------------------------


def combine_settings(tables, sort_by) -> pd.DataFrame:
    """Concatenate per-setting tables and sort them by ``sort_by`` (stable, index reset).

    ``tables`` are DataFrames or column mappings (what the studies return).
    Sorting makes the combined table independent of the order the settings were
    listed or finished in.
    """
    combined = pd.concat([pd.DataFrame(table) for table in tables], ignore_index=True)
    return combined.sort_values(list(sort_by), kind="stable").reset_index(drop=True)


def time_settings(config: dict, root=".") -> pd.DataFrame:
    """Run every configured simulation setting once, in this process, and time it.

    ``config`` is the validated workflow configuration (defaults filled in); grid
    paths are relative to ``root``. Returns ``study, setting, seconds, cpu_seconds``:
    the simulation work alone, without the interpreter start-up and imports each
    Snakemake job also pays. Run it as ``uv run python -m evalbars.simulate``.
    """
    import time
    from pathlib import Path

    sim_config = config["simulation"]
    seed = sim_config["seed"]

    def grid(study):
        return pd.read_csv(Path(root) / sim_config[study]["grid"], sep="\t").to_dict("records")

    board, fwer, clustered = (sim_config[k] for k in ("leaderboard", "fwer", "clustered"))
    # One runner per study, called with a grid row: the same calls the workflow's scripts make.
    runners = {
        "leaderboard": lambda row: simulate_leaderboard(
            row["questions"],
            row["spread"],
            board["runs"],
            seed,
            board["true_rates"],
            config["level"],
        ),
        "fwer": lambda row: simulate_fwer(
            **row,
            replications=fwer["replications"],
            alpha=config["alpha"],
            mean_accuracy=fwer["mean_accuracy"],
            concentration=fwer["concentration"],
            seed=seed,
        ),
        "clustered": lambda row: simulate_clustered(
            **row,
            questions=clustered["questions"],
            replications=clustered["replications"],
            mean_accuracy=clustered["mean_accuracy"],
            level=config["level"],
            seed=seed,
        ),
    }
    jobs = [(study, row, run) for study, run in runners.items() for row in grid(study)]
    rows = []
    for study, setting, run in jobs:
        wall, cpu = time.perf_counter(), time.process_time()
        run(setting)
        rows.append(
            {
                "study": study,
                "setting": ", ".join(f"{k}={v}" for k, v in setting.items()),
                "seconds": time.perf_counter() - wall,
                "cpu_seconds": time.process_time() - cpu,
            }
        )
    return pd.DataFrame(rows)


def _main() -> None:
    """``python -m evalbars.simulate``: time every configured setting (see :func:`time_settings`)."""
    import yaml
    from snakemake.utils import validate

    config = yaml.safe_load(open("config/config.yaml"))
    validate(config, "workflow/schemas/config.schema.yaml", set_default=True)
    table = time_settings(config)
    with pd.option_context("display.width", 120, "display.max_colwidth", 80):
        print(table.round(3).to_string(index=False))
    print(f"total: {table['seconds'].sum():.2f} s wall, {table['cpu_seconds'].sum():.2f} s CPU")


# --- Figures --------------------------------------------------------------------------------------
# matplotlib is imported inside each function: simulation jobs never draw, and the
# import costs more than most settings take to simulate.


def _plain_log_ticks(axis, ticks) -> None:
    """Label a log axis at ``ticks`` with plain numbers (1,000 rather than 10^3)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,g}"))


def _model_colours(labels):
    from .plotting import PALETTE

    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(sorted(labels))}


def _difference_bins(questions: int, rate_a: float, rate_b: float) -> np.ndarray:
    """Fixed bins (points) for A - B, from the expected spread at ``questions``.

    A - B moves in steps of 100/N points; every bin holds the same number of
    steps and one edge sits half a step left of zero, so the bins left of it hold
    exactly the runs where B scored higher.
    """
    step = 100.0 / questions
    sd = 100.0 * np.sqrt((rate_a * (1 - rate_a) + rate_b * (1 - rate_b)) / questions)
    centre = 100.0 * (rate_a - rate_b)
    width = step * max(1, round((9 * sd / 45) / step))
    lo = -step / 2 - width * np.ceil((step / 2 + 4.5 * sd - centre) / width)
    hi = -step / 2 + width * np.ceil((centre + 4.5 * sd + step / 2) / width)
    return np.arange(lo, hi + width / 2, width)


def leaderboard_figures(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    one_run: pd.DataFrame,
    spread: float = 1.0,
    level: float = 0.95,
) -> dict:
    """The five leaderboard figures (seed 000), keyed by name.

    Parameters
    ----------
    table : DataFrame
        The combined leaderboard table (all settings).
    runs, one_run : DataFrame
        :class:`LeaderboardResult` ``runs`` and ``one_run`` of the figure's setting.
    spread : float
        Spread of that setting; figure (d) plots every table row with this spread.
    level : float
        Level of the Wilson whiskers and bands.

    Returns
    -------
    dict of matplotlib Figure
        ``one_run`` (a), ``leader_grid`` (b), ``difference_histogram`` (c),
        ``decision_rules`` (d), ``played_out`` (e).
    """
    from .plotting import figure, percent_axis

    questions = int(one_run["question"].max())
    wide = one_run.pivot(index="question", columns="model", values="correct").sort_index()
    labels = list(wide.columns)
    colours = _model_colours(labels)
    model_info = one_run.drop_duplicates("model").set_index("model").loc[labels]
    true_rates = model_info["true_rate"].to_numpy()
    counts = wide.to_numpy().sum(axis=0)
    figures = {}

    # (a) one run's leaderboard
    low, high = wilson_interval(counts, questions, level)
    observed = counts / questions
    order = np.argsort(model_info["final_rank"].to_numpy())[::-1]  # best at the top
    with figure(figsize=(7, 3.8)) as (fig, ax):
        y = np.arange(len(labels))
        for pos, idx in zip(y, order):
            ax.barh(pos, observed[idx], color=colours[labels[idx]], alpha=0.85)
            ax.errorbar(
                observed[idx],
                pos,
                xerr=[[observed[idx] - low[idx]], [high[idx] - observed[idx]]],
                fmt="none",
                ecolor="black",
                capsize=4,
                lw=1.5,
            )
            ax.vlines(
                true_rates[idx], pos - 0.4, pos + 0.4, colors="black", linestyles="--", lw=1.2
            )
        ax.set_yticks(y, [f"{labels[i]} (true {true_rates[i]:.0%})" for i in order])
        lowest = min(low.min(), true_rates.min())
        ax.set_xlim(max(0.0, lowest - 0.05), min(1.0, high.max() + 0.03))
        percent_axis(ax.xaxis)
        ax.set_xlabel(
            f"Observed score on {questions} questions (whisker: {level:.0%} Wilson interval; dashed: true rate)"
        )
        leader = labels[order[-1]]
        rank_a = int(model_info.loc["A", "final_rank"])
        if low.max() <= high.min():
            finding = "yet every model's interval overlaps every other's"
        else:
            finding = f"the truly best model A ranks {rank_a}"
        ax.set_title(
            f"One run of {questions} questions: {leader} ranks first, {finding}",
            loc="left",
            wrap=True,
        )
    figures["one_run"] = fig

    # (b) the leader's questions as a pass/fail grid
    from matplotlib.colors import ListedColormap

    leader = labels[order[-1]]
    passes = wide[leader].to_numpy()
    columns = 20 if questions <= 400 else 50
    rows_needed = int(np.ceil(questions / columns))
    grid = np.full(rows_needed * columns, np.nan)
    grid[:questions] = passes
    with figure(figsize=(6.4, max(2.2, 0.3 * rows_needed + 1.2))) as (fig, ax):
        ax.imshow(
            grid.reshape(rows_needed, columns),
            cmap=ListedColormap(["#3b3b3b", "#F0E442"]),
            vmin=0,
            vmax=1,
            aspect="equal",
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        ax.set_xlabel(f"Each cell is one question: bright = pass, dark = fail ({columns} per row)")
        ax.set_title(
            f"The leader's score is a count: {leader} passed {int(passes.sum())} of {questions} questions "
            f"({passes.mean():.1%})",
            loc="left",
            wrap=True,
        )
    figures["leader_grid"] = fig

    # (c) histogram of A - B over runs
    diffs = runs["a_minus_b_points"].to_numpy()
    bins = _difference_bins(questions, true_rates[0], true_rates[1])
    hist, edges = np.histogram(np.clip(diffs, bins[0], bins[-1]), bins=bins)
    share = hist / diffs.size
    mean, sd = diffs.mean(), diffs.std(ddof=1)
    below = float((diffs < 0).mean())
    with figure(figsize=(7, 3.8)) as (fig, ax):
        ax.axvspan(mean - 2 * sd, mean + 2 * sd, color="#0072B2", alpha=0.06, lw=0, label="±2 SD")
        ax.axvspan(mean - sd, mean + sd, color="#0072B2", alpha=0.12, lw=0, label="±1 SD")
        negative = edges[1:] <= 0
        ax.bar(
            edges[:-1][~negative],
            share[~negative],
            width=np.diff(edges)[~negative],
            align="edge",
            color="#0072B2",
            edgecolor="white",
            lw=0.3,
        )
        ax.bar(
            edges[:-1][negative],
            share[negative],
            width=np.diff(edges)[negative],
            align="edge",
            color="#D55E00",
            alpha=0.5,
            hatch="///",
            edgecolor="#D55E00",
            lw=0.3,
            label="B scored higher",
        )
        ax.axvline(mean, color="black", ls="--", lw=1.2, label=f"mean {mean:+.1f} points")
        ax.axvline(0, color="black", lw=0.8)
        ax.text(
            edges[0] + 0.02 * (edges[-1] - edges[0]),
            share.max() * 0.92,
            f"B above A:\n{below:.1%} of runs",
            color="#D55E00",
            fontweight="bold",
            va="top",
        )
        ax.set_xlim(edges[0], edges[-1])
        percent_axis(ax.yaxis, decimals=1)
        ax.set_xlabel(
            f"Observed A − B in points ({questions} questions each, {diffs.size:,} runs; true gap "
            f"{100 * (true_rates[0] - true_rates[1]):.0f} points)"
        )
        ax.set_ylabel("Share of runs")
        ax.legend(loc="upper right", fontsize=8)
        ax.set_title(
            f"The truly worse model B scores higher in {below:.0%} of runs at {questions} questions",
            loc="left",
            wrap=True,
        )
    figures["difference_histogram"] = fig

    # (d) WRONG and UNDECIDED across N
    curve = table[np.isclose(table["spread"], spread)].sort_values("questions")
    names = {
        "higher_score_wins": "HIGHER SCORE WINS",
        "intervals_must_not_overlap": "INTERVALS MUST NOT OVERLAP",
    }
    with figure(1, 2, figsize=(9, 3.8), sharey=True) as (fig, axes):
        for ax, measure in zip(axes, ("wrong", "undecided")):
            for i, rule in enumerate(DECISION_RULES):
                part = curve[curve["rule"] == rule]
                ax.errorbar(
                    part["questions"],
                    part[measure],
                    yerr=1.96 * part[f"{measure}_se"],
                    marker="o",
                    ms=4,
                    capsize=2,
                    label=names[rule],
                    color=["#D55E00", "#0072B2"][i],
                )
            ax.set_xscale("log")
            ticks = curve["questions"].unique()
            ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
            ax.minorticks_off()
            ax.set_xlabel("Questions per model")
            ax.set_ylim(-0.02, 1.02)
            percent_axis(ax.yaxis)
            ax.set_title(
                f"{measure.upper()}: share of runs "
                + ("picking B" if measure == "wrong" else "with no pick"),
                fontsize=10,
            )
        axes[0].legend(fontsize=8)
        here = curve[curve["questions"] == questions].set_index("rule")
        if not here.empty:
            fig.suptitle(
                f"At {questions} questions, HIGHER SCORE WINS picks the worse model in "
                f"{here.loc['higher_score_wins', 'wrong']:.0%} of runs; NON-OVERLAP is wrong in "
                f"{here.loc['intervals_must_not_overlap', 'wrong']:.1%} because it declines in "
                f"{here.loc['intervals_must_not_overlap', 'undecided']:.0%}",
                fontweight="bold",
                fontsize=10.5,
                wrap=True,
            )
    figures["decision_rules"] = fig

    # (e) one run played out question by question
    cumulative = wide.to_numpy().cumsum(axis=0)
    answered = np.arange(1, questions + 1)[:, None]
    running = cumulative / answered
    run_low, run_high = wilson_interval(cumulative, answered, level)
    top = cumulative.max(axis=1, keepdims=True)
    unique_leader = (cumulative == top).sum(axis=1) == 1
    leader_index = np.where(unique_leader, cumulative.argmax(axis=1), -1)
    # Carry the last unique leader through ties, then count hand-overs.
    last_seen = np.maximum.accumulate(np.where(leader_index >= 0, np.arange(questions), 0))
    carried = np.where(leader_index[last_seen] >= 0, leader_index[last_seen], -1)
    changes = np.flatnonzero((carried[1:] != carried[:-1]) & (carried[:-1] >= 0)) + 1
    with figure(figsize=(8, 4.2)) as (fig, ax):
        for j, label in enumerate(labels):
            ax.fill_between(
                answered[:, 0],
                run_low[:, j],
                run_high[:, j],
                color=colours[label],
                alpha=0.07,
                lw=0,
            )
            ax.plot(
                answered[:, 0],
                running[:, j],
                color=colours[label],
                lw=1.4,
                label=f"{label} (true {true_rates[j]:.0%})",
            )
        y_floor = max(0.0, true_rates.min() - 0.3)
        for q in changes:
            ax.plot(q, y_floor + 0.01, marker="|", ms=10, color=colours[labels[carried[q]]])
        ax.set_ylim(y_floor, 1.0)
        ax.set_xlim(1, questions)
        percent_axis(ax.yaxis)
        ax.set_xlabel(
            f"Questions answered (bands: {level:.0%} Wilson interval; ticks at the bottom: lead changes)"
        )
        ax.set_ylabel("Running score")
        fig.legend(ncols=5, fontsize=8, loc="outside lower center")
        ax.set_title(
            f"Played out question by question, the lead changes hands {changes.size} times in {questions} questions",
            loc="left",
            wrap=True,
        )
    figures["played_out"] = fig
    return figures


def precision_figures(precision: pd.DataFrame, needed: pd.DataFrame, level: float = 0.95) -> dict:
    """Half-width curve over N (``halfwidth``) and questions needed per gap (``questions_needed``)."""
    from .plotting import PALETTE, figure

    figures = {}
    rate = float(precision["rate"].iloc[0])
    grid = np.geomspace(30, 30_000, 300)
    with figure(figsize=(7, 4)) as (fig, ax):
        ax.plot(grid, 100 * wilson_halfwidth(rate, grid, level), color=PALETTE[0], lw=1.8)
        ax.plot(precision["questions"], precision["half_width_points"], "o", color=PALETTE[3])
        for n, h in zip(precision["questions"], precision["half_width_points"]):
            ax.annotate(
                f"±{h:.1f} at {n:,}", (n, h), textcoords="offset points", xytext=(6, 6), fontsize=9
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("Questions")
        ax.set_ylabel(f"Half-width of the {level:.0%} Wilson interval (points)")
        _plain_log_ticks(ax.xaxis, [30, 100, 300, 1000, 3000, 10_000, 30_000])
        _plain_log_ticks(ax.yaxis, [0.5, 1, 2, 5, 10, 20])
        first, last = precision.iloc[0], precision.iloc[-1]
        ax.set_title(
            f"Four times the questions halves the interval: ±{first['half_width_points']:.1f} points at "
            f"{int(first['questions']):,} questions, ±{last['half_width_points']:.1f} at {int(last['questions']):,} "
            f"(score {rate:.0%})",
            loc="left",
            wrap=True,
        )
    figures["halfwidth"] = fig

    gaps = np.geomspace(0.5, 20, 200)
    with figure(figsize=(7.5, 4.4)) as (fig, ax):
        unpaired = needed[needed["design"] == "unpaired"]
        sds = float(unpaired["sds"].iloc[0])
        ax.plot(
            gaps,
            questions_to_resolve_unpaired(gaps / 100, rate, sds),
            color="black",
            lw=2,
            label=f"unpaired ({unpaired['source'].iloc[0]})",
        )
        ax.plot(unpaired["gap_points"], unpaired["questions_per_model"], "o", color="black")
        for g, q in zip(unpaired["gap_points"], unpaired["questions_per_model"]):
            ax.annotate(f"{q:,.0f}", (g, q), textcoords="offset points", xytext=(5, 4), fontsize=9)
        paired = needed[needed["design"] == "paired"]
        for i, (label, part) in enumerate(paired.groupby("source", sort=False)):
            delta = float(part["disagreement"].iloc[0])
            ax.plot(
                gaps,
                questions_to_resolve_paired(gaps / 100, delta, sds),
                color=PALETTE[(i + 1) % 8],
                lw=1.6,
                ls="-" if label.startswith("data") else "--",
                label=f"paired, δ = {delta:.2f} ({label})",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_ticks(ax.xaxis, [0.5, 1, 2, 5, 10, 20])
        _plain_log_ticks(ax.yaxis, [10, 100, 1000, 10_000, 100_000])
        ax.set_xlabel("True gap between the two models (points)")
        ax.set_ylabel("Questions per model")
        ax.legend(fontsize=8)
        # The title's example: a 2-point gap (or the table's middle gap), paired at the measured
        # disagreement if there is one, else at the lowest illustrative rate.
        gap_shown = (
            2.0
            if np.isclose(needed["gap_points"], 2.0).any()
            else float(unpaired["gap_points"].median())
        )
        at_gap = needed[np.isclose(needed["gap_points"], gap_shown)]
        title = f"Resolving a gap at {sds:g} SDs needs {2 * sds**2 * rate * (1 - rate):.2f}/gap² questions unpaired"
        paired_at_gap = at_gap[at_gap["design"] == "paired"]
        if not paired_at_gap.empty:
            from_data = paired_at_gap[paired_at_gap["source"].str.startswith("data")]
            shown = (
                from_data.iloc[0]
                if not from_data.empty
                else paired_at_gap.sort_values("disagreement").iloc[0]
            )
            title = (
                f"A {gap_shown:g}-point gap needs {at_gap.iloc[0]['questions_per_model']:,.0f} questions per "
                f"model unpaired, {shown['questions_per_model']:,.0f} paired when the models disagree on "
                f"{shown['disagreement']:.0%} of questions"
            )
        ax.set_title(title, loc="left", wrap=True)
    figures["questions_needed"] = fig
    return figures


_METHOD_NAMES = {
    "uncorrected": "Uncorrected pairwise",
    "bonferroni": "Bonferroni",
    "holm": "Holm",
    "rm_anova": "RM-ANOVA (omnibus)",
    "friedman": "Friedman (omnibus)",
}


def fwer_figures(table: pd.DataFrame, models: int = 4, questions: int = 400) -> dict:
    """FWER by method at K = ``models`` (``methods``), FWER across K (``models``), and power (``power``)."""
    from .plotting import PALETTE, figure, percent_axis

    figures = {}
    colours = dict(zip(_FWER_METHODS, PALETTE))
    null = table[(table["gap"] == 0) & (table["questions"] == questions)]

    # Methods at K models, one group of bars per rho.
    at_k = null[null["models"] == models]
    rhos = sorted(at_k["rho"].unique())
    with figure(figsize=(8, 4.2)) as (fig, ax):
        width = 0.8 / max(1, len(rhos))
        for j, rho in enumerate(rhos):
            part = at_k[at_k["rho"] == rho].set_index("method").loc[list(_FWER_METHODS)]
            x = np.arange(len(_FWER_METHODS)) + (j - (len(rhos) - 1) / 2) * width
            ax.bar(
                x,
                part["fwer"],
                width=width * 0.95,
                yerr=1.96 * part["fwer_se"],
                capsize=2,
                color=[colours[m] for m in _FWER_METHODS],
                alpha=0.45 + 0.5 * (j + 1) / len(rhos),
                edgecolor="black",
                lw=0.4,
            )
            for xi, v, se in zip(x, part["fwer"], part["fwer_se"]):
                ax.text(xi, v + 1.96 * se + 0.004, f"{v:.3f}", ha="center", va="bottom", fontsize=7)
        alpha = float(at_k["alpha"].iloc[0])
        ax.axhline(alpha, color="black", ls="--", lw=1, label=f"nominal α = {alpha:g}")
        ax.axhline(
            float(at_k["studentized_range_fwer"].iloc[0]),
            color=PALETTE[0],
            ls="-.",
            lw=1,
            label=f"studentized range, exact: {at_k['studentized_range_fwer'].iloc[0]:.4f}",
        )
        ax.axhline(
            float(at_k["independent_tests_fwer"].iloc[0]),
            color="grey",
            ls=":",
            lw=1.2,
            label=f"if the {models * (models - 1) // 2} tests were independent: "
            f"{at_k['independent_tests_fwer'].iloc[0]:.3f}",
        )
        ax.set_xticks(
            np.arange(len(_FWER_METHODS)), [_METHOD_NAMES[m] for m in _FWER_METHODS], fontsize=8
        )
        percent_axis(ax.yaxis)
        ax.set_ylabel("Family-wise error rate")
        ax.set_xlabel(
            "Bars within a method, left to right (darker = larger): ρ = "
            + ", ".join(f"{r:g}" for r in rhos)
            + " (correlation of the models' conditional mean scores)",
            fontsize=8,
        )
        ax.set_ylim(0, max(0.3, float(at_k["fwer"].max()) + 0.06))
        ax.legend(fontsize=8, loc="center right")
        main = at_k[np.isclose(at_k["rho"], 0.5)] if np.isclose(at_k["rho"], 0.5).any() else at_k
        main = main.set_index("method")
        ax.set_title(
            f"{models} models, {questions} shared questions, true null: uncorrected pairwise tests make a false "
            f"claim in {main.loc['uncorrected', 'fwer']:.0%} of replications; Bonferroni, Holm and the omnibus "
            f"tests stay near {alpha:.0%}",
            loc="left",
            wrap=True,
        )
    figures["methods"] = fig

    # FWER across K at the main rho.
    rho_main = 0.5 if np.isclose(null["rho"], 0.5).any() else float(null["rho"].iloc[0])
    curve = null[np.isclose(null["rho"], rho_main)].sort_values("models")
    ks = np.arange(2, max(12, int(curve["models"].max())) + 1)
    alpha = float(curve["alpha"].iloc[0])
    with figure(figsize=(8, 4.4)) as (fig, ax):
        ax.plot(
            ks,
            studentized_range_fwer(ks, alpha),
            color="black",
            lw=1.8,
            label="exact (studentized range)",
        )
        ax.plot(
            ks,
            independent_tests_fwer(ks, alpha),
            color="grey",
            ls=":",
            lw=1.5,
            label="independent-tests benchmark",
        )
        for method in _FWER_METHODS:
            part = curve[curve["method"] == method]
            ax.errorbar(
                part["models"],
                part["fwer"],
                yerr=1.96 * part["fwer_se"],
                marker="o",
                ms=3.5,
                capsize=2,
                lw=1,
                color=colours[method],
                label=f"{_METHOD_NAMES[method]} (simulated)",
            )
        ax.axhline(alpha, color="black", ls="--", lw=0.8)
        ax.set_xticks(ks)
        ax.set_xlabel("Models compared (K)")
        ax.set_ylabel("Family-wise error rate")
        percent_axis(ax.yaxis)
        ax.legend(fontsize=8, loc="upper left")
        top = curve[(curve["method"] == "uncorrected")].iloc[-1]
        ax.set_title(
            f"Uncorrected pairwise tests: false claims in {top['fwer']:.0%} of null replications at K = "
            f"{int(top['models'])} (exact {top['studentized_range_fwer']:.0%}); corrections hold {alpha:.0%}",
            loc="left",
            wrap=True,
        )
    figures["models"] = fig

    # Power under a true gap: one row of panels per gap, "any found" and "all found".
    power = table[table["gap"] > 0]
    gaps = sorted(power["gap"].unique())
    with figure(
        max(1, len(gaps)), 2, figsize=(10, 4 * max(1, len(gaps))), sharey=True, squeeze=False
    ) as (fig, axes):
        for row, gap in zip(axes, gaps):
            part = power[power["gap"] == gap]
            for ax, measure in zip(row, ("power_any", "power_all")):
                for method in _FWER_METHODS:
                    m = part[part["method"] == method].sort_values("models")
                    if m[measure].isna().all():
                        continue
                    ax.errorbar(
                        m["models"],
                        m[measure],
                        yerr=1.96 * m[f"{measure}_se"],
                        marker="o",
                        ms=3.5,
                        capsize=2,
                        lw=1.2,
                        ls=":" if method == "bonferroni" else "-",
                        color=colours[method],
                        label=_METHOD_NAMES[method],
                    )
                ax.set_xticks(sorted(part["models"].unique()))
                ax.set_xlabel("Models compared (K)")
                ax.set_ylim(0, 1.02)
                percent_axis(ax.yaxis)
            row[0].set_title(f"Gap {100 * gap:g} points: at least one true gap found", fontsize=10)
            row[1].set_title(f"Gap {100 * gap:g} points: all K − 1 true gaps found", fontsize=10)
            row[0].set_ylabel("Power")
        axes[0][0].legend(fontsize=8, loc="lower left")
        shown = power[(power["gap"] == gaps[0]) & (power["models"] == models)] if gaps else power
        if not shown.empty:
            g = shown.set_index("method")
            fig.suptitle(
                f"Multiplicity costs power: with one of {models} models better by {100 * gaps[0]:g} points, "
                f"Holm finds a true gap in {g.loc['holm', 'power_any']:.0%} of replications and all "
                f"{models - 1} in {g.loc['holm', 'power_all']:.0%}; uncorrected tests: "
                f"{g.loc['uncorrected', 'power_any']:.0%} and {g.loc['uncorrected', 'power_all']:.0%}",
                fontweight="bold",
                fontsize=10.5,
                wrap=True,
            )
    figures["power"] = fig
    return figures


def clustered_figure(table: pd.DataFrame, level: float = 0.95):
    """SE ratio to the naive SE and interval coverage for each clustering setting."""
    from .plotting import PALETTE, figure, percent_axis

    settings = table.drop_duplicates(["cluster_size", "icc"]).sort_values("design_effect")
    labels = [
        f"m = {m}, icc = {icc:g}\n({c} clusters)"
        for m, icc, c in zip(settings["cluster_size"], settings["icc"], settings["clusters"])
    ]
    estimators = {
        "naive": "naive",
        "clustered_miller": "clustered (Miller)",
        "mixed_model": "mixed model (REML)",
    }
    colours = dict(zip(estimators, [PALETTE[3], PALETTE[0], PALETTE[2]]))
    x = np.arange(len(settings))
    with figure(1, 2, figsize=(10, 4.2)) as (fig, axes):
        width = 0.26
        for j, (est, name) in enumerate(estimators.items()):
            part = (
                table[table["estimator"] == est]
                .set_index(["cluster_size", "icc"])
                .loc[list(zip(settings["cluster_size"], settings["icc"]))]
            )
            axes[0].bar(
                x + (j - 1) * width,
                part["se_ratio_to_naive"],
                width * 0.95,
                color=colours[est],
                label=name,
            )
            axes[1].bar(
                x + (j - 1) * width,
                part["coverage"],
                width * 0.95,
                yerr=1.96 * part["coverage_se"],
                capsize=2,
                color=colours[est],
                label=name,
            )
            if est == "clustered_miller":
                for xi, v in zip(x, part["se_ratio_to_naive"]):
                    axes[0].text(xi, v + 0.07, f"{v:.2f}×", ha="center", fontsize=8)
        axes[0].scatter(
            x,
            settings["analytic_se_ratio"],
            marker="_",
            s=600,
            color="black",
            zorder=3,
            label="√(design effect)",
        )
        axes[0].set_ylabel("SE ÷ naive SE (mean over replications)")
        axes[0].set_xticks(x, labels, fontsize=8)
        axes[0].legend(fontsize=8, loc="upper left")
        axes[1].axhline(level, color="black", ls="--", lw=1)
        axes[1].set_ylim(0.5, 1.0)
        axes[1].set_xticks(x, labels, fontsize=8)
        axes[1].set_ylabel(f"Coverage of the {level:.0%} interval")
        percent_axis(axes[1].yaxis)
        worst = table[table["estimator"] == "naive"].sort_values("design_effect").iloc[-1]
        ratio = table[(table["estimator"] == "clustered_miller")].sort_values("design_effect")[
            "se_ratio_to_naive"
        ]
        fig.suptitle(
            f"Ignoring clusters understates the SE {ratio.iloc[0]:.1f}× to {ratio.iloc[-1]:.1f}×: naive "
            f"{level:.0%} intervals cover the true score in only {worst['coverage']:.0%} of replications "
            f"at cluster size {int(worst['cluster_size'])}",
            fontweight="bold",
            fontsize=10.5,
            wrap=True,
        )
    return fig


if __name__ == "__main__":
    _main()
