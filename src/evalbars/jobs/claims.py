"""The claims stage's jobs (``workflow/rules/claims.smk``): the user's claims checked and tested
under every reading, and the planner's table. The stage's jobs that draw (the claims figure,
every pair in every category) are in :mod:`evalbars.jobs.figures.claims`."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.parquet as pq

from evalbars.data.scores import WideScores, read_wide_scores
from evalbars.defaults import LEVEL
from evalbars.jobs.data import chosen_scores
from evalbars.jobs.inputs import file_name, parquet, read_json, reads
from evalbars.jobs.outputs import Table, Text
from evalbars.jobs.repeats import SAMPLE_COLUMNS, samples_of
from evalbars.readings import claims as claims_readings
from evalbars.readings import planner
from evalbars.readings.claims.parsing import (
    ClaimError,
    check_claims,
    claim_config_error,
    parse_claims,
    unshared_error,
)
from evalbars.readings.claims.runs import has_runs, runs_rows, with_runs_rows
from evalbars.readings.claims.sets import claim_scores, refuse_costless
from evalbars.render import landing, tables

__all__ = [
    "claims_check",
    "checked_claims",
    "model_accuracy",
    "claims_table",
    "plan_table",
]


@reads(item_table=parquet(columns=["model", "question_id", "category", "correct"]))
def claims_check(
    item_table: pd.DataFrame, *, claims: list, notes: list, costed: bool = False
) -> dict:
    """``claims_check``: the configured claims checked against the models and categories of
    the item table (:func:`checked_claims`), and against the questions each pair shares, before
    the claims stage writes anything; a cost claim in a run without costs (``costed``) too."""
    return checked_claims(
        model_accuracy(item_table),
        item_table["category"].unique(),
        claims=claims,
        notes=notes,
        answered=item_table,
        costed=costed,
    )


def checked_claims(
    accuracy: pd.Series,
    categories,
    *,
    claims: list,
    notes: list,
    answered=None,
    costed: bool = False,
) -> dict:
    """The configured claims parsed against the data's models (the index of
    ``accuracy``, each model's mean score) and ``categories`` (a claim naming neither stops the
    run), with the notes of the settings fitted to the data and an example claim in the
    analysed models' own names (``checked``, JSON). With ``answered``, the item table's
    ``model, question_id, category`` rows, a claim comparing two models that share no question
    (in its category) stops the run too, as ``evalbars compare`` refuses such a pair. Without
    ``costed`` (a price table, or a cost column), a cost claim stops it."""
    parsed = check_claims(claims, sorted(accuracy.index), sorted(categories))
    if not costed:  # a cost claim needs the costs the run would make (evalbars.jobs.leaderboard)
        for claim in parsed:
            try:
                refuse_costless(claim, None, None)
            except ClaimError as exc:
                raise claim_config_error(exc) from exc
    if answered is not None:
        for claim in parsed:
            rival = _unshared_rival(claim, answered, accuracy.index)
            if rival is not None:
                raise claim_config_error(unshared_error(claim, rival))
    # A claim in the analysed models' own names, for the report to offer when none is given.
    leaders = accuracy.sort_values(ascending=False)
    example = f"{leaders.index[0]} > {leaders.index[1]}" if len(leaders) > 1 else None
    document = {"claims": list(claims), "notes": list(notes), "example": example}
    return {"checked": Text(json.dumps(document, indent=2) + "\n")}


def _unshared_rival(claim, answered: pd.DataFrame, models) -> str | None:
    """A model the claim compares ``claim.model_a`` with that shares no question with it in
    ``answered`` (the claim's category's rows, if it names one), or None."""
    if claim.category is not None:
        answered = answered[answered["category"] == claim.category]
    own = answered.loc[answered["model"] == claim.model_a, "question_id"].unique()
    rivals = [claim.model_b] if claim.model_b else [m for m in models if m != claim.model_a]
    # unique() before str(): a categorical column of a board's rows is not copied as text
    met = {str(m) for m in answered.loc[answered["question_id"].isin(own), "model"].unique()}
    return next((str(m) for m in rivals if str(m) not in met), None)


def model_accuracy(items: pd.DataFrame) -> pd.Series:
    """Each model's mean score over its rows of an item table (what :func:`checked_claims` reads)."""
    return items.groupby("model", observed=True)["correct"].mean()


