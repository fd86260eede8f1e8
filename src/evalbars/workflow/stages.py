"""A stage's rules in one job (config ``jobs: per_stage``).

Every Snakemake job is a Python start-up and the imports of its script, about a second, which
on the data of one report is most of the work. With ``jobs: per_stage`` the rule file
``workflow/rules/stages.smk`` adds one rule for the analysis stage and one for the claims,
ranks and leaderboard stages whose outputs are
those of the stage's rules, and :func:`run_members` runs the stage's own scripts, one after
another in dependency order, in this one process: each sees the ``snakemake`` object its rule
would give it (its inputs, outputs, params and log), so the tables are the same files the
per-rule jobs write (a test compares them). Snakemake still schedules every job; nothing here
decides what runs, only that a stage's scripts share an interpreter.
"""

from __future__ import annotations

import logging
import runpy
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Namespace", "member", "run_members"]


class Namespace(dict):
    """What a script reads as ``snakemake.input``, ``.output`` or ``.params``: attributes by
    name, items by name or position, and ``get`` (as Snakemake's named lists)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key):
        if isinstance(key, int):
            return list(self.values())[key]
        return super().__getitem__(key)


@dataclass
class Job:
    """The ``snakemake`` object of one member's script."""

    input: Namespace
    output: Namespace
    params: Namespace
    log: list
    wildcards: Namespace = field(default_factory=Namespace)
    rule: str = ""


def _plain(value):
    """A rule's file or value as plain Python (lists of paths stay lists)."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def member(rule) -> dict:
    """What :func:`run_members` needs of one rule (a Snakemake ``rules.<name>`` proxy): its
    script, and its named inputs, outputs and params, and its log, as plain values."""
    return {
        "rule": rule.rule.name,
        "script": Path(rule.rule.script).name,
        "input": {name: _plain(value) for name, value in rule.input.items() if name},
        "output": {name: _plain(value) for name, value in rule.output.items() if name},
        "params": {name: _plain(value) for name, value in rule.params.items() if name},
        "log": [str(path) for path in rule.log],
    }


def run_members(members, scripts: Path) -> None:
    """Run each member's script (:func:`member`) in this process, in order; a member that
    fails ends the job as its own job would (exit status 1, its one-line error in its log)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    for spec in members:
        job = Job(
            input=Namespace(spec["input"]),
            output=Namespace(spec["output"]),
            params=Namespace(spec["params"]),
            log=spec["log"],
            rule=spec["rule"],
        )
        for path in (*job.output.values(), *job.log):
            for one in path if isinstance(path, list) else [path]:
                Path(one).parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        try:
            runpy.run_path(
                str(scripts / spec["script"]), init_globals={"snakemake": job}, run_name="__main__"
            )
        finally:
            # Each script logs to its own file (script_context): hand the next a clean root.
            for handler in root.handlers:
                if handler not in handlers:
                    handler.close()
            root.handlers[:] = handlers
            root.setLevel(level)
            logging.captureWarnings(False)
        logging.getLogger("evalbars").info(
            "%s took %.2f s", spec["rule"], time.perf_counter() - start
        )
