"""The commands on pairwise battles: ``read``, ``leaderboard``, ``claims`` and ``report`` given
battle files (LMArena's, Arena-Hard-Auto's judgments, a table of ``model_a, model_b, winner``)
instead of item-level scores.

Each command recognises battles by content (:func:`given`) and hands them here; everything it
prints is computed by :mod:`evalbars.api`'s battles functions, which call the workflow's jobs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import cast

import pandas as pd

from evalbars import api
from evalbars.cli.inputs import reader_options
from evalbars.data.battles import battles_preview
from evalbars.data.readers import SourceOptions, battles_given
from evalbars.errors import InputError
from evalbars.pipeline import runner
from evalbars.readings import battle_verdicts
from evalbars.readings.battle_board import battle_board_headline
from evalbars.readings.battles import with_clusters
from evalbars.readings.claims import Reading
from evalbars.render.landing import battles_separation_sentence
from evalbars.render.tables import format_p, neutralised_table, to_markdown

__all__ = [
    "given",
    "refuse_battle_options",
    "run_read",
    "run_leaderboard",
    "run_claims",
    "write_report",
    "print_answer",
]


def given(paths) -> bool:
    """Whether the paths a command was given hold pairwise battles (all of them; a mix with
    item-level scores is refused in one line)."""
    return battles_given([str(p) for p in paths])


def _settings(args: argparse.Namespace) -> dict:
    """The battles settings the command line gave (None: the default)."""
    return {
        "ties": args.ties,
        "cluster": args.cluster_by,
        "style": args.style,
        "anchor": args.anchor,
    }


def _battles(paths, args: argparse.Namespace) -> pd.DataFrame:
    return api.read_battles(paths, baseline=args.baseline)


#: The flag of each reader option whose name is not its flag's.
_FLAGS = {"format": "--input-format", "tasks": "--task"}


def _refuse_item_options(args: argparse.Namespace, names=()) -> None:
    """Refuse options of item-level scores given with battles (one line naming the option)."""
    defaults = SourceOptions()
    given = [
        _FLAGS.get(key, "--" + key.replace("_", "-"))
        for key, value in reader_options(args).items()
        if value not in (None, False) and value != getattr(defaults, key, None)
    ]
    if args.missing_prediction != "wrong":
        given.append("--missing-prediction")
    if getattr(args, "score", "mean") != "mean":
        given.append("--score")
    given += [
        option for name, option in (("labels", "--labels"), *names) if getattr(args, name, None)
    ]
    if given:
        raise InputError(given[0], "applies to item-level scores, not to pairwise battles")


def refuse_battle_options(args: argparse.Namespace) -> None:
    """Refuse the battles options given with item-level scores (one line naming the option)."""
    for name, option in (("ties", "--ties"), ("cluster_by", "--cluster-by"),
                         ("anchor", "--anchor"), ("style", "--style"),
                         ("baseline", "--baseline")):  # fmt: skip
        if getattr(args, name, None):
            raise InputError(option, "applies to pairwise battles, not to item-level scores")


# --- evalbars read ---------------------------------------------------------------------------------


def run_read(args: argparse.Namespace) -> int:
    """``evalbars read`` on battles: what was read, the comparison graph (refused in pieces,
    naming them), how the battles are clustered, and each model's battles."""
    _refuse_item_options(args, [("output", "-o"), ("audit_stderr", "--audit-stderr")])
    battles = _battles(args.paths, args)
    preview = battles_preview(battles)
    clustering = with_clusters(
        battles, args.cluster_by or "auto", file_format=battles.attrs["format"]
    )[1]
    lines = [
        f"{battles.attrs['format']} battles: " + preview.lines()[0],
        preview.lines()[1],
        clustering,
    ]
    strong = battles["weight"] != 1
    if battles.attrs["format"] == "arena_hard" and strong.any():
        weight = battles.loc[strong, "weight"].iloc[0]
        lines.append(f"{int(strong.sum()):,} strong verdicts (A>>B) weigh {weight:g}")
    sys.stdout.write("\n".join(lines) + "\n\n" + to_markdown(preview.per_model))
    return 0


# --- evalbars leaderboard ---------------------------------------------------------------------------

#: What the leaderboard's Markdown shows (the CSV and JSON hold every column).
_SHOWN = [
    "position",
    "model",
    "rating",
    "ci_low",
    "ci_high",
    "ci_low_per_battle",
    "ci_high_per_battle",
    "letters",
    "tier",
    "rank_low",
    "rank_high",
    "p_first",
    "battles",
]


