r"""An audit of the standard errors harnesses publish, recomputed from the items they summarise.

Users copy a harness's "score ± stderr" into papers. lm-eval published ``leaderboard_math``'s
``exact_match_stderr`` as exactly 0.0 for scores strictly inside (0, 1) (lm-eval issue #3966),
and gives the unweighted mean of a group's subtasks (``weight_by_size: false``) the stderr of
their size-weighted mean (fixed by lm-eval PR #3882). :func:`published_stderr` reads what the
harnesses published, :func:`audit_stderr` recomputes it from evalbars' item table, by the
harness's own formula and clustered by category, and flags what disagrees; :func:`audit_lines`
says each flag in a line. With :math:`\\hat\\sigma` the ``ddof=1`` standard deviation of the n
scores a value summarises:

- **lm-eval** (``<metric>_stderr,<filter>`` of each task and group in ``results_<ts>.json``): a
  task's is ``mean_stderr``, :math:`\\hat\\sigma/\\sqrt n`. A group's, over its leaf subtasks k
  (``group_subtasks`` flattened, as ``Group.aggregate`` does), is ``pooled_sample_stderr``,
  :math:`\\sqrt{\\sum_k (n_k-1)\\hat\\sigma_k^2/(N-K)/N}`, for the size-weighted mean
  :math:`\\sum_k n_k m_k/N` (it leaves out the spread of the subtask means). For a group published
  as the unweighted mean :math:`\\sum_k m_k/K` it is PR #3882's ``unweighted_mean_stderr``,
  :math:`\\sqrt{\\sum_k \\hat\\sigma_k^2/n_k}/K` (lm-eval up to 0.4.13 publishes the pooled one).
- **Inspect** (``results.scores[].metrics.stderr`` of a log): ``stderr()``,
  :math:`\\hat\\sigma/\\sqrt n` over the samples, each the mean of its epochs, 0 when n < 2, errored
  samples unscored; ``stderr(cluster=key)`` is :math:`\\sqrt{C/(C-1)}\\,SE_{CR0}` (0 when C < 2).
- **HELM** (``stats.json`` of a run folder) publishes no standard error: ``stddev`` is the
  ``ddof=0`` standard deviation of the ``count`` per-train-trial means (each trial's stats are
  averaged, then the trials merged), 0 with one trial. It is audited as that.

Each row also gets ``clustered_stderr``, the CR2 SE of the same estimate clustered by category
(:func:`evalbars.stats.cluster_robust.cr2_mean`; NaN with one category, as a single lm-eval task
has), and ``question_stderr``, :math:`\\hat\\sigma/\\sqrt n` of the per-question mean scores (Miller
2024, Eq. 1-2): the SE over instances that HELM's ``stddev`` is not.

References: lm-evaluation-harness v0.4.12 ``lm_eval/api/metrics.py`` (``mean_stderr``,
``pooled_sample_stderr``) and ``lm_eval/api/group.py``, PR #3882, issue #3966; Inspect AI
``inspect_ai/scorer/_metrics/std.py``; crfm-helm ``helm/benchmark/metrics/statistic.py`` (``Stat``)
and ``metric.py``; Miller, E. (2024), Adding error bars to evals, arXiv:2411.00640.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from evalbars.data.readers import helm, lighteval, lm_eval
from evalbars.data.readers.archives import member_names, open_archive, read_member
from evalbars.data.readers.common import few
from evalbars.data.readers.inspect_logs import is_inspect_log
from evalbars.stats.cluster_robust import cr2_mean
from evalbars.stats.intervals import clustered_se

__all__ = ["PUBLISHED_COLUMNS", "AUDIT_COLUMNS", "FLAGS", "ABSOLUTE_TOLERANCE"]
__all__ += ["published_stderr", "audit_stderr", "audit_lines"]

log = logging.getLogger(__name__)

#: :func:`published_stderr`'s columns. ``filter`` is lm-eval's filter, Inspect's epoch reducer,
#: HELM's split; ``published_n`` lm-eval's ``sample_len``, Inspect's ``scored_samples``, HELM's
#: ``count`` (train trials); ``item_tasks`` the names the items hold the row's questions under
#: (lm-eval's leaf tasks, HELM's ``<scenario>/<args>`` question prefix, Inspect's task);
#: ``default_metric``/``default_filter`` whether evalbars' reader scores that metric and filter by
#: default; ``stderr_cluster`` Inspect's ``stderr(cluster=...)`` key.
PUBLISHED_COLUMNS = (
    "model task harness metric filter published_estimate published_stderr published_n item_tasks "
    "default_metric default_filter stderr_cluster source_file source_path"
).split()
#: :func:`audit_stderr`'s columns.
AUDIT_COLUMNS = (
    "model task harness metric filter published_stderr recomputed_stderr clustered_stderr "
    "question_stderr n clusters relative_difference tolerance flag published_estimate "
    "recomputed_estimate published_n convention note source_file"
).split()
#: What :func:`audit_stderr` says of a published value, first applicable first.
FLAGS = ("no items", "zero while the scores vary", "estimate differs", "differs", "ok")
#: Added to every tolerance: float noise of sums of 0/1 scores, far below any published digit.
ABSOLUTE_TOLERANCE = 1e-12
_INSPECT_NAME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}[-:]\d{2}.*\.(eval|json)")
_LM_EVAL_RESULTS = (lm_eval.RESULTS_PATTERN, lm_eval.LMMS_RESULTS_PATTERN)
_LM_EVAL_SAMPLES = (lm_eval.SAMPLES_PATTERN, lm_eval.LMMS_SAMPLES_PATTERN)
_NUMBERS = ["published_estimate", "published_stderr", "published_n"]


def published_stderr(path) -> pd.DataFrame:
    """Every standard error published under ``path`` (a file, or a folder walked), as
    :data:`PUBLISHED_COLUMNS`: one row per (file, task or group, metric, filter), the task and group
    names as the harness writes them. Reads lm-eval (and lmms-eval) results files (a samples file
    stands for its results file), Inspect ``.eval``/``.json`` logs and HELM run folders'
    ``stats.json``; passes over other files, lm-eval's ``"N/A"`` (``bootstrap_iters: 0``) and
    lighteval's ``results_<ts>.json`` (named as lm-eval's; lighteval's SEs are not audited)."""
    path = Path(path)
    found = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
    sources = dict.fromkeys(s for s in (_source(f, not path.is_dir()) for f in found) if s)
    rows = [row for kind, file in sources for row in _READ[kind](file)]
    return pd.DataFrame(rows, columns=PUBLISHED_COLUMNS).astype(dict.fromkeys(_NUMBERS, float))


