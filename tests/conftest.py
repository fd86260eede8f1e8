"""Shared fixtures and the test tiers: where the MMLU-Pro archives come from, the default item
tables, and which tests a run selects.

Tiers. A test's tier is the most demanding of its markers: ``slurm`` (a one-node SLURM cluster,
tests/cluster/), else ``workflow`` (a Snakemake run or an ``evalbars`` process, tests/workflow/),
else ``realdata`` (the MMLU-Pro archives, tests/realdata/), else the default tier (tests/unit/,
which mirrors the package: tests/unit/<room>/test_<module>.py, and tests/unit/package/ for the
checks of the whole package). ``uv run pytest`` runs the default tier alone: hermetic, one
process, no Snakemake, no network, no mirror. ``--run-workflow``, ``--run-realdata`` and
``--run-slurm`` add a tier each and ``--all`` adds every one; tests of tiers not asked for are
deselected (not skipped), so the summary of a run counts only what it was asked to run. Files
under tests/workflow/, tests/cluster/ and tests/realdata/ carry their folder's marker, and a test
under tests/unit/ of another tier stops the collection with a line naming it and its folder.

While a default-tier test runs, starting Snakemake or ``evalbars`` as a process, connecting
beyond the loopback interface and opening the development mirror fail the test with a line
saying which tier it belongs to (:func:`_hermetic`).

Real-data tests never skip: the archives come from ``$EVALBARS_MIRROR`` if set, else
the development mirror beside the repository (``../shared/mmlu-pro/eval_results``),
else upstream; a failure to get them fails the test. Every test that uses the archive
fixtures is marked ``realdata`` here. :func:`mirror_location` is the
one place that knows the development mirror; the package itself knows only
``$EVALBARS_MIRROR``, the config's ``mirror`` and upstream.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import yaml

matplotlib.use("Agg")

from evalbars.data import fetch, items, readers, sampling
from evalbars.data.scores import wide_scores  # noqa: E402
from evalbars.pipeline import smk  # noqa: E402

from .reference.r_results import R_RESULTS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
SHARED_MIRROR = REPO.parent / "shared" / "mmlu-pro" / "eval_results"

DEFAULT_CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
#: The paper's six models and the default subsample, read from config/config.yaml.
DEFAULT_MODELS = DEFAULT_CONFIG["models"]
#: `subsample.n: auto` resolved as the workflow resolves it: the paper's 1,497 on its six models.
DEFAULT_SUBSAMPLE = {
    "n": smk.run_choices(DEFAULT_CONFIG).subsample_size,
    "seed": DEFAULT_CONFIG["subsample"]["seed"],
}


#: Test files that run the workflow, longest first (paths below tests/): collected first, so
#: that the two workers (`pytest -n 2 --dist loadfile --no-loadscope-reorder`, as .ci/run runs
#: the suite) start on them, and the SLURM test, which mostly waits for the cluster, overlaps
#: with work rather than ending the run alone. The files with shorter workflow runs follow
#: (longest first, so that no long file is left to run alone at the end), then the rest in
#: collection order. xdist's default reordering by test count would undo this order, hence
#: ``--no-loadscope-reorder``.
SLOW_FILES = (
    "cluster/test_slurm.py",
    "workflow/test_workflow_inputs.py",  # 390 s of a 490 s --run-workflow run on 2 cores
    "workflow/test_corpora_examples.py",  # 150 s
    "workflow/test_default_run.py",  # 140 s
    "workflow/test_documented_commands.py",  # 110 s
    "workflow/test_report_in_browser.py",  # 100 s, two reports
    "workflow/test_s3_storage.py",  # two reports side by side, a rerun, three dry runs
    "workflow/test_wheel.py",  # builds and installs the wheel
    "workflow/test_report_command.py",
    "workflow/test_api_equals_workflow.py",  # one report (the judged table)
    "workflow/test_pairwise_shards.py",
    "workflow/test_config_dry_runs.py",
    "workflow/test_profiles.py",
)
TESTS = Path(__file__).resolve().parent

#: The tiers, most demanding first: a test belongs to the first whose marker it carries, and
#: runs when that tier is asked for (the default tier always runs).
TIERS = ("slurm", "workflow", "realdata")
#: The command-line flag that adds each tier.
TIER_FLAGS = {"workflow": "--run-workflow", "realdata": "--run-realdata", "slurm": "--run-slurm"}
#: Folders whose every test is of one tier: their tests carry its marker.
FOLDER_MARKERS = {"workflow": "workflow", "cluster": "slurm", "realdata": "realdata"}
UNIT = "unit"


def pytest_addoption(parser):
    group = parser.getgroup("evalbars tiers", "test tiers beyond the default, hermetic one")
    group.addoption(
        "--run-workflow",
        action="store_true",
        help="also run the workflow tier: Snakemake runs, the documented commands, the installed "
        "command (marker workflow; with -n 2 --dist loadfile --no-loadscope-reorder)",
    )
    group.addoption(
        "--run-realdata",
        action="store_true",
        help="also run the real-data tier: tests and R references on the MMLU-Pro archives "
        "(marker realdata; $EVALBARS_MIRROR, ../shared/mmlu-pro/eval_results or upstream)",
    )
    group.addoption(
        "--run-slurm",
        action="store_true",
        help="also run the SLURM tier: a one-node cluster started by .ci/slurm/start (marker "
        "slurm; installs packages only with EVALBARS_SLURM_INSTALL=1)",
    )
    group.addoption("--all", action="store_true", help="run every tier (as .ci/run does)")


def tier_of(item) -> str:
    """The tier of a collected test: the first of :data:`TIERS` it is marked with, else unit."""
    return next((name for name in TIERS if item.get_closest_marker(name)), UNIT)


def tiers_asked(config) -> set[str]:
    if config.getoption("--all"):
        return {UNIT, *TIERS}
    return {UNIT} | {tier for tier, flag in TIER_FLAGS.items() if config.getoption(flag)}


#: Fixtures that need the MMLU-Pro archives: a test using one of them, directly or through
#: another fixture, is marked ``realdata``, so ``-m "not realdata"`` runs with no mirror and no
#: network.
REALDATA_FIXTURES = frozenset(
    {
        "mirror",
        "archive_dir",
        "default_raw",
        "default_items",
        "default_subsample",
        "real_wide",
        "default_run",  # the default workflow downloads the paper's six archives
    }
)
#: ``reference_wide`` names whose score matrix is the real subsample.
REALDATA_REFERENCES = frozenset({"mmlu_pro_default_subsample"})


def needs_real_data(item) -> bool:
    """True when a collected test needs the archives (see :data:`REALDATA_FIXTURES`)."""
    names = set(getattr(item, "fixturenames", ()))
    if names & REALDATA_FIXTURES:
        return True
    if "reference_wide" in names:
        params = getattr(getattr(item, "callspec", None), "params", {})
        return any(isinstance(v, str) and v in REALDATA_REFERENCES for v in params.values())
    return False


#: The folder of each tier beyond the default one, where its tests live.
TIER_FOLDERS = {tier: folder for folder, tier in FOLDER_MARKERS.items()}


def pytest_collection_modifyitems(config, items):
    for item in items:
        folder = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
        if folder in FOLDER_MARKERS and not item.get_closest_marker(FOLDER_MARKERS[folder]):
            item.add_marker(FOLDER_MARKERS[folder])
        if needs_real_data(item):
            item.add_marker(pytest.mark.realdata)
        if folder == UNIT and tier_of(item) != UNIT:
            raise pytest.UsageError(
                f"{item.nodeid} is a {tier_of(item)} test: move it to "
                f"tests/{TIER_FOLDERS[tier_of(item)]}/ (tests/unit/ holds the default tier only)"
            )

    asked = tiers_asked(config)
    selected, deselected = [], []
    for item in items:
        (selected if tier_of(item) in asked else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
    counts: dict[str, int] = {}
    for item in deselected:
        counts[tier_of(item)] = counts.get(tier_of(item), 0) + 1
    config.stash[_DESELECTED] = counts

    def rank(item):
        name = item.path.relative_to(TESTS).as_posix() if item.path.is_relative_to(TESTS) else ""
        # Within its file the SLURM run goes first: xdist hands a worker its next file when at
        # most two of its tests are pending, so a long test at a file's end would tie that next
        # file to the worker before the other worker could take it.
        not_slurm = item.get_closest_marker("slurm") is None
        return (SLOW_FILES.index(name) if name in SLOW_FILES else len(SLOW_FILES), not_slurm)

    items.sort(key=rank)  # stable: within a file, and among the others, order is kept


_DESELECTED = pytest.StashKey[dict]()


def pytest_report_collectionfinish(config, start_path, items):
    """One header line naming the tiers left out and the flag that adds each."""
    counts = config.stash.get(_DESELECTED, {})
    if not counts:
        return None
    left_out = ", ".join(
        f"{counts[tier]} {tier} ({TIER_FLAGS[tier]})" for tier in TIERS if tier in counts
    )
    return f"tiers not asked for, deselected: {left_out}; --all runs every tier"


# --- The default tier stays hermetic ---------------------------------------------------------

#: Words of a command line that start a Snakemake run, or the command line that runs one.
WORKFLOW_COMMANDS = frozenset({"snakemake", "evalbars", "evalbars.cli", "evalbars.__main__"})
_guard = {"active": False, "test": ""}


def _runs_the_workflow(args) -> bool:
    words = shlex.split(args) if isinstance(args, (str, bytes)) else [os.fspath(a) for a in args]
    words = [w.decode() if isinstance(w, bytes) else str(w) for w in words]
    names = {Path(word).name for word in words[:1]}
    modules = {words[i + 1] for i, word in enumerate(words[:-1]) if word == "-m"}
    return bool((names | modules) & WORKFLOW_COMMANDS)


def _is_loopback(host) -> bool:
    if host in (None, "", "localhost", b"localhost"):
        return True
    try:
        return ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host).is_loopback
    except ValueError:
        return False


def _not_hermetic(what: str):
    pytest.fail(
        f"{_guard['test']}: {what}, which the default tier never does: mark the test "
        "`workflow` (a Snakemake run or an evalbars process) or `realdata` (the archives), or "
        "move it to tests/workflow/ or tests/realdata/",
        pytrace=False,
    )


def _mirror_audit(event, args):
    if not _guard["active"] or event not in ("open", "os.listdir", "os.scandir"):
        return
    if args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.startswith(str(SHARED_MIRROR.parent)):
            _not_hermetic(f"it opened {path} in the development mirror")


_audit_installed = False


@pytest.fixture(autouse=True)
def _hermetic(request, monkeypatch):
    """In a default-tier test: no Snakemake or evalbars process, no connection beyond loopback,
    no file of the development mirror (each one fails the test, naming it)."""
    global _audit_installed
    if tier_of(request.node) != UNIT:
        yield
        return
    popen_init = subprocess.Popen.__init__
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def guarded_popen(self, args, *rest, **options):
        if _runs_the_workflow(args):
            _not_hermetic(f"it started `{shlex.join(map(str, args))[:200]}`")
        return popen_init(self, args, *rest, **options)

    def check_address(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            _not_hermetic(f"it connected to {address[0]}:{address[1]}")

    def guarded_connect(self, address):
        check_address(self, address)
        return connect(self, address)

    def guarded_connect_ex(self, address):
        check_address(self, address)
        return connect_ex(self, address)

    def guarded_getaddrinfo(host, *rest, **options):
        if not _is_loopback(host):
            _not_hermetic(f"it looked up the host {host!r}")
        return getaddrinfo(host, *rest, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded_popen)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    if not _audit_installed:
        sys.addaudithook(_mirror_audit)  # audit hooks stay for the process; _guard switches it
        _audit_installed = True
    _guard.update(active=True, test=request.node.nodeid)
    try:
        yield
    finally:
        _guard.update(active=False, test="")


def mirror_location(config_mirror: str | None = None) -> str | None:
    """The archive source of tests and the benchmark: ``$EVALBARS_MIRROR``, the config's mirror,
    the development mirror beside the repository (unless ``EVALBARS_NO_DEV_MIRROR=1``, to check
    that a test needs no mirror), or None (upstream)."""
    chosen = fetch.resolve_mirror(config_mirror)
    if chosen or os.environ.get("EVALBARS_NO_DEV_MIRROR") == "1":
        return chosen
    return str(SHARED_MIRROR) if SHARED_MIRROR.is_dir() else None


@pytest.fixture(scope="session")
def mirror() -> str | None:
    return mirror_location()


@pytest.fixture(scope="session")
def archive_dir(tmp_path_factory, mirror) -> Path:
    """Verified copies of the six default archives (fetched like the workflow fetches them)."""
    target = tmp_path_factory.mktemp("raw")
    pinned = fetch.pinned_checksums()
    for model in DEFAULT_MODELS:
        name = fetch.archive_name(model)
        fetch.fetch_archive(name, target / name, pinned[name], mirror=mirror)
    return target


@pytest.fixture(scope="session")
def default_raw(archive_dir):
    """Raw prediction frames of the six default models (``correct`` null where pred is null)."""
    return [readers.read_mmlu_pro(archive_dir / fetch.archive_name(m)) for m in DEFAULT_MODELS]


@pytest.fixture(scope="session")
def default_items(default_raw):
    """Canonical item table of the six default models, policy ``wrong`` (72,192 rows)."""
    return items.build_item_table(default_raw, "wrong", 12345)


@pytest.fixture(scope="session")
def default_subsample(default_items):
    """The default 1,497-question subsample (a :class:`evalbars.data.sampling.Subsample`)."""
    return sampling.stratified_subsample(default_items, **DEFAULT_SUBSAMPLE)


@pytest.fixture(scope="session")
def real_wide(default_subsample):
    """The default subsample as a question-by-model matrix."""
    return wide_scores(default_subsample.items)


@pytest.fixture
def reference_wide(request):
    """``reference_wide(name)``: the score matrix behind R's reference numbers ``name``.

    Synthetic fixtures are read from tests/data; for the real subsample only R's numbers
    are committed, so the question ids are checked against the hash R recorded.
    """

    def load(name):
        if name != "mmlu_pro_default_subsample":
            return wide_scores(pd.read_csv(DATA / f"{name}.csv"))
        wide = request.getfixturevalue("real_wide")
        ids = "\n".join(str(q) for q in sorted(wide.question_ids))
        recorded = R_RESULTS[name]["source"]["question_ids_sha256"]
        assert hashlib.sha256(ids.encode()).hexdigest() == recorded, "not the subsample R used"
        return wide

    return load
