"""Ranking claims as people write them, tested as stated, under several readings side by side.

Grammar
-------
A claim is one line; model and category names are those of the data (a close
spelling is suggested when one is unknown). Margins are in accuracy points.

===========================  ==================================================
``A > B``                    superiority (``A < B`` is read as ``B > A``)
``A > B + d``                superiority by a margin: A is more than d points better than B
``A >= B - d``               non-inferiority: A is at most d points worse than B
``|A - B| < d``              equivalence: A and B within d points of each other
``best: A``                  A beats every other model in the data
``top k: A``                 A is among the best k models (1 <= k < K)
``A >= B - d at <= x cost``  A at most d points worse than B, at <= x times B's cost
``A on frontier``            no model both more accurate and cheaper than A
``... at pass@K``            any of the above on that item score of the samples
``... in CATEGORY``          any of the above on that category's questions only
===========================  ==================================================

The two cost claims need a cost per question (a price table, or a cost column); they are read
under the paired readings only, their one-sided p from
:func:`evalbars.stats.cost.cost_claim_p` (:mod:`evalbars.readings.claims.sets`), in the
same family as the others. ``best``/``top k`` claims are also read against the confidence sets
(the ``mcb`` reading, unadjusted: a ``best: A`` claim is supported only when the set for the
best is {A}).

``at pass@K`` (or ``pass^K``, ``maj@K``) reads the claim on the matrix of that item score
of each question's samples, pooled over runs
(:func:`evalbars.stats.repeats.score_matrix.score_matrix`), whatever score the run reads:
every reading below takes it, and those that need one 0/1 sample per question do not apply
to it ("not applicable (pass@5 scores)").

Operators need spaces around them (model names contain hyphens).

Verdicts
--------
Every claim is a one-sided hypothesis about the gap :math:`\\Delta = acc_A - acc_B`
(proportion; margins d as proportions here). Each reading gives a one-sided p for
the claim and one for its opposite:

- superiority (by a margin d, 0 without one): claim :math:`\\Delta > d`; opposite
  :math:`\\Delta < d`;
- non-inferiority: claim :math:`\\Delta > -d`; opposite :math:`\\Delta < -d`;
- equivalence (two one-sided tests, Schuirmann 1987): claim
  :math:`-d < \\Delta < d` with p the larger of the two one-sided p; opposite
  :math:`|\\Delta| > d` with p the smaller of its two one-sided p;
- ``top k: A`` (``best`` is k = 1): claim "A beats at least K - k of the other
  K - 1 models". With the one-sided p of every "A > X" sorted,
  :math:`p = \\min(1, k\\,p_{(K-k)})`. Under the null (at least k models as good
  as A) a false verdict needs at least one of those k or more true nulls among
  the K - k rejections, and testing each comparison at level :math:`\\alpha/k`
  bounds that chance by :math:`\\alpha` for any dependence (Rueger 1978). For
  ``best`` (k = 1) this is the intersection-union test (Berger 1982): every
  "A > X" must be significant at the full level and no multiplicity penalty is
  needed, since the claim is false as soon as one comparison is. Opposite: "at
  least k other models beat A", :math:`p = \\min(1, (K-k)\\,q_{(k)})` with q the
  one-sided p of "X > A" (Bonferroni over the K - 1 rivals for ``best``).

Every one-sided p is **doubled** (``p = min(1, 2 p_one_sided)``) and compared with
alpha: ``supported`` and ``contradicted`` are then the two directional
conclusions of one two-sided test at alpha, so a claim "A > B" with A ahead has
exactly the two-sided p of ``pairwise.csv``, the verdict can be read off the
(1 - alpha) interval (``supported`` when it clears the threshold, CONSORT's
"two-sided 95% interval" rule for non-inferiority and equivalence, Piaggio et al.
2012), and the chance of any wrong verdict about one claim is at most alpha.
A claim is **supported** when its (adjusted) p < alpha, **contradicted** when the
opposite's (adjusted) p < alpha, and **not supported** otherwise.

A z reading whose SE is 0 (one shared question, two models that agree on every question,
or the same difference c on every one; a model-based SE below
:data:`evalbars.stats.pairwise.ZERO_SE` is round-off of 0) has no estimate of its sampling
error, and a zero-width interval is not evidence: the SE decides nothing. Such a reading has
no interval (its ``note`` says why: "no interval: 1 question", "no interval: identical on
every question", "no interval: the same difference on every question") and takes the exact
bound of seeing c on all n questions instead
(:func:`evalbars.stats.pairwise.zero_se_one_sided_p`, :math:`((1 + s)/(1 + c))^n` against
the null :math:`\\Delta \\le s`, valid for any scores in [0, 1]): 120 wins of 120 support
"A > B" (p = 2^-119), one shared question never does (p = 1), two identical models never
support "A > B" (p = 1). ``pairwise.csv``, the letters, the paired ranks, the gate and the
first screen decide such a pair by the same rule.

A claim whose comparison has no question both models answered (in its category, for
``... in CATEGORY``; against any rival, for ``best``/``top k``) is refused with one line
naming the claim and the two models, as ``evalbars compare`` refuses such a pair.

**Repeated samples and partial credit.** The exact readings (``mcnemar``, ``bayes``, and the
discordant odds ratio) read the pair's 2x2 table, so they need one 0/1 sample per (question,
model). Where any cell of a claim's comparisons (on their shared questions) holds repeated
samples (epochs) or a score that is not 0 or 1, they are ``n/a`` with the note "not
applicable (repeated samples per question)" or "not applicable (scores are not 0/1)", carry
no p and decide nothing (:func:`evalbars.stats.pairwise.exact_readings_reasons`, the one rule
of every table). A sign test on epoch means favours the model with fewer samples: with A
answering each question 3 times and B once at the same per-question probabilities
(:math:`p_q \\sim` Beta(3, 1), 300 questions, 20,000 simulated data sets), it contradicted
"A > B" in 62.8% of them and never supported it. The readings of per-question mean
differences stay valid whatever the numbers of samples (a cell mean is unbiased). In the same
setting, the share of data sets in which each reading found for B / for A (nominal 2.5%
each): paired z 3.0% / 2.4% (the differences of 3 samples against 1 are skewed, skewness 0.5,
and the asymmetry shrinks as :math:`1/\\sqrt n`; with :math:`p_q \\sim` Beta(8, 2) and 100
questions 3.5% / 2.0%), naive z 1.5% / 1.0% (conservative: it ignores the pairing), mixed
model 2.6% / 3.7% (1,000 data sets; Beta(8, 2), 100 questions: 2.2% / 2.9%).
Below :data:`evalbars.stats.bayes.Z_UNDERCOVERS_BELOW_N`
questions the answer then leads with the z readings and says the exact ones do not apply.

Readings (:func:`readings`, each a :class:`Reading`: the claims table's ``reading`` column is
its kind, and its ``adjustment`` column ``none`` or ``claims_options.adjust``, Holm by
default, written ``<adjust>`` below):

``naive``
    unpaired z (each model's own binomial SE), no adjustment;
``paired``
    paired z over shared questions (Miller 2024, Eq. 7), no adjustment;
``mcnemar``
    exact one-sided binomial test on the discordant questions (margin-free claims; one 0/1
    sample per question and model), no adjustment;
``bayes``
    the posterior of the difference under a uniform Dirichlet prior on the pair's 2x2 table
    (:func:`evalbars.stats.bayes.dirichlet_paired_posterior`; Bowyer, Aitchison and Ivanova
    2025, "Position: Don't use the CLT in LLM evals with fewer than a few hundred datapoints",
    arXiv:2503.01747): its ``p`` is twice the posterior probability that the claim is false
    (``supported`` when the claim's posterior probability exceeds 1 - alpha/2), the estimate and
    interval the posterior mean and equal-tailed (1 - alpha) credible interval; pair claims with
    one 0/1 sample per question and model only, no adjustment;
``paired`` with ``<adjust>``
    paired z, the family adjusted;
``mixed`` with ``<adjust>``
    Wald z of the nested mixed model's contrast (:func:`evalbars.stats.mixed.fit_lmm`,
    ``category_question``; on one category's questions, or data with one category,
    ``(1|question)``), the family adjusted;
``bootstrap``
    ``best``/``top k`` only: the category-stratified paired bootstrap of ranks
    (:func:`evalbars.readings.ranks.paired.bootstrap_accuracies`); supported when the central
    (1 - alpha) rank interval lies in [1, k], contradicted when it lies above k (Hall and Miller
    2009); no multiplicity adjustment.
``judge_corrected`` with ``<adjust>``
    where the scores are a judge's and some questions carry human labels
    (:mod:`evalbars.readings.judge_corrected`): the normal test of the PPI++ mean of the pair's
    per-question differences (arXiv:2311.01453), the family adjusted as the paired one is. It is
    the reading to quote on judge scores: the others test the judge's scores, biased as the
    judge is.

The ``paired`` and ``mcnemar`` rows also carry the effect sizes: the odds ratio of the
discordant questions with its exact interval (where the exact readings apply), and Cohen's h
of the two accuracies (:mod:`evalbars.stats.effect_sizes`). The ``note`` of a row says why a
reading does not apply or has no interval.

The **family** of the adjusted readings is the claims made (one hypothesis per
claim; ``best``/``top k`` enter with their combined p), plus, with
``family="claims_and_all_pairs"``, the two-sided tests of all K(K-1)/2 pairs on
all questions. Holm adjusts the claims' p and, separately, their opposites' p
over it. Intervals of adjusted readings use the Bonferroni level
:math:`1 - \\alpha/m` (Holm's verdict can be sharper).

For every claim the paired reading's observed gap g and disagreement rate
:math:`\\delta` (the mean square of the per-question differences: for one 0/1 sample per
cell the share of discordant questions) give the questions needed (:func:`evalbars.stats.planning.sample_size.questions_for_effect`,
variance :math:`\\delta - g^2`, at the per-test level :math:`\\alpha/m`, or
:math:`\\alpha/(mk)` for ``top k``) for the paired Holm verdict to be decided with the
requested power if the true gap were the observed one. The effect is the distance of g
from the claim's null boundary: :math:`|g - d|` for superiority (d = 0 without a margin),
:math:`|g|` for best and top k,
:math:`|g + d|` for non-inferiority with margin d, :math:`|d - |g||` for equivalence
(with :math:`z_{1-\\beta/2}` at g = 0, where both one-sided tests must reject);
``more_questions`` is how many the claim's scope lacks when it is not supported.

References
----------
.. [1] Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure
   and the power approach for assessing the equivalence of average
   bioavailability. J Pharmacokinet Biopharm 15, 657-680.
.. [2] Berger, R. L. (1982). Multiparameter hypothesis testing and acceptance
   sampling. Technometrics 24, 295-300.
.. [3] Rueger, B. (1978). Das maximale Signifikanzniveau des Tests "Lehne H0 ab,
   wenn k unter n gegebenen Tests zur Ablehnung fuehren". Metrika 25, 171-178.
.. [4] Piaggio, G. et al. (2012). Reporting of noninferiority and equivalence
   randomized trials: extension of the CONSORT 2010 statement. JAMA 308, 2594-2604.
.. [5] Hall, P. and Miller, H. (2009). Using the bootstrap to quantify the
   authority of an empirical ranking. Ann Stat 37, 3929-3959.
.. [6] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
   Scand J Stat 6, 65-70.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, DRAWS, POWER, SEED
from evalbars.readings.claims.parsing import (
    COST_KINDS,
    Claim,
    ClaimError,
    parse_claims,
    unshared_error,
)
from evalbars.readings.claims.reading import (
    ADJUSTMENT_TITLES,
    ADJUSTMENTS,
    FAMILIES,
    JUDGE_CORRECTED,
    READINGS,
    UNADJUSTED,
    Reading,
    readings,
    rows_of,
    table_readings,
)
from evalbars.readings.claims.scope import _bootstrap_ranks, _Scope, _scope
from evalbars.readings.claims.sets import SET_READING, cost_test, refuse_costless, set_reading
from evalbars.readings.ranks.unpaired import summarise_ranks
from evalbars.stats.bayes import dirichlet_paired_posterior, dirichlet_probability_above
from evalbars.stats.effect_sizes import cohens_h, discordant_odds_ratio
from evalbars.stats.pairwise import adjust_pvalues, zero_se_one_sided_p
from evalbars.stats.planning.sample_size import questions_for_effect

__all__ = [
    "READINGS",
    "ADJUSTMENTS",
    "JUDGE_CORRECTED",
    "FAMILIES",
    "CLAIM_COLUMNS",
    "UNADJUSTED",
    "ADJUSTMENT_TITLES",
    "Reading",
    "readings",
    "table_readings",
    "rows_of",
    "evaluate_claims",
    "claim_identity",
]

#: Posterior draws behind the Bayesian reading's interval and its margins' probabilities (the
#: probability of a margin-free claim is exact): a Monte Carlo SE of at most 0.0035.
BAYES_DRAWS = 20_000
#: Columns of the claims table, in order.
CLAIM_COLUMNS = [
    "claim",
    "kind",
    "model_a",
    "model_b",
    "category",
    "margin_points",
    "k",
    "questions",
    "reading",
    "adjustment",
    "family_size",
    "estimate_points",
    "ci_low_points",
    "ci_high_points",
    "ci_level",
    "rival",
    "p",
    "p_adjusted",
    "p_opposite_adjusted",
    "p_top",
    "rank_low",
    "rank_high",
    "verdict",
    "disagreement",
    "questions_needed",
    "more_questions",
    "odds_ratio",
    "odds_ratio_low",
    "odds_ratio_high",
    "cohens_h",
    "note",
]


def _one_sided(scope: _Scope, reading: Reading, a: int, b: int, shift: float) -> float:
    """One-sided p of H1: acc_a - acc_b > shift (proportion) under a reading (for ``bayes``
    the posterior probability of the opposite, :math:`P(\\Delta \\le s)`)."""
    if reading.kind == "mcnemar":
        wins, losses = scope.wins[a, b], scope.wins[b, a]
        # P(X >= wins), X ~ Bin(wins + losses, 1/2), = P(X <= losses) by symmetry.
        return float(special.bdtr(int(losses), int(wins + losses), 0.5)) if wins + losses else 1.0
    if reading.kind == "bayes":
        rest = scope.n[a, b] - scope.wins[a, b] - scope.wins[b, a]
        above = dirichlet_probability_above(
            rest,
            scope.wins[a, b],
            scope.wins[b, a],
            0.0,
            shift,
            np.random.default_rng(scope.seed),
            draws=BAYES_DRAWS,
        )
        return float(1.0 - above)
    if reading.kind == "naive":
        diff, se = scope.diff[a, b], scope.se_unpaired[a, b]
    elif reading.kind == JUDGE_CORRECTED:
        diff, se = scope.corrected_diff[a, b], scope.corrected_se[a, b]
    elif reading.kind == "paired":
        diff, se = scope.diff[a, b], scope.se_paired[a, b]
    else:
        diff, se = scope.mixed_diff[a, b], scope.mixed_se[a, b]
    if not np.isfinite(diff):
        return np.nan
    if se > 0:
        return float(special.ndtr(-(diff - shift) / se))
    # A zero SE: the exact rule every table uses (stats.pairwise.zero_se_one_sided_p), on the
    # labelled questions for the judge-corrected reading.
    n = scope.corrected_labels if reading.kind == JUDGE_CORRECTED else scope.n[a, b]
    return float(zero_se_one_sided_p(diff, n, shift))


def _se(scope: _Scope, reading: Reading, a: int, b: int) -> tuple[float, float]:
    if reading.kind == "naive":
        return scope.diff[a, b], scope.se_unpaired[a, b]
    if reading.kind == "mixed":
        return scope.mixed_diff[a, b], scope.mixed_se[a, b]
    if reading.kind == JUDGE_CORRECTED:
        return scope.corrected_estimate[a, b], scope.corrected_se[a, b]
    return scope.diff[a, b], scope.se_paired[a, b]


def _test(claim: Claim, scope: _Scope, reading: Reading, index: dict) -> dict:
    """One-sided p of the claim and of its opposite, the estimate's pair and CI divisor."""
    a = index[claim.model_a]
    d = claim.margin / 100
    if claim.kind in COST_KINDS:
        return cost_test(claim, scope.wide, scope.costs)
    if claim.kind in ("best", "top"):
        others = [i for i in range(len(index)) if i != a]
        k, rivals = claim.k, len(others)
        p = np.array([_one_sided(scope, reading, a, x, 0.0) for x in others])
        q = np.array([_one_sided(scope, reading, x, a, 0.0) for x in others])
        need = rivals + 1 - k  # wins A needs: K - k
        order_p, order_q = np.argsort(p, kind="stable"), np.argsort(q, kind="stable")
        p_claim = min(1.0, k * p[order_p[need - 1]])
        p_opposite = min(1.0, need * q[order_q[k - 1]])
        rival = others[order_p[need - 1]] if p_claim <= p_opposite else others[order_q[k - 1]]
        return {"p": p_claim, "p_opposite": p_opposite, "pair": (a, rival), "divisor": k}
    b = index[claim.model_b]
    if claim.kind == "superiority":  # by the margin d (0 without one)
        p, p_opposite = _one_sided(scope, reading, a, b, d), _one_sided(scope, reading, b, a, -d)
    elif claim.kind == "noninferiority":
        p, p_opposite = _one_sided(scope, reading, a, b, -d), _one_sided(scope, reading, b, a, d)
    else:
        p = max(_one_sided(scope, reading, a, b, -d), _one_sided(scope, reading, b, a, -d))
        p_opposite = min(_one_sided(scope, reading, a, b, d), _one_sided(scope, reading, b, a, d))
    return {"p": p, "p_opposite": p_opposite, "pair": (a, b), "divisor": 1}


