"""Run-to-run noise: a model's score variance split into questions, runs and samples, and what
it means for a gap.

A model evaluated in R runs (a seed, a date, a backend, a user simulator: anything that can
move every question at once), each with S samples of Q questions, gives scores
:math:`y_{qrs}`. The crossed random-effects model

.. math::

    y_{qrs} = \\mu + a_q + b_r + e_{qrs}, \\qquad a_q \\sim N(0, \\sigma^2_q),\\;
    b_r \\sim N(0, \\sigma^2_r),\\; e_{qrs} \\sim N(0, \\sigma^2_e),

(lme4: ``lmer(score ~ 1 + (1|question) + (1|run))``, samples nested in the question-by-run
cells) splits it into the between-question variance :math:`\\sigma^2_q`, the **run shift**
:math:`\\sigma^2_r` (a run's move of the whole accuracy, which more questions do not average
away) and the within-question sampling variance :math:`\\sigma^2_e`. Miller (2024) splits
:math:`\\sigma^2_q` from :math:`\\sigma^2_e`; the run term is what tau-bench#57's "8-9 points
between identical runs" is.

**Estimation** (:func:`crossed_variance_components`), by REML from the question-by-run cell
counts :math:`n_{qr}` and sums alone. With :math:`H = V/\\sigma^2_e = I + \\rho_q Z_q Z_q^\\top
+ \\rho_r Z_r Z_r^\\top`, the question blocks of :math:`D = I + \\rho_q Z_q Z_q^\\top` invert in
closed form (:math:`D_q^{-1} = I - \\gamma_q 1 1^\\top`, :math:`\\gamma_q = \\rho_q/(1 + m_q
\\rho_q)`, :math:`m_q = \\sum_r n_{qr}`), and the R run effects by Woodbury with the R x R
matrix :math:`I + \\rho_r Z_r^\\top D^{-1} Z_r`; so the profiled REML criterion

.. math::

    -2\\ell_R = (N - 1)\\Big(1 + \\log\\frac{2\\pi\\, r^\\top H^{-1} r}{N - 1}\\Big)
    + \\log|H| + \\log(1^\\top H^{-1} 1)

(lme4's ``REMLcrit``) costs O(QR + R^3) per evaluation, and is minimised over
:math:`\\theta = (\\sqrt{\\rho_q}, \\sqrt{\\rho_r}) \\ge 0` by L-BFGS-B. In the **balanced**
case (every question in every run with S samples) the ANOVA sums of squares of questions,
runs and the rest are independent scaled chi-squares with expectations
:math:`\\sigma^2_e + RS\\sigma^2_q`, :math:`\\sigma^2_e + QS\\sigma^2_r` and :math:`\\sigma^2_e`,
so REML is the ANOVA moment estimator in closed form,

.. math::

    \\hat\\sigma^2_e = MS_E, \\quad \\hat\\sigma^2_q = \\frac{MS_Q - MS_E}{RS}, \\quad
    \\hat\\sigma^2_r = \\frac{MS_R - MS_E}{QS},

where it is non-negative; at the boundary a negative component's mean square is pooled into
the error's (the REML maximum under the constraints), whichever pooling has the larger REML
likelihood (Searle, Casella and McCulloch 1992, ch. 4 and 6).

**What it means** (:func:`run_variance_table`): ``sd_run_points``, :math:`100\\sigma_r`;
``sd_rerun_points``, the SD of a whole rerun's accuracy on the same questions,
:math:`100\\sqrt{\\sigma^2_r + \\sigma^2_e/(QS)}`; ``detectable_gap_points``, the smallest gap
between two runs on the same questions that run-to-run noise alone lets a two-sided test at
level :math:`\\alpha` detect with the given power (:func:`detectable_run_gap`); the share of
**flaky** questions, whose samples disagree. :func:`run_aware_difference` puts the run term
into a paired comparison of two models, so a verdict can say whether it would survive a
rerun; :func:`gap_sign_by_run` gives the sign of the gap in each run.

References
----------
.. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to language model
   evaluations. arXiv:2411.00640.
.. [2] Searle, S. R., Casella, G. and McCulloch, C. E. (1992). Variance Components. Wiley.
.. [3] Bates, D., Mächler, M., Bolker, B. and Walker, S. (2015). Fitting linear mixed-effects
   models using lme4. Journal of Statistical Software 67(1) (the profiled REML criterion).
.. [4] Kalibera, T. and Jones, R. (2013). Rigorous benchmarking in reasonable time. ISMM '13,
   63-74 (repetitions at each level of a random-effects design; detectable differences).
.. [5] Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance
   components. Biometrics Bulletin 2(6), 110-114.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from evalbars.defaults import ALPHA, LEVEL, POWER
from evalbars.stats.cluster_robust import cr2_mean

__all__ = [
    "CrossedFit",
    "crossed_variance_components",
    "detectable_run_gap",
    "run_variance_table",
    "RunAwareDifference",
    "run_aware_difference",
    "RunSigns",
    "gap_sign_by_run",
]


@dataclass(frozen=True)
class CrossedFit:
    """REML variance components of ``score ~ 1 + (1|question) + (1|run)`` for one model.

    Attributes
    ----------
    mean : float
        The intercept :math:`\\hat\\mu` (GLS; the plain mean when balanced).
    var_question, var_run, var_within : float
        :math:`\\hat\\sigma^2_q`, :math:`\\hat\\sigma^2_r` (NaN with one run) and
        :math:`\\hat\\sigma^2_e`.
    reml_criterion : float
        lme4's ``REMLcrit`` at the estimates.
    method : str
        ``"anova"`` (balanced: closed form) or ``"reml"`` (numerical).
    questions, runs, samples : int
        Questions, runs and scored samples.
    balanced : bool
        Every question in every run with the same number of samples.
    """

    mean: float
    var_question: float
    var_run: float
    var_within: float
    reml_criterion: float
    method: str
    questions: int
    runs: int
    samples: int
    balanced: bool


def _cells(questions, runs, scores):
    """Cell counts and sums (questions x runs) of the centred scores, their sum of squares and
    the centre."""
    y = np.asarray(scores, dtype=float)
    keep = np.isfinite(y)
    q_codes, _ = pd.factorize(np.asarray(questions)[keep], sort=True)
    r_codes, _ = pd.factorize(np.asarray(runs)[keep], sort=True)
    y = y[keep]
    centre = float(y.mean()) if y.size else 0.0
    y = y - centre
    shape = (q_codes.max() + 1, r_codes.max() + 1) if y.size else (0, 0)
    flat = np.ravel_multi_index((q_codes, r_codes), shape) if y.size else q_codes
    size = int(np.prod(shape))
    counts = np.bincount(flat, minlength=size).reshape(shape).astype(float)
    sums = np.bincount(flat, weights=y, minlength=size).reshape(shape)
    return counts, sums, float(y @ y), centre


def _reml_parts(rho_q, rho_r, counts, sums, squares):
    """``(pwrss, log|H|, 1'H^-1 1, 1'H^-1 y)`` at relative variances ``rho_q, rho_r``."""
    m, t = counts.sum(axis=1), sums.sum(axis=1)
    gamma = rho_q / (1.0 + m * rho_q)
    shrink = 1.0 - gamma * m
    one_one, one_y = m @ shrink, t @ shrink
    y_y = squares - gamma @ (t * t)
    log_det = float(np.log1p(m * rho_q).sum())
    if rho_r > 0:
        inner = np.diag(counts.sum(axis=0)) - (counts.T * gamma) @ counts  # Z_r' D^-1 Z_r
        w_one = counts.T @ shrink
        w_y = sums.sum(axis=0) - counts.T @ (gamma * t)
        b = np.eye(inner.shape[0]) + rho_r * inner
        solved = np.linalg.solve(b, np.column_stack([w_one, w_y]))
        one_one -= rho_r * w_one @ solved[:, 0]
        one_y -= rho_r * w_one @ solved[:, 1]
        y_y -= rho_r * w_y @ solved[:, 1]
        log_det += float(np.linalg.slogdet(b)[1])
    return y_y - one_y**2 / one_one, log_det, one_one, one_y


def _reml_criterion(rho_q, rho_r, counts, sums, squares):
    """lme4's REMLcrit at ``rho_q, rho_r``, with the intercept and sigma^2 of that point."""
    total = counts.sum()
    pwrss, log_det, one_one, one_y = _reml_parts(rho_q, rho_r, counts, sums, squares)
    pwrss = max(pwrss, 1e-300)
    sigma2 = pwrss / (total - 1)
    criterion = (total - 1) * (1 + np.log(2 * np.pi * sigma2)) + log_det + np.log(one_one)
    return float(criterion), sigma2, one_y / one_one


