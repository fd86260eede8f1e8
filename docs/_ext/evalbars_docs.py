"""Sphinx helpers of the evalbars documentation.

- Relative module references in docstrings (``:mod:`.render```) are resolved the way Python
  resolves a relative import: against the docstring's package, not by Sphinx's fuzzy search.
- A Python reference that Sphinx cannot find is looked up by importing it. An evalbars object
  that the reference does not document (a private helper, an undocumented constant) links to
  the page of the module that defines it; an object of another library (numpy, pandas, the
  standard library: no inventory is fetched, the build is offline) is kept as plain text. A
  reference to nothing importable stays a warning, so a stale name still fails ``-n -W``.
- ``.. evalbars-config-schema::`` renders workflow/schemas/config.schema.yaml: every key with
  its type, allowed values, default and description.
- ``.. evalbars-outputs::`` renders the workflow's tables and figures from workflow/rules/*.smk:
  each file, its report section, its caption (workflow/report/*.rst, rendered with the shipped
  config) and, for tables, the columns the workflow's own job functions give on the shipped
  lm-eval example (computed at build time, so the page cannot drift from the code); the
  battles stage's on the shipped table of battles (tests/data/battles/clustered.csv).
"""

from __future__ import annotations

import importlib
import json
import logging as std_logging
import pkgutil
import re
import tempfile
import types
from dataclasses import fields, is_dataclass
from pathlib import Path

import jinja2
import yaml
from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.nodes import make_refnode, nested_parse_with_titles

from evalbars.cli import build_parser
from evalbars.jobs import analysis, battles, claims, data, leaderboard, ranks
from evalbars.jobs.figures import analysis as analysis_figures
from evalbars.jobs.figures import claims as claims_figures
from evalbars.stats import pairwise

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RULES = REPO / "workflow" / "rules"
CAPTIONS = REPO / "workflow" / "report"
CONFIG = REPO / "config" / "config.yaml"
EXAMPLE = REPO / "tests" / "data" / "harness" / "lm_eval"
BATTLES = REPO / "tests" / "data" / "battles" / "clustered.csv"

log = logging.getLogger(__name__)

#: Module aliases used in annotations and numpydoc types.
ALIASES = {"np": "numpy", "pd": "pandas"}


# --- Relative module references ----------------------------------------------------------------

_RELATIVE_MOD = re.compile(r":mod:`(~?)(\.+)([\w.]*)`")


def absolute_module_references(app, what, name, obj, options, lines):
    """Rewrite ``:mod:`.x``` in a docstring of ``name`` as a reference to ``package.x``."""
    module = name if what == "module" else getattr(obj, "__module__", None) or name
    is_package = what == "module" and hasattr(obj, "__path__")
    parts = module.split(".") if is_package else module.split(".")[:-1]

    def absolute(match):
        tilde, dots, rest = match.groups()
        base = parts[: len(parts) - (len(dots) - 1)] if len(dots) > 1 else parts
        target = ".".join([*base, rest] if rest else base)
        return f":mod:`{dots}{rest} <{target}>`" if not tilde else f":mod:`~{target}`"

    lines[:] = [_RELATIVE_MOD.sub(absolute, line) for line in lines]


# --- References Sphinx cannot resolve -----------------------------------------------------------


def _import_object(path: str):
    """The object a dotted path names (a module, or an attribute of one), else None."""
    parts = path.split(".")
    if parts and parts[0] in ALIASES:
        parts[0] = ALIASES[parts[0]]
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # noqa: BLE001 - a module that fails to import names nothing here
            return None, None
        module = ".".join(parts[:cut])
        for attr in parts[cut:]:
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
            elif is_dataclass(obj) and attr in {f.name for f in fields(obj)}:
                obj = None  # a dataclass field without a class-level default
                break
            elif attr in getattr(obj, "__annotations__", {}):
                obj = None
                break
            else:
                return None, None
        return (obj if obj is not None else True), module
    return None, None


def _candidates(target: str, module: str | None, klass: str | None) -> list[str]:
    names = [target]
    if module:
        if klass:
            names.append(f"{module}.{klass}.{target}")
        names.append(f"{module}.{target}")
        parts = module.split(".")
        names += [".".join([*parts[:cut], target]) for cut in range(len(parts) - 1, 0, -1)]
    return names


