"""HELM (crfm-helm 0.5) run folders: ``per_instance_stats.json`` beside ``run_spec.json``.

``helm-run --suite S`` writes one folder per run under ``benchmark_output/runs/S/``, named
from the run entry (``mmlu:subject=philosophy,method=multiple_choice_joint,model=openai_gpt2``,
with expanders appended). Each holds ``run_spec.json`` (the scenario, the adapter and its
model), ``per_instance_stats.json`` (per instance, train trial and perturbation, a list of
``Stat`` records ``{name: {name, split, perturbation}, count, sum, mean, ...}``) and
``stats.json`` (the run's aggregates).

How the item table is read from them:

- **model**: ``run_spec.adapter_spec.model`` (``openai/gpt2``), never the folder name, whose
  ``/`` HELM turns into ``_``;
- **question**: ``<scenario>/<scenario args>/<instance_id>``. ``instance_id`` is positional
  (``id`` + the index over all of a scenario's instances), so ``id7`` of one MMLU subject is
  not ``id7`` of another; the scenario is the run name's prefix (``mmlu``);
- **category**: the scenario's arguments (``run_spec.scenario_spec.args``, e.g. the MMLU
  subject), else the run's first group;
- **score**: the instance's ``mean`` of the scenario's main metric: HELM's own mapping
  (:data:`MAIN_METRIC`, from ``scenario_to_metric_name`` in crfm-helm's
  ``benchmark/reeval_runner.py``: ``exact_match`` for MMLU), else the first of
  :data:`CORRECTNESS_METRICS` the run has; ``metric:`` chooses another. ``scenario_state``'s
  ``result.success`` says only that the request succeeded, and is not read;
- **split**: HELM scores both ``valid`` and ``test`` instances; ``test`` is read (the
  leaderboard's), ``split:`` chooses;
- **epoch**: ``train_trial_index + 1``: with ``num_train_trials`` above 1 each instance is
  asked once per trial, with other in-context examples, and each trial is a repeated sample;
- **perturbations**: robustness runs (``data_augmentation=...``) repeat each instance with
  the same ``instance_id`` and a ``perturbation``; those copies are left out, or read
  instead of the originals when ``perturbation:`` names one (e.g. ``lowercase``);
- **options**: the instance's ``num_references`` stat (MMLU-Pro's 10 when it has none);
- **skipped runs**: a run with no correctness metric (HELM's ``simple1`` logs only
  cost and length stats) and an empty or failed run folder (a run that raises leaves its
  folder behind, empty) are skipped with a message, not scored 0.

There are no missing predictions: an answer that maps to no option scores 0 in HELM's own
``exact_match``. Record numbers in errors are 1-based positions in ``per_instance_stats.json``. Two run folders
of one model and scenario (a rerun, or a run spec naming the wrong model) are refused unless
``runs: newest`` (the folder whose ``per_instance_stats.json`` was written last).

References
----------
.. [1] Liang et al., "Holistic Evaluation of Language Models", arXiv:2211.09110; crfm-helm
   0.5.16, ``helm.benchmark.metrics.statistic.Stat`` and ``helm.benchmark.runner``.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers.common import DEFAULT_N_OPTIONS, choose_newest, finish_frame
from evalbars.errors import InputError

__all__ = [
    "MAIN_METRIC",
    "CORRECTNESS_METRICS",
    "RUN_FILES",
    "is_helm_document",
    "helm_run_folders",
    "read_helm_runs",
    "read_helm_files",
    "in_helm_run",
    "run_identity",
]

log = logging.getLogger(__name__)

#: The files of a HELM run folder the reader needs.
RUN_FILES = ("run_spec.json", "per_instance_stats.json")
#: HELM's per-scenario main metric (crfm-helm 0.5.16 ``reeval_runner.scenario_to_metric_name``).
MAIN_METRIC = {
    "babi_qa": "quasi_exact_match",
    "bbq": "quasi_exact_match",
    "blimp": "exact_match",
    "boolq": "quasi_exact_match",
    "civil_comments": "quasi_exact_match",
    "commonsense": "exact_match",
    "dyck_language": "exact_match_indicator",
    "entity_data_imputation": "quasi_exact_match",
    "entity_matching": "quasi_exact_match",
    "gsm": "final_number_exact_match",
    "imdb": "quasi_exact_match",
    "legal_support": "quasi_exact_match",
    "legalbench": "quasi_exact_match",
    "math": "math_equiv_chain_of_thought",
    "med_qa": "quasi_exact_match",
    "mmlu": "exact_match",
    "raft": "quasi_exact_match",
    "synthetic_reasoning": "quasi_exact_match",
    "thai_exam": "exact_match",
    "truthful_qa": "exact_match",
    "wikifact": "quasi_exact_match",
}
#: Scored 0/1 metrics, in the order tried for a scenario HELM's mapping does not name.
CORRECTNESS_METRICS = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
    "final_number_exact_match",
    "exact_match_indicator",
    "math_equiv_chain_of_thought",
)
MISSING_MEANS = "none (HELM scores an answer that maps to no option as 0)"


def is_helm_document(document) -> bool:
    """Whether a parsed JSON document is a HELM ``run_spec.json`` or ``per_instance_stats.json``."""
    if isinstance(document, dict):
        return isinstance(document.get("adapter_spec"), dict) and "scenario_spec" in document
    return (
        isinstance(document, list)
        and bool(document)
        and isinstance(document[0], dict)
        and "instance_id" in document[0]
        and "stats" in document[0]
    )


def helm_run_folders(paths) -> tuple[list[Path], list[Path]]:
    """``(runs, incomplete)``: folders holding both :data:`RUN_FILES`, and the other folders
    beside them (HELM's failed runs: empty, or without per-instance stats).

    ``paths`` are the HELM files a walk found. A run folder is named for its run spec
    (``<scenario>:<arguments>``); the other folders of a suite, ``eval_cache`` (HELM's cache)
    and ``groups`` (``helm-summarize``'s tables), are not runs.
    """
    folders = sorted({Path(p).parent for p in paths})
    runs = [f for f in folders if all((f / name).is_file() for name in RUN_FILES)]
    parents = {f.parent for f in folders}
    siblings = {d for parent in parents for d in parent.iterdir() if d.is_dir() and ":" in d.name}
    return runs, sorted((siblings | set(folders)) - set(runs))


def _load(path: Path):
    try:
        return json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable HELM file: {exc}") from exc


def run_identity(folder: Path) -> tuple[str, str, str]:
    """``(model, scenario, category)`` of a run, from its ``run_spec.json``."""
    path = folder / "run_spec.json"
    spec = _load(path)
    if (
        isinstance(spec, dict)
        and "adapter_spec" in spec
        and not isinstance(spec["adapter_spec"], dict)
    ):
        raise InputError(
            path, f"adapter_spec must be an object (model, ...), got {spec['adapter_spec']!r:.60}"
        )
    if not is_helm_document(spec) or not isinstance(spec, dict):
        raise InputError(path, "not a HELM run_spec.json (no adapter_spec and scenario_spec)")
    model = spec["adapter_spec"].get("model")
    if not isinstance(model, str) or not model:
        raise InputError(path, "the run spec names no adapter_spec.model")
    scenario = str(spec.get("name", "")).split(":")[0] or folder.name.split(":")[0]
    scenario_spec = spec.get("scenario_spec") or {}
    if not isinstance(scenario_spec, dict):
        raise InputError(
            path,
            f"scenario_spec must be an object (class_name, args), got {scenario_spec!r:.60}",
        )
    args = scenario_spec.get("args") or {}
    if not isinstance(args, dict):
        raise InputError(
            path, f"scenario_spec.args must be an object of named arguments, got {args!r:.60}"
        )
    groups = spec.get("groups") or [scenario]
    category = ",".join(str(v) for _, v in sorted(args.items())) or str(groups[0])
    return model, f"{scenario}/" + ",".join(f"{k}={v}" for k, v in sorted(args.items())), category


def _stats_table(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(entries, stats)`` of ``per_instance_stats.json``: one row per entry, one per stat."""
    document = _load(path)
    if not isinstance(document, list) or (document and not is_helm_document(document)):
        raise InputError(path, "not a HELM per_instance_stats.json (a list of instances)")
    for record, entry in enumerate(document, start=1):
        if not isinstance(entry, dict) or "instance_id" not in entry or "stats" not in entry:
            raise InputError(path, "the entry has no instance_id or stats", record)
        if not isinstance(entry["stats"], list):
            raise InputError(
                path, f"stats must be a list of Stat records, got {entry['stats']!r:.60}", record
            )
        iid = entry["instance_id"]
        if isinstance(iid, bool) or not isinstance(iid, (str, int)) or iid == "":
            raise InputError(
                path, f"instance_id must be a non-empty string, got {iid!r:.60}", record
            )
    entries = pd.DataFrame(
        {
            "record": np.arange(1, len(document) + 1),
            "instance_id": [e["instance_id"] for e in document],
            "trial": [e.get("train_trial_index", 0) for e in document],
            "perturbation": [(e.get("perturbation") or {}).get("name") for e in document],
        }
    )
    stats = pd.DataFrame(
        [
            (record, s["name"].get("name"), s["name"].get("split"), s.get("mean"))
            for record, e in enumerate(document, start=1)
            for s in e["stats"]
            if isinstance(s, dict) and isinstance(s.get("name"), dict)
        ],
        columns=["record", "name", "split", "mean"],
    )
    return entries, stats


def _choose_metric(scenario: str, available, wanted: str | None) -> str | None:
    """The user's metric, HELM's main metric for the scenario, or the first 0/1 one present."""
    if wanted:
        return wanted if wanted in available else None
    main = MAIN_METRIC.get(scenario.split("/")[0])
    if main in available:
        return main
    return next((m for m in CORRECTNESS_METRICS if m in available), None)


def _read_run(folder: Path, options) -> pd.DataFrame | None:
    """Raw rows of one run, or None (said in the log) when it has no correctness metric."""
    model, scenario, category = run_identity(folder)
    path = folder / "per_instance_stats.json"
    entries, stats = _stats_table(path)
    split = options.split or "test"
    metric = _choose_metric(scenario, set(stats["name"]), options.metric)
    if metric is None:
        wanted = f"no {options.metric!r}" if options.metric else "no correctness metric"
        log.warning(
            "%s: skipped: the run has %s (its stats: %s)",
            folder,
            wanted,
            ", ".join(sorted(set(stats["name"]))[:8]),
        )
        return None
    chosen = stats[(stats["name"] == metric) & (stats["split"] == split)]
    chosen = chosen.drop_duplicates("record").set_index("record")["mean"]
    options_count = stats[(stats["name"] == "num_references")].drop_duplicates("record")
    options_count = options_count.set_index("record")["mean"]
    keep = entries["perturbation"].isna().to_numpy()
    if options.perturbation:
        keep = (entries["perturbation"] == options.perturbation).to_numpy()
    rows = entries[keep & entries["record"].isin(chosen.index).to_numpy()]
    if rows.empty:
        log.warning(
            "%s: skipped: no %s instance scored by %s%s",
            folder,
            split,
            metric,
            f" with perturbation {options.perturbation!r}" if options.perturbation else "",
        )
        return None
    bad = rows["trial"].map(lambda t: isinstance(t, bool) or not isinstance(t, int) or t < 0)
    if bad.any():
        record = int(rows.loc[bad, "record"].iloc[0])
        raise InputError(path, "train_trial_index must be a whole number from 0", record)
    given = chosen.reindex(rows["record"])
    score = pd.to_numeric(given, errors="coerce").to_numpy(dtype=float)
    text = np.isnan(score) & given.notna().to_numpy()
    if text.any():
        record = int(rows["record"].to_numpy()[text][0])
        raise InputError(
            path,
            f"the {metric} stat's mean must be a number, got {given.to_numpy()[text][0]!r:.60}",
            record,
        )
    if np.isnan(score).any():
        record = int(rows["record"].to_numpy()[np.isnan(score)][0])
        raise InputError(path, f"the {metric} stat of the instance has no mean", record)
    n_options = options_count.reindex(rows["record"]).fillna(0).to_numpy()
    n_options = np.where(n_options >= 2, n_options, DEFAULT_N_OPTIONS)
    frame = pd.DataFrame(
        {
            "record": rows["record"].to_numpy(),
            "question_id": scenario + "/" + rows["instance_id"].astype(str).to_numpy(),
            "epoch": rows["trial"].to_numpy(dtype=np.int64) + 1,
            "category": category,
            "n_options": n_options.astype(np.int16),
            "correct": pd.array(score, dtype="Float64"),
        }
    )
    frame["model"] = model
    frame["source_file"] = path.name
    frame["source_path"] = str(path)
    return frame


def read_helm_runs(folders, incomplete, options) -> list[pd.DataFrame]:
    """Raw rows of HELM run folders, one frame per model (see the module docstring).

    ``folders`` are complete run folders, ``incomplete`` the folders beside them that are
    not (skipped with a message); ``options`` is a :class:`evalbars.data.readers.SourceOptions`.
    """
    for folder in incomplete:
        missing = [name for name in RUN_FILES if not (folder / name).is_file()]
        log.warning(
            "%s: skipped: an empty or failed HELM run folder (no %s)", folder, " or ".join(missing)
        )
    by_run: dict = {}
    for folder in map(Path, folders):
        model, scenario, _ = run_identity(folder)
        stats = folder / "per_instance_stats.json"
        by_run.setdefault((model, scenario), []).append(
            ((stats.stat().st_mtime_ns, folder.name), f"{stats}", folder)
        )
    chosen = choose_newest(
        by_run, options.runs, "run folders", folder=lambda runs: Path(runs[0][2]).parent
    )
    by_model: dict = {}
    for folder in sorted(chosen.values()):
        frame = _read_run(Path(folder), options)
        if frame is not None:
            by_model.setdefault(frame["model"].iloc[0], []).append(frame)
    if not by_model:
        raise InputError(
            Path(folders[0]).parent,
            f"none of the {len(folders)} HELM runs has a correctness metric"
            + (f" named {options.metric!r}" if options.metric else "")
            + f" on the {options.split or 'test'} split (see the messages above)",
        )
    frames = []
    for parts in by_model.values():
        combined = pd.concat(parts, ignore_index=True)
        frames.append(
            finish_frame(combined, combined["source_path"].iloc[0], missing_means=MISSING_MEANS)
        )
    return frames


@functools.lru_cache(maxsize=4096)
def _is_run_folder(folder: str) -> bool:
    """Whether a folder holds both :data:`RUN_FILES` (then it is a run, read and refused when
    a file is broken, never skipped), or a ``run_spec.json`` that is a HELM run spec."""
    spec = Path(folder) / "run_spec.json"
    if not spec.is_file():
        return False
    if all((Path(folder) / name).is_file() for name in RUN_FILES):
        return True
    try:
        return is_helm_document(json.loads(spec.read_bytes()))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def in_helm_run(path) -> bool:
    """Whether a file lies in a HELM run folder (beside a HELM ``run_spec.json``)."""
    return _is_run_folder(str(Path(path).parent))


def read_helm_files(paths, options) -> list[pd.DataFrame]:
    """Raw rows of the HELM runs that hold ``paths`` (files a walk found, or one named file)."""
    runs, incomplete = helm_run_folders(paths)
    if not runs:
        raise InputError(
            Path(paths[0]).parent,
            "no HELM run folder with run_spec.json and per_instance_stats.json",
        )
    return read_helm_runs(runs, incomplete, options)