def _balanced_rhos(counts, sums, squares):
    """REML ``(rho_q, rho_r)`` of a balanced design in closed form (ANOVA, pooled at 0)."""
    n_q, n_r = counts.shape
    per_cell = counts[0, 0]
    ss_q = (sums.sum(axis=1) ** 2).sum() / (n_r * per_cell)
    ss_r = (sums.sum(axis=0) ** 2).sum() / (n_q * per_cell)
    ss_e = squares - ss_q - ss_r  # the scores are centred: no mean term
    sums_of_squares = np.array([ss_q, ss_r, ss_e])
    dfs = np.array([n_q - 1, n_r - 1, counts.sum() - n_q - n_r + 1], dtype=float)
    best, best_rhos = -np.inf, (0.0, 0.0)
    # Pool the question and/or the run mean square into the error's, all four ways; keep the
    # feasible pooling (components >= 0) with the largest REML likelihood.
    for pool_q in (False, True):
        for pool_r in (False, True):
            pooled = [2] + [0] * pool_q + [1] * pool_r
            error = sums_of_squares[pooled].sum() / dfs[pooled].sum()
            lam = np.where(dfs > 0, sums_of_squares / np.where(dfs > 0, dfs, 1.0), error)
            lam[pooled] = error
            if lam[0] < error or lam[1] < error:
                continue
            used = dfs > 0
            likelihood = -(dfs[used] * np.log(lam[used]) + sums_of_squares[used] / lam[used]).sum()
            if likelihood > best + 1e-12 * abs(best if np.isfinite(best) else 1.0):
                rho_q = (lam[0] - error) / (n_r * per_cell) / error
                rho_r = (lam[1] - error) / (n_q * per_cell) / error
                best, best_rhos = likelihood, (rho_q, rho_r)
    return best_rhos


