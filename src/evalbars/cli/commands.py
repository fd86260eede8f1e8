"""The commands that read data and print a table: ``read``, ``claims``, ``plan``, ``ranks``,
``leaderboard`` and ``compare`` (their arguments: :mod:`evalbars.cli.arguments`).

Each ``run_*`` function takes the parsed arguments and returns the exit status; this module is
imported when one of them runs, not to build the parser."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars import api
from evalbars.cli import battles as battles_cli
from evalbars.cli.inputs import claim_texts, reader_options, refuse_output_over_inputs
from evalbars.data.items import write_item_table
from evalbars.data.question_coverage import check_id_spelling
from evalbars.errors import EvalbarsError, InputError
from evalbars.readings import claims, gate, planner, ranks
from evalbars.readings.leaderboard import table as verdicts
from evalbars.readings.leaderboard.best import winner_sentence
from evalbars.readings.leaderboard.cost import frontier_sentence
from evalbars.render.tables import neutralised_table, to_markdown
from evalbars.stats.planning import holm as holm_power


def run_ranks(args: argparse.Namespace) -> int:
    board = ranks.read_leaderboard(args.file, se_units=args.se_units)
    report = ranks.rank_table(board, level=args.level, draws=args.draws, seed=args.seed)
    if args.format in ("markdown", "md"):
        sys.stdout.write(ranks.report_markdown(report))
    elif args.format == "json":
        sys.stdout.write(ranks.report_json(report))
    else:
        neutralised_table(report.table).to_csv(sys.stdout, index=False, lineterminator="\n")
        print(report.headline, file=sys.stderr)
    return 0


# --- evalbars read --------------------------------------------------------------------------------

#: Item-table formats ``read -o`` writes, by suffix.
_OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv", ".tsv")


#: What `evalbars read --audit-stderr` prints of the audit (harness_stderr.csv has every column).
_AUDIT_SHOWN = [
    "model",
    "task",
    "metric",
    "filter",
    "n",
    "published_stderr",
    "recomputed_stderr",
    "clustered_stderr",
    "flag",
]


def _check_items_output(output: str) -> Path:
    """Refuse, before anything is read, an item-table path ``read -o`` cannot write."""
    path = Path(output)
    suffix = path.suffix.lower()
    if suffix not in _OUTPUT_SUFFIXES:
        raise InputError(
            path, f"unknown suffix {suffix or '(none)'!r}; use one of {_OUTPUT_SUFFIXES}"
        )
    if not path.parent.is_dir():
        raise InputError(path, f"folder {str(path.parent)!r} does not exist; create it first")
    if path.exists() and not path.is_file():  # e.g. a device: never replaced by a file
        raise InputError(path, "is not a regular file")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise InputError(
            path, f"cannot write in the folder {str(path.parent)!r}: permission denied"
        )
    return path


def _write_items(items, path: Path) -> None:
    """The item table to ``path`` in the format its suffix names, whole or not at all."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            write_item_table(items, partial)
        else:
            sep = "\t" if path.suffix.lower() == ".tsv" else ","
            neutralised_table(items).to_csv(partial, index=False, sep=sep)
        partial.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # the folder may refuse that too: one line still
            partial.unlink(missing_ok=True)
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from exc


def run_read(args: argparse.Namespace) -> int:
    if battles_cli.given(args.paths):  # pairwise battles: evalbars.cli.battles
        return battles_cli.run_read(args)
    battles_cli.refuse_battle_options(args)
    options = reader_options(args)
    if args.output:
        refuse_output_over_inputs(args.output, [*args.paths, args.instances, args.labels], "-o")
        output = _check_items_output(args.output)
    reading = {"missing_prediction": args.missing_prediction, "labels": args.labels}
    summary = api.read_preview(args.paths, **reading, **options)
    if args.output or args.score != "mean":
        items = api.read_items(args.paths, **reading, **options)
    if args.output:
        _write_items(items, output)
    formats = {"accuracy": ".4f", "disagreeing_share": ".2f"}
    if args.score != "mean":  # each model's mean item score over the questions that have one
        wide = api.score_matrix(items, args.score)
        means = pd.Series(np.nanmean(wide.scores, axis=0), index=wide.models)
        column = list(summary.columns).index("accuracy") + 1
        summary.insert(column, args.score, means.reindex(summary["model"]).to_numpy())
        formats[args.score] = ".4f"
    sys.stdout.write(to_markdown(summary, formats=formats))
    if args.audit_stderr:
        audit = api.stderr_audit(args.paths, **options)
        shown = audit[_AUDIT_SHOWN]
        numbers = ("published_stderr", "recomputed_stderr", "clustered_stderr")
        sys.stdout.write(
            "\nPublished standard errors, recomputed from the items:\n\n"
            + (
                to_markdown(shown, formats=dict.fromkeys(numbers, ".6g"))
                if len(audit)
                else "none published (MMLU-Pro JSON and long tables publish none)\n"
            )
        )
    if args.output:
        print(f"wrote {len(items):,} rows to {args.output}", file=sys.stderr)
    return 0


