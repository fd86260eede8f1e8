"""SWE-bench leaderboard submissions: ``evaluation/<split>/<submission>/results/results.json``.

Each submission to the SWE-bench experiments repository holds ``metadata.yaml`` and
``results/results.json``, whose lists name instance ids: ``resolved`` (the patch made the
tests pass), ``no_generation`` (no patch produced) and ``no_logs`` (no evaluation log), and,
in older submissions, the full report of SWE-bench's ``get_model_report`` (``generated``,
``with_logs``, ``applied``...; generated without logs is "no logs" there). Unresolved instances are often in
no list at all, so the split itself has to come from elsewhere.

How the item table is read from them:

- **model**: the submission folder's name (``20240620_sweagent_claude3.5sonnet``); the
  names in ``metadata.yaml`` are not unique across submissions;
- **question**: the instance id (``django__django-11099``), one per instance of the split:
  the user's ``instances`` (a list, or a file of ids one a line, or a JSON list), else the union of the ids
  that the submissions read together name (said in the log: instances that no submission
  names are then missing);
- **category**: the repository, from the instance id (``django/django``);
- **score**: 1 when the instance is in ``resolved``, else 0;
- **missing prediction**: an unresolved instance in ``no_generation`` or ``no_logs``: counted
  and reported as missing predictions (``missing_prediction:`` decides what they score).

Record numbers in errors are 1-based positions in the named list.

References
----------
.. [1] Jimenez et al., "SWE-bench: Can Language Models Resolve Real-World GitHub Issues?",
   arXiv:2310.06770; the submission layout as read by every-eval-ever 0.3.0
   (``adapters/swe_bench_verified/adapter.py``, commit 9bce4136e).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers.common import few, finish_frame, option_hint
from evalbars.errors import InputError

__all__ = [
    "is_swe_bench_results",
    "claims_swe_bench_name",
    "read_swe_bench",
    "read_swe_bench_files",
]

log = logging.getLogger(__name__)

MISSING = ("no_generation", "no_logs")
MISSING_MEANS = "instance in no_generation or no_logs (no patch, or no evaluation log)"


def is_swe_bench_results(path, document) -> bool:
    """Whether a parsed ``results.json`` is a SWE-bench submission's results."""
    return (
        Path(path).name == "results.json"
        and isinstance(document, dict)
        and isinstance(document.get("resolved"), list)
    )


def claims_swe_bench_name(path) -> bool:
    """Whether a file's place says it is a submission's results: ``results.json`` in a
    ``results/`` folder beside the submission's ``metadata.yaml``, or a ``results.json`` whose
    JSON object has a ``resolved`` key. Such a file is read (and refused when broken), never
    skipped as "not a prediction log"."""
    path = Path(path)
    if path.name != "results.json":
        return False
    if path.parent.name == "results" and (path.parent.parent / "metadata.yaml").is_file():
        return True
    try:
        document = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(document, dict) and "resolved" in document


def _load(path: Path) -> dict:
    try:
        document = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"not a readable SWE-bench results.json: {exc}") from exc
    if not isinstance(document, dict):
        raise InputError(
            path,
            f"not a SWE-bench results.json: a JSON {type(document).__name__}, not an object "
            "with a 'resolved' list",
        )
    if "resolved" not in document:
        raise InputError(path, "not a SWE-bench results.json (no 'resolved' list)")
    if not isinstance(document["resolved"], list):
        raise InputError(
            path,
            "'resolved' must be a list of instance ids, got "
            f"{type(document['resolved']).__name__} {document['resolved']!r:.60}",
        )
    for key, ids in document.items():
        if isinstance(ids, list):
            bad = next((i for i, v in enumerate(ids) if not isinstance(v, str) or not v), None)
            if bad is not None:
                raise InputError(path, f"{key} must list instance ids, got {ids[bad]!r}", bad + 1)
    return document


def _submission(path: Path) -> str:
    """The submission's name: the folder holding ``results/``."""
    return path.parent.parent.name if path.parent.name == "results" else path.parent.name


def _split_folder(path: Path) -> str:
    """The split folder holding a submission (``evaluation/<split>/<submission>``)."""
    submission = path.parent.parent if path.parent.name == "results" else path.parent
    return submission.parent.name


def _instances(option, path: Path) -> np.ndarray | None:
    if option is None:
        return None
    if isinstance(option, str):
        source = Path(option)
        if not source.is_file():
            raise InputError(source, "the instance list file does not exist")
        # A UTF-8 BOM (Windows editors) is read past; a JSON list of ids is read as one.
        text = source.read_text(encoding="utf-8-sig")
        if text.lstrip().startswith("["):
            try:
                ids = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(source, f"not a JSON list of instance ids: {exc}") from exc
            bad = next((i for i, v in enumerate(ids) if not isinstance(v, str) or not v), None)
            if bad is not None:
                raise InputError(
                    source, f"the instance list must hold ids, got {ids[bad]!r:.60}", bad + 1
                )
        else:
            ids = [line.strip() for line in text.splitlines() if line.strip()]
    else:
        ids = [str(i) for i in option]
    if not ids:
        raise InputError(path, "the instance list is empty")
    return np.unique(np.array(ids, dtype=object))