@reads(
    scores=read_wide_scores,
    checked=read_json,
    item_table=file_name,
    costs=parquet(columns=["model", "question_id", "cost"]),
)
def claims_table(
    scores: WideScores,
    checked: dict,
    item_table=None,
    *,
    alpha: float,
    family: str,
    power: float,
    replicates: int,
    seed: int,
    adjust: str = "holm",
    level: float = LEVEL,
    costs: pd.DataFrame | None = None,
) -> dict:
    """``claims_table``: each claim's verdict under every reading (``claims``), of the claims
    ``checked`` (what ``claims_check`` wrote), the cost claims on the per-question ``costs``
    where the run has them; and the score of the model each ``best``/``top k`` claim names,
    naive and corrected for its selection, at ``level`` (``claim_scores``,
    :func:`evalbars.readings.claims.sets.claim_scores`). ``item_table``, the sample rows (a
    Parquet file or a frame), is read only where it adds something: a claim ``at pass@K`` is
    read on that item score's matrix, and with a model read in two or more runs each claim
    gains the ``runs`` reading (:mod:`evalbars.readings.claims.runs`)."""
    try:
        samples, matrices = _claim_samples(item_table, checked["claims"], scores.models)
        table = claims_readings.evaluate_claims(
            scores,
            checked["claims"],
            alpha=alpha,
            family=family,
            power=power,
            replicates=replicates,
            seed=seed,
            adjust=adjust,
            score_matrices=matrices,
            costs=costs,
        )
        parsed = claims_readings.parse_claims(
            checked["claims"], scores.models, sorted(set(scores.categories.tolist()))
        )
        if has_runs(samples):
            categories = sorted(set(scores.categories.tolist()))
            rows = runs_rows(
                checked["claims"],
                samples,
                scores.models,
                categories,
                alpha=alpha,
                score=scores.score,
            )
            table = with_runs_rows(table, rows)
    except claims_readings.ClaimError as exc:
        raise claim_config_error(exc) from exc
    scored = claim_scores(scores, parsed, level=level, seed=seed)
    markdown = claims_readings.claims_markdown(table, alpha, family)
    if table.empty:
        markdown = landing.no_claims_text(checked["notes"], checked["example"])
    shown = (
        claims_readings.claims_display(table)
        if len(table)
        else pd.DataFrame({"note": ["no claims"]})
    )
    latex = tables.to_latex(
        shown, caption=claims_readings.claims_headline(table), label="tab:claims"
    )
    return {
        "claims": Table(table, markdown=markdown, latex=latex),
        "claim_scores": Table(scored, markdown=tables.to_markdown(scored)),
    }


def _claim_samples(item_table, claims: list, models) -> tuple:
    """``(samples, score matrices)`` the claims need from the sample rows: the rows where a
    model has two or more runs (else None), and the matrix of each item score a claim names
    (:func:`evalbars.jobs.data.chosen_scores`). The file is opened only as far as needed."""
    if item_table is None or not claims:
        return None, {}
    scores_named = {c.score for c in parse_claims(claims) if c.score is not None}
    if isinstance(item_table, pd.DataFrame):
        frame = item_table
    else:
        names = pq.read_schema(item_table).names
        runs = pd.read_parquet(item_table, columns=["model", "run"]) if "run" in names else None
        if not scores_named and not has_runs(runs):
            return None, {}
        frame = pd.read_parquet(item_table, columns=[c for c in SAMPLE_COLUMNS if c in names])
    samples = samples_of(frame)
    matrices = {
        score: chosen_scores(frame, score, "all").columns(list(models)) for score in scores_named
    }
    return (samples if has_runs(samples) else None), matrices


@reads(item_table=parquet(), checked=read_json)
def plan_table(
    item_table: pd.DataFrame,
    checked: dict,
    *,
    alpha: float,
    power: float,
    gaps: list,
    seed: int,
) -> dict:
    """``plan_table``: questions needed per gap (in points) and multiplicity procedure, closed
    form and simulated, in the data's own setting (``plan``), for as many claims as ``checked``
    (what ``claims_check`` wrote) holds."""
    setting = planner.data_setting(item_table)
    table = planner.plan_table(
        models=setting["models"],
        gaps=[g / 100 for g in gaps],
        disagreement=setting["disagreement"],
        alpha=alpha,
        power=power,
        claims=len(checked["claims"]),
        questions=setting["questions"],
        mean_accuracy=setting["mean_accuracy"],
        seed=seed,
    )
    return {"plan": Table(table, caption=planner.plan_caption(table, setting, alpha, power))}