def _source(file: Path, named: bool):
    """``(harness, file read)`` of a file that holds published values, or None."""
    if lighteval.claims_results_name(file):
        return None  # lighteval's results file shares lm-eval's name; its SEs are not audited
    if lm_eval.is_lm_eval_name(file):
        return "lm_eval", lm_eval.results_of(file)
    if file.suffix == ".json" and (file.parent / "run_spec.json").is_file():
        stats = file.parent / "stats.json"  # any file of a HELM run folder stands for its run
        return ("helm", stats) if stats.is_file() else None
    inspect_json = file.suffix == ".json" and (named or _INSPECT_NAME.fullmatch(file.name))
    return ("inspect", file) if file.suffix == ".eval" or inspect_json else None


def _number(value):
    """A finite float, or None (lm-eval's ``"N/A"``, a missing metric)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _published(path: Path, harness: str, names: tuple, numbers: tuple, defaults, cluster=None):
    """A row of :data:`PUBLISHED_COLUMNS`: ``names`` is (model, task, item tasks, metric, filter),
    ``numbers`` (estimate, stderr, n) as published, ``defaults`` (default metric, default filter)."""
    model, task, item_tasks, metric, filter_name = names
    values = (model, task, harness, metric, filter_name, *(_number(v) for v in numbers))
    values += (tuple(item_tasks), *defaults, cluster, path.name, str(path))
    return dict(zip(PUBLISHED_COLUMNS, values, strict=True))


def _leaves(name: str, groups: dict, seen=()) -> list:
    """The leaf tasks of a group (members may be groups: mmlu -> mmlu_stem -> mmlu_physics)."""
    if not groups.get(name) or name in seen:
        return [name]
    nested = [leaf for member in groups[name] for leaf in _leaves(member, groups, (*seen, name))]
    return list(dict.fromkeys(nested))


def _lm_eval_default(task: str, entry: dict, results: dict) -> tuple:
    """The (metric, filter) evalbars' lm-eval reader scores by default: ``acc``/``exact_match`` by
    ``output_type``, else the one metric logged; the first filter (lm-eval logs the filters in
    ``filter_list`` order, so the first in the config is the first in the samples file)."""
    config = (results.get("configs") or {}).get(task) or {}
    logged = {key.split(",")[0] for key in entry if "," in key and "_stderr," not in key}
    metric = lm_eval.DEFAULT_METRICS.get(config.get("output_type"))
    if metric not in logged and len(logged) == 1:
        metric = next(iter(logged))
    filters = [f.get("name") for f in config.get("filter_list") or [] if isinstance(f, dict)]
    return metric, filters[0] if filters else "none"


def _lm_eval_rows(path: Path) -> list[dict]:
    results = json.loads(path.read_text())
    model = lm_eval.model_name(path, results)
    groups = results.get("group_subtasks") or {}
    entries = {**(results.get("groups") or {}), **(results.get("results") or {})}
    rows = []
    for task, entry in entries.items():
        leaves = _leaves(task, groups)
        defaults = [_lm_eval_default(leaf, entries.get(leaf) or {}, results) for leaf in leaves]
        metrics, filters = ({d[i] for d in defaults} for i in (0, 1))
        size = ((results.get("n-samples") or {}).get(task) or {}).get("effective")
        for key, stderr in entry.items():
            if "_stderr," not in key or _number(stderr) is None:
                continue  # not a stderr, or lm-eval's "N/A" (none computed)
            metric, filter_name = key.split("_stderr,", 1)
            estimate = entry.get(f"{metric},{filter_name}")
            names = (model, task, leaves, metric, filter_name)
            numbers = (estimate, stderr, size or entry.get("sample_len"))
            chosen = (metrics == {metric}, filters == {filter_name})
            rows.append(_published(path, "lm_eval", names, numbers, chosen))
    return rows


def _inspect_rows(path: Path) -> list[dict]:
    if path.suffix.lower() == ".json":
        header = json.loads(path.read_bytes())
    else:
        with open_archive(path) as archive:
            # An unfinished log has no header.json: Inspect writes it, with the results, last.
            if "header.json" not in member_names(archive):
                return []
            header = json.loads(read_member(archive, "header.json", path))
    if not is_inspect_log(header):
        return []
    evaluation, rows = header["eval"], []
    scores = (header.get("results") or {}).get("scores") or []
    scorers = {score.get("scorer", score.get("name")) for score in scores}
    for score in scores:
        metrics = score.get("metrics") or {}
        stderr = metrics.get("stderr") if isinstance(metrics.get("stderr"), dict) else {}
        if _number(stderr.get("value")) is None:
            continue
        estimate = next((metrics[m] for m in ("accuracy", "mean") if m in metrics), {})
        task, reducer = evaluation.get("task"), score.get("reducer") or "mean"
        names = (evaluation.get("model"), task, (task,), score.get("name"), reducer)
        numbers = (estimate.get("value"), stderr["value"], score.get("scored_samples"))
        cluster = (stderr.get("params") or {}).get("cluster")
        rows.append(_published(path, "inspect", names, numbers, (len(scorers) == 1, True), cluster))
    return rows


def _helm_rows(stats_path: Path) -> list[dict]:
    folder = stats_path.parent
    model, prefix, _ = helm.run_identity(folder)
    task = json.loads((folder / "run_spec.json").read_bytes()).get("name") or folder.name
    document = [s for s in json.loads(stats_path.read_bytes()) if isinstance(s, dict)]
    kinds = [s.get("name") if isinstance(s.get("name"), dict) else {} for s in document]
    # The unperturbed correctness stats with a stddev (count 0 leaves a Stat without one).
    keep = [k.get("name") in helm.CORRECTNESS_METRICS and not k.get("perturbation") for k in kinds]
    stats = [s for s, k in zip(document, keep, strict=True) if k and s.get("stddev") is not None]
    available = {s["name"]["name"] for s in stats}
    main = helm.MAIN_METRIC.get(prefix.split("/")[0])
    fallback = next((m for m in helm.CORRECTNESS_METRICS if m in available), None)
    default = main if main in available else fallback
    rows = []
    for s in stats:
        metric, split = s["name"]["name"], s["name"].get("split")
        names = (model, task, (prefix,), metric, split)
        numbers = (s["mean"], s["stddev"], s["count"])
        chosen = (metric == default, split == "test")
        rows.append(_published(stats_path, "helm", names, numbers, chosen))
    return rows


_READ = {"lm_eval": _lm_eval_rows, "inspect": _inspect_rows, "helm": _helm_rows}


class _ItemIndex:
    """The item rows of each (harness, model, key), found once: lm-eval by the samples file's
    (task, timestamp), Inspect by the log's name, HELM by the question id's ``<scenario>/<args>``."""

    def __init__(self, items: pd.DataFrame, cluster: str, harnesses):
        rows = pd.Series(np.arange(len(items)))
        self.scores = pd.to_numeric(items["correct"], errors="coerce").to_numpy(float)
        self.missing = items.get("missing_prediction", rows < 0).to_numpy(bool)
        self.epochs = items.get("epoch", rows * 0 + 1).to_numpy()
        self.questions, question_names = pd.factorize(items["question_id"])
        self.clusters = pd.factorize(items[cluster], use_na_sentinel=False)[0]
        models, model_names = pd.factorize(items["model"])
        sources, source_names = pd.factorize(items["source_file"])
        self.positions: dict = {}
        for (model, source), where in rows.groupby([models, sources]).indices.items():
            name, model = str(source_names[source]), model_names[model]
            self.positions["inspect", model, name] = where
            for match in filter(None, (p.fullmatch(name) for p in _LM_EVAL_SAMPLES)):
                self.positions["lm_eval", model, match["task"], match["stamp"]] = where
        if "helm" in harnesses:  # question ids are <scenario>/<args>/<instance_id>
            prefix = pd.Index(question_names.astype(str)).str.rsplit("/", n=1).str[0]
            codes, prefixes = pd.factorize(np.asarray(prefix)[self.questions])
            for (model, code), where in rows.groupby([models, codes]).indices.items():
                self.positions["helm", model_names[model], prefixes[code]] = where

    def parts(self, row) -> list:
        """Positions of the row's items, one array per item task (None where it has none)."""
        if row.harness == "lm_eval":
            stamps = [m["stamp"] for p in _LM_EVAL_RESULTS if (m := p.fullmatch(row.source_file))]
            stamp = stamps[0] if stamps else None
            keys = [("lm_eval", row.model, task, stamp) for task in row.item_tasks]
        elif row.harness == "inspect":
            keys = [("inspect", row.model, row.source_file)]
        else:
            keys = [("helm", row.model, row.item_tasks[0])]
        found = [self.positions.get(key) for key in keys]
        if row.harness == "lm_eval":  # with repeats, lm-eval scored the filter's pick: repeat 1
            found = [None if p is None else p[self.epochs[p] == 1] for p in found]
        return [None if p is None else p[np.isfinite(self.scores[p])] for p in found]


