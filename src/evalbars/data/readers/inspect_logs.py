"""Inspect (0.3.x) evaluation logs: ``.eval`` archives and ``.json`` logs.

An ``.eval`` log is a zip of JSON members: ``header.json`` (``status``, ``eval``
with ``model`` and ``task``) and one ``samples/<id>_epoch_<n>.json`` per sample
and epoch; Inspect 0.3.206 and later compress the members with zstd, earlier
releases with deflate (:mod:`evalbars.data.readers.archives` reads both). A ``.json``
log is one object with the same ``eval`` and ``status`` and a ``samples`` list.

How the item table is read from them:

- **model**: ``eval.model`` (e.g. ``openai/gpt-4o``);
- **question**: ``samples[].id``; **epoch**: ``samples[].epoch`` (one sample per epoch);
- **run**: a log is one run; with ``runs: all`` every log of a model and task is read, each
  labelled by its ``eval.run_id`` (else ``eval.eval_id``, else the file's name);
- **category**: ``samples[].metadata[category_field]``, by default ``category``,
  then ``subject``; none when the sample has neither;
- **score**: the scorer the user names (``scorer:``), by default the only one;
  its value mapped as Inspect's own ``value_to_float`` does: ``C`` (correct) 1,
  ``I`` (incorrect) 0, ``P`` (partial) 0.5, ``N`` (no answer) 0, numbers and
  booleans as they are;
- **options**: ``samples[].choices`` (a multiple-choice sample's options), so that
  ``missing_prediction: random_guess`` guesses among them; MMLU-Pro's 10 when the
  sample has none;
- **missing prediction**: a sample that errored has no score, and an answer the
  scorer could not parse (scored ``I`` with an empty answer: ``choice()`` gives
  ``""``, ``pattern()`` no answer when its pattern finds none) is not a wrong
  answer either; both are missing predictions, as lm-eval's ``[invalid]`` is,
  and the count of errored samples is always reported;
- **version**: the log format version (``version``, 2 in Inspect 0.3); a log of another
  version is read as version 2 with one warning naming it;
- **status**: a log whose status is ``error`` or ``cancelled`` (the run did not
  finish) is refused unless the user allows partial logs (``allow_partial: true``);
  an ``.eval`` archive without ``header.json`` is an unfinished log (Inspect writes
  ``_journal/`` and ``samples/`` members as it runs, and the header last).

Record numbers in errors are 1-based positions of the sample in the log (sorted
by epoch and id).

References
----------
.. [1] UK AI Security Institute, Inspect AI (https://inspect.aisi.org.uk/), the
   log format of ``inspect_ai.log.EvalLog`` and ``inspect_ai.scorer.value_to_float``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from pathlib import Path

import pandas as pd

from evalbars.data.readers.archives import member_names, open_archive, read_member
from evalbars.data.readers.common import (
    DEFAULT_N_OPTIONS,
    check_question_id,
    finish_frame,
    option_hint,
)
from evalbars.errors import InputError, plain

__all__ = [
    "SCORE_VALUES",
    "is_inspect_archive",
    "is_inspect_log",
    "read_inspect_log",
    "log_identity",
    "run_label",
    "KNOWN_VERSIONS",
]

log = logging.getLogger(__name__)

#: Log format versions read (``EvalLog.version``: 2 in every Inspect 0.3 release read here,
#: 0.3.205 to 0.3.285); a log of another is read as version 2 with a warning.
KNOWN_VERSIONS = (2,)
#: Inspect's letter grades as numbers (``inspect_ai.scorer.value_to_float``).
SCORE_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
DEFAULT_CATEGORY_FIELDS = ("category", "subject")
FINISHED = ("success",)
_SAMPLE_MEMBER = re.compile(r"samples/.+_epoch_\d+\.json")
#: What makes a sample a missing prediction, by cause.
ERRORED = "errored sample (the harness logged an error, no score)"
UNPARSED = "unparseable answer (scored I with an empty answer)"
UNGRADED = "unscored sample (the scorer gave NaN, as model_graded_qa does when its grader fails)"
UNFINISHED = "unfinished Inspect log (no header.json; Inspect was still writing it or was stopped)"


def is_inspect_archive(names) -> bool:
    """Whether a zip's member names are an Inspect ``.eval`` log's, finished or not."""
    return any(n == "header.json" or n.startswith(("_journal/", "samples/")) for n in names)


def is_inspect_log(document) -> bool:
    """Whether a parsed JSON document is an Inspect log (a header, or a whole ``.json`` log)."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("eval"), dict)
        and "status" in document
    )