# --- evalbars claims and evalbars plan ------------------------------------------------------------


def load_items(paths, args: argparse.Namespace, needs: str = "claims compare models"):
    """The item table of the files a command was given, read with its reader options and the
    workflow's checks (:func:`evalbars.api.read_items`); one line saying what ``needs`` two or
    more models when the files hold fewer."""
    items = api.read_items(
        paths,
        missing_prediction=args.missing_prediction,
        labels=args.labels,
        **reader_options(args),
    )
    if items["model"].nunique() < 2:
        raise InputError(
            ", ".join(str(p) for p in paths),
            f"{needs}, but the data hold {items['model'].nunique()}",
        )
    return items


def _scored(items, args: argparse.Namespace):
    """The item table as the readings read it: itself for ``--score mean``, else the matrix of
    the chosen item score (:func:`evalbars.api.score_matrix`)."""
    return items if args.score == "mean" else api.score_matrix(items, args.score)


def run_claims(args: argparse.Namespace) -> int:
    texts = claim_texts(args)
    if not texts:
        raise InputError("--claim", "no claims given; use --claim or --claims-file")
    if battles_cli.given(args.items):  # pairwise battles: evalbars.cli.battles
        return battles_cli.run_claims(args, texts)
    battles_cli.refuse_battle_options(args)
    table = api.check_claims(
        load_items(args.items, args),
        texts,
        score=args.score,
        alpha=args.alpha,
        family=args.family,
        adjust=args.adjust,
        power=args.power,
        replicates=args.replicates,
        seed=args.seed,
    )
    if args.format in ("markdown", "md"):
        sys.stdout.write(claims.claims_markdown(table, args.alpha, args.family))
    elif args.format == "json":
        sys.stdout.write(claims.claims_json(table, args.alpha, args.family))
    else:
        neutralised_table(table).to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


#: Exit status of `evalbars plan` when its arguments cannot be planned for: the status of an
#: argument error, as argparse gives for the arguments it checks itself.
PLAN_BAD_ARGUMENTS = 2


def run_plan(args: argparse.Namespace) -> int:
    try:
        return _plan(args)
    except EvalbarsError as exc:  # plan reads no file: every error is one of its arguments
        reason = " ".join(str(exc).split())
        print(f"evalbars plan: error: {reason} (see evalbars plan --help)", file=sys.stderr)
        return PLAN_BAD_ARGUMENTS


def _plan(args: argparse.Namespace) -> int:
    planner.check_plan_request(
        args.models, args.gap, args.questions, args.disagreement, small_gap=args.small_gap
    )
    if args.judge_correlation is not None and not -1 < args.judge_correlation < 1:
        raise InputError(
            f"--judge-correlation {args.judge_correlation:g}", "must be between -1 and 1"
        )
    if args.judge_correlation is not None and args.gap is None:
        raise InputError("--judge-correlation", "plans labels for a --gap; give --gap")
    gap = None if args.gap is None else args.gap / 100
    result = planner.plan(
        args.models,
        gap,
        args.disagreement,
        alpha=args.alpha,
        power=args.power,
        procedure=args.procedure,
        tests=args.tests,
        questions=args.questions,
        test=args.test,
        judge_correlation=args.judge_correlation,
        judged_questions=args.judged_questions or float("inf"),
    )
    simulated = None
    if args.simulate and gap is not None and args.procedure == "holm" and args.tests is None:
        try:
            simulated = holm_power.holm_questions(
                args.models, gap, args.disagreement, alpha=args.alpha, power=args.power
            )
        except ValueError as exc:
            raise InputError("--simulate", str(exc)) from exc
        result["questions_simulated"] = simulated
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        sys.stdout.write(planner.plan_text(result, simulated))
    return 0


# --- evalbars leaderboard and evalbars compare ----------------------------------------------------

#: Exit status of `evalbars compare` on bad input or usage (argparse's convention); 0, 1 and 3
#: are verdicts (gate.EXIT_CODES).
COMPARE_BAD_INPUT = 2