def _numerical_rhos(counts, sums, squares, one_run: bool):
    """REML ``(rho_q, rho_r)`` by L-BFGS-B on the standard-deviation ratios (lme4's theta)."""

    def objective(theta):
        return _reml_criterion(theta[0] ** 2, theta[1] ** 2, counts, sums, squares)[0]

    starts = [np.array([0.5, 0.0 if one_run else 0.2]), np.array([1.0, 0.0 if one_run else 0.5])]
    bounds = [(0.0, None), (0.0, 0.0) if one_run else (0.0, None)]
    best = None
    for start in starts:
        found = optimize.minimize(
            objective,
            start,
            method="L-BFGS-B",
            bounds=bounds,
            options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000},
        )
        if best is None or found.fun < best.fun:
            best = found
    # The criterion's minimum may sit on a boundary (a component 0); try each.
    for fixed in ([0.0, None], [None, 0.0]):
        candidate = best.x.copy()
        index = 0 if fixed[0] is not None else 1
        candidate[index] = 0.0
        if objective(candidate) < best.fun:
            best = optimize.minimize(
                objective,
                candidate,
                method="L-BFGS-B",
                bounds=[(0.0, 0.0) if i == index else bounds[i] for i in range(2)],
                options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 2000},
            )
    return best.x[0] ** 2, best.x[1] ** 2