def run_leaderboard(args: argparse.Namespace) -> int:
    """``evalbars leaderboard`` on battles: the ratings with their intervals, letters, tiers
    and rank intervals (``battles_leaderboard.csv``)."""
    _refuse_item_options(args)
    battles = _battles(args.items, args)
    board = api.battles_table(
        battles, alpha=args.alpha, level=args.level, power=args.power, seed=args.seed,
        **_settings(args),
    )  # fmt: skip
    headline = (
        battle_board_headline(board, board.attrs["separations"])
        + f" Elo ratings, ties {args.ties or 'half'}; {board.attrs['clustering']}."
    )
    if args.format in ("markdown", "md"):
        formats = dict.fromkeys(["rating", "ci_low", "ci_high", "ci_low_per_battle",
                                 "ci_high_per_battle"], ".0f") | {"p_first": ".2f"}  # fmt: skip
        sys.stdout.write(headline + "\n\n" + to_markdown(board[_SHOWN], formats=formats))
    elif args.format == "json":
        rows = json.loads(board.to_json(orient="records", double_precision=15))
        sys.stdout.write(json.dumps({"headline": headline, "rows": rows}, indent=2) + "\n")
    else:
        neutralised_table(board).to_csv(sys.stdout, index=False, lineterminator="\n")
        print(headline, file=sys.stderr)
    return 0


# --- evalbars claims ---------------------------------------------------------------------------------


def run_claims(args: argparse.Namespace, texts: list) -> int:
    """``evalbars claims`` on battles: each claim's verdicts, margins in Elo points
    (``battles_claims.csv``)."""
    _refuse_item_options(args)
    if args.family != "claims":
        raise InputError(
            "--family",
            "applies to item-level scores (battles' claims are adjusted over the claims made)",
        )
    battles = _battles(args.items, args)
    table = api.battle_claims(
        battles, texts, args.alpha, adjust=args.adjust, power=args.power, **{
            k: v for k, v in _settings(args).items() if k != "anchor"}
    )  # fmt: skip
    if args.format in ("markdown", "md"):
        sys.stdout.write(battle_verdicts.battle_claims_markdown(table, args.alpha))
    elif args.format == "json":
        document = {
            "alpha": args.alpha,
            "headline": battle_verdicts.battle_claims_headline(table),
            "rows": json.loads(table.to_json(orient="records", double_precision=15)),
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        neutralised_table(table).to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


# --- evalbars report ---------------------------------------------------------------------------------


def _verdict_line(rows: pd.DataFrame) -> str:
    """One line per claim: its verdict under each reading, with the (adjusted) p."""
    said = []
    for row in rows.itertuples():
        title = Reading(str(row.reading), str(row.adjustment)).title
        p = cast(
            float, row.p_opposite_adjusted if row.verdict == "contradicted" else row.p_adjusted
        )
        said.append(f"{title} {row.verdict} (p {format_p(p)})")
    return f"  {rows['claim'].iloc[0]}: " + "; ".join(said)


def write_report(args: argparse.Namespace, texts: list, progress) -> api.ReportRun:
    """``evalbars report`` on battles: the workflow's battles stage (:func:`print_answer`
    prints the answer)."""
    _refuse_item_options(args, [("prices", "--prices"), ("storage", "--storage")])
    return api.write_report(
        args.paths,
        args.output,
        claims=texts,
        simulations=args.simulations,
        cores=args.cores,
        unlock=args.unlock,
        progress=progress,
        hint_style="cli",
        labels=args.labels,
        baseline=args.baseline,
        **_settings(args),
    )


def print_answer(run: api.ReportRun, args: argparse.Namespace) -> int:
    """What ``evalbars report`` prints after a battles run: the report, the claims' verdicts
    (or the separations), and the command that reruns it."""
    print(f"report: {run.report}")
    if len(run.claims):
        print(battle_verdicts.battle_claims_headline(run.claims))
        for _, rows in run.claims.groupby("claim", sort=False):
            print(_verdict_line(rows))
    else:
        path = run.directory / "results" / "tables" / "battles_naive_vs_blocked.parquet"
        print(f"no claims given. {battles_separation_sentence(pd.read_parquet(path))}")
    print(f"rerun or edit: {runner.rerun_hint(run.directory, run.config, args.cores)}")
    return 0