def resolve_by_import(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    for name in _candidates(target, node.get("py:module"), node.get("py:class")):
        obj, module = _import_object(name)
        if obj is None:
            continue
        if not name.startswith("evalbars"):
            return contnode  # another library's object: it exists; no inventory to link to
        owner = getattr(obj, "__module__", None) if not isinstance(obj, types.ModuleType) else None
        owner = owner if owner and owner.startswith("evalbars") else module
        entry = env.get_domain("py").modules.get(owner)
        if entry is None:
            return None
        return make_refnode(
            app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name
        )
    return None


# --- The command line ---------------------------------------------------------------------------

_RST_MARKUP = re.compile(r"([\\`*_|])")


def _plain(text):
    """Help text as RST that renders as the terminal shows it (no markup)."""
    return _RST_MARKUP.sub(r"\\\1", text) if isinstance(text, str) else text


def _literal_block(text: str) -> str:
    return "::\n\n" + "\n".join(f"   {line}" for line in text.splitlines()) + "\n"


def _for_rst(parser) -> None:
    # The CLI formats descriptions and epilogs itself (RawDescriptionHelpFormatter): epilogs,
    # aligned examples and claim syntax, become literal blocks, the rest plain text.
    if parser.epilog:
        parser.epilog = _literal_block(parser.epilog)
    parser.description = _plain(parser.description)
    for group in parser._action_groups:
        group.description = _plain(group.description)
    for action in parser._actions:
        action.help = _plain(action.help)
        for child in getattr(action, "choices", None) or {}:
            if isinstance(action.choices, dict):
                _for_rst(action.choices[child])


def cli_parser():
    """:func:`evalbars.cli.build_parser`'s parser, its help text made RST for sphinx-argparse
    (the CLI itself is unchanged: this is a fresh parser)."""
    parser = build_parser()
    _for_rst(parser)
    return parser


# --- The config schema ---------------------------------------------------------------------------


def _type_of(spec: dict) -> str:
    if "oneOf" in spec:
        return " or ".join(_type_of(option) for option in spec["oneOf"])
    kind = spec.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    text = " or ".join(kinds)
    if "items" in spec and isinstance(spec["items"], dict) and "oneOf" not in spec["items"]:
        text += f" of {_type_of(spec['items'])}"
    return text


def _allowed(spec: dict) -> str:
    if "oneOf" in spec:
        return "; ".join(filter(None, (_allowed(option) for option in spec["oneOf"])))
    words = []
    if "enum" in spec:
        words.append("one of " + ", ".join(f"``{value}``" for value in spec["enum"]))
    for key, sign in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
        ("minItems", "items >="),
        ("minLength", "length >="),
    ):
        if key in spec:
            words.append(f"{sign} {spec[key]}")
    if "pattern" in spec:
        words.append(f"matches ``{spec['pattern']}``")
    items = spec.get("items")
    if isinstance(items, dict) and "oneOf" not in items:
        inner = _allowed(items)
        if inner:
            words.append(f"each {inner}")
    return ", ".join(words)


def _literal(value) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    text = text.removesuffix("\n...").removesuffix("...").strip()
    return f"``{text}``" if text else "``''``"


def _schema_rows(properties: dict, prefix: str = ""):
    for key, spec in properties.items():
        name = f"{prefix}{key}"
        yield name, spec
        if isinstance(spec.get("properties"), dict):
            yield from _schema_rows(spec["properties"], f"{name}.")
        items = spec.get("items")
        if isinstance(items, dict):
            for option in items.get("oneOf", [items]):
                if isinstance(option.get("properties"), dict):
                    yield from _schema_rows(option["properties"], f"{name}[].")


