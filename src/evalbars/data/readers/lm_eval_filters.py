"""lm-eval's filters and ``exact_match`` re-applied to every repeat of a generation task.

A generation task with ``repeats: K`` sends each document K times; its samples file keeps all
K raw responses (``resps``) but only each filter list's aggregate (``filtered_resps``, after
``take_first`` or ``majority_vote``) and the metric on that aggregate. To score every repeat,
each raw response is run again through the filter list and the metric that the results file
records for the task (``configs[task].filter_list`` and ``metric_list``), as lm-eval 0.4.13
applies them (``lm_eval/filters/*.py``, ``lm_eval/api/metrics.py``):

- **per-response steps**, applied to each repeat: ``regex`` (``regex_pattern``,
  ``group_select``, ``fallback`` [``"[invalid]"``]: ``re.findall``, the selected match, its
  first non-empty group when the pattern has several, stripped; the fallback when nothing
  matches), ``multi_choice_regex`` (its pattern, then the document's ``choices`` as text
  after ``ignore_case``/``ignore_punctuation``/``regexes_to_ignore``, then ``: X`` letters;
  answers ``(A)``, ``(B)``, …), ``lowercase``, ``uppercase``, ``remove_whitespace`` (strip),
  ``map`` (``mapping_dict``, ``default_value``);
- **reducing steps**, which choose among the repeats: ``take_first_k`` (the first k),
  ``majority_vote`` (the most frequent answer, ties to the first seen: ``Counter.most_common``),
  ``take_first``. A repeat's own answer is its per-response steps alone; the reducing steps
  only rebuild the file's aggregate, which is how the re-scoring is checked;
- **metric** ``exact_match`` (HF evaluate's, as lm-eval ports it): ``regexes_to_ignore``
  removed from answer and target, then ``ignore_case`` (lower), ``ignore_punctuation``
  (ASCII ``string.punctuation``), ``ignore_numbers`` (digits), then equality. The target is the
  line's ``target``, converted to the answer's type as lm-eval does; a list of targets scores
  1 when any matches.

Anything else is refused with the filter or metric named (:class:`evalbars.errors.InputError`),
never approximated: a ``custom`` filter (a Python function), ``regex_pos``, ``format_span``,
an unknown filter, a per-response step after ``take_first`` (lm-eval would apply it to the
characters of the string), a metric other than ``exact_match`` or an option it does not take,
a generation task with ``doc_to_choice``, or a task that is not ``generate_until``.

:func:`rescore_lines` gives one row per (document, filter list, repeat); the first repeat of a
``take_first`` list must score what the file logged, and the whole list re-applied must
rebuild the file's aggregate and its score (:func:`rescoring_disagreements`,
:func:`check_rescoring`).
"""

from __future__ import annotations

import json
import re
import string
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd

from evalbars.errors import InputError

__all__ = [
    "PER_RESPONSE",
    "REDUCING",
    "FilterStep",
    "FilterList",
    "ExactMatch",
    "TaskRescorer",
    "task_rescorer",
    "rescore_lines",
    "rescoring_disagreements",
    "check_rescoring",
    "rescore_samples_file",
]

#: Filters applied to each response on its own.
PER_RESPONSE = ("regex", "multi_choice_regex", "lowercase", "uppercase", "remove_whitespace", "map")
#: Filters that choose among a document's responses.
REDUCING = ("take_first", "take_first_k", "majority_vote")
#: The options each filter takes (lm-eval 0.4.13's constructors).
_OPTIONS = {
    "regex": {"regex_pattern", "group_select", "fallback"},
    "multi_choice_regex": {
        "regex_pattern",
        "group_select",
        "fallback",
        "ignore_case",
        "ignore_punctuation",
        "regexes_to_ignore",
    },
    "lowercase": set(),
    "uppercase": set(),
    "remove_whitespace": set(),
    "map": {"mapping_dict", "default_value"},
    "take_first": set(),
    "take_first_k": {"k"},
    "majority_vote": set(),
}
_EXACT_MATCH_OPTIONS = {"ignore_case", "ignore_punctuation", "ignore_numbers", "regexes_to_ignore"}
_METRIC_BOOKKEEPING = {"metric", "aggregation", "higher_is_better", "hf_evaluate"}
_DEFAULT_REGEX = r"#### (\-?[0-9\.\,]+)"
_FALLBACK = "[invalid]"


