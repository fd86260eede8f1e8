"""Replication check: the paper's reported numbers against our pipeline over many subsample seeds.

The paper (:mod:`evalbars.readings.paper`, section 5.2) analyses six ~7B models on a
category-stratified subsample of 1,497 MMLU-Pro questions, but does not publish
which questions. We
therefore compare distributions, not digits: for each number the paper reports we
compute our value at the configured subsample seed and its distribution over many
other subsample seeds, for each ``missing_prediction`` policy, and ask whether the
paper's value lies inside the middle 95% of that distribution.

Every seed runs the same functions as the analysis stage
(:func:`evalbars.stats.pairwise.pairwise_table`, :mod:`evalbars.stats.omnibus`,
:func:`evalbars.stats.mixed.fit_lmm` on its exact path), so the check cannot drift
from the tables it vouches for. The loop over seeds is a loop over whole
analyses, each vectorised inside.

The seeds are independent, so the workflow can spread them over several jobs
(``replication.jobs``): :func:`seed_chunks` cuts the seed list into contiguous
chunks, :func:`replication_chunk` computes one, and :func:`combine_chunks` puts
them back in the order :func:`replication_runs` gives for all seeds at once, so
the combined table is the same, byte for byte, whatever the number of jobs.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from evalbars.data import sampling
from evalbars.data.items import rescore
from evalbars.data.scores import WideScores, wide_scores
from evalbars.defaults import ALPHA
from evalbars.readings.paper import PAPER_VALUES
from evalbars.stats import mixed, omnibus, pairwise
from evalbars.stats.fits import contrast_se

__all__ = [
    "paper_quantities",
    "subsample_seeds",
    "seed_chunks",
    "replication_runs",
    "replication_chunk",
    "combine_chunks",
    "replication_table",
    "replication_summary",
]

log = logging.getLogger(__name__)


def _mean_contrast_se(fit: mixed.LmmFit) -> float:
    """Mean over all pairs of the ``se`` of :func:`evalbars.stats.mixed.lmm_contrasts`, without
    its Tukey p-values (which cost more than the fit and are not needed here)."""
    a, b = np.triu_indices(len(fit.names), k=1)
    return float(contrast_se(fit, a, b).mean())


def paper_quantities(wide: WideScores, alpha: float = ALPHA, mixed_method: str = "exact") -> dict:
    """Our value of every quantity in :data:`PAPER_VALUES` on one complete score matrix.

    Contrast SEs are means over the K(K-1)/2 pairs (the paper reports one number
    per procedure); significance counts use ``alpha``; the mixed models are fitted
    with ``mixed_method`` (``"exact"`` needs complete data and takes milliseconds).
    """
    table = pairwise.pairwise_table(wide, alpha)
    accuracy = np.nanmean(wide.scores, axis=0)
    complete = wide.scores[np.isfinite(wide.scores).all(axis=1)]
    rm = omnibus.rm_anova(complete)
    one = omnibus.oneway_anova(complete)
    fr = omnibus.friedman(complete)
    se = {
        spec: _mean_contrast_se(mixed.fit_lmm(wide, spec, mixed_method))
        for spec in ("category", "category_question")
    }
    return {
        "spread_points": float(100 * (accuracy.max() - accuracy.min())),
        "n_significant_unpaired": int(table["significant_unpaired"].sum()),
        "n_significant_paired": int(table["significant_paired"].sum()),
        "n_significant_bonferroni": int(table["significant_bonferroni"].sum()),
        "n_significant_holm": int(table["significant_holm"].sum()),
        "contrast_se_lmm_category": se["category"],
        "contrast_se_lmm_nested": se["category_question"],
        "contrast_se_paired": float(table["se_paired"].mean()),
        "rm_anova_f": float(rm.f),
        "rm_anova_p": float(rm.p),
        "oneway_f": float(one.f),
        "oneway_p": float(one.p),
        "friedman_chi2": float(fr.statistic),
        "friedman_p": float(fr.p),
    }


def subsample_seeds(n_seeds: int, seed: int) -> np.ndarray:
    """``n_seeds`` subsample seeds derived from one entropy value by
    :class:`numpy.random.SeedSequence`."""
    return np.random.SeedSequence(seed).generate_state(n_seeds).astype(np.int64)


def seed_chunks(n_seeds: int, jobs: int) -> list[range]:
    """Positions ``0 .. n_seeds - 1`` of the seed list cut into ``jobs`` contiguous chunks.

    Chunk sizes differ by at most one, the larger ones first; there are never more
    chunks than seeds (``jobs`` is capped at ``n_seeds``). Concatenated in order, the
    chunks are the whole list.
    """
    if n_seeds < 1 or jobs < 1:
        raise ValueError(f"need n_seeds >= 1 and jobs >= 1, got n_seeds={n_seeds}, jobs={jobs}")
    jobs = min(jobs, n_seeds)
    size, extra = divmod(n_seeds, jobs)
    # The first `extra` chunks take one seed more.
    starts = [i * size + min(i, extra) for i in range(jobs + 1)]
    return [range(starts[i], starts[i + 1]) for i in range(jobs)]


def replication_runs(
    items: pd.DataFrame,
    policies,
    n,
    seeds,
    configured_seed: int | None,
    *,
    alpha: float = ALPHA,
    items_policy: str | None = None,
    policy_seed: int = 0,
    models=None,
) -> pd.DataFrame:
    """Every quantity of :data:`PAPER_VALUES` for each policy and subsample seed.

    Parameters
    ----------
    items : DataFrame
        The full canonical item table (all questions), scored under ``items_policy``.
    policies : iterable of str
        ``missing_prediction`` policies to compare; each is applied with
        :func:`rescore` (``items`` is used as is for ``items_policy``).
    n : int or "all"
        Subsample size (the paper: 1,497).
    seeds : iterable of int
        Subsample seeds for the distribution (:func:`subsample_seeds`).
    configured_seed : int or None
        The workflow's subsample seed ("our value"); None leaves its rows out (the
        chunks of :func:`replication_chunk` after the first).
    alpha : float
        Significance level for the counts.
    items_policy : str, optional
        The policy ``items`` was built with.
    policy_seed : int
        Seed of the ``random_guess`` policy.
    models : list of str, optional
        Models to analyse (default: all in ``items``).

    Returns
    -------
    DataFrame
        Long: ``policy, seed, configured, quantity, value``; ``configured`` is True
        on the rows of ``configured_seed``.

    Notes
    -----
    Each policy's scores are pivoted once; every seed draws its questions with
    :func:`evalbars.data.sampling.draw_questions` (the workflow's own draw) from the
    questions every model answered and selects those rows.
    """
    if items_policy == "exclude" and any(p != "exclude" for p in policies):
        raise ValueError(
            "the replication check re-scores missing predictions, but the item table was built "
            "with missing_prediction=exclude, which drops them; build it with wrong or random_guess"
        )
    seeds = [int(s) for s in seeds]
    configured = [] if configured_seed is None else [int(configured_seed)]
    all_seeds = configured + seeds
    rows = []
    for policy in policies:
        scored = items if policy == items_policy else rescore(items, policy, policy_seed)
        wide = wide_scores(scored, models)
        eligible, _ = sampling.eligible_questions(scored[scored["model"].isin(wide.models)])
        position = pd.Index(wide.question_ids)
        for i, seed in enumerate(all_seeds):
            drawn = sampling.draw_questions(eligible, n, seed)[0]["question_id"]
            keep = np.zeros(len(position), dtype=bool)
            keep[position.get_indexer(drawn)] = True
            for quantity, value in paper_quantities(wide.rows(keep), alpha, "exact").items():
                rows.append((policy, seed, i < len(configured), quantity, value))
    return pd.DataFrame(rows, columns=["policy", "seed", "configured", "quantity", "value"])


def replication_chunk(
    items: pd.DataFrame,
    policies,
    n,
    n_seeds: int,
    seed: int,
    jobs: int,
    chunk: int,
    configured_seed: int,
    **options,
) -> pd.DataFrame:
    """The rows of :func:`replication_runs` that job ``chunk`` of ``jobs`` computes.

    The job takes chunk ``chunk`` of :func:`seed_chunks` of the ``n_seeds`` seeds
    :func:`subsample_seeds` derives from ``seed``; the first chunk also carries the
    configured seed. ``options`` (``alpha``, ``items_policy``, ``policy_seed``,
    ``models``) go to :func:`replication_runs` unchanged.
    """
    positions = seed_chunks(n_seeds, jobs)[chunk]
    seeds = subsample_seeds(n_seeds, seed)[positions.start : positions.stop]
    return replication_runs(
        items, policies, n, seeds, configured_seed if chunk == 0 else None, **options
    )


def combine_chunks(chunks, policies) -> pd.DataFrame:
    """The chunks of :func:`replication_chunk`, in chunk order, as :func:`replication_runs`
    returns all seeds at once: policy by policy (in the order of ``policies``), and within a
    policy the configured seed, then the seeds in list order."""
    return pd.concat(
        [chunk[chunk["policy"] == policy] for policy in policies for chunk in chunks],
        ignore_index=True,
    )


def replication_table(runs: pd.DataFrame, paper: pd.DataFrame = PAPER_VALUES) -> pd.DataFrame:
    """Compare the paper's values with our distribution over subsample seeds.

    Returns
    -------
    DataFrame
        One row per (quantity, policy): ``quantity, description, policy,
        paper_value, our_value`` (configured seed), ``seed_q025, seed_median,
        seed_q975`` (over the other seeds), ``paper_percentile``, ``n_seeds``,
        ``reproduced``.

    Notes
    -----
    ``paper_percentile`` is the mid-rank percentile of the paper's value among the
    seed values, :math:`100 (\\#\\{v < x\\} + \\tfrac12 \\#\\{v = x\\}) / N`, so a count
    that ties many seeds lands in the middle of its tie. ``reproduced`` is True
    when the paper's value lies in the closed interval ``[seed_q025, seed_q975]``
    (``numpy.quantile``, linear interpolation).
    """
    others = runs[~runs["configured"]]
    ours = runs[runs["configured"]].set_index(["quantity", "policy"])["value"]
    rows = []
    # Paper order; quantities without runs (a custom ``paper`` table) are left out.
    for quantity in paper.loc[paper["quantity"].isin(runs["quantity"]), "quantity"]:
        spec = paper.set_index("quantity").loc[quantity]
        for policy in runs["policy"].drop_duplicates():
            values = others.loc[
                (others["quantity"] == quantity) & (others["policy"] == policy), "value"
            ].to_numpy(dtype=float)
            x = float(spec["paper_value"])
            low, median, high = np.quantile(values, [0.025, 0.5, 0.975])
            percentile = 100 * ((values < x).sum() + 0.5 * (values == x).sum()) / len(values)
            rows.append(
                {
                    "quantity": quantity,
                    "description": spec["description"],
                    "policy": policy,
                    "paper_value": x,
                    "our_value": float(ours.loc[(quantity, policy)]),
                    "seed_q025": low,
                    "seed_median": median,
                    "seed_q975": high,
                    "paper_percentile": percentile,
                    "n_seeds": len(values),
                    "reproduced": bool(low <= x <= high),
                }
            )
    return pd.DataFrame(rows)


def replication_summary(table: pd.DataFrame) -> str:
    """One plain sentence per policy: which of the paper's numbers we reproduce and which not."""
    sentences = []
    for policy, group in table.groupby("policy", sort=False):
        inside = group.loc[group["reproduced"], "quantity"].tolist()
        outside = group.loc[~group["reproduced"], "quantity"].tolist()
        sentence = (
            f"Under missing_prediction={policy}, {len(inside)} of {len(group)} of the paper's "
            f"numbers lie inside the middle 95% of our {int(group['n_seeds'].iloc[0])} "
            "subsample redraws"
        )
        sentence += (
            f"; not reproduced: {', '.join(outside)}." if outside else "; all are reproduced."
        )
        sentences.append(sentence)
    return " ".join(sentences)
