"""Helpers that several test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

import hashlib
import http.server
import json
import logging
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalbars.data.readers import SourceOptions, read_source
from evalbars.data.scores import WideScores, wide_scores
from evalbars.errors import InputError
from evalbars.jobs.run import run_job
from evalbars.studies.fwer import simulate_fwer
from evalbars.studies.leaderboard import LeaderboardResult

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"

# --- Column contracts of the pairwise tables (literal lists: a renamed column fails) ----------

MODEL_COLUMNS = [
    "model",
    "n",
    "samples",
    "correct",
    "accuracy",
    "se_naive",
    "se_questions",
    "n_effective",
    "ci_low",
    "ci_high",
    "se_clustered",
    "jeffreys_low",
    "jeffreys_high",
]
PAIR_COLUMNS = [
    "model_a", "model_b", "n", "diff",
    "se_unpaired", "z_unpaired", "p_unpaired", "se_paired", "z_paired", "p_paired",
    "n10", "n01", "p_mcnemar", "p_bonferroni", "p_holm",
    "significant_unpaired", "significant_paired", "significant_mcnemar",
    "significant_bonferroni", "significant_holm",
]  # fmt: skip


# --- Score matrices ------------------------------------------------------------------------------


def wide_from(columns, categories=None, models=None) -> WideScores:
    scores = np.column_stack([np.asarray(c, dtype=float) for c in columns])
    n, k = scores.shape
    return WideScores(
        scores=scores,
        models=list(models or [f"m{i}" for i in range(k)]),
        question_ids=np.arange(n),
        categories=np.asarray(categories if categories is not None else ["all"] * n, dtype=str),
    )


def ones_then_zeros(n, k):
    return np.r_[np.ones(k), np.zeros(n - k)]


# --- Simulation results as frames -----------------------------------------------------------------


def frames(result: LeaderboardResult) -> LeaderboardResult:
    """A leaderboard result with each column mapping as a DataFrame."""
    return LeaderboardResult(*(pd.DataFrame(table) for table in result))


def fwer_frame(models, **settings) -> pd.DataFrame:
    """:func:`simulate_fwer` for each K in ``models``, as one DataFrame."""
    return pd.concat(
        [pd.DataFrame(simulate_fwer(k, **settings)) for k in models], ignore_index=True
    )


# --- MMLU-Pro records ------------------------------------------------------------------------------


def record(qid, category="math", answer="A", pred="A", options=4, src="ori"):
    return {
        "question_id": qid,
        "category": category,
        "answer": answer,
        "pred": pred,
        "src": src,
        "options": [f"option {i}" for i in range(options)],
    }


def write_json(path, document):
    path.write_text(json.dumps(document))
    return path


# --- Sampling --------------------------------------------------------------------------------------


def exact_hamilton(sizes: dict, n: int) -> dict:
    """Independent exact-arithmetic Hamilton allocation for checking."""
    total = sum(sizes.values())
    quotas = {k: Fraction(n * v, total) for k, v in sizes.items()}
    seats = {k: int(q) for k, q in quotas.items()}
    left = n - sum(seats.values())
    for k in sorted(quotas, key=lambda k: (-(quotas[k] - int(quotas[k])), k))[:left]:
        seats[k] += 1
    return seats


# --- A local archive server -------------------------------------------------------------------------


class ArchiveServer(http.server.ThreadingHTTPServer):
    """Serves files from a folder; can fail the first N requests with 503."""

    def __init__(self, root: Path):
        self.root = root
        self.requests: list[str] = []
        self.fail_first = 0
        super().__init__(("127.0.0.1", 0), self.Handler)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's naming
            server = self.server
            server.requests.append(self.path)
            if server.fail_first > 0:
                server.fail_first -= 1
                self.send_error(503, "try again")
                return
            path = server.root / self.path.rsplit("/", 1)[-1]
            if not path.is_file():
                self.send_error(404, "not found")
                return
            body = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass


# --- Workflow jobs ----------------------------------------------------------------------------------


@contextmanager
def restored_root_logger():
    """Give the root logger back as it was (``script_context`` reconfigures it)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)


def run_workflow_job(rule: str, *, log, input: dict, output: dict, params: dict) -> None:
    """Run the job of ``rule`` in this process as the workflow runs it
    (:func:`evalbars.jobs.run.run_job`: its inputs read, its params as keywords, its outputs
    written), so that the rule's decisions are tested without a workflow run."""
    with restored_root_logger():
        run_job(
            rule,
            {k: str(v) for k, v in input.items()},
            {k: str(v) for k, v in output.items()},
            params,
            str(log),
        )


# --- Bad input: what a user sees, and that nothing changed ---------------------------------------


def digest(folder: Path) -> dict:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def last_error(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def refusal(path, **options) -> str:
    with pytest.raises(InputError) as raised:
        read_source(path, SourceOptions(**options))
    return str(raised.value)


def long_table(path: Path, scores: dict, categories=None) -> Path:
    """A long CSV table: ``scores`` maps a model to its 0/1 list over questions 0, 1, ..."""
    rows = [
        {
            "model": model,
            "question_id": q,
            "category": (categories or {}).get(q, "a"),
            "correct": c,
        }
        for model, column in scores.items()
        for q, c in enumerate(column)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def wide_of(path: Path):
    return wide_scores(pd.read_csv(path).astype({"model": str}))


ALIKE_WHY = (
    "M1, M2 and M3 score alike on every question (no within-question variation to separate the "
    "question variance from the residual)"
)


def alike_wide() -> WideScores:
    """Three models that score alike on every one of 60 questions in two categories."""
    column = np.array([(q * 7 + q // 9) % 3 == 0 for q in range(60)], dtype=float)
    categories = np.array(["ab"[q % 2] for q in range(60)])
    return WideScores(np.tile(column[:, None], 3), ["M1", "M2", "M3"], np.arange(60), categories)


def reading_labels(table: pd.DataFrame) -> pd.DataFrame:
    """A claims table with each reading and its adjustment named in one label (``paired`` and
    ``holm`` as ``paired_holm``), as the tests select rows; the table itself keeps them as two
    columns (:class:`evalbars.readings.claims.Reading`)."""
    out = table.copy()
    adjusted = out["adjustment"] != "none"
    out["reading"] = out["reading"].where(~adjusted, out["reading"] + "_" + out["adjustment"])
    return out
