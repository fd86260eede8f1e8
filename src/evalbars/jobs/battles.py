"""The battles stage's jobs (``workflow/rules/battles.smk``): pairwise battles read, fitted and
read as ratings, pairs, tiers, claims and plans, and the report's first screen of a battles run.

``battles_read`` reads the files (:func:`evalbars.data.battles.read_battles`) and refuses a
comparison graph in pieces; ``battles_fit`` fits the Bradley-Terry model
(:func:`evalbars.readings.battles.fit_battles`) and draws the prompt-cluster bootstrap, both
written as Parquet (:func:`fit_frame`, :func:`draws_frame`); ``battles_tables`` writes the
leaderboard, every pair, per-battle against clustered and the plan; ``battles_claims`` the
claims' verdicts; ``battles_landing`` the first screen. The figures are drawn by
:mod:`evalbars.jobs.figures.battles`.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from evalbars.data.battles import STRONG_WEIGHT, battles_preview, read_battles
from evalbars.data.readers.common import hint_style
from evalbars.defaults import SEED
from evalbars.errors import InputError
from evalbars.jobs.inputs import parquet, read_json, reads
from evalbars.jobs.outputs import Frame, Table, Text
from evalbars.readings import battle_verdicts
from evalbars.readings.battle_board import battle_board_headline, battle_leaderboard
from evalbars.readings.battles import (
    battle_plan,
    fit_battles,
    naive_vs_clustered,
    pairwise_table,
    with_clusters,
)
from evalbars.readings.claims.parsing import ClaimError, claim_config_error, parse_claims
from evalbars.render import landing
from evalbars.render.tables import to_markdown
from evalbars.stats.bradley_terry import (
    BootstrapDraws,
    BradleyTerryFit,
    aggregate_battles,
    cluster_bootstrap,
)

__all__ = [
    "SETTINGS",
    "READER_SETTINGS",
    "battle_settings",
    "checked_battles",
    "read_battle_sources",
    "battles_summary",
    "fit_frame",
    "fit_from_frame",
    "draws_frame",
    "draws_from_frame",
    "battles_read",
    "battles_fit",
    "battles_tables",
    "battles_claims",
    "battles_landing",
]


#: The battles settings of the fit and the tables (config ``battles:``) and their defaults.
SETTINGS = {
    "ties": "half",
    "cluster": "auto",
    "style": False,
    "bootstrap": 1000,
    "seed": SEED,
    "anchor": None,
    "anchor_rating": 1000.0,
}
#: The battles settings of how the files are read (config ``battles:``).
READER_SETTINGS = ("strong_weight", "baseline", "answers")


def battle_settings(options: dict) -> dict:
    """:data:`SETTINGS` with the ``options`` given (None: the default); an unknown one is a
    TypeError."""
    unknown = sorted(set(options) - set(SETTINGS))
    if unknown:
        raise TypeError(f"unknown battles option(s): {', '.join(unknown)}")
    return SETTINGS | {k: v for k, v in options.items() if v is not None}


def _anchor_error(anchor, models) -> InputError:
    where = "--anchor" if hint_style() == "cli" else "battles.anchor"
    return InputError(where, f"{anchor!r} is not a model of the battles ({', '.join(models)})")


def checked_battles(paths, claims=(), *, anchor=None, strong_weight=None, baseline=None,
                    answers=None) -> pd.DataFrame:  # fmt: skip
    """The battles of ``paths``, checked as the battles jobs check them, before a run writes
    anything: the files (:func:`read_battle_sources`), the comparison graph
    (:func:`battles_summary`), the claims (margins in Elo points) and the ``anchor``. Each
    problem is one line."""
    battles, read = read_battle_sources(
        paths,
        strong_weight=STRONG_WEIGHT if strong_weight is None else strong_weight,
        baseline=baseline,
        answers=answers,
    )
    summary = battles_summary(battles, read)
    models = sorted(set(battles["model_a"]) | set(battles["model_b"]))
    parse_claims(list(claims), models, summary["categories"], unit="elo")
    if anchor is not None and anchor not in models:
        raise _anchor_error(anchor, models)
    battles.attrs["dropped_judgments"] = read["dropped_judgments"]
    return battles


def read_battle_sources(sources, *, strong_weight: float, baseline=None, answers=None):
    """The battles of every source (a path, or a predictions entry with a ``path``), one frame,
    and what was read: ``{"format", "sources", "dropped_judgments"}``."""
    frames, formats, dropped = [], [], 0
    paths = [s["path"] if isinstance(s, dict) else str(s) for s in sources]
    for path in paths:
        frame = read_battles(path, strong_weight=strong_weight, baseline=baseline, answers=answers)
        frames.append(frame)
        formats.append(frame.attrs["format"])
        dropped += frame.attrs["dropped_judgments"]
    if not frames:
        raise InputError("battles", "no battle files given")
    battles = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    kinds = sorted(set(formats))
    read = {
        "format": kinds[0] if len(kinds) == 1 else "mixed",
        "sources": paths,
        "dropped_judgments": int(dropped),
    }
    battles.attrs.update(format=read["format"], source_path=", ".join(paths))
    return battles, read


def battles_summary(battles: pd.DataFrame, read: dict | None = None) -> dict:
    """What a battle frame holds, as the ``summary`` the battles jobs read: the format and
    sources (``read``, or the frame's ``attrs``), the counts and the comparison graph
    (:func:`evalbars.data.battles.battles_preview`, which refuses a graph in pieces), the
    categories, and the preview's lines."""
    if read is None:
        source = battles.attrs.get("source_path", "battles")
        read = {
            "format": battles.attrs.get("format", "table"),
            "sources": [source],
            "dropped_judgments": int(battles.attrs.get("dropped_judgments", 0)),
        }
    preview = battles_preview(battles)
    categories = sorted(str(c) for c in battles["category"].dropna().unique())
    return read | {
        "battles": preview.battles,
        "models": preview.models,
        "prompts": preview.prompts,
        "ties": preview.ties,
        "tie_share": preview.tie_share,
        "pairs": preview.pairs,
        "categories": categories,
        "lines": preview.lines(),
    }


@reads()
def battles_read(*, sources: list, strong_weight: float, baseline=None, answers=None) -> dict:
    """``battles_read``: the battles of the ``sources`` (``battles``, Parquet), what was read
    (``summary``: the format, the counts and the comparison graph, JSON; :func:`battles_summary`)
    and each model's battles, wins, ties and losses (``battles_models``). A comparison graph
    in pieces stops the run, naming the pieces (:func:`evalbars.data.battles.battles_preview`)."""
    battles, read = read_battle_sources(
        sources, strong_weight=strong_weight, baseline=baseline, answers=answers
    )
    summary = battles_summary(battles, read)
    per_model = battles_preview(battles).per_model
    lines = "\n".join(summary["lines"])
    return {
        "battles": Frame(battles.assign(game=pd.array(battles["game"], dtype="Int64"))),
        "summary": Text(json.dumps(summary, indent=2) + "\n"),
        "battles_models": Table(per_model, markdown=lines + "\n\n" + to_markdown(per_model)),
    }


# --- The fit and the bootstrap between jobs ------------------------------------------------------


def fit_frame(fit: BradleyTerryFit, note: str = "") -> pd.DataFrame:
    """A fit as a table: one row per parameter (the models, then the tie parameter or the style
    features), its estimate and each covariance's row; the fit's settings on every row.

    Examples
    --------
    >>> from evalbars.stats.bradley_terry import fit_bradley_terry
    >>> fit = fit_bradley_terry(["a", "b", "a"], ["b", "a", "b"], [1, 1, 0.5], cluster=[1, 1, 2])
    >>> back = fit_from_frame(fit_frame(fit))
    >>> back.models, bool(np.allclose(back.covariances["clustered"], fit.covariances["clustered"]))
    (('a', 'b'), True)
    """
    k = len(fit.models)
    tie = [] if fit.ties == "half" else ["tie"]
    tie_estimate = [] if fit.ties == "half" else [fit.tie_parameter]
    frame = pd.DataFrame(
        {
            "parameter": [*fit.models, *tie, *fit.features],
            "kind": ["model"] * k + ["tie"] * len(tie) + ["feature"] * len(fit.features),
            "estimate": np.concatenate([fit.theta, tie_estimate, fit.gamma]),
        }
    )
    for name, matrix in fit.covariances.items():
        frame[f"cov_{name}"] = list(np.asarray(matrix, dtype=float))
    return frame.assign(
        ties=fit.ties,
        loglik=fit.loglik,
        n_battles=fit.n_battles,
        n_clusters=fit.n_clusters,
        note=note,
    )


def fit_from_frame(frame: pd.DataFrame, units=None) -> BradleyTerryFit:
    """The fit :func:`fit_frame` wrote (``units``: the battles' aggregated counts, which the
    plan and the bootstrap read)."""
    kinds = frame["kind"].to_numpy()
    first = frame.iloc[0]
    covariances = {
        column.removeprefix("cov_"): np.vstack(frame[column].to_numpy()).astype(float)
        for column in frame.columns
        if column.startswith("cov_")
    }
    tie = frame.loc[kinds == "tie", "estimate"]
    return BradleyTerryFit(
        models=tuple(frame.loc[kinds == "model", "parameter"]),
        ties=str(first["ties"]),
        theta=frame.loc[kinds == "model", "estimate"].to_numpy(dtype=float),
        tie_parameter=float(tie.iloc[0]) if len(tie) else np.nan,
        features=tuple(frame.loc[kinds == "feature", "parameter"]),
        gamma=frame.loc[kinds == "feature", "estimate"].to_numpy(dtype=float),
        covariances=covariances,
        loglik=float(first["loglik"]),
        n_battles=int(first["n_battles"]),
        n_clusters=int(first["n_clusters"]),
        units=units,
    )


def draws_frame(draws: BootstrapDraws | None, models) -> pd.DataFrame:
    """The bootstrap's replicate strengths, one column per model (no rows without draws)."""
    if draws is None:
        return pd.DataFrame({str(m): pd.Series(dtype=float) for m in models})
    return pd.DataFrame(draws.theta, columns=[str(m) for m in draws.models])


def draws_from_frame(frame: pd.DataFrame | None) -> BootstrapDraws | None:
    """The draws :func:`draws_frame` wrote, or None when there are none."""
    if frame is None or frame.empty:
        return None
    theta = frame.to_numpy(dtype=float)
    failed = int((~np.isfinite(theta).all(axis=1)).sum())
    return BootstrapDraws(
        models=tuple(frame.columns),
        theta=theta,
        tie_parameter=np.full(len(frame), np.nan),
        failed=failed,
        scheme="multinomial",
    )


def _clustered(battles: pd.DataFrame, summary: dict, cluster: str):
    return with_clusters(battles, cluster, file_format=summary["format"])


@reads(battles=parquet(), summary=read_json)
def battles_fit(
    battles: pd.DataFrame,
    summary: dict,
    *,
    ties: str,
    cluster: str,
    style: bool,
    bootstrap: int,
    seed: int,
) -> dict:
    """``battles_fit``: the Bradley-Terry fit of the ``battles`` (``fit``, with its three
    covariances; :func:`fit_frame`) and ``bootstrap`` prompt-cluster bootstrap replicates
    (``draws``, :func:`draws_frame`; none with style control, whose fit is battle by battle)."""
    frame, note = _clustered(battles, summary, cluster)
    fit = fit_battles(frame, ties=ties, cluster="cluster", style=style)
    draws = None
    if bootstrap and fit.units is not None:
        draws = cluster_bootstrap(fit, bootstrap, seed=seed)
    return {"fit": Frame(fit_frame(fit, note)), "draws": Frame(draws_frame(draws, fit.models))}


def _units(frame: pd.DataFrame, fit: BradleyTerryFit):
    """The aggregated counts of a fit without style features (None with them)."""
    if fit.features:
        return None
    return aggregate_battles(
        frame["model_a"].to_numpy(),
        frame["model_b"].to_numpy(),
        frame["outcome"].to_numpy(dtype=float),
        weight=frame["weight"].to_numpy(dtype=float),
        cluster=frame["cluster"].to_numpy(),
        models=fit.models,
    )


@reads(battles=parquet(), summary=read_json, fit=parquet(), draws=parquet())
def battles_tables(
    battles: pd.DataFrame,
    summary: dict,
    fit: pd.DataFrame,
    draws: pd.DataFrame | None = None,
    *,
    cluster: str,
    alpha: float,
    level: float,
    power: float,
    anchor,
    anchor_rating: float,
    seed: int,
) -> dict:
    """``battles_tables``: the leaderboard of ratings (``battles_leaderboard``), every pair's
    difference with Holm under each reading (``battles_pairwise``), per-battle against
    clustered (``battles_naive_vs_blocked``) and the battles each adjacent pair needs
    (``battles_plan``)."""
    frame, note = _clustered(battles, summary, cluster)
    model = fit_from_frame(fit)
    if anchor is not None and anchor not in model.models:
        raise InputError(
            "battles.anchor",
            f"{anchor!r} is not a model of the battles ({', '.join(model.models)})",
        )
    model = fit_from_frame(fit, _units(frame, model))
    sampled = draws_from_frame(draws)
    preview = battles_preview(battles)
    board = battle_leaderboard(
        model,
        draws=sampled,
        per_model=preview.per_model,
        alpha=alpha,
        level=level,
        anchor=anchor,
        anchor_rating=anchor_rating,
        seed=seed,
    )
    readings = ["clustered", "per_battle", *(["bootstrap"] if sampled is not None else [])]
    pairs = pd.concat(
        [pairwise_table(model, r, draws=sampled, alpha=alpha) for r in readings],
        ignore_index=True,
    )
    side_by_side = naive_vs_clustered(model, alpha=alpha)
    separations = side_by_side.attrs["separations"]
    headline = battle_board_headline(board, separations)
    setting = f"Ties: {model.ties}; {note}."
    if model.units is not None:
        plan = battle_plan(model, alpha=alpha, power=power)
        plan_text = (
            f"Head-to-head battles each adjacent pair needs to be separated at alpha = {alpha:g} "
            f"(Bonferroni over the {len(plan)} adjacent pairs) with power {power:g}, given its "
            "tie rate and the design effect of its clustering."
        )
    else:
        plan = pd.DataFrame({"note": ["no plan with style control: set battles.style: false"]})
        plan_text = "No plan with style control (the plan reads the unadjusted fit's counts)."
    return {
        "battles_leaderboard": Table(
            board, markdown=f"{headline} {setting}\n\n" + to_markdown(board)
        ),  # fmt: skip
        "battles_pairwise": Table(pairs, markdown=to_markdown(pairs)),
        "battles_naive_vs_blocked": Table(
            side_by_side,
            markdown=landing.battles_separation_sentence(side_by_side)
            + "\n\n"
            + to_markdown(side_by_side),
        ),
        "battles_plan": Table(plan, markdown=plan_text + "\n\n" + to_markdown(plan)),
    }


@reads(battles=parquet(), summary=read_json)
def battles_claims(
    battles: pd.DataFrame,
    summary: dict,
    *,
    claims: list,
    alpha: float,
    adjust: str,
    power: float,
    ties: str,
    cluster: str,
    style: bool,
) -> dict:
    """``battles_claims``: each claim's verdict under the per-battle and the clustered
    readings, unadjusted and adjusted (``battles_claims``; margins in Elo points,
    :func:`evalbars.readings.battle_verdicts.battle_verdicts`)."""
    frame, note = _clustered(battles, summary, cluster)
    models = sorted(set(frame["model_a"]) | set(frame["model_b"]))
    try:
        parse_claims(claims, models, summary["categories"], unit="elo")
        table = battle_verdicts.battle_verdicts(
            frame,
            claims,
            alpha=alpha,
            adjust=adjust,
            power=power,
            ties=ties,
            style=style,
            note=note,
        )
    except ClaimError as exc:
        raise claim_config_error(exc) from exc
    return {
        "battles_claims": Table(
            table, markdown=battle_verdicts.battle_claims_markdown(table, alpha)
        )
    }


@reads(
    summary=read_json,
    leaderboard=parquet(),
    naive_vs_blocked=parquet(),
    claims=parquet(),
    fit=parquet(columns=["note"]),
)
def battles_landing(
    summary: dict,
    leaderboard: pd.DataFrame,
    naive_vs_blocked: pd.DataFrame,
    claims: pd.DataFrame,
    fit: pd.DataFrame,
    *,
    notes: list,
    alpha: float,
) -> dict:
    """``battles_landing``: the first screen of a battles run's ``report.html`` (``landing``,
    an HTML fragment): what was read, the answer to the claims (or the separations and tiers
    without claims), per-battle against clustered, and the ratings."""
    page = landing.battles_landing_html(
        read_lines=summary["lines"],
        clustering=str(fit["note"].iloc[0]) if len(fit) else "",
        notes=notes,
        claims_table=claims,
        naive_vs_blocked=naive_vs_blocked,
        board=leaderboard,
        alpha=alpha,
    )
    return {"landing": Text(page)}
