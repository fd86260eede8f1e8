"""Arena-Hard-Auto's own Rao-Kupper and Bradley-Terry fits on a small case: the oracle numbers.

Loads ``utils/math_utils.py`` of lmarena/arena-hard-auto (its ``fit_pairwise_model`` with
``loss_type="rk"`` and ``"bt"``: torch L-BFGS on ``rk_loss``/``bt_loss``) and fits the battles
of :data:`COUNTS` (wins, ties and losses of ``model_a``). Runs in a throwaway venv with the CPU
torch wheel::

    python3 -m venv /tmp/ah && /tmp/ah/bin/pip install torch==2.13.0 numpy tqdm
    /tmp/ah/bin/python tests/reference/battles/make_arena_hard_rk_reference.py \\
        --repo <git dir of lmarena/arena-hard-auto>

writes ``tests/reference/battles/arena_hard_rk_output.json``. The design has a +1/-1 column
per model, as ``one_hot_encode`` builds it, so only differences are identified; the file holds
each model's strength minus ``base``'s and the tie parameter ``eta`` (Rao-Kupper's threshold).
The fits run in float64, twice: with the function's defaults (``lr=0.1``, ``tol=1e-9``,
``max_epochs=50``, what ``show_result.py`` calls), and tight (``tol=1e-12, max_epochs=1000``,
and ``lr=1.0`` for BT; the function's own arguments): with the defaults L-BFGS stops short of
the optimum (by about 1e-3 in the BT differences here, 8e-3 for RK), tight it comes within
1e-5. ``rk_loss`` adds 1e-10 inside
its logarithm, which moves the optimum by less than 1e-9.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
MODELS = ("base", "m1", "m2", "m3")
#: (model_a, model_b): (wins, ties, losses) of model_a.
COUNTS = {
    ("m1", "base"): (40, 10, 30),
    ("m2", "base"): (25, 15, 40),
    ("m3", "base"): (35, 20, 25),
    ("m1", "m2"): (20, 5, 15),
}


def battles():
    rows, outcomes = [], []
    for (a, b), (wins, ties, losses) in COUNTS.items():
        x = [0.0] * len(MODELS)
        x[MODELS.index(a)], x[MODELS.index(b)] = 1.0, -1.0
        for outcome, n in ((1.0, wins), (0.5, ties), (0.0, losses)):
            rows += [x] * n
            outcomes += [outcome] * n
    return torch.tensor(rows, dtype=torch.float64), torch.tensor(outcomes, dtype=torch.float64)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "--git-dir", args.repo, "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    source = subprocess.run(
        ["git", "--git-dir", args.repo, "show", "HEAD:utils/math_utils.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    torch.set_default_dtype(torch.float64)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "math_utils.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("arena_hard_math_utils", path)
        math_utils = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(math_utils)
    features, outcomes = battles()
    out = {
        "arena_hard_auto_commit": commit,
        "torch": torch.__version__,
        "models": MODELS,
        "counts": {f"{a} vs {b}": list(v) for (a, b), v in COUNTS.items()},
    }
    # lr=1.0 makes rk_loss run off to a negative eta (its tie probability below 0, floored by
    # the 1e-10), so the tight RK fit keeps the default lr.
    tight = {
        "rk": {"tol": 1e-12, "max_epochs": 1000},
        "bt": {"lr": 1.0, "tol": 1e-12, "max_epochs": 1000},
    }
    for loss in ("rk", "bt"):
        for setting, options in (("defaults", {}), ("tight", tight[loss])):
            logits, eta = math_utils.fit_pairwise_model(
                features, outcomes, loss_type=loss, **options
            )
            base = float(logits[0])
            out[f"{loss}_{setting}"] = {
                "options": options,
                "difference_from_base": {m: float(logits[i]) - base for i, m in enumerate(MODELS)},
                "eta": None if eta is None else float(eta),
            }
            print(loss, setting, out[f"{loss}_{setting}"])
    (HERE / "arena_hard_rk_output.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
