"""Reference values of the polynomial stitching boundary from ``confseq`` (tests only).

``confseq`` (Howard, Waudby-Smith and Ramdas; MIT) is the confidence-sequence package of the
authors of "Time-uniform, nonparametric, nonasymptotic confidence sequences" (Howard, Ramdas,
McAuliffe and Sekhon 2021). Its boundaries are C++ (pybind11 and Boost) and do not build from
PyPI on the project's Python 3.11, so it is not a dependency: this script is run once in a
throwaway virtualenv and its output committed.

    apt-get install -y libboost-dev
    uv venv -p 3.9 /tmp/cs39 && VIRTUAL_ENV=/tmp/cs39 uv pip install confseq==0.0.11
    /tmp/cs39/bin/python tests/reference/make_confseq_reference.py

Writes, read by ``tests/unit/stats/test_sequential.py``:

- ``tests/reference/confseq_output/poly_stitching.json``: ``confseq.boundaries.
  poly_stitching_bound(v, alpha, v_min, c, s, eta)`` on a grid of every argument (v below v_min
  included);
- ``tests/reference/confseq_output/gamma_exponential.json``: ``confseq.boundaries.
  gamma_exponential_mixture_bound(v, alpha, v_opt, c, alpha_opt)`` on a grid.
"""

import datetime
import importlib.metadata
import itertools
import json
import platform
from pathlib import Path

from confseq import boundaries

GRID = {
    "v": [0.5, 5.0, 10.0, 37.5, 100.0, 450.0, 3000.0, 1e5],
    "alpha": [0.025, 0.05, 0.1],
    "v_min": [1.0, 10.0],
    "c": [0.0, 1.0, 2.0],
    "s": [1.4, 2.0],
    "eta": [2.0, 2.5],
}

rows = []
for v, alpha, v_min, c, s, eta in itertools.product(*GRID.values()):
    bound = boundaries.poly_stitching_bound(v, alpha, v_min, c=c, s=s, eta=eta)
    rows.append(
        {"v": v, "alpha": alpha, "v_min": v_min, "c": c, "s": s, "eta": eta, "bound": bound}
    )
HERE = Path(__file__).resolve().parent / "confseq_output"
VERSIONS = {"confseq": importlib.metadata.version("confseq"), "python": platform.python_version()}


def write(name, source, rows):
    HERE.mkdir(exist_ok=True)
    document = {
        "source": source,
        "versions": VERSIONS,
        "generated": datetime.date.today().isoformat(),
        "rows": rows,
    }
    (HERE / name).write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(rows)} rows to {HERE / name}")


write("poly_stitching.json", "confseq.boundaries.poly_stitching_bound", rows)

MIXTURE_GRID = {
    "v": [0.5, 5.0, 37.5, 100.0, 450.0, 3000.0, 1e5],
    "alpha": [0.025, 0.05, 0.1],
    "v_opt": [10.0, 100.0, 450.0],
    "c": [0.5, 1.0, 2.0],
    "alpha_opt": [0.025, 0.05],
}
mixture = []
for v, alpha, v_opt, c, alpha_opt in itertools.product(*MIXTURE_GRID.values()):
    bound = boundaries.gamma_exponential_mixture_bound(v, alpha, v_opt, c, alpha_opt)
    mixture.append(
        {"v": v, "alpha": alpha, "v_opt": v_opt, "c": c, "alpha_opt": alpha_opt, "bound": bound}
    )
write("gamma_exponential.json", "confseq.boundaries.gamma_exponential_mixture_bound", mixture)