@cache
def _unicode_punctuation() -> dict:
    """Translation table deleting every Unicode punctuation character (category P*)."""
    return dict.fromkeys(
        i for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P")
    )


@dataclass(frozen=True)
class FilterStep:
    """One step of a filter list: lm-eval's ``function`` name and its options."""

    function: str
    options: dict = field(default_factory=dict, hash=False)

    def on_response(self, response, doc):
        """This per-response step applied to one response (``doc`` for multiple choice)."""
        name, options = self.function, self.options
        if name == "regex":
            pattern = re.compile(options.get("regex_pattern", _DEFAULT_REGEX))
            return _regex_match(pattern, response, options)
        if name == "lowercase":
            return response.lower()
        if name == "uppercase":
            return response.upper()
        if name == "remove_whitespace":
            return response.strip()
        if name == "map":
            return (options.get("mapping_dict") or {}).get(response, options.get("default_value"))
        return _multi_choice(response, doc, options)


def _regex_match(pattern, response, options, default=None):
    """lm-eval's RegexFilter on one response: the selected ``findall`` match, stripped."""
    fallback = options.get("fallback", _FALLBACK) if default is None else default
    found = pattern.findall(response if isinstance(response, str) else "")
    if not found:
        return fallback
    match = found[options.get("group_select", 0)]
    if isinstance(match, tuple):
        groups = [m for m in match if m]
        return groups[0].strip() if groups else fallback
    return match.strip()


def _multi_choice(response, doc, options):
    """lm-eval's MultiChoiceRegexFilter on one response."""
    pattern = re.compile(options.get("regex_pattern", _DEFAULT_REGEX))
    fallback = options.get("fallback", _FALLBACK)

    def ignores(text):
        for ignored in options.get("regexes_to_ignore") or []:
            text = re.sub(ignored, "", text)
        if options.get("ignore_case"):
            text = text.lower()
        if options.get("ignore_punctuation"):
            text = text.translate(_unicode_punctuation())
        return text

    def find(regex, text, convert=None):
        found = regex.findall(text if isinstance(text, str) else "")
        if not found:
            return found
        match = found[options.get("group_select", 0)]
        if isinstance(match, tuple):
            groups = [m for m in match if m]
            if not groups:
                return ""
            match = groups[0]
        match = match.strip()
        return (convert or {}).get(match, match) if match else match

    letters = [chr(ord("A") + i) for i in range(len(doc["choices"]))]
    to_letter = {ignores(c.strip()): f"({x})" for c, x in zip(doc["choices"], letters, strict=True)}
    by_text = re.compile("|".join(sorted(map(re.escape, to_letter), key=len, reverse=True)))
    by_letter = re.compile(r":[\s]*(" + "|".join(letters) + ")")
    match = find(pattern, response)
    if not match:
        match = find(by_text, ignores(response if isinstance(response, str) else ""), to_letter)
    if not match:
        match = find(by_letter, response, {x: f"({x})" for x in letters})
    return match if match else fallback


@dataclass(frozen=True)
class FilterList:
    """A named filter list of a task: its steps in order."""

    name: str
    steps: tuple

    @property
    def repeats_used(self):
        """How many of a document's repeats the list sees (``take_first_k``), None for all."""
        for step in self.steps:
            if step.function == "take_first_k":
                return int(step.options["k"])
            if step.function in ("take_first", "majority_vote"):
                return None
        return None

    @property
    def keeps_the_first(self) -> bool:
        """True when the list's aggregate is the first repeat's own answer (no vote)."""
        return not any(step.function in ("majority_vote", "take_first_k") for step in self.steps)

    def answers(self, responses, doc) -> list:
        """Each repeat's own answer: the per-response steps, in order, on each response."""
        used = responses[: self.repeats_used] if self.repeats_used else responses
        values = list(used)
        for step in self.steps:
            if step.function in PER_RESPONSE:
                values = [step.on_response(value, doc) for value in values]
        return values

    def aggregate(self, responses, doc):
        """The whole list on a document's responses, as lm-eval applies it."""
        value = list(responses)
        for step in self.steps:
            if step.function in PER_RESPONSE:
                value = [step.on_response(v, doc) for v in value]
            elif step.function == "take_first_k":
                value = value[: int(step.options["k"])]
            elif step.function == "majority_vote":
                value = [Counter(value).most_common(1)[0][0]]
            else:  # take_first
                value = value[0]
        return value