def schema_rst(schema: dict) -> list[str]:
    lines = []
    for name, spec in _schema_rows(schema["properties"]):
        depth = name.count(".")
        description = " ".join(str(spec.get("description", "")).split())
        lines += [f".. _config-{name.replace('[]', '').replace('.', '-')}:", ""]
        lines += [f"``{name}``", ("^" if depth == 0 else "~") * (len(name) + 4), ""]
        facts = [f"*type* {_type_of(spec)}"]
        if "default" in spec:
            facts.append(f"*default* {_literal(spec['default'])}")
        allowed = _allowed(spec)
        if allowed:
            facts.append(f"*allowed* {allowed}")
        lines += ["| " + "; ".join(facts), ""]
        if description:
            lines += [_escape(description), ""]
    return lines


def _escape(text: str) -> str:
    """Plain schema prose as RST: ``|``, ``*`` and backquotes would be markup."""
    text = re.sub(r"`([^`]+)`", r"``\1``", text)
    out, literal = [], False
    for piece in re.split(r"(``)", text):
        if piece == "``":
            literal = not literal
            out.append(piece)
        elif literal:
            out.append(piece)
        else:
            out.append(re.sub(r"([|*_\\])", r"\\\1", piece))
    return "".join(out)


class ConfigSchema(Directive):
    """Every key of the workflow's config schema."""

    def run(self):
        schema = yaml.safe_load(SCHEMA.read_text())
        return _parse(self, schema_rst(schema), SCHEMA)


# --- The workflow's outputs ----------------------------------------------------------------------

_TABLE = re.compile(
    r"table_outputs\(\s*\"(?P<name>\w+)\",\s*\"(?P<caption>\w+)\",\s*\"(?P<section>[^\"]+)\"(?P<rest>[^)]*)\)"
)
_FIGURE = re.compile(
    r"figure_outputs\(\s*\"(?P<name>\w+)\",\s*\"(?P<caption>\w+)\",\s*\"(?P<section>[^\"]+)\""
)
_REPORT = re.compile(
    r"report\(\s*\"(?P<path>results/[^\"]+)\",\s*caption=\"\.\./report/(?P<caption>\w+)\.rst\","
    r"\s*category=\"(?P<section>[^\"]+)\""
)


def workflow_outputs() -> list[dict]:
    """Every table and figure the rules declare, in rule-file order."""
    found = []
    for rules in sorted(RULES.glob("*.smk")):
        text = rules.read_text()
        for match in _TABLE.finditer(text):
            rest = match["rest"]
            suffixes = [".csv"]
            suffixes += [] if "md=False" in rest else [".md"]
            suffixes += [] if "tex=False" in rest else [".tex"]
            suffixes += [".parquet"] if "parquet=True" in rest else []
            found.append(
                dict(
                    kind="table",
                    name=match["name"],
                    path=f"results/tables/{match['name']}",
                    suffixes=suffixes,
                    caption=match["caption"],
                    section=match["section"],
                    rules=rules.name,
                    at=match.start(),
                )
            )
        for match in _FIGURE.finditer(text):
            found.append(
                dict(
                    kind="figure",
                    name=match["name"],
                    path=f"results/figures/{match['name']}",
                    suffixes=[".png", ".svg"],
                    caption=match["caption"],
                    section=match["section"],
                    rules=rules.name,
                    at=match.start(),
                )
            )
        for match in _REPORT.finditer(text):
            path = Path(match["path"])
            kind = "table" if path.suffix == ".csv" else "page"
            found.append(
                dict(
                    kind=kind,
                    name=path.stem,
                    path=str(path.with_suffix("")),
                    suffixes=[path.suffix],
                    caption=match["caption"],
                    section=match["section"],
                    rules=rules.name,
                    at=match.start(),
                )
            )
    return sorted(found, key=lambda o: (o["section"], o["rules"], o["at"]))


def rendered_caption(name: str, config: dict) -> str:
    template = jinja2.Template((CAPTIONS / f"{name}.rst").read_text())
    return template.render(snakemake=types.SimpleNamespace(config=config), files=[])


#: Names of the job functions' outputs whose file is named otherwise.
RENAMED = {
    "missing": "missing_predictions",
    "coverage": "question_coverage",
    "allocation": "subsample_allocation",
    "item_table": "items",
}


