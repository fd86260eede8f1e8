"""Functions of the workflow configuration, called while Snakemake builds the DAG.

``workflow/rules/common.smk`` calls these; they live in the package (not in the
rule files) so that they are unit-tested like the statistics. Named ``smk`` so
that it never shadows Snakemake's own ``workflow`` object inside rule files.
The jobs' side (reading a rule's inputs, one clear line per user error) is
:mod:`evalbars.jobs.run`.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import yaml

from evalbars.data.fetch import archive_name, model_from_archive, pinned_checksums
from evalbars.data.labels import tables_carry_labels
from evalbars.data.prices import tables_carry_costs
from evalbars.data.readers.shape import SourceShape, probe_sources
from evalbars.errors import ConfigError
from evalbars.jobs.registry import JOBS
from evalbars.readings.paper import EXAMPLE_CLAIMS, PAPER_MODELS, PAPER_SUBSAMPLE_SIZE
from evalbars.units import points_hint

__all__ = [
    "ConfigError",
    "archives",
    "archive_checksum",
    "prediction_sources",
    "source_files",
    "replication_applies",
    "labelled_run",
    "ITEM_STAGES",
    "battles_run",
    "run_stages",
    "source_shape",
    "costed_run",
    "RunChoices",
    "run_choices",
    "package_files",
    "job_code",
    "stage_member",
    "storage_mode",
    "check_grid",
    "check_unique_keys",
    "refuse_templating",
    "stale_lock_hint",
    "validate_config",
]


def archives(config: dict) -> dict:
    """``{archive file name: model}`` for the configured MMLU-Pro models.

    Raises :class:`ConfigError` for a model whose archive has no pinned checksum.
    """
    known = pinned_checksums(config.get("checksums"))
    selected = {archive_name(model): model for model in config.get("models", [])}
    unknown = [f"{model} ({name})" for name, model in selected.items() if name not in known]
    if unknown:
        available = sorted(filter(None, map(model_from_archive, known)))
        raise ConfigError(
            f"no pinned checksum for {', '.join(unknown)}. Models with pinned checksums: "
            f"{', '.join(available)}. For another upstream archive, add its sha256 under "
            "`checksums:` in config/config.yaml after checking the file yourself."
        )
    return selected


def archive_checksum(config: dict, name: str) -> str:
    """Pinned sha256 of archive ``name``."""
    return pinned_checksums(config.get("checksums"))[name]


def prediction_sources(config: dict) -> list[dict]:
    """The user's predictions entries as dicts with a ``path`` and the reader's options.

    A plain string entry is ``{"path": entry}``; a mapping keeps its keys (see
    :class:`evalbars.data.readers.SourceOptions`), ``path`` first and the others sorted: the item
    table's job takes these as params, and Snakemake compares params in order, so the same
    options written in another order (by hand, or by ``evalbars report`` and
    ``evalbars.api.write_report``) must not rerun the whole workflow. Raises
    :class:`ConfigError` when neither ``models`` nor ``predictions`` is given.
    """
    sources = [
        {"path": str(entry)}
        if isinstance(entry, (str, Path))
        else {"path": str(entry["path"])}
        | {key: entry[key] for key in sorted(entry) if key != "path"}
        for entry in config.get("predictions", [])
    ]
    if not sources and not config.get("models"):
        raise ConfigError("nothing to analyse: set `models:` and/or `predictions:` in the config")
    return sources


def source_files(sources: list[dict]) -> list[str]:
    """Every file the entries name: a file itself, every file under a directory (sorted).

    The item table lists them as inputs, so that a log added to a directory, or
    edited, rebuilds it. A name with a brace is refused (:class:`ConfigError`): Snakemake
    reads braces as wildcards and has no escape for input files given by a function. A path that does not exist is listed as it is, and the
    item table job then says so in one line.
    """
    files = []
    for source in sources:
        path = Path(source["path"])
        if path.is_dir():
            files += sorted(str(p) for p in path.rglob("*") if p.is_file())
        else:
            files.append(str(path))
    braced = next((name for name in files if "{" in name or "}" in name), None)
    if braced is not None:
        raise ConfigError(
            f"{braced}: a file name with {{ or }} cannot be read by the workflow (Snakemake reads "
            "braces in file names as wildcards, and takes no literal ones); rename the file or "
            "its folder"
        )
    return files


#: The stages that read item-level scores: a battles run makes its battles stage instead.
ITEM_STAGES = ("data", "analysis", "replication", "ranks", "claims", "repeats", "leaderboard")


def battles_run(config: dict) -> bool:
    """Whether the run analyses pairwise battles (``data: battles``): its ``predictions`` are
    battle files, read by the battles stage (``workflow/rules/battles.smk``).

    Examples
    --------
    >>> battles_run({"data": "battles"}), battles_run({})
    (True, False)
    """
    return config.get("data", "scores") == "battles"


def run_stages(config: dict) -> list[str]:
    """The stages the default target makes: ``run.stages``, where in a battles run the battles
    stage stands in for every stage that reads item-level scores (:data:`ITEM_STAGES`), so that
    the shipped stage list makes the battles stage; the simulation studies read no data and
    stay as listed.

    Examples
    --------
    >>> run_stages({"data": "battles", "run": {"stages": ["data", "analysis", "simulations"]}})
    ['battles', 'simulations']
    >>> run_stages({"run": {"stages": ["data", "ranks"]}})
    ['data', 'ranks']
    """
    stages = list(config["run"]["stages"])
    if not battles_run(config):
        return stages
    kept = [stage for stage in stages if stage not in ITEM_STAGES and stage != "battles"]
    reads = "battles" in stages or len(kept) < len(stages)
    return (["battles"] if reads else []) + kept


def labelled_run(config: dict, sources: list[dict]) -> bool:
    """Whether the run has human labels: a ``labels:`` file, or a long table of predictions
    with a ``human`` column (read from its header alone). The judge-corrected table is then
    one of the run's outputs; every other table gains its corrected columns or rows from the
    data themselves. A battles run has none."""
    if battles_run(config):
        return False
    if config.get("labels"):
        return True
    return tables_carry_labels(source_files(sources))


def source_shape(config: dict, sources: list[dict]) -> SourceShape:
    """Whether the run's data hold repeated samples of a question and several runs of a model
    (:func:`evalbars.data.readers.shape.probe_sources`, from the sources' headers): the repeats
    stage's tables are then among the run's outputs (``pass_at_k.csv``, the pass@k curves and
    the sampling plan with samples; ``run_variance.csv``, ``run_aware.csv`` and
    ``run_signs.csv`` with runs). A ``score:`` over k samples (``pass@5``) asks for samples
    too. MMLU-Pro's archives hold one sample of each question.

    Examples
    --------
    >>> source_shape({"score": "pass@5"}, [])
    SourceShape(samples=True, runs=False)
    """
    shape = probe_sources(sources) if sources else SourceShape()
    if config.get("score", "mean") != "mean":
        shape |= SourceShape(samples=True)
    return shape


def costed_run(config: dict, sources: list[dict]) -> bool:
    """Whether the run has costs: a price table (``prices:``), or a long table of predictions
    with a ``cost`` column (read from its header alone). The cost table, the frontier and its
    figure are then among the run's outputs (:func:`evalbars.jobs.leaderboard.costs`)."""
    if config.get("prices"):
        return True
    return tables_carry_costs(source_files(sources))


def replication_applies(config: dict) -> bool:
    """Whether the replication check against the paper's numbers makes sense for ``config``.

    It does when the data are the paper's: exactly its six MMLU-Pro models, no
    prediction files of the user's, and missing predictions re-scorable (any
    policy but ``exclude``, which drops them from the item table).
    """
    return paper_data(config) and config.get("missing_prediction", "wrong") != "exclude"


def paper_data(config: dict) -> bool:
    """Whether the configured data are the paper's: exactly its six MMLU-Pro models and no
    prediction files of the user's."""
    return sorted(config.get("models", [])) == sorted(PAPER_MODELS) and not config.get(
        "predictions"
    )


@dataclass(frozen=True)
class RunChoices:
    """Settings the workflow fits to the data, and why.

    Attributes
    ----------
    subsample_size : int or "all"
        Questions the subsample keeps (``subsample.n`` with ``auto`` resolved).
    claims : list of str
        The claims the claims stage tests.
    notes : list of str
        One sentence per setting that was fitted to the data, for the report's first screen
        and the console.
    """

    subsample_size: int | str
    claims: list
    notes: list


def run_choices(config: dict) -> RunChoices:
    """Resolve the settings whose shipped values are the paper's, so that they are no trap on
    other data.

    ``subsample.n: auto`` (the shipped value) is the paper's 1,497 questions on the paper's
    data and every question on any other data. The shipped example claims
    (:data:`evalbars.readings.paper.EXAMPLE_CLAIMS`) name the paper's models: on other data they are
    not tested, and the report says how to state claims about the analysed models. Any other
    value is used as given.
    """
    paper = paper_data(config)
    notes = []
    size = config.get("subsample", {}).get("n", "auto")
    if size == "auto":
        size = PAPER_SUBSAMPLE_SIZE if paper else "all"
        if not paper and not battles_run(config):
            notes.append(
                "Every question is used: `subsample.n: auto` draws the paper's "
                f"{PAPER_SUBSAMPLE_SIZE:,}-question subsample only from the paper's six MMLU-Pro "
                "models (set `subsample.n` to a number to draw a subsample)."
            )
    claims = list(config.get("claims", []))
    if not paper and claims and sorted(claims) == sorted(EXAMPLE_CLAIMS):
        claims = []
        notes.append(
            "No claims tested: the shipped example claims name the paper's models; list yours "
            "under `claims:` in the config (or pass `--claim` to `evalbars report`)."
        )
    return RunChoices(subsample_size=size, claims=claims, notes=notes)


def _imported_package_modules(path: Path, package_root: Path) -> set[Path]:
    """Files of the package that one Python file imports directly (absolute or relative)."""
    stat = path.stat()
    # Every rule's inputs walk the same modules: read each file once per process (and again
    # only if it changed, by modification time and size).
    return set(_imports_of(path, package_root, stat.st_mtime_ns, stat.st_size))


#: A line that starts an import statement (after its indentation): ``import a`` or
#: ``from a import b``, the relative ``from . import b`` and ``from .a import b`` included.
_IMPORT_LINE = re.compile(r"[ \t]*(?:import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import\b)")
#: The most lines one import statement is looked for in (one name a line, in parentheses).
_IMPORT_LINES = 200


def _import_statements(text: str) -> list[ast.stmt]:
    """The import statements of a Python source ``text``, each parsed on its own.

    Parsing a whole module to find its imports is most of the time the DAG build spends on the
    rules' code inputs (0.9 s for the package's 190 modules): only the lines that start an import
    are parsed here, each with as many of the lines after it as it needs to parse (a
    parenthesised list of names, a backslash). An import that shares a line with another
    statement (``try: import a``) is not seen; the package's formatting never writes one, and a
    test holds the result equal to a whole parse of every module. Code in a string that reads
    like an import counts as one (a rule gets an input too many, never one too few).

    Examples
    --------
    >>> [ast.unparse(node) for node in _import_statements("import a\\nfrom .b import (c,\\n  d)")]
    ['import a', 'from .b import c, d']
    """
    lines = text.splitlines()
    statements = []
    for first in (n for n, line in enumerate(lines) if _IMPORT_LINE.match(line)):
        for last in range(first, min(first + _IMPORT_LINES, len(lines))):
            try:
                statements += ast.parse("\n".join(lines[first : last + 1]).strip()).body
                break
            except SyntaxError:  # not complete yet, or prose that only starts like an import
                continue
    return [node for node in statements if isinstance(node, ast.Import | ast.ImportFrom)]


@functools.lru_cache(maxsize=None)
def _imports_of(path: Path, package_root: Path, mtime_ns: int, size: int) -> frozenset[Path]:
    """:func:`_imported_package_modules` of ``path`` as it is at ``mtime_ns`` and ``size``."""
    if path.is_relative_to(package_root):
        # A module's own package, as a dotted path relative to the package root's parent.
        here = path.parent.relative_to(package_root.parent).parts
    else:
        here = ()
    names = []
    for node in _import_statements(path.read_text()):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(here[: len(here) - node.level + 1]) if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            names.append(".".join(module))
            # `from evalbars import mixed` imports the module evalbars.stats.mixed
            names += [".".join([*module, alias.name]) for alias in node.names]
    # Importing a.b.c runs a/__init__.py, a/b/__init__.py and a/b/c(.py | /__init__.py).
    stems = {
        tuple(parts[:depth])
        for parts in (name.split(".") for name in names)
        if parts[0] == package_root.name
        for depth in range(1, len(parts) + 1)
    }
    files = set()
    for stem in (package_root.parent.joinpath(*parts) for parts in stems):
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                files.add(candidate)
    return frozenset(files)


def package_files(script, package_root=None) -> list[str]:
    """Every file of the evalbars package that ``script`` imports, directly or not.

    A rule lists these as inputs, so that editing a module reruns exactly the
    jobs whose code imports it (Snakemake's own ``code`` trigger covers only the
    script file itself). Imports are read statically with :mod:`ast`, the way
    Python resolves them: ``from evalbars import mixed`` and ``from .scores
    import WideScores`` both count, and importing a module also runs its
    packages' ``__init__.py``.

    Returns
    -------
    list of str
        Sorted paths (absolute).
    """
    package_root = Path(package_root or Path(__file__).resolve().parents[1])
    pending = [Path(script).resolve()]
    seen: set[Path] = set()
    while pending:
        found = _imported_package_modules(pending.pop(), package_root) - seen
        seen |= found
        pending += sorted(found)
    return sorted(str(path) for path in seen)


def job_code(rule: str, adapter, package_root=None) -> list[str]:
    """The code a rule's job runs: the module of its job (:data:`evalbars.jobs.registry.JOBS`),
    every file of the package that module imports, and what the ``adapter`` script imports
    (:func:`package_files`).

    A rule lists these as inputs, so that an edit of its job's module, or of a module that
    module imports, reruns it and no other job. The registry itself is left out: it names
    modules only, and a rule that moves to another module gets that module's files as inputs,
    which reruns it; a new rule in it reruns nothing.

    Returns
    -------
    list of str
        Sorted paths (absolute).
    """
    package_root = Path(package_root or Path(__file__).resolve().parents[1])
    module = package_root.parent.joinpath(*JOBS[rule].split(".")).with_suffix(".py")
    registry = package_root / "jobs" / "registry.py"
    files = {
        str(module),
        *package_files(module, package_root),
        *package_files(adapter, package_root),
    }
    return sorted(files - {str(registry)})


def _plain(value):
    """A rule's file or value as plain Python (lists of paths stay lists)."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def stage_member(rule) -> dict:
    """What :func:`evalbars.jobs.run.run_stage` needs of one rule of a stage (a Snakemake
    ``rules.<name>`` proxy, config ``jobs: per_stage``): its name, and its named inputs,
    outputs and params, and its log, as plain values."""
    return {
        "rule": rule.rule.name,
        "input": {name: _plain(value) for name, value in rule.input.items() if name},
        "output": {name: _plain(value) for name, value in rule.output.items() if name},
        "params": {name: _plain(value) for name, value in rule.params.items() if name},
        "log": [str(path) for path in rule.log],
    }


def storage_mode(storage_settings) -> str | None:
    """Where the jobs of a run with a default storage provider read files that are not the
    run's: None without one, ``"shared"`` where they share this machine's file system (the
    local executor, a cluster with a shared file system), ``"isolated"`` where they do not
    (Kubernetes and the cloud batch executors, ``--shared-fs-usage none``).

    The workflow flags the user's files and evalbars' modules ``local(...)`` under a default
    storage provider, so that they are read where they are rather than looked up in the bucket.
    Snakemake runs a job with a ``local(...)`` input on the submitting machine when jobs share
    no file system: right for the item table's jobs, which read the user's files, but it would
    keep every job there if evalbars' modules were inputs. ``"isolated"`` drops them: each job
    runs the evalbars of its container.

    Parameters
    ----------
    storage_settings
        Snakemake's storage settings (``workflow.storage_settings``): its
        ``default_storage_provider`` and ``shared_fs_usage``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> storage_mode(SimpleNamespace(default_storage_provider=None, shared_fs_usage=set()))
    >>> storage_mode(SimpleNamespace(default_storage_provider="s3", shared_fs_usage=set()))
    'isolated'
    """
    if getattr(storage_settings, "default_storage_provider", None) is None:
        return None
    usage = {getattr(item, "name", str(item)).lower() for item in storage_settings.shared_fs_usage}
    return "shared" if "input_output" in usage else "isolated"


def stale_lock_hint(directory=".") -> str | None:
    """The remedy for a lock left in ``directory`` by a run that was killed, or None.

    Snakemake locks the run directory (``.snakemake/locks``) for as long as a run
    lasts; a run killed outright (SIGKILL, a power loss) leaves the lock behind,
    and every later run then stops with Snakemake's ``LockException`` until one run
    with ``--unlock``. The Snakefile prints this line first, so that the command to
    type is on screen beside Snakemake's own message.
    """
    locks = Path(directory) / ".snakemake" / "locks"
    if not locks.is_dir() or not any(locks.iterdir()):
        return None
    return (
        f"{Path(directory).resolve()} holds a Snakemake lock (.snakemake/locks) of another run or "
        "of one that was killed: if this run stops with LockException and no other is running, "
        "add --unlock to the same command once, then run it again"
    )


def validate_config(
    config: dict, schema_path, exit_on_error: bool = False, config_files=()
) -> dict:
    """Check ``config`` against the JSON schema at ``schema_path`` and fill in its defaults.

    First each of ``config_files`` (the files Snakemake merged into ``config``: the
    Snakefile's ``configfile:`` and every ``--configfile``) is checked for a key given
    twice in one mapping (:func:`check_unique_keys`), which the YAML loader would have
    resolved by keeping the last value without a word. After the schema, the values it
    cannot judge: a ``claims_options.plan_gaps`` entry under 1 point is refused as a
    likely proportion (:func:`evalbars.units.points_hint`) unless
    ``claims_options.small_gaps`` is true, as ``evalbars plan --gap`` refuses one
    without ``--small-gap``.

    The defaults are set exactly as :func:`snakemake.utils.validate` sets them (a
    Draft 2020-12 validator whose ``properties`` keyword first sets every missing
    property that has a ``default``; here only inside mappings, where Snakemake's
    crashes on a value of another type), so a valid config comes out the same. An
    invalid one raises :class:`ConfigError` with one line for the most relevant
    error (:func:`jsonschema.exceptions.best_match`): the key by its path
    (``subsample.n``, ``predictions[0].format``), the value and what is allowed, or,
    for a key the schema does not know, the closest valid key (:mod:`difflib`).
    With ``exit_on_error`` (the Snakefile's call) that line is printed as
    ``evalbars: <line>`` and the process exits with status 1, so that it is the
    last thing the user reads, not the traceback Snakemake adds to an exception
    raised while it reads the rule files.
    """
    schema = yaml.safe_load(Path(schema_path).read_text())
    base = jsonschema.Draft202012Validator
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        # (a value that is not a mapping gets none: the type error names it)
        for name, child in properties.items() if isinstance(instance, dict) else ():
            if "default" in child:
                instance.setdefault(name, child["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    validator = jsonschema.validators.extend(base, {"properties": set_defaults})(schema)
    try:
        for path in config_files:
            check_unique_keys(path)
        errors = list(validator.iter_errors(config))
        if errors:
            raise ConfigError(_config_error_line(jsonschema.exceptions.best_match(errors)))
        _check_plan_gaps(config)
        _check_data_kind(config)
    except ConfigError as exc:
        if exit_on_error:
            sys.exit(f"evalbars: {exc}")
        raise
    return config


def refuse_templating(path) -> None:
    """Refuse a configuration (or profile) file that switches on YTE templating.

    Snakemake processes a config whose top level sets ``__use_yte__: true`` as a YTE template:
    its ``?`` expressions are Python, evaluated as the file is loaded, in a dry run too. A
    config shared with a paper is data, so evalbars refuses the key before Snakemake sees the
    file (the file is read with PyYAML's safe loader, which runs nothing). Raises
    :class:`~evalbars.errors.ConfigError`.
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return  # Snakemake's own message says what is wrong with the file
    if isinstance(document, dict) and "__use_yte__" in document:
        raise ConfigError(
            f"{path}: `__use_yte__` asks Snakemake to evaluate the file as a YTE template "
            "(Python expressions run as it is read); evalbars reads configurations as data: "
            "remove the key"
        )


def check_unique_keys(path) -> None:
    """Refuse a YAML (or JSON) file whose mapping names a key twice, in one line: the file,
    the line (1-based) of the second key, the key by its path, and the line of the first.

    PyYAML, which Snakemake loads config files with, keeps the last of two equal keys
    and drops the first without a word (``alpha: 0.01`` then, lower down, ``alpha: 0.05``
    runs at 0.05). A file that does not parse is left to the loader's own message.
    """
    path = Path(path)
    try:
        loader = yaml.SafeLoader(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return
    repeats = []  # (line, key path, first line)
    try:
        root = loader.get_single_node()
        nodes = [(root, "")]
        while nodes:
            node, where = nodes.pop()
            if isinstance(node, yaml.SequenceNode):
                nodes += [(item, f"{where}[{i}]") for i, item in enumerate(node.value)]
                continue
            if not isinstance(node, yaml.MappingNode):
                continue
            seen = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = loader.construct_object(key_node)
                name = f"{where}.{key}" if where else str(key)
                line = key_node.start_mark.line + 1
                if key_node.tag != "tag:yaml.org,2002:merge" and key in seen:
                    repeats.append((line, name, seen[key]))
                seen.setdefault(key, line)
                nodes.append((value_node, name))
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()
    if repeats:
        line, name, first = min(repeats)  # the first in the file
        raise ConfigError(
            f"{path}, line {line}: key `{name}` is given twice (first on line {first}); YAML "
            "would keep only the last value: remove one"
        )


def _check_plan_gaps(config: dict) -> None:
    """Refuse a planning gap under 1 point unless small gaps are asked for (see
    :func:`validate_config`)."""
    options = config.get("claims_options")
    if not isinstance(options, dict) or options.get("small_gaps"):
        return
    for gap in options.get("plan_gaps") or ():
        hint = points_hint(gap)
        if hint:
            raise ConfigError(
                f"config key `claims_options.plan_gaps`: {gap:g} is {gap:g} points; {hint} "
                "(gaps are accuracy points; set `claims_options.small_gaps: true` to plan for a "
                "gap under 1 point)"
            )


def _check_data_kind(config: dict) -> None:
    """Refuse settings that do not fit what the data are (``data``): MMLU-Pro ``models`` in a
    battles run (its data are the battle files under ``predictions``), the battles stage on
    item-level scores, a human ``labels`` file on battles."""
    if "run" not in config or not isinstance(config.get("run"), dict):
        return
    stages = config["run"].get("stages") or []
    if not battles_run(config):
        if "battles" in stages:
            raise ConfigError(
                "config key `run.stages`: the battles stage reads pairwise battles; set "
                "`data: battles` (its files under `predictions`) or remove it"
            )
        return
    for key, what in (("models", "MMLU-Pro archives of item-level scores"),
                      ("labels", "human labels of item-level scores")):  # fmt: skip
        if config.get(key):
            raise ConfigError(
                f"config key `{key}`: a battles run (`data: battles`) reads the battle files "
                f"under `predictions`, and `{key}` names {what}: remove it"
            )


def check_grid(path, schema_path, key: str, *, configured=None) -> list[dict]:
    """The rows of a simulation grid (a TSV file), each checked against the grid's schema.

    Raises :class:`ConfigError` with one line: the config ``key`` and the path when the file
    does not exist or cannot be read, else the file, the row (1-based) and the problem, as
    :func:`validate_config` words it (``spred`` does not exist; did you mean ``spread``?).
    ``configured`` is the path as the config gives it, for the message.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"config key `{key}`: grid file {str(configured or path)!r} does not exist (looked "
            "in the run directory and beside the Snakefile)"
        )
    lines = path.read_text().splitlines()
    if not lines:
        raise ConfigError(f"{path}: the grid is empty (a header row of parameter names first)")
    header = lines[0].split("\t")
    rows = []
    for number, line in enumerate(lines[1:], start=1):
        values = line.split("\t")
        if len(values) != len(header):
            raise ConfigError(
                f"{path}, row {number}: {len(values)} tab-separated values for {len(header)} "
                "columns"
            )
        row = {name: yaml.safe_load(value) for name, value in zip(header, values, strict=True)}
        try:
            validate_config(row, schema_path)
        except ConfigError as exc:
            raise ConfigError(f"{path}, row {number}: {exc}") from None
        rows.append(row)
    return rows


def _key_path(path) -> str:
    """``subsample.n``, ``predictions[0].format``: a key's path as the YAML reads it."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _allowed(schema: dict) -> str:
    """What a schema allows, in words: ``an integer >= 1, 'all' or 'auto'``."""
    if "enum" in schema and "oneOf" not in schema and "anyOf" not in schema:
        return "one of " + ", ".join(map(repr, schema["enum"]))
    choices = _alternatives(schema)
    return choices[0] if len(choices) == 1 else f"{', '.join(choices[:-1])} or {choices[-1]}"


def _alternatives(schema: dict) -> list[str]:
    """The alternatives a schema allows, each in words (a oneOf's and an enum's flattened)."""
    if "oneOf" in schema or "anyOf" in schema:
        options = schema.get("oneOf", schema.get("anyOf"))
        return [text for option in options for text in _alternatives(option)]
    if "const" in schema:
        return [repr(schema["const"])]
    if "enum" in schema:
        return [repr(value) for value in schema["enum"]]
    return [_described(schema)]


def _bound(value) -> str:
    """A schema bound in words: whole numbers with thousands separators (1,000,000, not 1e+06)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _described(schema: dict) -> str:
    """One type with its bounds: ``an integer >= 1``, ``a number > 0 and < 1``."""
    kinds = schema.get("type", "a value")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    article = {"integer": "an integer", "array": "a list", "object": "a mapping"}
    words = " or ".join(article.get(kind, f"a {kind}") for kind in kinds)
    bounds = [
        f"{sign} {_bound(schema[key])}"
        for key, sign in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        )
        if key in schema
    ]
    if "minLength" in schema:
        bounds.append(f"of at least {schema['minLength']} character(s)")
    if "minItems" in schema:
        bounds.append(f"of at least {schema['minItems']} item(s)")
    if "pattern" in schema:
        bounds.append(f"matching {schema['pattern']}")
    return " ".join([words, " and ".join(bounds)]) if bounds else words


def _config_error_line(error) -> str:
    """One line for a jsonschema ValidationError of the config."""
    # Into a oneOf's branch for this kind of value: a mapping's unknown or missing key.
    while error.validator in ("oneOf", "anyOf") and isinstance(error.instance, (dict, list)):
        relevant = [e for e in error.context if e.validator != "type"]
        if not relevant:
            break
        order = {"additionalProperties": 0, "required": 1}
        error = min(relevant, key=lambda e: order.get(e.validator, 2))
    where = _key_path(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        unknown = [key for key in error.instance if key not in known]
        key = unknown[0]
        path = f"{where}.{key}" if where else str(key)
        close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
        hint = f"; did you mean `{(where + '.') if where else ''}{close[0]}`?" if close else ""
        valid = f" (valid keys{' of `' + where + '`' if where else ''}: {', '.join(known)})"
        return f"config key `{path}` does not exist{hint}" + ("" if close else valid)
    if error.validator == "required":
        return f"config key `{where or 'config'}`: {error.message}"
    if error.validator == "uniqueItems":
        seen, repeated = [], None
        for item in error.instance:
            if item in seen:
                repeated = item
                break
            seen.append(item)
        return f"config key `{where or 'config'}`: {json.dumps(repeated)} is listed twice"
    # the property's whole schema (a oneOf's alternatives), not just the branch that failed
    while error.parent is not None and list(error.parent.absolute_path) == list(
        error.absolute_path
    ):
        error = error.parent
    value = json.dumps(error.instance, default=str)
    return f"config key `{where or 'config'}`: {value} is not allowed; allowed: {_allowed(error.schema)}"