def _winner_markdown(winner: pd.DataFrame) -> str:
    """The winner's readings in points, one row per reading; ``plausible_winners`` (the models
    the zoom interval is simultaneous over) shown on the zoom row only."""
    zoom = winner["method"] == "zoom"
    shown = winner.assign(
        **{c: 100 * winner[c] for c in ("observed", "se", "estimate", "ci_low", "ci_high")},
        plausible_winners=winner["plausible_winners"].astype(object).where(zoom, ""),
    )[["model", "method", "estimate", "ci_low", "ci_high", "plausible_winners", "covariance"]]
    formats = {c: ".1f" for c in ("estimate", "ci_low", "ci_high")}
    return to_markdown(shown, formats=formats)


def _cost_markdown(cost: pd.DataFrame, frontier: pd.DataFrame) -> str:
    """cost.csv and the frontier flags in one table: accuracy in points, dollars per question."""
    merged = cost.merge(frontier[["model", "on_frontier", "in_frontier_set"]], on="model")
    shown = merged.assign(
        accuracy=100 * merged["accuracy"],
        accuracy_low=100 * merged["accuracy_low"],
        accuracy_high=100 * merged["accuracy_high"],
    )[
        [
            "model",
            "accuracy",
            "accuracy_low",
            "accuracy_high",
            "mean_cost",
            "cost_low",
            "cost_high",
            "accuracy_per_dollar",
            "on_frontier",
            "in_frontier_set",
        ]
    ]
    formats = {c: ".1f" for c in ("accuracy", "accuracy_low", "accuracy_high")}
    formats |= {c: ".3g" for c in ("mean_cost", "cost_low", "cost_high", "accuracy_per_dollar")}
    return to_markdown(shown, formats=formats)


def run_leaderboard(args: argparse.Namespace) -> int:
    if battles_cli.given(args.items):  # pairwise battles: evalbars.cli.battles
        return battles_cli.run_leaderboard(args)
    battles_cli.refuse_battle_options(args)
    items = load_items(args.items, args, needs="a leaderboard ranks 2 or more models")
    table = api.leaderboard_table(
        _scored(items, args),
        alpha=args.alpha,
        power=args.power,
        splits=args.splits,
        seed=args.seed,
        level=args.level,
        top_k=args.top_k,
    )
    winner = api.winner_table(items, level=args.level, seed=args.seed)
    costs = None
    if args.prices:
        costs = api.cost_readings(
            args.items,
            args.prices,
            alpha=args.alpha,
            level=args.level,
            seed=args.seed,
            missing_prediction=args.missing_prediction,
            items=items,
            **reader_options(args),
        )
    headline = verdicts.leaderboard_headline(table, args.splits, args.alpha)
    said = [winner_sentence(winner, args.level)]
    if costs is not None:
        said.append(frontier_sentence(costs["frontier"], args.alpha))
    headline = " ".join([headline, *[line for line in said if line]])
    if args.format in ("markdown", "md"):
        shown = table.assign(
            accuracy=100 * table["accuracy"],
            ci_low=100 * table["ci_low"],
            ci_high=100 * table["ci_high"],
            gap_to_next=100 * table["gap_to_next"],
        )[
            [
                "position",
                "model",
                "accuracy",
                "ci_low",
                "ci_high",
                "letters",
                "rank_kept_share",
                "first_share",
                "gap_to_next",
                "questions_needed",
                "questions_needed_clustered",
                "resolution_ratio",
                "resolution_ratio_clustered",
                "unresolved",
                "in_best_set",
                "in_top_k_set",
            ]
        ]
        formats = {c: ".1f" for c in ("accuracy", "ci_low", "ci_high", "gap_to_next")}
        formats |= {"rank_kept_share": ".2f", "first_share": ".2f"}
        formats |= {"questions_needed": ",.0f", "questions_needed_clustered": ",.0f"}
        formats |= {"resolution_ratio": ".2f", "resolution_ratio_clustered": ".2f"}
        text = headline + "\n\n" + to_markdown(shown, formats=formats)
        if len(winner):
            text += "\nThe top score, four ways (points):\n\n" + _winner_markdown(winner)
        if costs is not None and len(costs["cost"]):
            text += (
                "\nCost beside accuracy (accuracy in points, cost in dollars per question):\n\n"
                + _cost_markdown(costs["cost"], costs["frontier"])
            )
        sys.stdout.write(text)
    elif args.format == "json":
        document = {"headline": headline, "rows": _records(table), "winner": _records(winner)}
        if costs is not None:
            document |= {"cost": _records(costs["cost"]), "frontier": _records(costs["frontier"])}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        neutralised_table(table).to_csv(sys.stdout, index=False, lineterminator="\n")
        print(headline, file=sys.stderr)
    return 0