#: A value recomputed by the harness's formula, and the scores its estimate averages (their weights,
#: None for equal, and their cluster and question codes), for the clustered and question SEs.
_Recomputed = namedtuple(
    "_Recomputed", "estimate stderr convention note weights scores clusters questions"
)


def _group_means(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return np.bincount(codes, weights=values) / np.bincount(codes)


def _codes(values: np.ndarray) -> np.ndarray:
    """0..k-1 codes of the values (the index's codes are the whole table's, with gaps)."""
    return np.unique(values, return_inverse=True)[1]


def _lm_eval_values(row, parts: list, index: _ItemIndex, close: Callable) -> _Recomputed:
    # One array per leaf task: a loop over the (few) subtasks of a group, not over questions.
    scores = [index.scores[p] for p in parts]
    sizes = np.array([s.size for s in scores], float)
    means = np.array([s.mean() for s in scores])
    variances = np.array([s.var(ddof=1) if s.size > 1 else np.nan for s in scores])
    total, k = sizes.sum(), sizes.size
    weighted, unweighted = (sizes * means).sum() / total, means.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = math.sqrt(((sizes - 1) * variances).sum() / (total - k) / total)
    unweighted_se = math.sqrt((variances / sizes).sum()) / k
    every, leaf = np.concatenate(parts), np.repeat(np.arange(k), sizes.astype(int))
    # A question is (leaf, question): with id_field, one id may name documents of two subtasks.
    questions = _codes(leaf * (index.questions.max() + 1) + index.questions[every])
    data = dict(scores=index.scores[every], clusters=index.clusters[every], questions=questions)
    if k == 1:
        return _Recomputed(weighted, pooled, "mean_stderr: sd(ddof=1)/sqrt(n)", "", None, **data)
    if close(row.published_estimate, weighted) or not close(row.published_estimate, unweighted):
        convention = "pooled_sample_stderr of the size-weighted mean of the subtasks"
        return _Recomputed(weighted, pooled, convention, "", None, **data)
    pooled_published = close(row.published_stderr, pooled) and not close(pooled, unweighted_se)
    note = "it is the size-weighted pooled_sample_stderr (lm-eval before PR #3882)"
    note = note if pooled_published else ""
    convention = "unweighted_mean_stderr (PR #3882) of the unweighted mean of the subtasks"
    # Each subtask weighs 1/n_k, so the clustered SE is that of the unweighted mean too.
    return _Recomputed(unweighted, unweighted_se, convention, note, 1 / sizes[leaf], **data)


def _inspect_values(row, parts: list, index: _ItemIndex, close: Callable) -> _Recomputed:
    rows, notes = parts[0], []
    questions = _codes(index.questions[rows])
    answered = np.unique(questions[~index.missing[rows]]).size
    if answered == row.published_n < questions.max() + 1:
        # Inspect does not score an errored sample; evalbars scores it as a missing prediction.
        notes.append(f"{index.missing[rows].sum()} missing predictions left out, as Inspect does")
        rows = rows[~index.missing[rows]]
        questions = _codes(index.questions[rows])
    if row.filter != "mean":
        notes.append(f"epochs reduced by their mean, not by {row.filter}")
    means = _group_means(index.scores[rows], questions)
    clusters = np.zeros(means.size, int)
    clusters[questions] = index.clusters[rows]
    n, count = means.size, np.unique(clusters).size
    if isinstance(row.stderr_cluster, str):
        se = clustered_se(means, clusters) * math.sqrt(count / (count - 1)) if count > 1 else 0.0
        convention = f"stderr(cluster={row.stderr_cluster!r}): sqrt(C/(C-1)) CR0 over samples"
    else:
        se = means.std(ddof=1) / math.sqrt(n) if n > 1 else 0.0
        convention = "stderr(): sd(ddof=1)/sqrt(n) over the epoch-mean samples"
    note = "; ".join(notes)
    return _Recomputed(means.mean(), se, convention, note, None, means, clusters, np.arange(n))


def _helm_values(row, parts: list, index: _ItemIndex, close: Callable) -> _Recomputed:
    rows = parts[0]
    trials = _codes(index.epochs[rows])
    trial_means = _group_means(index.scores[rows], trials)
    note = ""
    if trial_means.size != row.published_n:
        note = f"{trial_means.size} trials in the items, count {row.published_n:g} in stats.json"
    convention = "Stat.stddev: sd(ddof=0) of the per-trial means (not an SE over instances)"
    weights = 1 / np.bincount(trials)[trials]  # every trial weighs alike, as HELM's mean of means
    data = (weights, index.scores[rows], index.clusters[rows], index.questions[rows])
    return _Recomputed(trial_means.mean(), trial_means.std(ddof=0), convention, note, *data)


_RECOMPUTE = {"lm_eval": _lm_eval_values, "inspect": _inspect_values, "helm": _helm_values}


def _flag(row, found: _Recomputed, allowed: float, close: Callable) -> str:
    if row.published_stderr == 0 and found.stderr > allowed:
        return "zero while the scores vary"
    if not (np.isnan(row.published_estimate) or close(row.published_estimate, found.estimate)):
        return "estimate differs"
    return "ok" if abs(row.published_stderr - found.stderr) <= allowed else "differs"


def _audit_row(row, index: _ItemIndex, tolerance: Callable) -> dict:
    values = {c: getattr(row, c) for c in AUDIT_COLUMNS if c in PUBLISHED_COLUMNS}
    parts = index.parts(row)
    lacking = [t for t, p in zip(row.item_tasks, parts, strict=True) if p is None or not p.size]
    if lacking:
        note = f"the items hold no rows of {few(lacking)} from this file"
        return {**values, "flag": "no items", "note": note, "n": 0, "clusters": 0}

    def close(value, target) -> bool:
        return abs(value - target) <= tolerance(target)

    found = _RECOMPUTE[row.harness](row, parts, index, close)
    clusters = np.unique(found.clusters).size
    # One cluster: not estimable (the residuals sum to zero in it); CR2 would say NaN, noisily.
    robust = cr2_mean(found.scores, found.clusters, found.weights).se if clusters > 1 else np.nan
    question_means = _group_means(found.scores, _codes(found.questions))
    n, allowed = question_means.size, tolerance(found.stderr)
    difference = row.published_stderr - found.stderr
    relative = difference / found.stderr if found.stderr else math.copysign(math.inf, difference)
    question_se = question_means.std(ddof=1) / math.sqrt(n) if n > 1 else np.nan
    values.update(recomputed_stderr=found.stderr, clustered_stderr=robust, n=n, clusters=clusters)
    values.update(question_stderr=question_se, relative_difference=relative if difference else 0.0)
    values.update(tolerance=allowed, flag=_flag(row, found, allowed, close))
    values.update(recomputed_estimate=found.estimate, convention=found.convention, note=found.note)
    return values


def _complete(published: pd.DataFrame) -> pd.DataFrame:
    """``published`` with the optional columns filled, and without rows that publish no stderr."""
    frame = published.copy()
    optional = dict(filter="none", published_n=np.nan, stderr_cluster=None, default_metric=True)
    for column, value in {**optional, "default_filter": True}.items():
        frame[column] = frame[column] if column in frame else value
    frame["item_tasks"] = frame.get("item_tasks", pd.Series([(t,) for t in frame["task"]]))
    frame["source_path"] = frame.get("source_path", frame["source_file"])
    frame[_NUMBERS] = frame[_NUMBERS].apply(pd.to_numeric, errors="coerce").astype(float)
    unpublished = frame["published_stderr"].isna()
    if unpublished.any():
        log.warning("left out %d rows that publish no stderr", int(unpublished.sum()))
    return frame[~unpublished].reset_index(drop=True)


def _chosen(frame: pd.DataFrame, metric, filter_name) -> pd.DataFrame:
    """The rows of the metric and filter the items score: the given ones where a task publishes
    them, else evalbars' reader's defaults (as the lm-eval reader chooses its metric)."""
    key = [frame[c] for c in ("model", "task", "harness", "source_path")]

    def pick(column: str, wanted, default: str) -> pd.Series:
        fallback = frame[default].astype(bool)
        if wanted is None:
            return fallback
        hit = frame[column] == wanted
        return hit.where(hit.groupby(key, dropna=False).transform("any"), fallback)

    keep = pick("metric", metric, "default_metric") & pick("filter", filter_name, "default_filter")
    dropped = sorted(set(frame.loc[~keep, "task"].astype(str)) - set(frame.loc[keep, "task"]))
    if dropped:
        log.warning("no metric chosen for %s: name one (metric=, filter=)", few(dropped))
    return frame[keep.to_numpy(bool)]


def audit_stderr(
    published: pd.DataFrame,
    items: pd.DataFrame,
    *,
    metric: str | None = None,
    filter: str | None = None,
    cluster: str = "category",
    rtol: float = 1e-6,
    decimals: int | None = None,
) -> pd.DataFrame:
    """Each published standard error against the one recomputed from the items, flagged.

    Parameters
    ----------
    published : DataFrame
        :func:`published_stderr`'s frame; a hand-made one needs ``model, task, harness, metric,
        published_estimate, published_stderr, source_file`` (the other columns are filled).
    items : DataFrame
        The item table, scored as the harness scores (lm-eval scores ``[invalid]`` 0, as
        ``missing_prediction: wrong`` does); ``cluster`` names the column clustered by.
    metric, filter : str, optional
        The metric and filter (Inspect: scorer; HELM: split) the items score, where a task
        publishes them (``"acc,none"`` names both); default what evalbars reads by default.
    rtol, decimals : float, int
        A recomputed value v has the tolerance ``rtol * |v| + ABSOLUTE_TOLERANCE``, plus
        ``0.5 * 10**-decimals`` for values rounded to ``decimals`` places (copied from a paper):
        harnesses write full doubles, and 1e-6 is far above the ~1e-15 between lm-eval's sums
        and numpy's.

    Returns
    -------
    DataFrame
        :data:`AUDIT_COLUMNS`, one row per value audited; ``flag`` the first of :data:`FLAGS`
        that applies: ``no items``, ``zero while the scores vary`` (published 0, recomputed above
        the tolerance), ``estimate differs`` (the items are not what it summarises: other items,
        metric or policy), ``differs`` (beyond the tolerance), ``ok``. ``relative_difference`` is
        published / recomputed - 1, ``convention`` the formula (module docstring).

    Examples
    --------
    >>> published = pd.DataFrame({"model": ["m"], "task": ["t"], "harness": ["inspect"],
    ...     "metric": ["match"], "published_estimate": [0.5], "published_stderr": [0.0],
    ...     "source_file": ["t.eval"]})
    >>> items = pd.DataFrame({"model": "m", "question_id": list("abcd"), "epoch": 1,
    ...     "category": list("xxyy"), "correct": [1, 1, 0, 0], "source_file": "t.eval"})
    >>> row = audit_stderr(published, items).iloc[0]
    >>> print(row["flag"], f"{row['recomputed_stderr']:.4f}", f"{row['clustered_stderr']:.4f}")
    zero while the scores vary 0.2887 0.5000
    """
    if metric and "," in metric and filter is None:
        metric, filter = metric.split(",", 1)
    chosen = _chosen(_complete(published), metric, filter)
    index = _ItemIndex(items, cluster, set(chosen["harness"]))
    rounding = 0.0 if decimals is None else 0.5 * 10.0**-decimals

    def tolerance(value) -> float:
        return rtol * abs(value) + ABSOLUTE_TOLERANCE + rounding

    rows = [_audit_row(row, index, tolerance) for row in chosen.itertuples(index=False)]
    return pd.DataFrame(rows, columns=AUDIT_COLUMNS)


def audit_lines(audit: pd.DataFrame) -> list[str]:
    """One line for each flagged row of :func:`audit_stderr`'s table (``ok`` rows say nothing)."""
    lines = []
    for row in audit[audit["flag"] != "ok"].itertuples(index=False):
        what = f"published stderr {row.published_stderr:.6g} ({row.relative_difference:+.2%})"
        if row.flag == "no items":
            what = "no item rows to recompute it from"
        elif row.flag == "estimate differs":
            what = f"published estimate {row.published_estimate:.6g}, the items' "
            what += f"{row.recomputed_estimate:.6g}: the items are not what it summarises"
        elif row.flag == "zero while the scores vary":
            what = f"published stderr 0 while the {row.n} scores vary"
        if row.flag in ("zero while the scores vary", "differs"):
            clustered = f"{row.clustered_stderr:.6g} clustered (CR2, {row.clusters} clusters)"
            clustered = clustered if row.clusters > 1 else "not clustered (one cluster)"
            what += f"; recomputed {row.recomputed_stderr:.6g} i.i.d., {clustered}"
        where = f"{row.model}, {row.task} ({row.harness} {row.metric},{row.filter}"
        lines.append(f"{where}, {row.source_file}): {what}" + (f"; {row.note}" if row.note else ""))
    return lines
