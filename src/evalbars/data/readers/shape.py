"""Whether a run's sources hold repeated samples or several runs of a model, from their
headers: what the workflow decides its optional outputs by while it builds the DAG.

The tables of repeated samples (``pass_at_k.csv``, the pass@k curves, the sampling plan) are
outputs of a run whose data sample a question more than once, and the run-to-run tables
(``run_variance.csv``, ``run_aware.csv``, ``run_signs.csv``) of a run that reads a model in two
or more runs. The DAG is built before any data are read, so :func:`probe_sources` looks at
what says so cheaply, as :func:`evalbars.data.labels.tables_carry_labels` does for labels:

- **lm-eval**: a results file's ``configs[task].repeats`` above 1; with ``runs: all``, two
  results files of one model (``model_name``) and task;
- **Inspect**: a log header's ``eval.config.epochs`` above 1; with ``runs: all``, two logs of
  one model and task;
- **lighteval**: a details file's ``doc.num_samples`` above 1; with ``runs: all``, two
  timestamps of one model and task;
- **tables**: an ``epoch`` or ``sample`` column holding a value above 1; a ``run`` column
  giving one model two labels;
- and, with ``runs: all``, a model two entries both hold.

A file this cannot read is passed over: the item-table job reads it and says what is wrong.
The probe errs towards making a table: where the data turn out to hold no repeats (all of a
model's samples dropped as missing, say), the table says what there is.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evalbars.data.readers.inspect_logs import _load
from evalbars.data.readers.lighteval import DETAILS_PATTERN, _run_of
from evalbars.data.readers.lm_eval import RESULTS_PATTERN, model_name
from evalbars.data.readers.long_tables import TABLE_SUFFIXES
from evalbars.errors import EvalbarsError

__all__ = ["SourceShape", "probe_sources"]


@dataclass(frozen=True)
class SourceShape:
    """What a run's sources hold, as far as their headers say.

    Attributes
    ----------
    samples : bool
        Some question is sampled more than once.
    runs : bool
        Some model is read in two or more runs.
    """

    samples: bool = False
    runs: bool = False

    def __or__(self, other: SourceShape) -> SourceShape:
        return SourceShape(self.samples or other.samples, self.runs or other.runs)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.is_file() else []


def _lm_eval(files, every_run: bool, models: set) -> SourceShape:
    samples, owners = False, Counter()
    for path in files:
        if not RESULTS_PATTERN.fullmatch(path.name) or not any(path.parent.glob("samples_*")):
            continue
        results = json.loads(path.read_text(encoding="utf-8"))
        configs = results.get("configs") or {}
        model = model_name(path, results)
        models.add(model)
        for task, config in configs.items():
            repeats = config.get("repeats") if isinstance(config, dict) else None
            samples |= isinstance(repeats, int) and repeats > 1
            owners[model, task] += 1
    return SourceShape(samples, every_run and any(n > 1 for n in owners.values()))


def _inspect(files, every_run: bool, models: set) -> SourceShape:
    samples, owners = False, Counter()
    for path in files:
        if path.suffix.lower() != ".eval":
            continue
        header, _ = _load(path, samples=False)
        evaluation = header.get("eval") or {}
        epochs = (evaluation.get("config") or {}).get("epochs")
        samples |= isinstance(epochs, int) and epochs > 1
        model = str(evaluation.get("model"))
        models.add(model)
        owners[model, str(evaluation.get("task"))] += 1
    return SourceShape(samples, every_run and any(n > 1 for n in owners.values()))


def _lighteval(files, every_run: bool, models: set) -> SourceShape:
    samples, owners = False, Counter()
    for path in files:
        named = DETAILS_PATTERN.fullmatch(path.name)
        if not named:
            continue
        doc = pq.read_table(path, columns=["doc"]).column("doc").combine_chunks()
        names = {doc.type.field(i).name for i in range(doc.type.num_fields)}
        if "num_samples" in names:
            counts = [n for n in doc.field("num_samples").to_pylist() if n is not None]
            samples |= bool(counts) and max(counts) > 1
        model, _ = _run_of(path)
        models.add(model)
        owners[model, named["task"]] += 1
    return SourceShape(samples, every_run and any(n > 1 for n in owners.values()))


def _tables(files, every_run: bool, models: set) -> SourceShape:
    shape = SourceShape()
    for path in files:
        if path.suffix.lower() not in TABLE_SUFFIXES or DETAILS_PATTERN.fullmatch(path.name):
            continue
        with open(path, "rb") as handle:
            parquet = handle.read(4) == b"PAR1"
        sep = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
        if parquet:
            header = pq.read_schema(path).names
        else:
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                header = [c.strip().strip('"') for c in handle.readline().split(sep)]
        named = {c.strip().casefold(): c for c in header}
        wanted = [named[c] for c in ("model", "epoch", "sample", "run") if c in named]
        if not set(named) & {"epoch", "sample", "run"} and not every_run:
            continue
        if parquet:
            frame = pd.read_parquet(path, columns=wanted)
        else:  # only these columns, as text (a model named NA is a name)
            frame = pd.read_csv(
                path,
                sep=sep,
                usecols=wanted,
                dtype=str,
                keep_default_na=False,
                encoding="utf-8-sig",
            )
        for column in ("epoch", "sample"):
            if column in named:
                values = pd.to_numeric(frame[named[column]], errors="coerce")
                shape |= SourceShape(samples=bool((values > 1).any()))
        if "model" in named:
            models.update(frame[named["model"]].astype(str).unique())
            if "run" in named:
                runs = frame.groupby(named["model"])[named["run"]].nunique()
                shape |= SourceShape(runs=bool((runs > 1).any()))
    return shape


def probe_sources(sources: list[dict]) -> SourceShape:
    """Whether the predictions entries ``sources`` hold repeated samples or several runs of a
    model (see the module docstring).

    Parameters
    ----------
    sources : list of dict
        Predictions entries (``path`` and reader options), as
        :func:`evalbars.pipeline.smk.prediction_sources` gives them.

    Returns
    -------
    SourceShape

    Examples
    --------
    >>> probe_sources([{"path": "tests/data/harness/inspect_epochs_runs/logs", "runs": "all"}])
    SourceShape(samples=True, runs=True)
    >>> probe_sources([{"path": "tests/data/harness/lm_eval_repeats/logs", "runs": "newest"}])
    SourceShape(samples=True, runs=False)
    """
    shape = SourceShape()
    owners: Counter = Counter()
    for source in sources:
        every_run = source.get("runs", "only") == "all"
        files = _files(Path(source["path"]))
        models: set = set()
        for probe in (_lm_eval, _inspect, _lighteval, _tables):
            try:
                shape |= probe(files, every_run, models)
            except (OSError, ValueError, KeyError, EvalbarsError, pa.ArrowException):
                continue  # the items job reads the files and says what is wrong with them
        if every_run:
            owners.update(models)
    if any(n > 1 for n in owners.values()):
        shape |= SourceShape(runs=True)
    return shape
