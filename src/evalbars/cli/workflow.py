"""The commands that run the workflow: ``report``, ``run`` and ``example`` (their arguments:
:mod:`evalbars.cli.arguments`)."""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from pathlib import Path

import pandas as pd

from evalbars import api
from evalbars.cli import battles as battles_cli
from evalbars.cli.inputs import claim_texts, reader_options, refuse_output_over_inputs
from evalbars.errors import ConfigError, EvalbarsError, InputError
from evalbars.pipeline import runner
from evalbars.pipeline.location import example_logs
from evalbars.pipeline.storage import check_storage
from evalbars.readings import claims
from evalbars.render.landing import separation_sentence
from evalbars.render.tables import format_p

# --- evalbars report ------------------------------------------------------------------------------


def _verdict_line(rows) -> str:
    """One line per claim: its verdict under each reading, with the (adjusted) p."""
    readings = [
        f"{claims.Reading(row.reading, row.adjustment).title} {row.verdict} "
        f"(p {format_p(row.p_adjusted)})"
        for row in rows.itertuples()
        if row.verdict != "n/a"
    ]
    return f"  {rows['claim'].iloc[0]}: " + "; ".join(readings)


def _storage(args: argparse.Namespace) -> str | None:
    """The checked ``--storage`` location, or None (one line for a bad one, before any run)."""
    if args.storage_endpoint_url is not None and args.storage is None:
        raise ConfigError("--storage-endpoint-url: give --storage s3://BUCKET/PREFIX too")
    return args.storage and check_storage(args.storage, args.storage_endpoint_url)


def run_report(args: argparse.Namespace) -> int:
    refuse_output_over_inputs(
        args.output,
        [*args.paths, args.instances, args.claims_file, args.labels, args.prices],
        "--output",
        folder=True,
    )
    storage = _storage(args)
    texts = claim_texts(args)
    held = []  # a job's line, shown once the run goes on: a failed job's error is printed once

    def progress(line: str) -> None:
        if held:
            print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
        if "steps (" in line:
            print(f"evalbars report: {line}", file=sys.stderr, flush=True)
        else:
            held.append(line)

    battles = battles_cli.given(args.paths)  # pairwise battles: evalbars.cli.battles
    try:
        if battles:
            run = battles_cli.write_report(args, texts, progress)
        else:
            battles_cli.refuse_battle_options(args)
            run = api.write_report(
                args.paths,
                args.output,
                claims=texts,
                missing_prediction=args.missing_prediction,
                simulations=args.simulations,
                cores=args.cores,
                unlock=args.unlock,
                progress=progress,
                hint_style="cli",
                labels=args.labels,
                storage=storage,
                storage_endpoint_url=args.storage_endpoint_url,
                score=args.score,
                prices=args.prices,
                **reader_options(args),
            )
    except EvalbarsError as exc:  # main prints the reason; a held line that says it goes
        if held and " ".join(held[0].split()) != " ".join(str(exc).split()):
            print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
        raise
    if held:
        print(f"evalbars report: {held.pop()}", file=sys.stderr, flush=True)
    if battles:
        return battles_cli.print_answer(run, args)
    _print_answer(run, storage, args.cores)
    return 0


def _print_answer(run: api.ReportRun, storage: str | None, cores) -> None:
    """What ``evalbars report`` prints after a run of scores: where the report is, the answer
    (the claims' verdicts, or how many pairs each reading separates), and how to rerun it."""
    print(f"report: {run.report}")
    if storage:
        print(f"results: {storage}/results/ (this machine's copies: {run.results})")
    if len(run.claims):
        print(claims.claims_headline(run.claims))
        for _, rows in run.claims.groupby("claim", sort=False):
            print(_verdict_line(rows))
    else:
        pairwise_path = (run.results or run.directory) / "results" / "tables" / "pairwise.parquet"
        # (a run in storage that made nothing here has no copy of it: the report has the answer)
        found = pairwise_path.exists()
        print(
            "no claims given."
            + (f" {separation_sentence(pd.read_parquet(pairwise_path))}" if found else "")
        )
    print(f"rerun or edit: {runner.rerun_hint(run.directory, run.config, cores)}")


# --- evalbars run ---------------------------------------------------------------------------------


def run_run(args: argparse.Namespace) -> int:
    report = runner.run_workflow(
        args.directory,
        configfiles=args.configfile,
        targets=args.targets,
        report=not args.no_report,
        cores=args.cores,
        unlock=args.unlock,
        extra=args.snakemake,
        progress=lambda line: print(f"evalbars run: {line}", file=sys.stderr, flush=True),
        hint_style="config",
        echo=bool(args.snakemake),  # Snakemake's own options: its own output
    )
    if report is not None:
        print(f"report: {report}")
    return 0


# --- evalbars example ------------------------------------------------------------------------------

#: The command that reports on the shipped example once it is copied, as the README shows it.
EXAMPLE_REPORT = "evalbars report {folder} --runs newest --id-field id --category-field category"


def run_example(args: argparse.Namespace) -> int:
    target = Path(args.folder)
    if target.exists():
        raise InputError(target, "already exists; give another folder")
    try:
        shutil.copytree(example_logs("lm_eval"), target)
    except OSError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise InputError(target, f"cannot copy the example: {exc.strerror or exc}") from None
    print(f"copied the shipped lm-evaluation-harness logs (3 models, 39 questions) to {target}")
    print("report on them with:")
    print("  " + EXAMPLE_REPORT.format(folder=shlex.quote(str(target))))
    return 0
