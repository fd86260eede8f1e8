"""The API's tables and verdicts: the workflow's analysis, ranks, claims and leaderboard tables,
and the release gate, each computed by its job's own function (:mod:`evalbars.api` re-exports
them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import yaml

from evalbars.api._read import _scored, scores
from evalbars.data.scores import WideScores
from evalbars.defaults import ALPHA, DRAWS, LEVEL, POWER, SEED, SPLITS, TOP_K
from evalbars.errors import InputError
from evalbars.jobs import analysis, leaderboard, ranks
from evalbars.jobs import claims as claim_jobs
from evalbars.jobs.repeats import samples_of
from evalbars.readings import gate
from evalbars.stats import pairwise

__all__ = [
    "accuracy_table",
    "pairwise_table",
    "omnibus_table",
    "mixed_contrasts",
    "variance_components",
    "rank_table",
    "leaderboard_table",
    "judge_corrected_table",
    "check_claims",
    "compare_models",
]


def accuracy_table(items: pd.DataFrame | WideScores, level: float = LEVEL) -> pd.DataFrame:
    """Per-model accuracy with its naive, question-clustered and category-clustered SEs.

    The workflow's ``models.csv`` (the paper's Table 1, extended;
    :func:`evalbars.jobs.analysis.analysis_models`, which calls
    :func:`evalbars.stats.accuracy.accuracy_table`).

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the Wilson and Jeffreys intervals.

    Returns
    -------
    DataFrame
        One row per model, best first: ``model``; ``n`` (questions); ``samples`` (question x
        epoch); ``correct`` (sum of scores); ``accuracy``; ``se_naive`` (every sample
        independent); ``se_questions`` (questions as clusters); ``n_effective`` (the
        independent 0/1 answers the samples are worth); ``ci_low``, ``ci_high`` (Wilson at
        ``n_effective``); ``se_clustered`` (CR0 by category, the paper's column);
        ``jeffreys_low``, ``jeffreys_high``.

    Raises
    ------
    ValueError
        ``level`` outside (0, 1).

    See Also
    --------
    evalbars.stats.accuracy.accuracy_table : The formulas and references.
    leaderboard_table : Accuracy with letters, stability and resolution.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> table = eb.accuracy_table(items)
    >>> table[["model", "accuracy", "se_clustered", "ci_low", "ci_high"]].round(3)
                      model  accuracy  se_clustered  ci_low  ci_high
    0  evalbars/fake-strong     0.744         0.074   0.589    0.854
    1     evalbars/fake-mid     0.462         0.118   0.316    0.614
    2    evalbars/fake-weak     0.462         0.080   0.316    0.614
    """
    return analysis.analysis_models(scores(items), level=level)["models"].frame


def pairwise_table(items: pd.DataFrame | WideScores, alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair's unpaired and paired z-tests, exact McNemar, Bonferroni and Holm.

    The workflow's ``pairwise.csv`` (the paper's Table 3;
    :func:`evalbars.jobs.analysis.pairwise_tests` on :func:`evalbars.stats.pairwise.pair_tests`).
    Each pair uses the questions both models answered; the family is every pair. Where the
    scores are a judge's with human labels the judge-corrected (PPI++) columns
    ``*_corrected`` follow.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of the ``significant_*`` flags.

    Returns
    -------
    DataFrame
        One row per pair, ``model_a`` the more accurate: ``n`` (shared questions); ``diff``
        (accuracy a - b); ``se_unpaired``, ``z_unpaired``, ``p_unpaired`` (two independent
        samples); ``se_paired``, ``z_paired``, ``p_paired`` (Miller 2024, Eq. 7); ``n10``,
        ``n01`` (questions only a, only b got right); ``p_mcnemar`` (exact); ``p_bonferroni``,
        ``p_holm`` (``p_paired`` adjusted); ``significant_<test>`` (p < alpha) for
        ``unpaired, paired, mcnemar, bonferroni, holm``.

    See Also
    --------
    evalbars.stats.pairwise.pairwise_table : The formulas and references.
    check_claims : Verdicts of the claims people write about pairs.
    compare_models : One pair, as a release gate.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> eb.pairwise_table(items)[["model_b", "diff", "se_unpaired", "se_paired", "p_holm"]].round(3)
                   model_b   diff  se_unpaired  se_paired  p_holm
    0   evalbars/fake-mid  0.282        0.106      0.108   0.028
    1  evalbars/fake-weak  0.282        0.106      0.114   0.028
    2  evalbars/fake-weak  0.000        0.113      0.120   1.000
    """
    wide = scores(items)
    tests = pairwise.pair_tests(wide)
    return analysis.pairwise_tests(tests, alpha=alpha, wide=wide)["pairwise"].frame


def omnibus_table(items: pd.DataFrame | WideScores) -> pd.DataFrame:
    """Omnibus tests that every model has the same accuracy, blocked and naive.

    The workflow's ``omnibus.csv`` (:func:`evalbars.jobs.analysis.analysis_omnibus`), on the
    questions every model answered.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).

    Returns
    -------
    DataFrame
        Columns ``test, statistic, df1, df2, p, epsilon, n_questions``; rows ``rm_anova``
        (repeated-measures F, question as subject), ``rm_anova_gg`` (Greenhouse-Geisser
        corrected, ``epsilon``), ``oneway_anova`` (the naive F that ignores questions),
        ``friedman`` and ``cochran_q`` (0/1 scores only).

    See Also
    --------
    evalbars.stats.omnibus.omnibus_table : The tests.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> eb.omnibus_table(items)[["test", "statistic", "df1", "df2", "p"]].round(4)
               test  statistic     df1       df2       p
    0      rm_anova     3.9434  2.0000   76.0000  0.0235
    1   rm_anova_gg     3.9434  1.9721   74.9414  0.0240
    2  oneway_anova     4.3958  2.0000  114.0000  0.0145
    3      friedman     7.3333  2.0000       NaN  0.0256
    4     cochran_q     7.3333  2.0000       NaN  0.0256
    """
    return analysis.analysis_omnibus(scores(items))["omnibus"].frame


def mixed_contrasts(
    items: pd.DataFrame | WideScores, alpha: float = ALPHA, method: str = "auto"
) -> pd.DataFrame:
    """The linear mixed models' pairwise contrasts of estimated marginal means.

    The workflow's ``mixed_contrasts.csv`` (the paper's Table 4;
    :func:`evalbars.jobs.analysis.analysis_mixed`): every specification the data support
    (:func:`evalbars.stats.mixed.model_specs`), fitted by REML; the rows of a specification
    the data cannot identify are empty, with the reason logged.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        The intervals are at level 1 - alpha.
    method : {"auto", "exact", "general"}, default "auto"
        The fitting path (:func:`evalbars.stats.mixed.fit_lmm`): ``exact`` for complete,
        balanced data, ``general`` for any; ``auto`` chooses.

    Returns
    -------
    DataFrame
        Per specification (``model_spec``) one row per pair, ``model_a`` the more accurate:
        ``estimate`` (the contrast), ``se``, ``z``, ``p`` (Wald), ``p_bonferroni``,
        ``p_holm``, ``p_tukey`` (an approximation), ``ci_low``, ``ci_high`` (unadjusted);
        rows numbered 0, 1, ... through the table, as in the file.

    Raises
    ------
    ValueError
        An unknown ``method``, or ``exact`` on data that are not complete and balanced.

    See Also
    --------
    variance_components : The same fits' variance components.
    evalbars.stats.mixed : The models and both fitting paths.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> contrasts = eb.mixed_contrasts(items)
    >>> contrasts[contrasts["model_spec"] == "category_question"][
    ...     ["model_b", "estimate", "se", "p_holm"]].round(3)
                  model_b  estimate     se  p_holm
    3   evalbars/fake-mid     0.282  0.109    0.03
    4  evalbars/fake-weak     0.282  0.109    0.03
    5  evalbars/fake-weak     0.000  0.109    1.00
    """
    return analysis.analysis_mixed(scores(items), method=method, alpha=alpha)[
        "mixed_contrasts"
    ].frame


def variance_components(items: pd.DataFrame | WideScores, method: str = "auto") -> pd.DataFrame:
    """The linear mixed models' REML variance components.

    The workflow's ``variance_components.csv`` (the paper's Table 2), from the fits of
    :func:`mixed_contrasts`.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    method : {"auto", "exact", "general"}, default "auto"
        The fitting path, as for :func:`mixed_contrasts`.

    Returns
    -------
    DataFrame
        ``model_spec, component, variance, boundary, method``: per specification its
        components (``category``, ``question``, ``question_model``, ``residual``) as
        variances, ``boundary`` true where the estimate is at zero, and the path that fitted
        it.

    See Also
    --------
    mixed_contrasts : The same fits' contrasts.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> eb.variance_components(items).round(4)
              model_spec component  variance  boundary method
    0           category  category    0.0026     False  exact
    1           category  residual    0.2330     False  exact
    2  category_question  category    0.0026     False  exact
    3  category_question  question    0.0000      True  exact
    4  category_question  residual    0.2330     False  exact
    """
    result = analysis.analysis_mixed(scores(items), method=method, alpha=ALPHA)
    return result["variance_components"].frame


def rank_table(
    items: pd.DataFrame | WideScores,
    level: float = LEVEL,
    *,
    draws: int = DRAWS,
    replicates: int = DRAWS,
    seed: int = SEED,
    stratify: bool = True,
) -> pd.DataFrame:
    """Score intervals, separated neighbours, tiers, P(first) and rank ranges of every model.

    The workflow's ``ranks.csv`` (:func:`evalbars.jobs.ranks.ranks_table`): two readings of one
    ordering, ``unpaired`` (every model an independent estimate: the rank-uncertainty
    calculator of ``evalbars ranks`` on each model's counts, plausible worlds drawn from
    Jeffreys posteriors) and ``paired`` (a bootstrap over the shared questions, stratified by
    category, and paired intervals for the gaps: sharper, since every model answered the
    same questions); ``judge-corrected`` too on judge scores with human labels.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the intervals and rank ranges.
    draws : int, default :data:`evalbars.defaults.DRAWS`
        Plausible worlds of the unpaired reading (config ``ranks.draws``), at least
        :data:`evalbars.defaults.MIN_DRAWS`.
    replicates : int, default :data:`evalbars.defaults.DRAWS`
        Bootstrap replicates of the paired reading (``ranks.replicates``).
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the draws and the bootstrap (``ranks.seed``).
    stratify : bool, default True
        Resample within categories (``ranks.stratify``).

    Returns
    -------
    DataFrame
        Per reading (``reading``), one row per model, best first: ``position``; ``name``;
        ``form`` and ``n`` (how the score was given, and its item count); ``score``,
        ``ci_low``, ``ci_high``; ``gap``, ``gap_low``, ``gap_high`` (to the next model down);
        ``separated`` (the gap's interval excludes 0); ``tier`` (1 + separated adjacent pairs
        above) and ``tier_anchored`` (tiers that do not chain); ``p_first`` (share of worlds
        in which the model ranks first); ``rank_low``, ``rank_high`` (central rank range);
        ``note``.

    Raises
    ------
    ValueError
        ``draws`` or ``replicates`` below :data:`evalbars.defaults.MIN_DRAWS`, ``level``
        outside (0, 1).

    See Also
    --------
    evalbars.readings.ranks : The column contract and both readings.
    leaderboard_table : Letters, split-half stability and resolution.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> ranks = eb.rank_table(items, draws=1000, replicates=1000)
    >>> ranks[ranks["reading"] == "paired"][["name", "tier", "p_first", "rank_low", "rank_high"]]
                       name  tier  p_first  rank_low  rank_high
    3  evalbars/fake-strong     1    0.998         1          1
    4     evalbars/fake-mid     2    0.000         2          3
    5    evalbars/fake-weak     2    0.003         2          3
    """
    result = ranks.ranks_table(
        scores(items),
        level=level,
        draws=draws,
        replicates=replicates,
        seed=seed,
        stratify=stratify,
    )
    return result["ranks"].frame


def leaderboard_table(
    items: pd.DataFrame | WideScores,
    alpha: float = ALPHA,
    *,
    level: float = LEVEL,
    power: float = POWER,
    splits: int = SPLITS,
    seed: int = SEED,
    top_k: int = TOP_K,
) -> pd.DataFrame:
    """Per model its letters, split-half stability and the resolution of the pair below it.

    The workflow's ``leaderboard.csv`` (:func:`evalbars.jobs.leaderboard.leaderboard_table`, which calls
    :func:`evalbars.readings.leaderboard.table.leaderboard_table`): what a leaderboard's
    maintainer may print. Models sharing a letter are not separated (paired tests, Holm over
    all pairs); the stability is over seeded split halves of the questions, stratified by
    category; the resolution compares the questions the adjacent pair's gap needs with those
    it has.

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of the letters' tests and of the resolution.
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of the Wilson intervals.
    power : float, default :data:`evalbars.defaults.POWER`
        Power of the resolution's questions needed (``leaderboard.power``).
    splits : int, default :data:`evalbars.defaults.SPLITS`
        Split-half splits (``leaderboard.splits``; 2 halves each).
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the splits (``leaderboard.seed``).
    top_k : int, default :data:`evalbars.defaults.TOP_K`
        k of the confidence set for the top k (``leaderboard.top_k``).

    Returns
    -------
    DataFrame
        One row per model, best first: ``position``, ``model``, ``questions``, ``accuracy``,
        ``ci_low``, ``ci_high``; ``letters``; ``rank`` (full-data, ties share the better);
        ``rank_kept_share`` and ``first_share`` (shares of the halves on which the model keeps
        its rank, is first); ``rank_half_low``, ``rank_half_high`` (its range over the
        halves); for the pair with the next model down, ``next_model``, ``gap_to_next``,
        ``disagreement_next``, ``questions_needed`` and ``questions_needed_clustered``,
        ``resolution_ratio`` and ``resolution_ratio_clustered`` (needed over available),
        ``unresolved`` (either ratio above 1: a nullable ``boolean``, missing on the last
        row). On judge scores with human labels also ``corrected_accuracy, corrected_low,
        corrected_high, letters_corrected``. The confidence sets for the best and the top k:
        ``in_best_set, mcb_low, mcb_high, top_k, in_top_k_set`` (:func:`best_set_table`).

    Raises
    ------
    ValueError
        ``alpha``, ``level`` or ``power`` outside (0, 1).

    See Also
    --------
    evalbars.readings.leaderboard.table.leaderboard_table : The columns' definitions.
    rank_table : Tiers and plausible ranks.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> board = eb.leaderboard_table(items, splits=20)
    >>> board[["model", "letters", "rank_kept_share", "resolution_ratio"]].round(2)
                      model letters  rank_kept_share  resolution_ratio
    0  evalbars/fake-strong       a             1.00              1.16
    1     evalbars/fake-mid       b             0.57               inf
    2    evalbars/fake-weak       b             0.57               NaN
    """
    result = leaderboard.leaderboard_table(
        scores(items),
        alpha=alpha,
        level=level,
        power=power,
        splits=splits,
        seed=seed,
        top_k=top_k,
    )
    return result["leaderboard"].frame


def judge_corrected_table(
    items: pd.DataFrame | WideScores, level: float = LEVEL, alpha: float = ALPHA
) -> pd.DataFrame:
    """Judge-only, human-only and judge-corrected (PPI++) readings of every model and pair.

    The workflow's ``judge_corrected.csv`` (:func:`evalbars.jobs.analysis.analysis_judge_corrected`),
    where the scores are an LLM judge's and some questions carry human labels: the
    judge-corrected reading is the PPI++ mean (Angelopoulos et al. 2023, arXiv:2311.01453) of
    the labels and the judge's scores, the human-only reading the labels alone. The labelled
    questions must have been drawn uniformly at random (``evalbars labels sample``).

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table with a ``human`` column (:func:`read_items` with ``labels``, or
        :func:`attach_labels`), or its score matrix.
    level : float, default :data:`evalbars.defaults.LEVEL`
        Level of every interval.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of ``significant``; pairs are Holm-adjusted over all pairs within each reading.

    Returns
    -------
    DataFrame
        First the models (``scope`` ``model``), then the pairs (``scope`` ``pair``, ``model_a``
        above ``model_b``), three rows each (``reading``: ``judge-corrected``, ``human-only``,
        ``judge-only``): ``estimate`` (accuracy, or the pair's gap, as a proportion), ``se``,
        ``ci_low``, ``ci_high``; on pairs ``p_value``, ``p_adjusted`` and ``significant``; on
        corrected rows ``lambda_hat`` (the PPI++ weight of the judge), ``rho`` (judge-human
        correlation) and ``effective_labels``; ``labels``, ``questions``; ``note`` (why a
        reading decides nothing). Empty (the columns only) without labels.

    Raises
    ------
    ValueError
        ``level`` or ``alpha`` outside (0, 1).

    See Also
    --------
    evalbars.readings.judge_corrected.judge_vs_corrected : The readings and their formulas.
    evalbars.stats.ppi : PPI++.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> judged = eb.read_items("tests/data/judged/judged.csv")
    >>> table = eb.judge_corrected_table(judged)
    >>> table.loc[table["scope"] == "model", ["model_a", "reading", "estimate"]].round(3).head(4)
       model_a          reading  estimate
    0  model-a  judge-corrected     0.629
    1  model-b  judge-corrected     0.589
    2  model-c  judge-corrected     0.562
    3  model-a       human-only     0.629
    """
    return analysis.analysis_judge_corrected(scores(items), level=level, alpha=alpha)[
        "judge_corrected"
    ].frame


def check_claims(
    items: pd.DataFrame | WideScores,
    claims_made: Sequence[str],
    alpha: float = ALPHA,
    *,
    family: str = "claims",
    adjust: str = "holm",
    power: float = POWER,
    replicates: int = DRAWS,
    seed: int = SEED,
    score: str = "mean",
    costs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Each ranking claim's verdict under every reading: supported, not supported, contradicted.

    The workflow's ``claims.csv`` (:func:`evalbars.jobs.claims.claims_table`). A claim is
    written as people write them (``"A > B"``, ``"A > B + d"``, ``"A >= B - d"``,
    ``"|A - B| < d"``, ``"best: A"``, ``"top k: A"``, each optionally ``in CATEGORY``;
    margins in accuracy points) and tested as stated, two-sided at ``alpha``, under several
    readings side by side, each a ``reading`` and its ``adjustment`` (``none``, or ``adjust``
    over the family): ``naive``, ``paired``, ``mcnemar``, ``bayes``, ``paired`` and ``mixed``
    adjusted, ``bootstrap`` and ``mcb`` (the confidence sets, ``best``/``top k``), and
    ``judge_corrected`` adjusted on judge scores with human labels. With ``costs``, the cost
    claims ``"A >= B - d at <= x cost"`` and ``"A on frontier"`` too. A claim naming a model or
    category the data do not hold, or comparing two models that share no question, is
    refused, as the workflow's ``claims_check`` job refuses it
    (:func:`evalbars.jobs.claims.checked_claims`).

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`).
    claims_made : sequence of str
        The claims, one a string.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        Level of every verdict (config ``alpha``).
    family : {"claims", "claims_and_all_pairs"}, default "claims"
        The family the adjusted readings adjust over (``claims_options.family``).
    adjust : {"holm", "bonferroni", "bh"}, default "holm"
        The adjustment of the family (``claims_options.adjust``).
    power : float, default :data:`evalbars.defaults.POWER`
        Power at which ``questions_needed`` is computed.
    replicates : int, default :data:`evalbars.defaults.DRAWS`
        Bootstrap replicates of the rank reading.
    seed : int, default :data:`evalbars.defaults.SEED`
        Seed of the bootstrap and the Bayesian reading's draws.
    score : str, default "mean"
        The item score the readings read (config ``score``; :func:`~evalbars.api.score_matrix`): an item
        table's ``pass@5`` claims are those of its pass@5 matrix. An item table also gives
        claims written ``at pass@K``, and, where a model was read in two or more runs, the
        ``runs`` reading (:mod:`evalbars.readings.claims.runs`).
    costs : DataFrame, optional
        The cost of every (model, question) (:func:`question_costs`), for the cost claims.

    Returns
    -------
    DataFrame
        One row per (claim, reading): the claim parsed (``claim, kind, model_a, model_b,
        category, margin_points, k``), ``questions``, ``reading`` and ``adjustment``;
        ``family_size``;
        ``estimate_points`` with ``ci_low_points``, ``ci_high_points`` at ``ci_level``
        (accuracy points); ``rival`` (the model a ``best``/``top k`` claim hinges on);
        ``p`` (doubled one-sided), ``p_adjusted`` and ``p_opposite_adjusted`` (what the
        verdict compares with ``alpha``); ``p_top``, ``rank_low``, ``rank_high``
        (``bootstrap`` rows); ``verdict`` (``supported``, ``not supported``,
        ``contradicted``, or ``n/a`` where a reading does not apply); ``disagreement``,
        ``questions_needed``, ``more_questions`` (the adjusted paired rows);
        ``odds_ratio``, ``odds_ratio_low``, ``odds_ratio_high``, ``cohens_h`` (effect
        sizes); ``note``.

    Raises
    ------
    evalbars.errors.ConfigError
        A malformed claim, or one naming a model or category the data do not hold (with the
        closest name), in one line.
    ValueError
        An unknown ``family`` or ``adjust``.

    See Also
    --------
    evalbars.readings.claims.evaluate_claims : The grammar, the readings and the verdicts.
    pairwise_table : Every pair's tests.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> verdicts = eb.check_claims(items, ["evalbars/fake-strong > evalbars/fake-weak"])
    >>> verdicts[["reading", "adjustment", "p_adjusted", "verdict"]].round(3)
         reading adjustment  p_adjusted    verdict
    0      naive       none       0.008  supported
    1     paired       none       0.014  supported
    2    mcnemar       none       0.035  supported
    3      bayes       none       0.023  supported
    4     paired       holm       0.014  supported
    5      mixed       holm       0.010  supported
    6  bootstrap       none         NaN        n/a
    7        mcb       none         NaN        n/a
    """
    wide = _scored(items, score)
    answered = np.isfinite(wide.scores)
    accuracy = pd.Series(
        np.where(answered, wide.scores, 0.0).sum(axis=0) / answered.sum(axis=0), index=wide.models
    )
    checked = claim_jobs.checked_claims(
        accuracy,
        set(wide.categories),
        claims=list(claims_made),
        notes=[],
        costed=costs is not None,
    )["checked"]
    table = claim_jobs.claims_table(
        wide,
        yaml.safe_load(checked.text),
        items if isinstance(items, pd.DataFrame) else None,
        alpha=alpha,
        family=family,
        power=power,
        replicates=replicates,
        seed=seed,
        adjust=adjust,
        costs=costs,
    )
    return table["claims"].frame


def compare_models(
    items: pd.DataFrame | WideScores,
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
    score: str = "mean",
) -> gate.Comparison:
    """The release gate of ``evalbars compare``: whether the candidate is worse than the baseline.

    The candidate against the baseline on their shared questions
    (:func:`evalbars.readings.gate.compare_models`): the paired difference with its interval
    (category-clustered where the questions fall in two or more categories), McNemar's exact
    test of the flipped questions, and a verdict with the exit code ``evalbars compare``
    returns: ``better``, ``non-inferior`` (0), ``regression`` (1) or ``inconclusive`` (3,
    with the questions that would decide it).

    Parameters
    ----------
    items : DataFrame or WideScores
        An item table or its score matrix (:func:`scores`) holding both models.
    baseline, candidate : str
        The two models' names.
    margin : float, default 0
        Non-inferiority margin as a proportion (0.01 = 1 point).
    better_by : float, default 0
        Superiority margin (proportion): ``better`` means better by more than it.
    alpha : float, default :data:`evalbars.defaults.ALPHA`
        The interval is two-sided at level 1 - alpha.
    power : float, default :data:`evalbars.defaults.POWER`
        Power at which an inconclusive comparison says how many questions would decide it.
    by_category : bool, default False
        Add the per-category table.
    sequential : bool, default False
        Decide by an anytime-valid confidence sequence over the questions in ``arrival``
        order (valid at every look while questions are appended).
    arrival : array-like, optional
        Question ids in the order they arrived, for ``sequential``: by default the order of
        the candidate's rows in the item table (the order its source lists them, as
        ``evalbars compare --sequential`` takes it); for a score matrix, its own order.
    categories : {"sampled", "fixed"}, default "sampled"
        ``sampled``: the categories are a sample of categories like them, and the clustered
        readings decide (with 2 to 5 categories no clustered test can reject at 5%: the gate
        is then inconclusive). ``fixed``: they are the benchmark's own strata, and the paired
        reading of the questions decides, about these categories' questions.
    score : str, default "mean"
        The item score compared (config ``score``; :func:`~evalbars.api.score_matrix`). From an item table
        with two or more runs of each model the summary also holds the reading with runs as a
        random effect (``runs_*``, ``survives_rerun``, ``holds_in_every_run``).

    Returns
    -------
    evalbars.readings.gate.Comparison
        ``summary`` (a dict: the counts, the difference, its interval and SE, the p-values,
        the ``verdict`` and the ``exit_code``), ``flips`` (a DataFrame of the questions the
        two scored differently: ``question_id, category, baseline, candidate, flip``) and
        ``by_category`` (with ``by_category``, else None).

    Raises
    ------
    evalbars.errors.InputError
        A model the data do not hold, or a comparison the data cannot make (no shared
        question), in one line.

    See Also
    --------
    evalbars.readings.gate.compare_models : The tests and their measured error rates.
    check_claims : Claims such as ``"A >= B - 1"`` with every reading.

    Examples
    --------
    >>> import evalbars.api as eb
    >>> items = eb.read_items("tests/data/harness/lm_eval", runs="newest", id_field="id",
    ...                       category_field="category")
    >>> gate = eb.compare_models(items, "evalbars/fake-weak", "evalbars/fake-strong")
    >>> gate.summary["questions"], round(gate.summary["diff"], 3), gate.summary["verdict"]
    (39, 0.282, 'inconclusive')
    >>> fixed = eb.compare_models(items, "evalbars/fake-weak", "evalbars/fake-strong",
    ...                           categories="fixed")
    >>> fixed.summary["se_kind"], fixed.summary["verdict"]
    ('paired', 'better')
    >>> gate.flips["flip"].value_counts().to_dict()
    {'fail->pass': 17, 'pass->fail': 6}
    """
    wide = _scored(items, score)
    for name in (baseline, candidate):
        if name not in wide.models:
            raise InputError("compare", f"unknown model {name!r}; the data hold {wide.models}")
    samples = samples_of(items) if isinstance(items, pd.DataFrame) and score == "mean" else None
    if arrival is None and isinstance(items, pd.DataFrame):
        arrival = items.loc[items["model"] == candidate, "question_id"].to_numpy()
    try:
        return gate.compare_models(
            wide.columns([baseline, candidate]),
            baseline,
            candidate,
            margin=margin,
            better_by=better_by,
            alpha=alpha,
            power=power,
            by_category=by_category,
            sequential=sequential,
            arrival=arrival,
            categories=categories,
            samples=samples,
        )
    except ValueError as exc:
        raise InputError("compare", str(exc)) from exc
