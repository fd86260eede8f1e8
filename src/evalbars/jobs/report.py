"""The report's first screen (``workflow/rules/report.smk``): the answer in words and numbers."""

from __future__ import annotations

import pandas as pd

from evalbars.data.sampling import design_notes
from evalbars.jobs.inputs import parquet, read_bytes, read_json, reads
from evalbars.jobs.outputs import Text
from evalbars.render import landing as landing_page

__all__ = ["report_landing"]


@reads(
    item_table=parquet(columns=["model", "question_id", "category", "run"]),
    models=parquet(),
    checked=read_json,
    claims=parquet(),
    claims_png=read_bytes,
    naive_vs_blocked=parquet(),
    pairwise=parquet(),
    ranks=parquet(),
    judge_corrected=parquet(),
    passk_png=read_bytes,
    run_variance=parquet(),
    winner=parquet(),
    leaderboard=parquet(columns=["model", "in_best_set", "top_k", "in_top_k_set"]),
    frontier=parquet(),
)
def report_landing(
    item_table: pd.DataFrame,
    *,
    models: pd.DataFrame,
    checked: dict,
    claims: pd.DataFrame,
    claims_png: bytes | None,
    naive_vs_blocked: pd.DataFrame,
    pairwise: pd.DataFrame,
    ranks: pd.DataFrame,
    alpha: float,
    level: float | None = None,
    judge_corrected: pd.DataFrame | None = None,
    score: str = "mean",
    passk_png: bytes | None = None,
    run_variance: pd.DataFrame | None = None,
    winner: pd.DataFrame | None = None,
    leaderboard: pd.DataFrame | None = None,
    frontier: pd.DataFrame | None = None,
) -> dict:
    """``report_landing``: the first screen of ``report.html`` (``landing``, an HTML fragment).

    ``item_table`` holds the analysed questions' ``model, question_id, category`` rows; the tables
    are the analysis, claims and ranks jobs' own (read from their Parquet files, so that a
    model named ``NA`` keeps its name). The notes say what was fitted to the data
    (``checked``) and what the shape of the data leaves out
    (:func:`evalbars.data.sampling.design_notes`). ``judge_corrected`` is the judge-versus-
    corrected table where the scores are a judge's with human labels. ``winner`` and
    ``leaderboard`` are the leaderboard job's (the top score beside its correction for being
    the top, the confidence sets for the best and the top k), and ``frontier`` the cost job's
    where the run has costs. Where the data have repeated samples or runs, one line says how
    many (:func:`evalbars.render.landing.samples_sentence`, with the item score ``score``), and
    the pass@k figure ``passk_png`` and the run-to-run table ``run_variance`` are shown.
    """
    page = landing_page.landing_html(
        models_text=landing_page.models_sentence(
            models["model"].tolist(),
            questions=item_table["question_id"].nunique(),
            categories=item_table["category"].nunique(),
            samples=len(item_table),
        ),
        notes=[*checked["notes"], *design_notes(item_table)],
        claims_table=claims,
        example_claim=checked["example"],
        claims_png=claims_png if len(claims) else None,
        naive_vs_blocked=naive_vs_blocked,
        pairwise=pairwise,
        ranks=ranks,
        models_table=models,
        alpha=alpha,
        judge_corrected=judge_corrected,
        samples_text=landing_page.samples_sentence(item_table, score),
        passk_png=passk_png,
        run_variance=run_variance,
        winner=winner,
        leaderboard=leaderboard,
        frontier=frontier,
        level=level,
    )
    return {"landing": Text(page)}