def _verdict(p_adjusted: float, p_opposite_adjusted: float, alpha: float) -> str:
    if p_adjusted < alpha:
        return "supported"
    if p_opposite_adjusted < alpha:
        return "contradicted"
    return "not supported"


def _exact_reason(claim: Claim, scope: _Scope) -> str:
    """Why the exact readings do not apply to the comparisons the claim makes ("" where they
    do: :func:`evalbars.stats.pairwise.exact_readings_reasons`, the one rule of every table)."""
    a = scope.wide.models.index(claim.model_a)
    if claim.kind in ("best", "top"):  # A against every rival
        return next((reason for reason in scope.exact_reasons[a] if reason), "")
    return scope.exact_reasons[a, scope.wide.models.index(claim.model_b)]


def _applies(claim: Claim, scope: _Scope, reading: Reading) -> bool:
    if claim.kind in COST_KINDS:  # read on paired scores and costs: the paired readings only
        return reading.kind == "paired"
    if reading.kind == SET_READING:
        return claim.kind in ("best", "top")
    if reading.kind in ("mcnemar", "bayes") and _exact_reason(claim, scope):
        return False
    if reading.kind == "mcnemar":
        return claim.kind not in ("noninferiority", "equivalence") and not claim.margin
    if reading.kind == "bayes":
        return claim.kind not in ("best", "top")
    if reading.kind == "mixed":
        return scope.mixed_diff is not None
    if reading.kind == JUDGE_CORRECTED:
        return scope.corrected_diff is not None
    if reading.kind == "bootstrap":
        return claim.kind in ("best", "top")
    return True