@dataclass(frozen=True)
class ExactMatch:
    """lm-eval's ``exact_match`` with its options."""

    ignore_case: bool = False
    ignore_punctuation: bool = False
    ignore_numbers: bool = False
    regexes_to_ignore: tuple = ()

    def score(self, answer, target) -> float:
        """1.0 when the answer matches the target (any of a list of targets), else 0.0."""
        targets = target if isinstance(target, list) else [target]
        return float(any(self._one(answer, t) for t in targets))

    def _one(self, answer, target) -> bool:
        if not isinstance(answer, str):
            # lm-eval casts the target to the answer's type and compares (a map to numbers).
            try:
                return answer == type(answer)(target)
            except (TypeError, ValueError):
                return False
        answer, target = answer, str(target)
        for ignored in self.regexes_to_ignore:
            answer, target = re.sub(ignored, "", answer), re.sub(ignored, "", target)
        if self.ignore_case:
            answer, target = answer.lower(), target.lower()
        if self.ignore_punctuation:
            table = str.maketrans("", "", string.punctuation)
            answer, target = answer.translate(table), target.translate(table)
        if self.ignore_numbers:
            table = str.maketrans("", "", string.digits)
            answer, target = answer.translate(table), target.translate(table)
        return answer == target


@dataclass(frozen=True)
class TaskRescorer:
    """What re-scores one task's repeats: its filter lists, metrics and repeats."""

    task: str
    filters: dict
    metrics: dict
    repeats: int


def _filter_lists(config: dict, path, task: str, only=None) -> dict:
    entries = config.get("filter_list")
    if not entries:
        return {"none": FilterList("none", (FilterStep("take_first"),))}
    lists = {}
    for entry in entries:
        name = entry.get("name", "none")
        if only is not None and name != only:
            continue
        steps = []
        for function in entry.get("filter", []):
            kind = function.get("function")
            options = {k: v for k, v in function.items() if k != "function"}
            where = f"task {task!r}, filter list {name!r}"
            if kind not in _OPTIONS:
                raise InputError(
                    path,
                    f"{where}: filter {kind!r} cannot be re-applied to each repeat (evalbars "
                    f"reproduces {', '.join(sorted(_OPTIONS))}); score the repeats by the "
                    "file's own aggregate instead",
                )
            unknown = sorted(set(options) - _OPTIONS[kind])
            if unknown:
                raise InputError(
                    path,
                    f"{where}: filter {kind!r} has options {unknown} "
                    "that lm-eval 0.4.13's does not take",
                )
            if kind == "take_first_k" and "k" not in options:
                raise InputError(path, f"{where}: take_first_k without k")
            if steps and steps[-1].function == "take_first" and kind in PER_RESPONSE:
                raise InputError(
                    path,
                    f"{where}: {kind!r} after take_first would apply to the characters of the "
                    "answer; not reproduced",
                )
            steps.append(FilterStep(kind, options))
        lists[name] = FilterList(name, tuple(steps))
    return lists


def _metrics(config: dict, path, task: str, only=None) -> dict:
    metrics = {}
    for entry in config.get("metric_list") or [{"metric": "exact_match"}]:
        name = entry.get("metric")
        if only is not None and name != only:
            continue
        if name != "exact_match":
            raise InputError(
                path,
                f"task {task!r}: metric {name!r} cannot be re-computed per repeat "
                "(evalbars reproduces exact_match)",
            )
        options = {k: v for k, v in entry.items() if k not in _METRIC_BOOKKEEPING}
        unknown = sorted(set(options) - _EXACT_MATCH_OPTIONS)
        if unknown:
            raise InputError(path, f"task {task!r}: exact_match options {unknown} not reproduced")
        ignored = options.get("regexes_to_ignore") or ()
        metrics[name] = ExactMatch(
            ignore_case=bool(options.get("ignore_case", False)),
            ignore_punctuation=bool(options.get("ignore_punctuation", False)),
            ignore_numbers=bool(options.get("ignore_numbers", False)),
            regexes_to_ignore=tuple([ignored] if isinstance(ignored, str) else ignored),
        )
    return metrics