def read_swe_bench(paths, options) -> list[pd.DataFrame]:
    """Raw rows of SWE-bench submissions, one frame per submission (see the module docstring)."""
    paths = sorted(Path(p) for p in paths)
    documents = {path: _load(path) for path in paths}
    names = [_submission(p) for p in paths]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise InputError(paths[0].parent, f"submissions named twice: {twice}")
    splits = sorted({_split_folder(p) for p in paths})
    if len(splits) > 1:
        raise InputError(
            paths[0].parents[3] if len(paths[0].parents) > 3 else paths[0].parent,
            f"submissions of {len(splits)} splits ({', '.join(splits)}): their instances differ; "
            "give one split folder (evaluation/<split>/) per predictions entry",
        )
    _warn_without_results(paths)
    universe = _instances(options.instances, paths[0])
    if universe is None:
        named = {
            i
            for d in documents.values()
            for ids in d.values()
            if isinstance(ids, list)
            for i in ids
        }
        universe = np.array(sorted(named), dtype=object)
        log.warning(
            "%s: no instance list given: the split is taken as the %d instances the %d "
            "submissions name; an instance no submission names is missing "
            f"({option_hint('instances', entry=False)})",
            paths[0].parent.parent.parent if len(paths) > 1 else paths[0],
            len(universe),
            len(paths),
        )
    frames = []
    for path, name in zip(paths, names, strict=True):
        document = documents[path]
        resolved = np.array(document["resolved"], dtype=object)
        outside = ~np.isin(resolved, universe)
        if outside.any():
            index = int(np.flatnonzero(outside)[0])
            raise InputError(
                path,
                f"resolved names {resolved[index]!r}, which is not in the instance list",
                index + 1,
            )
        _check_lists(document, resolved, path)
        missing = np.concatenate(
            [np.array(document.get(k) or [], dtype=object) for k in MISSING]
            + [np.array([], dtype=object)]
        )
        if isinstance(document.get("generated"), list) and isinstance(
            document.get("with_logs"), list
        ):  # SWE-bench's older report: generated but without logs is "no logs"
            unlogged = np.setdiff1d(
                np.array(document["generated"], dtype=object),
                np.array(document["with_logs"], dtype=object),
            )
            missing = np.concatenate([missing, unlogged])
        correct = np.isin(universe, resolved).astype(float)
        absent = np.isin(universe, missing) & (correct == 0)
        frame = pd.DataFrame(
            {
                "record": np.arange(1, len(universe) + 1),
                "question_id": universe,
                "category": _repositories(universe),
                "correct": pd.array(np.where(absent, np.nan, correct), dtype="Float64"),
                "model": name,
            }
        )
        frames.append(finish_frame(frame, path, missing_means=MISSING_MEANS))
    return frames


def _warn_without_results(paths) -> None:
    """Say which submission folders beside the ones read (a ``metadata.yaml``, no
    ``results/results.json``) are left out, rather than dropping them unnoticed."""
    submissions = {p.parent.parent for p in paths if p.parent.name == "results"}
    beside = {
        folder
        for split in {s.parent for s in submissions}
        for folder in split.iterdir()
        if folder.is_dir() and (folder / "metadata.yaml").is_file()
    }
    lacking = sorted(f.name for f in beside - submissions if not (f / "results").is_dir())
    if lacking:
        log.warning(
            "%s: skipped %d submission folder(s) without results/results.json (%s)",
            min(submissions).parent,
            len(lacking),
            few(lacking),
        )


def _repositories(instances) -> pd.Series:
    """``django__django-11099`` -> ``django/django``: the id up to its last ``-``."""
    heads = pd.Series(instances, dtype="str").str.rsplit("-", n=1).str[0]
    return heads.str.replace("__", "/", n=1, regex=False).to_numpy()


def read_swe_bench_files(paths, options) -> list[pd.DataFrame]:
    """Raw rows of the submissions whose ``results.json`` files are ``paths``."""
    return read_swe_bench(paths, options)


def _check_lists(document: dict, resolved: np.ndarray, path) -> None:
    """Refuse an instance that ``resolved`` names twice, or that is both resolved and in
    ``no_generation`` / ``no_logs`` (a submission's report cannot say both)."""
    names, first, counts = np.unique(resolved.astype(str), return_index=True, return_counts=True)
    if (counts > 1).any():
        i = int(np.flatnonzero(counts > 1)[0])
        raise InputError(
            path, f"resolved names {str(names[i])!r} {int(counts[i])} times", int(first[i]) + 1
        )
    for key in MISSING:
        both = np.intersect1d(names, np.array(document.get(key) or [], dtype=str))
        if both.size:
            position = int(first[np.searchsorted(names, both[0])]) + 1
            raise InputError(path, f"{str(both[0])!r} is both in resolved and in {key}", position)