def crossed_variance_components(questions, runs, scores) -> CrossedFit:
    """REML fit of ``score ~ 1 + (1|question) + (1|run)`` with samples nested in cells.

    Parameters
    ----------
    questions, runs : array_like, shape (N,)
        Question and run label of each sample.
    scores : array_like, shape (N,)
        Each sample's score (0/1 or partial credit); NaN rows are dropped.

    Returns
    -------
    CrossedFit

    Notes
    -----
    The module notes give the criterion and the balanced closed form. With one run the run
    component is not estimable: ``var_run`` is NaN and the model is ``(1|question)`` alone.

    Examples
    --------
    Two runs of three questions, two samples each; the second run is one point lower on every
    question:

    >>> q = np.repeat(["a", "b", "c"], 4)
    >>> r = np.tile([1, 1, 2, 2], 3)
    >>> y = np.array([0.9, 0.7, 0.8, 0.6, 0.5, 0.3, 0.4, 0.2, 0.2, 0.0, 0.1, -0.1])
    >>> fit = crossed_variance_components(q, r, y)
    >>> fit.method, round(fit.var_question, 6), round(fit.var_run, 6), round(fit.var_within, 6)
    ('anova', 0.119583, 0.0025, 0.015)
    """
    counts, sums, squares, centre = _cells(questions, runs, scores)
    n_q, n_r = counts.shape
    total = int(counts.sum())
    if n_q < 2 or total <= n_q + n_r - 1:
        raise ValueError(
            f"{n_q} questions and {total} samples: the question and residual variances need "
            "two or more questions and more samples than questions plus runs"
        )
    balanced = bool(np.all(counts == counts[0, 0]))
    one_run = n_r == 1
    if balanced:
        rho_q, rho_r = _balanced_rhos(counts, sums, squares)
        method = "anova"
    else:
        rho_q, rho_r = _numerical_rhos(counts, sums, squares, one_run)
        method = "reml"
    criterion, sigma2, mean = _reml_criterion(rho_q, rho_r, counts, sums, squares)
    return CrossedFit(
        mean=float(mean + centre),
        var_question=float(rho_q * sigma2),
        var_run=float("nan") if one_run else float(rho_r * sigma2),
        var_within=float(sigma2),
        reml_criterion=criterion,
        method=method,
        questions=int(n_q),
        runs=int(n_r),
        samples=total,
        balanced=balanced,
    )


def detectable_run_gap(var_run, var_within, samples_per_run, alpha=ALPHA, power=POWER):
    """Smallest gap between two runs on the same questions that run-to-run noise alone lets a
    two-sided test detect, in the score's units.

    Parameters
    ----------
    var_run, var_within : array_like
        :math:`\\sigma^2_r` and :math:`\\sigma^2_e`.
    samples_per_run : array_like
        Samples behind each run's mean (questions times samples per question).
    alpha, power : float
        Two-sided level and power.

    Returns
    -------
    ndarray
        :math:`(z_{1-\\alpha/2} + z_{1-\\beta})\\sqrt{2(\\sigma^2_r + \\sigma^2_e/n_{run})}`.

    Notes
    -----
    Two runs' means on the same questions differ by the two run shifts and their sampling
    noise (the question effects cancel), so their difference has variance
    :math:`2(\\sigma^2_r + \\sigma^2_e/n_{run})`; the usual minimum detectable difference of a
    z test follows (Kalibera and Jones 2013 use the same logic for benchmark repetitions).
    A gap between two configurations smaller than this, seen in one run each, is within what
    reruns of one configuration produce.

    Examples
    --------
    A 2-point run SD, a 0.2 within-question variance and 1,000 samples a run: gaps under
    9.7 points are within what reruns do.

    >>> round(float(detectable_run_gap(0.0004, 0.2, 1000)), 5)
    0.09705
    """
    z = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    variance = 2 * (np.asarray(var_run, float) + np.asarray(var_within, float) / samples_per_run)
    return z * np.sqrt(variance)