def _all_pairs_p(scope: _Scope, reading: Reading) -> list[float]:
    """Two-sided p (doubled smaller one-sided p) of every pair on all questions."""
    k = scope.diff.shape[0]
    return [
        min(
            1.0,
            2 * min(_one_sided(scope, reading, a, b, 0.0), _one_sided(scope, reading, b, a, 0.0)),
        )
        for a, b in zip(*np.triu_indices(k, k=1), strict=True)
    ]


def _questions_needed(claim, scope, row, alpha, power, family_size):
    """Questions for the paired Holm verdict to be decided (module docstring), and the shortfall."""
    if claim.kind in COST_KINDS:  # two measures at once: no one gap to plan on
        return np.nan, np.nan, np.nan
    a, b = row["_pair"]
    g = scope.diff[a, b]
    n = scope.n[a, b]
    # The mean square of the per-question differences: the share of discordant questions for
    # one 0/1 sample per cell (exact from the counts), else from the paired SE (ddof 0).
    if scope.exact_reasons[a, b]:
        delta = n * scope.se_paired[a, b] ** 2 + g**2
    else:
        delta = (scope.wins[a, b] + scope.wins[b, a]) / n
    d = claim.margin / 100
    divisor = row["_divisor"]
    if claim.kind == "noninferiority":
        effect = abs(g + d)
    elif claim.kind == "equivalence":
        effect = abs(d - abs(g))
        if g == 0:  # both one-sided tests must reject: z_{1-beta/2} (Chow, Shao and Wang 3.1)
            power = 1 - (1 - power) / 2
    elif claim.kind == "superiority":
        effect = abs(g - d)
    else:
        effect = abs(g)
        if claim.kind in ("best", "top") and row["p"] > row["p_opposite"]:
            divisor = len(scope.wide.models) - claim.k
    level = alpha / (family_size * divisor)
    var = delta - g**2
    needed = np.nan
    if effect > 0 and var > 0:
        needed = float(questions_for_effect(effect, var, alpha=level, power=power))
    needed = float(np.ceil(np.round(needed, 6))) if np.isfinite(needed) else np.nan
    if row["verdict"] != "not supported":
        return delta, needed, 0.0
    return delta, needed, max(0.0, needed - scope.questions) if np.isfinite(needed) else np.nan