def _json(raw: bytes, path, what: str):
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"{what} is not valid JSON: {exc}") from exc


def _load(path: Path, samples: bool = True) -> tuple[dict, list]:
    """``(header, samples)`` of an ``.eval`` archive or a ``.json`` log (no samples read
    from an archive when ``samples`` is false).

    ``header.json`` and then every ``samples/`` member, in name order, are read from one opened
    archive, so :func:`~evalbars.data.readers.archives.read_member` holds them together to
    the archive's limits. Fatal: the first member that passes a limit (per member, per archive,
    or in how far it unpacks beyond its compressed size) or contradicts its header (a damaged
    or forged archive), named in the message; reading stops there. The ``_journal/`` members,
    ``reductions.json`` and ``summaries.json`` are not read, and count toward no limit.
    """
    if path.suffix.lower() == ".json":
        document = _json(path.read_bytes(), path, "the log")
        if not is_inspect_log(document):
            raise InputError(path, "not an Inspect log (no eval and status)")
        return document, list(document.get("samples") or [])
    with open_archive(path) as archive:
        names = member_names(archive)
        if "header.json" not in names:
            if is_inspect_archive(names):
                raise InputError(path, UNFINISHED)
            raise InputError(
                path, "not an Inspect .eval log (no header.json, _journal/ or samples/)"
            )
        header = _json(read_member(archive, "header.json", path), path, "header.json")
        if not is_inspect_log(header):
            raise InputError(path, "header.json is not an Inspect log header (no eval and status)")
        members = sorted(n for n in names if _SAMPLE_MEMBER.fullmatch(n)) if samples else []
        records = [_json(read_member(archive, name, path), path, name) for name in members]
    return header, records


def log_identity(path) -> tuple[str, str, str]:
    """``(model, task, created)`` of a log, to find several runs of one model and task."""
    header, _ = _load(Path(path), samples=False)
    evaluation = header["eval"]
    return str(evaluation.get("model")), str(evaluation.get("task")), str(evaluation.get("created"))


def read_inspect_log(path, options) -> pd.DataFrame:
    """Raw rows of one Inspect log (see the module docstring); ``options`` is a
    :class:`evalbars.data.readers.SourceOptions`."""
    path = Path(path)
    header, samples = _load(path)
    _check_version(header, path)
    status = header.get("status")
    if status not in FINISHED and not options.allow_partial:
        raise InputError(
            path,
            f"the log's status is {status!r}: the run did not finish; "
            f"{option_hint('allow_partial', True)} to analyse the samples it holds",
        )
    evaluation = header["eval"]
    model = evaluation.get("model")
    if not isinstance(model, str) or not model:
        raise InputError(path, "the log names no eval.model")
    if not samples:
        raise InputError(path, "the log holds no samples")
    stray = [i for i, sample in enumerate(samples, start=1) if not isinstance(sample, dict)]
    if stray:
        raise InputError(path, "the sample is not a JSON object", stray[0])
    samples = sorted(samples, key=_order)
    scorer = _choose_scorer(samples, options.scorer, path)
    answers = _scorer_gives_answers(samples, scorer)
    rows = [
        _row(s, i, path, scorer, options.category_field, answers)
        for i, s in enumerate(samples, start=1)
    ]
    errored = sum(bool(sample.get("error")) for sample in samples)
    frame = pd.DataFrame(
        rows,
        columns=[
            "record",
            "question_id",
            "epoch",
            "category",
            "answer",
            "pred",
            "n_options",
            "correct",
            "cause",
        ],
    )
    causes = [ERRORED] if errored else []
    causes += [UNPARSED] if (frame["cause"] == "unparsed").any() else []
    causes += [UNGRADED] if (frame["cause"] == "ungraded").any() else []
    frame["model"] = model
    frame["correct"] = frame["correct"].astype("Float64")
    if options.runs == "all":
        frame["run"] = run_label(evaluation, path)
    return finish_frame(
        frame.drop(columns="cause"),
        path,
        # What made rows missing in this log; both causes where none did.
        missing_means=" or ".join(causes or [ERRORED, UNPARSED]),
        errored_samples=errored,
    )


def run_label(evaluation: dict, path) -> str:
    """The run a log is: ``eval.run_id``, else ``eval.eval_id``, else the file's name."""
    for key in ("run_id", "eval_id"):
        value = evaluation.get(key)
        if isinstance(value, str) and value:
            return value
    return Path(path).name