def task_rescorer(
    results: dict, task: str, path, *, filter_name: str | None = None, metric: str | None = None
) -> TaskRescorer:
    """The re-scorer of ``task`` from a results file's ``configs[task]``.

    Parameters
    ----------
    results : dict
        The parsed ``results_<ts>.json``.
    task : str
        The (sub)task.
    path : str or Path
        The results file, for messages.
    filter_name, metric : str, optional
        Re-score only this filter list and this metric (the ones an item table reads): the
        task's other lists and metrics are then neither parsed nor checked. Default: all.

    Returns
    -------
    TaskRescorer

    Raises
    ------
    InputError
        When the task is not a generation task, or a filter or metric cannot be reproduced
        (the message names it).

    Examples
    --------
    >>> config = {"configs": {"t": {"output_type": "generate_until", "repeats": 3,
    ...     "filter_list": [{"name": "maj", "filter": [{"function": "regex",
    ...     "regex_pattern": "(\\\\d+)"}, {"function": "majority_vote"},
    ...     {"function": "take_first"}]}],
    ...     "metric_list": [{"metric": "exact_match", "ignore_case": True}]}}}
    >>> rescorer = task_rescorer(config, "t", "results.json")
    >>> rescorer.repeats, [s.function for s in rescorer.filters["maj"].steps]
    (3, ['regex', 'majority_vote', 'take_first'])
    """
    config = (results.get("configs") or {}).get(task)
    if config is None:
        raise InputError(path, f"no configs entry for task {task!r}: its filters are unknown")
    if config.get("output_type") != "generate_until":
        raise InputError(
            path,
            f"task {task!r} is {config.get('output_type')!r}: only generate_until tasks have "
            "repeats to re-score",
        )
    if config.get("doc_to_choice") is not None:
        raise InputError(
            path,
            f"task {task!r}: a generation task with doc_to_choice maps its "
            "target through the choices; not reproduced",
        )
    filters = _filter_lists(config, path, task, filter_name)
    metrics = _metrics(config, path, task, metric)
    if metric is not None and not metrics:
        raise InputError(
            path,
            f"task {task!r}: metric {metric!r} is not in its metric_list; the repeats cannot "
            "be re-scored by it",
        )
    return TaskRescorer(
        task=task, filters=filters, metrics=metrics, repeats=int(config.get("repeats") or 1)
    )


def rescore_lines(rescorer: TaskRescorer, lines, path) -> pd.DataFrame:
    """Every repeat of every samples line, re-scored.

    Parameters
    ----------
    rescorer : TaskRescorer
        From :func:`task_rescorer`.
    lines : iterable of (int, dict)
        1-based record numbers and the parsed samples lines.
    path : str or Path
        The samples file, for messages.

    Returns
    -------
    DataFrame
        One row per (line, repeat the filter list sees, metric): ``record, doc_id, filter,
        repeat`` (1-based), ``response``, ``answer`` (the per-response steps' result),
        ``metric``, ``score``, ``logged`` (the line's own value of the metric),
        ``aggregate`` (the whole list re-applied), ``aggregate_score`` (the metric on it) and
        ``keeps_first`` (the list's aggregate is repeat 1's answer).

    Examples
    --------
    >>> config = {"configs": {"t": {"output_type": "generate_until", "repeats": 3,
    ...     "filter_list": [{"name": "first", "filter": [{"function": "regex",
    ...     "regex_pattern": "#### (\\\\d+)"}, {"function": "take_first"}]}]}}}
    >>> line = {"doc_id": 0, "doc": {}, "target": "42", "filter": "first",
    ...         "resps": [["#### 42", "#### 41", "no"]], "filtered_resps": ["42"],
    ...         "exact_match": 1.0}
    >>> table = rescore_lines(task_rescorer(config, "t", "r.json"), [(1, line)], "s.jsonl")
    >>> table[["repeat", "answer", "score", "logged"]].values.tolist()
    [[1, '42', 1.0, 1.0], [2, '41', 0.0, 1.0], [3, '[invalid]', 0.0, 1.0]]
    """
    rows = []
    for number, line in lines:
        name = line.get("filter", "none")
        pipeline = rescorer.filters.get(name)
        if pipeline is None:
            raise InputError(
                path, f"filter {name!r} is not in task {rescorer.task!r}'s filter list", number
            )
        resps = line.get("resps")
        if not (isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], list)):
            raise InputError(path, "resps is not one request's list of responses", number)
        responses = resps[0]
        if len(responses) != rescorer.repeats:
            raise InputError(
                path,
                f"{len(responses)} responses where the task has repeats: {rescorer.repeats}",
                number,
            )
        doc, target = line.get("doc") or {}, line.get("target")
        try:
            answers = pipeline.answers(responses, doc)
            aggregate = pipeline.aggregate(responses, doc)
        except (IndexError, KeyError, re.error) as error:
            problem = f"filter list {name!r} fails on this line: {error!r}"
            raise InputError(path, problem, number) from None
        for metric, scorer in rescorer.metrics.items():
            logged = line.get(metric)
            aggregate_score = scorer.score(aggregate, target)
            for repeat, (response, answer) in enumerate(
                zip(responses, answers, strict=False), start=1
            ):
                rows.append(
                    {
                        "record": number,
                        "doc_id": line.get("doc_id"),
                        "filter": name,
                        "repeat": repeat,
                        "response": response,
                        "answer": answer,
                        "metric": metric,
                        "score": scorer.score(answer, target),
                        "logged": logged,
                        "aggregate": aggregate,
                        "aggregate_score": aggregate_score,
                        "keeps_first": pipeline.keeps_the_first,
                    }
                )
    return pd.DataFrame(rows)