def evaluate_claims(
    wide: WideScores,
    claims,
    *,
    alpha: float = ALPHA,
    family: str = "claims",
    power: float = POWER,
    replicates: int = DRAWS,
    seed: int = SEED,
    adjust: str = "holm",
    score_matrices=None,
    costs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Verdicts of every claim under every reading (:func:`readings`), one row per (claim, reading).

    Parameters
    ----------
    wide : WideScores
        Question-by-model scores (0/1; NaN where a model has no score).
    claims : iterable of str or Claim
        Parsed against the data's models and categories (:func:`parse_claim`).
    alpha : float
        Level of every verdict (see the module docstring: doubled one-sided p).
    family : {"claims", "claims_and_all_pairs"}
        Family of the Holm-adjusted readings.
    power : float
        Power at which ``questions_needed`` is computed.
    replicates, seed : int
        Bootstrap replicates and seed of the rank reading (one Generator per scope,
        seeded with ``seed``, so a claim's numbers do not depend on the others), and seed of
        the Bayesian reading's posterior draws (a Generator seeded with ``seed`` for each
        probability it draws).
    adjust : {"holm", "bonferroni", "bh"}
        The adjustment of the family (:data:`ADJUSTMENTS`): the ``adjustment`` of the paired,
        mixed (and judge-corrected) readings the family adjusts.
    score_matrices : mapping, optional
        ``{score: WideScores}``: the matrices of the item scores claims name with ``at
        pass@K`` (the same models); ``wide`` is that of its own ``wide.score``.
    costs : DataFrame, optional
        ``model, question_id, cost`` per question (``data/costs.parquet``), for the cost
        claims (:mod:`evalbars.readings.claims.sets`); a cost claim without it is refused.

    Returns
    -------
    DataFrame
        :data:`CLAIM_COLUMNS`. Points are accuracy points (0-100 scale). ``p`` is
        the doubled one-sided p of the claim; ``p_adjusted`` and
        ``p_opposite_adjusted`` are what the verdict compares with ``alpha``;
        ``p_top``, ``rank_low``, ``rank_high`` are set on ``bootstrap`` rows;
        ``disagreement``, ``questions_needed``, ``more_questions`` on the adjusted
        paired rows. ``verdict`` is ``n/a`` where a reading does not apply (McNemar with a
        margin, bootstrap for pairs, a mixed model that could not be fitted).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    models = list(wide.models)
    categories = sorted(set(wide.categories.tolist()))
    claims = parse_claims(claims, models, categories)  # a claim listed twice is refused
    index = {m: i for i, m in enumerate(models)}
    matrices = {claim: _matrix(claim, wide, score_matrices) for claim in claims}
    for claim, matrix in matrices.items():  # before any fit: a pair with no shared question
        _refuse_unshared(claim, np.isfinite(matrix.scores), matrix.categories, models)
        refuse_costless(claim, costs, wide)
    scopes = {(None, wide.score): _scope(wide, None)}
    for claim, matrix in matrices.items():
        if (claim.category, matrix.score) not in scopes:
            scopes[claim.category, matrix.score] = _scope(matrix, claim.category)
    scope_of = {claim: scopes[claim.category, matrix.score] for claim, matrix in matrices.items()}
    for scope in scopes.values():
        scope.seed, scope.costs = seed, costs
    rows = {}
    names = readings(adjust, labelled=wide.has_labels)
    for reading in names:
        tests = []
        for claim in claims:
            scope = scope_of[claim]
            if not _applies(claim, scope, reading) or reading.kind in ("bootstrap", SET_READING):
                tests.append(None)
                continue
            tests.append(_test(claim, scope, reading, index))
        p = np.array([min(1.0, 2 * t["p"]) if t else np.nan for t in tests])
        q = np.array([min(1.0, 2 * t["p_opposite"]) if t else np.nan for t in tests])
        adjusted, family_size = (p, q), 1
        method = reading.adjustment
        if reading.adjusted:
            everything = scopes[None, wide.score]
            extra = _all_pairs_p(everything, reading) if family == "claims_and_all_pairs" else []
            live = ~np.isnan(p)
            family_size = int(live.sum()) + len(extra)
            adjusted = tuple(_adjusted_part(values, live, extra, method) for values in (p, q))
        settings = {"alpha": alpha, "replicates": replicates, "seed": seed, "power": power}
        for i, claim in enumerate(claims):
            verdicts = {
                "p": p[i],
                "p_adjusted": adjusted[0][i],
                "p_opposite_adjusted": adjusted[1][i],
            }
            rows[i, reading] = _row(
                claim,
                scope_of[claim],
                reading,
                tests[i],
                verdicts,
                family_size,
                models,
                settings,
            )
    ordered = [rows[i, reading] for i in range(len(claims)) for reading in names]
    return pd.DataFrame(ordered, columns=CLAIM_COLUMNS)


def _matrix(claim: Claim, wide: WideScores, score_matrices) -> WideScores:
    """The score matrix a claim is read on: ``wide``, or that of the item score it names."""
    if claim.score is None or claim.score == wide.score:
        return wide
    found = (score_matrices or {}).get(claim.score)
    if found is None:
        raise ClaimError(
            claim.text,
            f"needs each question's samples to read {claim.score} (give the item table, not "
            "a score matrix)",
        )
    return found.columns(list(wide.models))


def _refuse_unshared(claim: Claim, answered, categories, models: list) -> None:
    """A ClaimError when a comparison of the claim has no shared question (in its category) to
    read, as ``evalbars compare`` refuses such a pair: no reading has anything to say."""
    if claim.category is not None:
        answered = answered[categories == claim.category]
    a = models.index(claim.model_a)
    rivals = [models.index(claim.model_b)] if claim.model_b else range(len(models))
    shared = (answered[:, [a]] & answered).any(axis=0)
    unshared = [models[b] for b in rivals if b != a and not shared[b]]
    if unshared:
        raise unshared_error(claim, unshared[0])


def _adjusted_part(values: np.ndarray, live: np.ndarray, extra: list, method: str) -> np.ndarray:
    """Adjusted values of the live claims (``method`` of
    :func:`evalbars.stats.pairwise.adjust_pvalues`), over them plus ``extra`` p-values."""
    out = np.full(values.shape, np.nan)
    family = np.concatenate([values[live], np.asarray(extra, dtype=float)])
    if family.size:
        out[live] = adjust_pvalues(family, method)[: int(live.sum())]
    return out


def claim_identity(claim: Claim) -> dict:
    """The columns of a claims table row that say which claim it is (``claim`` to ``k`` of
    :data:`CLAIM_COLUMNS`), the same under every reading."""
    return {
        "claim": claim.label,
        "kind": claim.kind,
        "model_a": claim.model_a,
        "model_b": claim.model_b or "",
        "category": claim.category or "",
        "margin_points": claim.margin,
        "k": claim.k if claim.kind in ("best", "top") else np.nan,
    }


def _row(claim, scope, reading, test, verdicts, family_size, models, settings):
    """One (claim, reading) row of the claims table."""
    alpha = settings["alpha"]
    row = (
        claim_identity(claim)
        | {
            # the questions the deciding comparison used: those both models of its pair answered
            "questions": int(scope.n[test["pair"]]) if test is not None else scope.questions,
            "reading": reading.kind,
            "adjustment": reading.adjustment,
            "family_size": family_size if reading.adjusted else 1,
        }
        | dict.fromkeys(CLAIM_COLUMNS[CLAIM_COLUMNS.index("family_size") + 1 :], np.nan)
        | {"rival": "", "verdict": "n/a", "note": _not_applicable(claim, scope, reading, test)}
    )
    if reading.kind == JUDGE_CORRECTED and test is None:
        row["note"] = scope.corrected_note
    if reading.kind == SET_READING and _applies(claim, scope, reading):
        return row | set_reading(claim, scope.wide, alpha, settings["seed"])
    if reading.kind == "bootstrap":
        ranks = (
            _bootstrap_ranks(scope, settings["replicates"], settings["seed"])
            if _applies(claim, scope, reading)
            else None
        )
        if ranks is not None:
            a = models.index(claim.model_a)
            summary = summarise_ranks([ranks], len(ranks), 1 - alpha).iloc[a]
            low, high = int(summary["rank_low"]), int(summary["rank_high"])
            row |= {
                "p_top": float((ranks[:, a] <= claim.k).mean()),
                "rank_low": low,
                "rank_high": high,
                "ci_level": 1 - alpha,
                "verdict": "supported"
                if high <= claim.k
                else ("contradicted" if low > claim.k else "not supported"),
            }
        return row
    if test is None:
        return row
    a, b = test["pair"]
    estimate, se = _se(scope, reading, a, b)
    row |= verdicts | {
        "estimate_points": 100 * estimate,
        "rival": models[b] if claim.kind in ("best", "top") else "",
        "verdict": _verdict(verdicts["p_adjusted"], verdicts["p_opposite_adjusted"], alpha),
    }
    if reading.kind == "bayes":
        row |= _posterior(scope, a, b, alpha)
    elif reading.kind != "mcnemar":
        level = alpha / (test["divisor"] * (family_size if reading.adjusted else 1))
        # A zero SE gives no interval (a zero-width one would claim any precision).
        half = special.ndtri(1 - level / 2) * se if se > 0 else np.nan
        # the judge-corrected interval is centred where its test is (the pseudo-labels')
        centre = scope.corrected_diff[a, b] if reading.kind == JUDGE_CORRECTED else estimate
        row |= {  # a gap of accuracies lies within +-100 points
            "ci_low_points": float(np.clip(100 * (centre - half), -100.0, 100.0)),
            "ci_high_points": float(np.clip(100 * (centre + half), -100.0, 100.0)),
            "ci_level": 1 - level,
        }
        if not se > 0:
            row["note"] = _no_interval(int(scope.n[a, b]), estimate)
    if reading in (Reading("paired"), Reading("mcnemar")):
        row |= _effect_sizes(scope, a, b, alpha, exact=not scope.exact_reasons[a, b])
    if reading.kind == "paired" and reading.adjusted:
        extra = {
            "p": test["p"],
            "p_opposite": test["p_opposite"],
            "_pair": test["pair"],
            "_divisor": test["divisor"],
            "verdict": row["verdict"],
        }
        delta, needed, more = _questions_needed(
            claim, scope, extra, alpha, settings["power"], family_size
        )
        row |= {"disagreement": delta, "questions_needed": needed, "more_questions": more}
    return row


def _no_interval(questions: int, estimate: float) -> str:
    """Why a reading whose SE is 0 has no interval, in words (the ``note`` of its row).

    Examples
    --------
    >>> _no_interval(1, 1.0), _no_interval(40, 0.0)
    ('no interval: 1 question', 'no interval: identical on every question')
    """
    if questions == 1:
        return "no interval: 1 question"
    if estimate == 0:
        return "no interval: identical on every question"
    return "no interval: the same difference on every question"


def _not_applicable(claim: Claim, scope: _Scope, reading: Reading, test) -> str:
    """Why a reading does not apply to a claim ("" where it does): the ``note`` of its row."""
    if test is not None or reading.kind == "bootstrap" and claim.kind in ("best", "top"):
        return ""
    if claim.kind in COST_KINDS:
        return "not applicable (cost claims: the paired readings)"
    if reading.kind == SET_READING:
        return "not applicable (best and top k claims only)"
    reason = _exact_reason(claim, scope) if reading.kind in ("mcnemar", "bayes") else ""
    if reason:
        return f"not applicable ({reason})"
    if reading.kind == "mixed" and scope.mixed_note:
        return scope.mixed_note
    if reading.kind == "mcnemar":
        return "not applicable (claims without a margin only)"
    if reading.kind in ("bayes", "bootstrap"):
        kinds = "pair claims" if reading.kind == "bayes" else "best and top k claims"
        return f"not applicable ({kinds} only)"
    return ""


def _posterior(scope: _Scope, a: int, b: int, alpha: float) -> dict:
    """The Bayesian reading's estimate and credible interval (points) of a pair: the posterior
    mean and equal-tailed (1 - alpha) interval of the Dirichlet model's difference."""
    rest = scope.n[a, b] - scope.wins[a, b] - scope.wins[b, a]
    rng = np.random.default_rng(scope.seed)
    post = dirichlet_paired_posterior(
        rest, scope.wins[a, b], scope.wins[b, a], 0.0, rng, level=1 - alpha, draws=BAYES_DRAWS
    )
    return {
        "estimate_points": 100 * float(post.mean),
        "ci_low_points": 100 * float(post.low),
        "ci_high_points": 100 * float(post.high),
        "ci_level": 1 - alpha,
    }


def _effect_sizes(scope: _Scope, a: int, b: int, alpha: float, exact: bool) -> dict:
    """The discordant odds ratio with its exact interval (where the exact readings apply: a
    2x2 table), and Cohen's h of the two accuracies on the questions both answered
    (:mod:`evalbars.stats.effect_sizes`)."""
    ratio = discordant_odds_ratio(scope.wins[a, b], scope.wins[b, a], 1 - alpha)
    if not exact:  # no 2x2 table: the counts of questions one model led are no odds ratio
        ratio = ratio._replace(estimate=np.nan, low=np.nan, high=np.nan)
    scores = scope.wide.scores[:, [a, b]]
    both = np.isfinite(scores).all(axis=1)
    means = scores[both].mean(axis=0) if both.any() else np.full(2, np.nan)
    return {
        "odds_ratio": float(ratio.estimate),
        "odds_ratio_low": float(ratio.low),
        "odds_ratio_high": float(ratio.high),
        "cohens_h": float(cohens_h(means[0], means[1])),
    }


# --- Display --------------------------------------------------------------------------------------