def run_variance_table(
    samples: pd.DataFrame,
    *,
    score: str = "correct",
    alpha: float = ALPHA,
    power: float = POWER,
) -> pd.DataFrame:
    """Each model's variance components, run-to-run noise in points and flaky questions.

    Parameters
    ----------
    samples : DataFrame
        One row per sample: ``model, question_id, run`` and the ``score`` column.
    score : str
        The score column.
    alpha, power : float
        Level and power of ``detectable_gap_points``.

    Returns
    -------
    DataFrame
        One row per model: ``model, questions, runs, samples, mean, var_question, var_run,
        var_within, run_share, sd_run_points, sd_rerun_points, detectable_gap_points,
        flaky_questions, flaky_share, always_right, always_wrong, method, balanced,
        reml_criterion``. ``run_share`` is :math:`\\sigma^2_r/(\\sigma^2_q + \\sigma^2_r +
        \\sigma^2_e)`; ``flaky_questions`` counts questions with two or more samples that
        disagree (over all runs), ``flaky_share`` their share of such questions;
        ``always_right``/``always_wrong`` count questions whose every sample scored 1/0.

    Notes
    -----
    One REML fit per model (:func:`crossed_variance_components`; each its own small
    optimisation, nothing shared between models); the flaky counts are one grouped pass.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": "m", "question_id": np.repeat(["a", "b", "c"], 4),
    ...                      "run": np.tile([1, 1, 2, 2], 3),
    ...                      "correct": [1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0]})
    >>> table = run_variance_table(rows)
    >>> table[["questions", "runs", "flaky_questions", "always_wrong"]].values.tolist()
    [[3, 2, 2, 1]]
    """
    scored = samples[samples[score].notna()]
    per_question = scored.groupby(["model", "question_id"], sort=False, observed=True)[score]
    spread = per_question.agg(["min", "max", "size"]).reset_index()
    repeated = spread["size"] >= 2
    flags = pd.DataFrame(
        {
            "model": spread["model"],
            "repeated": repeated,
            "flaky": repeated & (spread["min"] != spread["max"]),
            "always_right": (spread["min"] == 1) & (spread["max"] == 1),
            "always_wrong": (spread["min"] == 0) & (spread["max"] == 0),
        }
    )
    flaky = flags.groupby("model", sort=False, observed=True).sum()
    rows = []
    for model, table in scored.groupby("model", sort=False, observed=True):
        fit = crossed_variance_components(table["question_id"], table["run"], table[score])
        per_run = fit.samples / fit.runs
        total = fit.var_question + np.nan_to_num(fit.var_run) + fit.var_within
        rows.append(
            {
                "model": model,
                "questions": fit.questions,
                "runs": fit.runs,
                "samples": fit.samples,
                "mean": fit.mean,
                "var_question": fit.var_question,
                "var_run": fit.var_run,
                "var_within": fit.var_within,
                "run_share": fit.var_run / total if total > 0 else np.nan,
                "sd_run_points": 100 * np.sqrt(fit.var_run),
                "sd_rerun_points": 100 * np.sqrt(fit.var_run + fit.var_within / per_run),
                "detectable_gap_points": 100
                * float(detectable_run_gap(fit.var_run, fit.var_within, per_run, alpha, power)),
                "flaky_questions": int(flaky.loc[model, "flaky"]),
                "flaky_share": flaky.loc[model, "flaky"] / max(flaky.loc[model, "repeated"], 1),
                "always_right": int(flaky.loc[model, "always_right"]),
                "always_wrong": int(flaky.loc[model, "always_wrong"]),
                "method": fit.method,
                "balanced": fit.balanced,
                "reml_criterion": fit.reml_criterion,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class RunAwareDifference:
    """A paired difference of two models' accuracies whose SE counts run-to-run shifts.

    Attributes
    ----------
    model_a, model_b : str
        The pair (difference is A minus B).
    difference : float
        Mean over shared questions of A's minus B's question means (all runs and samples).
    se_questions, df_questions : float
        CR2 SE of that mean over questions (clusters given, else questions) and its df: the
        usual paired SE, blind to run shifts (a shift moves every question alike).
    var_run_a, var_run_b : float
        Each model's :math:`\\hat\\sigma^2_r` (NaN with one run).
    runs_a, runs_b : int
        Runs of each model.
    se_with_runs, df : float
        :math:`\\sqrt{SE_q^2 + \\sigma^2_{r,A}/R_A + \\sigma^2_{r,B}/R_B}` and its Satterthwaite
        df; NaN where a model has one run (the shift is then not estimable).
    ci_low, ci_high, p_value : float
        The t interval and two-sided p with ``se_with_runs``.
    decided_without_runs, survives_rerun : bool
        Whether the interval without, and with, the run term excludes 0.
    """

    model_a: str
    model_b: str
    difference: float
    se_questions: float
    df_questions: float
    var_run_a: float
    var_run_b: float
    runs_a: int
    runs_b: int
    se_with_runs: float
    df: float
    ci_low: float
    ci_high: float
    p_value: float
    decided_without_runs: bool
    survives_rerun: bool


def run_aware_difference(
    samples: pd.DataFrame,
    model_a: str,
    model_b: str,
    *,
    score: str = "correct",
    clusters: str | None = None,
    level: float = LEVEL,
) -> RunAwareDifference:
    """The paired difference of two models with runs as a random effect.

    Parameters
    ----------
    samples : DataFrame
        One row per sample: ``model, question_id, run``, ``score`` and, if ``clusters`` is
        given, that column.
    model_a, model_b : str
        The pair.
    score : str
        The score column.
    clusters : str, optional
        A column (e.g. ``category``) to cluster the question-level SE by (CR2).
    level : float
        Confidence level.

    Returns
    -------
    RunAwareDifference

    Notes
    -----
    With :math:`d_q = \\bar y_{A,q} - \\bar y_{B,q}` over the Q shared questions and each
    model's runs drawn independently,

    .. math::

        \\mathrm{Var}(\\bar d) = \\frac{\\sigma^2_d}{Q} + \\frac{\\sigma^2_{r,A}}{R_A}
        + \\frac{\\sigma^2_{r,B}}{R_B},

    where the first term is the usual paired variance (run shifts are constant over questions
    and cancel from :math:`\\sigma^2_d` but not from :math:`\\bar d`) and the run variances
    come from each model's crossed fit (:func:`crossed_variance_components`) on the shared
    questions. The degrees of freedom are Satterthwaite's (1946), with :math:`R - 1` for each
    run term.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, r = np.repeat(np.arange(40), 6), np.tile(np.repeat([1, 2, 3], 2), 40)
    >>> shift = {"A": [0.1, -0.1, 0.0], "B": [0.0, 0.05, -0.05]}
    >>> frames = [pd.DataFrame({"model": m, "question_id": q, "run": r,
    ...           "correct": (rng.random(q.size) < 0.5 + 0.1 * (m == "A")
    ...                       + np.take(shift[m], r - 1)).astype(float)}) for m in "AB"]
    >>> result = run_aware_difference(pd.concat(frames), "A", "B")
    >>> bool(result.se_with_runs > result.se_questions)
    True
    """
    pair = samples[samples["model"].isin([model_a, model_b]) & samples[score].notna()]
    shared = set(pair.loc[pair["model"] == model_a, "question_id"]) & set(
        pair.loc[pair["model"] == model_b, "question_id"]
    )
    pair = pair[pair["question_id"].isin(shared)]
    means = pair.groupby(["question_id", "model"], observed=True)[score].mean().unstack("model")
    d = (means[model_a] - means[model_b]).to_numpy()
    if clusters is None:
        labels = np.arange(d.size)
    else:
        first = pair.drop_duplicates("question_id").set_index("question_id")[clusters]
        labels = first.loc[means.index].astype(str).to_numpy()
    paired = cr2_mean(d, labels)
    fits = {
        m: crossed_variance_components(rows["question_id"], rows["run"], rows[score])
        for m, rows in pair.groupby("model", observed=True)
    }
    a, b = fits[model_a], fits[model_b]
    terms = np.array([paired.se**2, a.var_run / a.runs, b.var_run / b.runs])
    dfs = np.array([paired.df, a.runs - 1, b.runs - 1], dtype=float)
    variance = terms.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        df = variance**2 / np.sum(np.where(terms > 0, terms**2 / dfs, 0.0))
    se = float(np.sqrt(variance))
    half = float(special.stdtrit(df, 0.5 + level / 2)) * se
    p = float(2 * special.stdtr(df, -abs(paired.estimate) / se)) if se > 0 else np.nan
    low_q, high_q = paired.interval(level)
    return RunAwareDifference(
        model_a=model_a,
        model_b=model_b,
        difference=float(paired.estimate),
        se_questions=float(paired.se),
        df_questions=float(paired.df),
        var_run_a=a.var_run,
        var_run_b=b.var_run,
        runs_a=a.runs,
        runs_b=b.runs,
        se_with_runs=se,
        df=float(df),
        ci_low=float(paired.estimate - half),
        ci_high=float(paired.estimate + half),
        p_value=p,
        decided_without_runs=bool(low_q > 0 or high_q < 0),
        survives_rerun=bool(paired.estimate - half > 0 or paired.estimate + half < 0),
    )


@dataclass(frozen=True)
class RunSigns:
    """The gap of a pair in each run.

    Attributes
    ----------
    table : DataFrame
        ``run_a, run_b, accuracy_a, accuracy_b, gap, sign``, one row per compared pair of runs.
    pairing : str
        ``"run"`` (runs matched by label, both models having it) or ``"every pair"`` (no shared
        label: every run of A against every run of B).
    gap : float
        The gap pooled over all runs (A minus B, on the shared questions).
    holds_in_every_run : bool
        Every compared pair of runs has a gap of the pooled gap's sign (a zero gap breaks it).
    """

    table: pd.DataFrame
    pairing: str
    gap: float
    holds_in_every_run: bool


def gap_sign_by_run(
    samples: pd.DataFrame, model_a: str, model_b: str, *, score: str = "correct"
) -> RunSigns:
    """The sign of A's lead over B in each run, and whether it holds in every run.

    Parameters
    ----------
    samples : DataFrame
        One row per sample: ``model, question_id, run`` and ``score``.
    model_a, model_b : str
        The pair.
    score : str
        The score column.

    Returns
    -------
    RunSigns

    Notes
    -----
    Accuracies are over the questions both models answered. Runs are matched by label when
    the two models share run labels (a run = a seed or date both were run under), else every
    run of A is compared with every run of B.

    Examples
    --------
    >>> rows = pd.DataFrame({"model": ["A"] * 4 + ["B"] * 4, "question_id": ["x", "y"] * 4,
    ...                      "run": [1, 1, 2, 2] * 2, "correct": [1, 1, 1, 0, 0, 1, 1, 0]})
    >>> signs = gap_sign_by_run(rows, "A", "B")
    >>> signs.table["gap"].tolist(), signs.table["sign"].tolist(), signs.holds_in_every_run
    ([0.5, 0.0], [1, 0], False)
    """
    pair = samples[samples["model"].isin([model_a, model_b]) & samples[score].notna()]
    shared = set(pair.loc[pair["model"] == model_a, "question_id"]) & set(
        pair.loc[pair["model"] == model_b, "question_id"]
    )
    pair = pair[pair["question_id"].isin(shared)]
    per_run = pair.groupby(["model", "run"], observed=True, sort=True)[score].mean()
    side_a = per_run.loc[model_a].rename("accuracy_a").rename_axis("run_a").reset_index()
    side_b = per_run.loc[model_b].rename("accuracy_b").rename_axis("run_b").reset_index()
    common = set(side_a["run_a"]) & set(side_b["run_b"])
    if common:
        table = side_a.merge(side_b, left_on="run_a", right_on="run_b")
        pairing = "run"
    else:
        table = side_a.merge(side_b, how="cross")
        pairing = "every pair"
    table = table[["run_a", "run_b", "accuracy_a", "accuracy_b"]]
    table = table.assign(gap=table["accuracy_a"] - table["accuracy_b"])
    table["sign"] = np.sign(table["gap"]).astype(int)
    pooled = pair.groupby("model", observed=True)[score].mean()
    gap = float(pooled[model_a] - pooled[model_b])
    holds = bool(gap != 0 and (table["sign"] == np.sign(gap)).all())
    return RunSigns(table.reset_index(drop=True), pairing, gap, holds)
