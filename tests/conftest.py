"""Shared fixtures: where the MMLU-Pro archives come from, and the default item tables.

Real-data tests never skip: the archives come from ``$EVALBARS_MIRROR`` if set, else
the development mirror beside the repository (``../shared/mmlu-pro/eval_results``),
else upstream; a failure to get them fails the test. Every test that uses the archive
fixtures is marked ``realdata`` here, so ``pytest -m "not realdata and not workflow and
not slurm"`` is the offline loop. :func:`mirror_location` is the
one place that knows the development mirror; the package itself knows only
``$EVALBARS_MIRROR``, the config's ``mirror`` and upstream.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import yaml

matplotlib.use("Agg")

from evalbars.data import fetch, items, readers, sampling
from evalbars.data.scores import wide_scores  # noqa: E402
from evalbars.workflow import smk  # noqa: E402

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


#: Test files that run the workflow, longest first: collected first, so that the two workers
#: (`pytest -n 2 --dist loadfile`) start on them, and the SLURM test, which mostly waits for the
#: cluster, overlaps with work rather than ending the run alone. The files with shorter workflow
#: runs follow (longest first, so that no long file is left to run alone at the end), then the
#: rest in collection order.
SLOW_FILES = (
    "test_slurm.py",
    "test_workflow.py",
    "test_workflow_inputs.py",
    "test_corpora_readers.py",
    "test_readme_commands.py",
    "test_report_command.py",
    "test_bad_input_round3.py",
)


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


def pytest_collection_modifyitems(config, items):
    for item in items:
        if needs_real_data(item):
            item.add_marker(pytest.mark.realdata)

    def rank(item):
        name = item.path.name
        # Within its file the SLURM run goes first: xdist hands a worker its next file when at
        # most two of its tests are pending, so a long test at a file's end would tie that next
        # file to the worker before the other worker could take it.
        not_slurm = item.get_closest_marker("slurm") is None
        return (SLOW_FILES.index(name) if name in SLOW_FILES else len(SLOW_FILES), not_slurm)

    items.sort(key=rank)  # stable: within a file, and among the others, order is kept


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