def rescoring_disagreements(table: pd.DataFrame) -> pd.DataFrame:
    """The rows where the re-scoring does not reproduce the file.

    Parameters
    ----------
    table : DataFrame
        :func:`rescore_lines`.

    Returns
    -------
    DataFrame
        Rows (one per line and metric) where the re-applied list's score differs from the
        logged one, or, for a list that keeps the first repeat, where repeat 1's own score
        does; with ``problem`` saying which. Empty when the re-scoring agrees.
    """
    first = table[table["repeat"] == 1]
    aggregate_off = first["aggregate_score"] != first["logged"]
    first_off = first["keeps_first"] & (first["score"] != first["logged"])
    rows = first[aggregate_off | first_off].copy()
    rows["problem"] = [
        (
            f"filter {r.filter!r}: re-scored {r.metric} {r.aggregate_score:g} (answer "
            f"{r.aggregate!r}) but the file logged {r.logged!r}"
        )
        if r.aggregate_score != r.logged
        else f"filter {r.filter!r}: repeat 1 scores {r.score:g} but the file logged {r.logged!r}"
        for r in rows.itertuples()
    ]
    return rows


def check_rescoring(table: pd.DataFrame, path) -> None:
    """Raise :class:`evalbars.errors.InputError` at the first line the re-scoring does not
    reproduce (:func:`rescoring_disagreements`); silent when it reproduces every line."""
    off = rescoring_disagreements(table)
    if len(off):
        first = off.iloc[0]
        more = f" ({len(off) - 1} more lines disagree)" if len(off) > 1 else ""
        raise InputError(path, f"{first['problem']}{more}", int(first["record"]))


def rescore_samples_file(samples_path, results_path, task: str) -> pd.DataFrame:
    """:func:`rescore_lines` on a whole samples file, checked by :func:`check_rescoring`.

    Parameters
    ----------
    samples_path, results_path : str or Path
        ``samples_<task>_<ts>.jsonl`` and its run's ``results_<ts>.json``.
    task : str
        The task (a key of the results file's ``configs``).

    Returns
    -------
    DataFrame
        As :func:`rescore_lines`.

    Raises
    ------
    InputError
        A filter or metric that cannot be reproduced, a malformed line, or a line whose
        re-scoring disagrees with the file.
    """
    results = json.loads(Path(results_path).read_text(encoding="utf-8"))
    rescorer = task_rescorer(results, task, results_path)
    lines = []
    with Path(samples_path).open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                try:
                    lines.append((number, json.loads(text)))
                except json.JSONDecodeError as error:
                    raise InputError(samples_path, f"not JSON: {error.msg}", number) from None
    table = rescore_lines(rescorer, lines, samples_path)
    check_rescoring(table, samples_path)
    return table