def example_columns(labelled: bool = False) -> dict[str, list[str]]:
    """The columns of every table the workflow's job functions make on the shipped lm-eval
    example (three fake models, 39 questions), by file name; with ``labelled``, on the same
    data with human labels on 20 questions (the judge-corrected columns)."""
    config = yaml.safe_load(CONFIG.read_text())
    quiet = std_logging.getLogger("evalbars")
    level_before, quiet.level = quiet.level, std_logging.ERROR
    columns: dict[str, list[str]] = {}

    def keep(result: dict):
        for key, item in result.items():
            frame = getattr(item, "frame", None)
            if frame is not None and hasattr(frame, "columns"):
                columns[RENAMED.get(key, key)] = [str(c) for c in frame.columns]

    try:
        source = {"path": str(EXAMPLE), "runs": "newest", "id_field": "id"}
        source["category_field"] = "category"
        made = data.items_from_raw(data.read_raw(sources=[source]), question_set="all")
        keep(made)
        table = made["item_table"].frame
        if labelled:
            labelled_questions = sorted(table["question_id"].unique())[:20]
            table["human"] = table["correct"].where(table["question_id"].isin(labelled_questions))
            columns["items"] = [str(c) for c in table.columns]
        keep(data.harness_stderr(table, [source]))
        with tempfile.TemporaryDirectory() as scratch:
            stored = Path(scratch) / "items.parquet"
            table.to_parquet(stored)
            drawn = data.subsample(str(stored), n="all", seed=2024, question_set="all")
        keep(drawn)
        wide = drawn["scores"].wide
        alpha, level = config["alpha"], config["level"]
        keep(analysis.analysis_models(wide, level=level))
        pairs = analysis.pairwise_tests(pairwise.pair_tests(wide), alpha=alpha, wide=wide)
        keep(pairs)
        omnibus = analysis.analysis_omnibus(wide)
        keep(omnibus)
        mixed = analysis.analysis_mixed(wide, method="auto", alpha=alpha)
        keep(mixed)
        logistic = analysis.analysis_logistic(wide, alpha=alpha, max_cells=50_000_000)
        keep(logistic)
        keep(
            analysis.analysis_naive_vs_blocked(
                pairs["pairwise"].frame,
                omnibus["omnibus"].frame,
                mixed["mixed_contrasts"].frame,
                logistic["logistic_contrasts"].frame,
                alpha=alpha,
            )
        )
        if labelled:
            keep(analysis.analysis_judge_corrected(wide, level=level, alpha=alpha))
        contrasts = mixed["mixed_contrasts"].frame
        keep(
            analysis_figures.analysis_logistic_verdicts(
                contrasts[contrasts["model_spec"] == "category_question"],
                logistic["logistic_contrasts"].frame,
                logistic["logistic_fits"].frame,
                alpha=alpha,
            )
        )
        options = config["claims_options"]
        names = sorted(wide.models)
        checked = {"claims": [f"{names[0]} > {names[1]}"], "notes": [], "example": None}
        keep(
            claims.claims_table(
                wide,
                checked,
                alpha=alpha,
                family=options["family"],
                power=options["power"],
                replicates=200,
                seed=config["ranks"]["seed"],
                adjust=options["adjust"],
            )
        )
        keep(
            claims_figures.category_pairwise(
                wide, alpha=alpha, max_models=None, max_systems=config["display"]["max_systems"]
            )
        )
        keep(
            claims.plan_table(
                table,
                checked,
                alpha=alpha,
                power=options["power"],
                gaps=options["plan_gaps"],
                seed=config["simulation"]["seed"],
            )
        )
        rank, board = config["ranks"], config["leaderboard"]
        keep(
            ranks.ranks_table(
                wide,
                level=level,
                draws=1000,
                replicates=200,
                seed=rank["seed"],
                stratify=rank["stratify"],
            )
        )
        keep(
            leaderboard.leaderboard_table(
                wide,
                alpha=alpha,
                level=level,
                power=board["power"],
                splits=10,
                seed=board["seed"],
                top_k=board["top_k"],
            )
        )
        keep(battle_columns(config))
    finally:
        quiet.level = level_before
    return columns