def _records(frame: pd.DataFrame) -> list:
    return json.loads(frame.to_json(orient="records", double_precision=15))


def _one_model(items, path: str, name: str | None, role: str) -> str:
    models = sorted(items["model"].unique())
    if name is not None:
        if name not in models:
            raise InputError(path, f"--{role} {name!r} is not a model here; models: {models}")
        return name
    if len(models) != 1:
        raise InputError(path, f"holds {len(models)} models {models}; name one with --{role}")
    return models[0]


def _compare_inputs(args: argparse.Namespace):
    """The item table and the (baseline, candidate) model names of `evalbars compare`."""
    if len(args.sources) > 2:
        raise InputError(
            " ".join(args.sources),
            f"{len(args.sources)} sources; give BASELINE CANDIDATE, or one table with "
            "--baseline NAME --candidate NAME",
        )
    tables = [
        api.read_items(path, missing_prediction=args.missing_prediction, **reader_options(args))
        for path in args.sources
    ]
    if len(tables) == 1:
        if args.baseline is None or args.candidate is None:
            raise InputError(args.sources[0], "one source needs --baseline NAME --candidate NAME")
        baseline = _one_model(tables[0], args.sources[0], args.baseline, "baseline")
        candidate = _one_model(tables[0], args.sources[0], args.candidate, "candidate")
        if baseline == candidate:
            raise InputError(args.sources[0], "the baseline and the candidate are one model")
        table = api.attach_labels(tables[0], args.labels) if args.labels else tables[0]
        items = table[table["model"].isin([baseline, candidate])]
    else:
        baseline = _one_model(tables[0], args.sources[0], args.baseline, "baseline")
        candidate = _one_model(tables[1], args.sources[1], args.candidate, "candidate")
        base = tables[0][tables[0]["model"] == baseline].astype({"model": str})
        cand = tables[1][tables[1]["model"] == candidate].astype({"model": str})
        if Path(args.sources[0]).resolve() == Path(args.sources[1]).resolve():
            raise InputError(args.sources[1], "is the baseline's source too: a model with itself")
        if baseline == candidate:  # as the one-table form: one name is one model
            raise InputError(
                args.sources[1],
                f"the baseline and the candidate are one model ({baseline!r} in both sources); "
                "give two models (rename one run's model to compare two runs)",
            )
        items = pd.concat([base, cand], ignore_index=True)  # the baseline's categories win
        check_id_spelling(items)  # each was checked alone; their ids must match each other too
        if args.labels:  # joined once the two models are one table: labels name both
            items = api.attach_labels(items, args.labels)
    return items, baseline, candidate


def run_compare(args: argparse.Namespace) -> int:
    try:
        if args.flips:
            refuse_output_over_inputs(
                args.flips, [*args.sources, args.instances, args.labels], "--flips"
            )
        if args.flips and not Path(args.flips).parent.is_dir():
            raise InputError(
                args.flips, f"folder '{Path(args.flips).parent}' does not exist; create it first"
            )
        items, baseline, candidate = _compare_inputs(args)
        # arrival: the order the candidate's questions were written in (api.compare_models)
        result = api.compare_models(
            items.astype({"model": str}),
            baseline,
            candidate,
            score=args.score,
            margin=args.margin / 100,
            better_by=args.better_by / 100,
            alpha=args.alpha,
            power=args.power,
            by_category=args.by_category,
            sequential=args.sequential,
            categories=args.categories,
        )
        if args.flips:
            flips = Path(args.flips)
            try:
                neutralised_table(result.flips).to_csv(flips, index=False, lineterminator="\n")
            except OSError as exc:  # never delete what the user named: it may be a device
                raise InputError(flips, f"cannot write the flips: {exc.strerror or exc}") from exc
    except EvalbarsError as exc:
        reason = " ".join(str(exc).split())
        print(f"evalbars compare: error: {reason}", file=sys.stderr)
        return COMPARE_BAD_INPUT
    if args.format in ("markdown", "md"):
        sys.stdout.write(gate.compare_markdown(result))
    elif args.format == "json":
        sys.stdout.write(gate.compare_json(result))
    else:
        neutralised_table(gate.compare_csv_table(result)).to_csv(
            sys.stdout, index=False, lineterminator="\n"
        )
    s = result.summary
    if s["left_out"]:
        print(f"{s['left_out']:,} questions not answered by both were left out", file=sys.stderr)
    return s["exit_code"]