def _check_version(header: dict, path) -> None:
    """One warning line for a log of a format version this reader does not know: its samples
    are read as version 2's, which may misread them (a newer Inspect may have moved a field)."""
    version = header.get("version")
    if version in KNOWN_VERSIONS and not isinstance(version, bool):
        return
    log.warning(
        "%s: Inspect log format version %s, which evalbars does not know (it reads version%s "
        "%s, which Inspect 0.3 writes); its samples are read as version %s's: check the scores",
        path,
        "(none given)" if version is None else repr(version),
        "s" if len(KNOWN_VERSIONS) > 1 else "",
        ", ".join(map(str, KNOWN_VERSIONS)),
        KNOWN_VERSIONS[-1],
    )


def _order(sample: dict) -> tuple:
    """Samples sort by epoch, then id (a malformed epoch first: :func:`_row` names it)."""
    epoch = sample.get("epoch", 1)
    epoch = epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else 0
    return (epoch, str(sample.get("id")))


def _choose_scorer(samples: list, wanted: str | None, path) -> str:
    scorers = list(dict.fromkeys(name for s in samples for name in (s.get("scores") or {})))
    if not scorers:
        errored = sum(bool(sample.get("error")) for sample in samples)
        why = f"all {errored} errored" if errored == len(samples) else f"{errored} errored"
        raise InputError(
            path, f"no sample has a score ({len(samples)} samples, {why}): nothing to analyse"
        )
    if wanted:
        if wanted not in scorers:
            raise InputError(path, f"no scorer {wanted!r} in the log; it has {scorers}")
        return wanted
    if len(scorers) != 1:
        raise InputError(
            path,
            f"cannot choose a scorer (the log has {len(scorers)}: {scorers}); "
            f"{option_hint('scorer')} with one of them",
        )
    return scorers[0]


def _scorer_gives_answers(samples: list, scorer: str) -> bool:
    """Whether the scorer records an extracted answer on some sample (then a sample it scored
    without one is an answer it could not parse)."""
    return any(
        isinstance(score, dict) and score.get("answer")
        for score in ((s.get("scores") or {}).get(scorer) for s in samples)
    )


def _category(metadata, field: str | None, path, index):
    metadata = metadata if isinstance(metadata, dict) else {}
    if field:
        if field not in metadata:
            raise InputError(path, f"the sample's metadata has no {field!r}", index)
        return str(metadata[field])
    for name in DEFAULT_CATEGORY_FIELDS:
        if name in metadata:
            return str(metadata[name])
    return None


def _score(value, path, index) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in SCORE_VALUES:
        return SCORE_VALUES[value]
    raise InputError(
        path, f"score {plain(value)!r} is neither a number nor one of C, I, P, N", index
    )


def _row(sample: dict, index: int, path, scorer: str, category_field, answers: bool) -> tuple:
    if "id" not in sample:
        raise InputError(path, "the sample has no id", index)
    question = check_question_id(sample["id"], path, index)
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InputError(path, f"epoch must be a positive whole number, got {epoch!r}", index)
    category = _category(sample.get("metadata"), category_field, path, index)
    target = sample.get("target")
    target = target if isinstance(target, str) else json.dumps(target)
    output = sample.get("output") or {}
    completion = output.get("completion") if isinstance(output, dict) else None
    choices = sample.get("choices")
    n_options = (
        len(choices) if isinstance(choices, list) and len(choices) > 1 else DEFAULT_N_OPTIONS
    )
    scores = sample.get("scores") or {}
    if sample.get("error") or scorer not in scores:
        # An errored (or unscored) sample has no score: a missing prediction, not a wrong one.
        return (index, question, epoch, category, target, completion, n_options, None, "")
    score = scores[scorer] if isinstance(scores[scorer], dict) else {}
    value = _score(score.get("value"), path, index)
    answer = score.get("answer")
    # "I" with an empty answer: the scorer found no answer to judge (choice() writes "",
    # pattern() nothing), the counterpart of lm-eval's [invalid].
    unparsed = score.get("value") == "I" and (
        (isinstance(answer, str) and not answer.strip()) or (answer is None and answers)
    )
    if unparsed:
        return (index, question, epoch, category, target, completion, n_options, None, "unparsed")
    if isinstance(value, float) and math.isnan(value):
        # A model-graded scorer whose grader gave no grade writes NaN ("grader_failed"): Inspect
        # leaves the sample out of its metrics; here it is a missing prediction of that cause.
        return (index, question, epoch, category, target, completion, n_options, None, "ungraded")
    return (index, question, epoch, category, target, completion, n_options, value, "")