def battle_columns(config: dict) -> dict:
    """The battles stage's jobs on the shipped table of battles (a battles run's tables)."""
    settings = config["battles"]
    made = battles.battles_read(sources=[{"path": str(BATTLES)}], strong_weight=3.0)
    frame, summary = made["battles"].frame, json.loads(made["summary"].text)
    fitted = battles.battles_fit(frame, summary, ties=settings["ties"], cluster="auto",
                                 style=False, bootstrap=50, seed=settings["seed"])  # fmt: skip
    tables = battles.battles_tables(
        frame, summary, fitted["fit"].frame, fitted["draws"].frame, cluster="auto",
        alpha=config["alpha"], level=config["level"], power=0.8, anchor=None,
        anchor_rating=1000.0, seed=settings["seed"],
    )  # fmt: skip
    claimed = battles.battles_claims(
        frame, summary, claims=["model-a > model-b"], alpha=config["alpha"], adjust="holm",
        power=0.8, ties="half", cluster="auto", style=False,
    )  # fmt: skip
    return {"battles_models": made["battles_models"]} | tables | claimed


_COLUMNS: dict = {}


def _example_columns(labelled: bool) -> dict:
    if labelled not in _COLUMNS:
        _COLUMNS[labelled] = example_columns(labelled)
    return _COLUMNS[labelled]


#: Where the columns of the tables the shipped example does not make are defined.
COLUMNS_ELSEWHERE = {
    "replication": "the replication check, which runs on the paper's six models only: see "
    ":func:`evalbars.readings.replication.replication_table`",
    "replication_seeds": "the replication check: see "
    ":func:`evalbars.readings.replication.replication_runs`",
    "precision": "the precision study: see :mod:`evalbars.stats.planning.precision`",
    "questions_needed": "the precision study: see :mod:`evalbars.stats.planning.precision`",
    "leaderboard": "the leaderboard-luck study: see :mod:`evalbars.studies.leaderboard`",
    "fwer": "the family-wise error study: see :mod:`evalbars.studies.fwer`",
    "clustered": "the clustered-questions study: see :mod:`evalbars.studies.clustered`",
    # the repeats stage: made where the data have repeated samples or runs, which the shipped
    # example has not
    "pass_at_k": "the repeats stage, with repeated samples: see "
    ":func:`evalbars.stats.repeats.pass_at_k.pass_at_k_curve` (``model, k, estimate, ci_low, "
    "ci_high, questions, se, df, clusters, clustered_by``)",
    "passk_curve": "the repeats stage, with repeated samples: see "
    ":func:`evalbars.stats.repeats.passk_band.passk_difference_band`, with ``band``, "
    "``critical_value``, ``category`` and ``source``",
    "sampling_plan": "the repeats stage, with repeated samples: see "
    ":func:`evalbars.stats.planning.samples.sampling_plan_table` (SEs in points)",
    "run_variance": "the repeats stage, with two or more runs: see "
    ":func:`evalbars.stats.repeats.run_variance.run_variance_table`",
    "run_aware": "the repeats stage, with two or more runs: see "
    ":func:`evalbars.readings.repeats.run_readings`",
    "run_signs": "the repeats stage, with two or more runs: see "
    ":func:`evalbars.readings.repeats.run_readings`",
    "cost": "the cost readings, made where the run has costs (a price table, or a cost "
    "column): :data:`evalbars.readings.leaderboard.cost.COST_COLUMNS`",
    "frontier": "the cost readings, made where the run has costs: "
    ":data:`evalbars.readings.leaderboard.cost.FRONTIER_COLUMNS`",
}


class WorkflowOutputs(Directive):
    """Every table and figure the workflow writes, with captions and columns."""

    option_spec = {"kind": directives.unchanged}

    def run(self):
        kinds = set((self.options.get("kind") or "table figure page").split())
        config = yaml.safe_load(CONFIG.read_text())
        plain = _example_columns(False) if "table" in kinds else {}
        labelled = _example_columns(True) if "table" in kinds else {}
        lines = []
        section = None
        for output in workflow_outputs():
            if output["kind"] not in kinds:
                continue
            if output["section"] != section:
                section = output["section"]
                lines += [section, "-" * len(section), ""]
            files = ", ".join(f"``{output['path']}{suffix}``" for suffix in output["suffixes"])
            title = f"``{output['name']}``"
            target = f"{output['path']}{output['suffixes'][0]}".replace("/", "-").replace(".", "-")
            lines += [f".. _{target}:", "", title, "^" * len(title), ""]
            lines += [
                f"| {files}",
                f"| rule file ``workflow/rules/{output['rules']}``; caption "
                f"``workflow/report/{output['caption']}.rst``",
                "",
            ]
            caption = rendered_caption(output["caption"], config).strip()
            if caption:
                lines += caption.splitlines() + [""]
            if output["kind"] == "table":
                lines += _columns_rst(output, plain, labelled)
        return _parse(self, lines, RULES)


def _listing(names) -> str:
    return ", ".join(f"``{name}``" for name in names)


def _columns_rst(output: dict, plain: dict, labelled: dict) -> list[str]:
    name = output["name"]
    in_tables = output["path"].startswith("results/tables/")
    if in_tables and name in plain:
        lines = [f"**Columns:** {_listing(plain[name])}.", ""]
        extra = [c for c in labelled.get(name, []) if c not in plain[name]]
        if extra:
            lines += [f"**With human labels, also:** {_listing(extra)}.", ""]
        return lines
    if in_tables and name in labelled:
        return [f"**Columns** (runs with human labels only): {_listing(labelled[name])}.", ""]
    if name in COLUMNS_ELSEWHERE:
        return [f"**Columns:** written by {COLUMNS_ELSEWHERE[name]}.", ""]
    log.warning("evalbars-outputs: no columns known for %s", output["path"])
    return []


# --- Modules, one section each -------------------------------------------------------------------


def package_modules(package: str) -> list[str]:
    """``package`` and every module below it, package first, in name order."""
    root = importlib.import_module(package)
    names = [package]
    if hasattr(root, "__path__"):
        names += sorted(
            info.name
            for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
            if not info.name.rsplit(".", 1)[-1].startswith("_")
        )
    return names


class Modules(Directive):
    """``.. evalbars-modules:: NAME ...``: a section per module, its docstring and its members
    (autodoc), for each NAME and the modules below it (``:exclude:`` leaves some out, with the
    modules below them; ``:no-recurse:`` documents each NAME alone; ``:no-members:`` shows the
    docstrings only)."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {
        "exclude": directives.unchanged,
        "no-members": directives.flag,
        "no-recurse": directives.flag,
    }

    def run(self):
        excluded = (self.options.get("exclude") or "").split()
        lines = []
        for package in self.arguments[0].split():
            names = [package] if "no-recurse" in self.options else package_modules(package)
            for name in names:
                if any(name == e or name.startswith(f"{e}.") for e in excluded):
                    continue
                title = f"``{name}``"
                lines += [title, "=" * len(title), "", f".. automodule:: {name}"]
                # What the module defines, not what its __all__ re-exports from its submodules
                # (each is documented with its own module).
                lines += ["   :ignore-module-all:"]
                if "no-members" in self.options:
                    lines += ["   :no-members:"]
                lines += [""]
        return _parse(self, lines, Path(self.state.document.current_source or "modules"))


def check_every_module(app, env):
    """Every module of the package has its section somewhere (a new module must be placed)."""
    documented = set(env.get_domain("py").modules)
    for name in package_modules("evalbars"):
        if name not in documented:
            log.warning("module %s is documented on no page (docs/methods, docs/reference)", name)


# --- Shared ---------------------------------------------------------------------------------------


def _parse(directive: Directive, lines: list[str], source: Path):
    container = nodes.container()
    content = StringList(lines, source=str(source))
    nested_parse_with_titles(directive.state, content, container)
    return container.children


def setup(app):
    app.connect("autodoc-process-docstring", absolute_module_references)
    app.connect("missing-reference", resolve_by_import)
    app.add_directive("evalbars-config-schema", ConfigSchema)
    app.add_directive("evalbars-outputs", WorkflowOutputs)
    app.add_directive("evalbars-modules", Modules)
    app.connect("env-check-consistency", check_every_module)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
