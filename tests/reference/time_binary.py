"""Time the logistic GLMM (and GEE) fits beside lme4's glmer on the three real datasets.

Usage (from the repository root; the archives come from $EVALBARS_MIRROR or ``--mirror``)::

    uv run python tests/reference/time_binary.py --mirror /work/shared/mmlu-pro/eval_results

Datasets, rebuilt here from the archives exactly as the R run saw them (checked against the
question-id SHA-256 and total number correct that ``make_r_binary_reference.R`` recorded):

- ``mmlu_pro_default_subsample``: the default 1,497-question subsample of the six models;
- ``mmlu_pro_default_all``: the six models on all 12,032 questions;
- ``mmlu_pro_all_archives``: every archive in the mirror (29), every observed row.

For each: our fit (:func:`evalbars.glmm.fit_glmm`, cold and median of ``--repeats`` more),
statsmodels GEE (:func:`evalbars.gee.fit_gee`), glmer's time from
``r_output/<name>_binary.txt`` (``system.time``: elapsed and user CPU; the machine is shared, so
both are printed, and ours likewise as wall and process CPU time), the speed-up, and the largest
relative difference from glmer's estimates (tight control) and from its objective.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow"))
sys.path.insert(0, str(REPO))

from evalbars import gee, glmm, io, sampling  # noqa: E402
from tests.reference.r_binary_results import R_BINARY, R_BINARY_DIR  # noqa: E402


def datasets(mirror: Path) -> dict:
    """The three item tables, as the R reference run built them."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    six = [io.read_mmlu_pro(mirror / io.archive_name(m)) for m in config["models"]]
    six_items = io.build_item_table(six, "wrong", 12345)
    subsample = sampling.stratified_subsample(six_items, **config["subsample"]).items
    every = [io.read_mmlu_pro(path) for path in sorted(mirror.glob("model_outputs_*_5shots.zip"))]
    return {
        "mmlu_pro_default_subsample": subsample,
        "mmlu_pro_default_all": six_items,
        "mmlu_pro_all_archives": io.build_item_table(every, "wrong", 12345),
    }


def check_same_data(name: str, items) -> None:
    source = R_BINARY[name]["source"]
    ids = "\n".join(str(q) for q in sorted(items["question_id"].unique()))
    if hashlib.sha256(ids.encode()).hexdigest() != source["question_ids_sha256"]:
        raise SystemExit(f"{name}: not the questions R saw")
    if int(items["correct"].sum()) != source["total_correct"] or len(items) != R_BINARY[name][
        "n_rows"
    ]:
        raise SystemExit(f"{name}: not the data R saw")


def glmer_seconds(name: str) -> tuple[float, float]:
    """Elapsed and user CPU seconds of the default glmer fit, from R's printed output."""
    text = (R_BINARY_DIR / f"{name}_binary.txt").read_text()
    match = re.search(r"system\.time\(glmer\): elapsed ([\d.]+) s \(user ([\d.]+)", text)
    return float(match.group(1)), float(match.group(2))


def timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def max_rel(ours, theirs) -> float:
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    return float(np.max(np.abs(ours - theirs) / np.abs(theirs)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default=os.environ.get("EVALBARS_MIRROR"),
                        help="folder holding upstream's eval_results/ archives")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.mirror:
        raise SystemExit("give --mirror or set EVALBARS_MIRROR")
    print(f"# logistic GLMM timing, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores "
          f"(shared with other jobs: wall and CPU time both shown)")
    for name, items in datasets(Path(args.mirror)).items():
        check_same_data(name, items)
        cells = glmm.binomial_cells(items)
        glmm_args = (cells["successes"], cells["trials"], cells["model"], cells["question_id"],
                     cells["category"])
        fit, wall, cpu = timed(glmm.fit_glmm, *glmm_args)
        repeats = [timed(glmm.fit_glmm, *glmm_args)[1:] for _ in range(args.repeats)]
        median_wall = statistics.median(w for w, _ in repeats) if repeats else wall
        median_cpu = statistics.median(c for _, c in repeats) if repeats else cpu
        gee_fit, gee_wall, _ = timed(gee.fit_gee, *glmm_args[:4])
        r_wall, r_cpu = glmer_seconds(name)
        ref = R_BINARY[name]
        models = ref["models"]
        theta = [fit.theta["question"], fit.theta["category"]]
        print(f"\n{name}: {len(items)} rows, {cells['question_id'].nunique()} questions, "
              f"{fit.n_cells} cells, {len(models)} models")
        print(f"  fit_glmm   cold {wall:7.2f} s wall ({cpu:6.2f} s CPU); median of "
              f"{len(repeats)} {median_wall:7.2f} s wall ({median_cpu:6.2f} s CPU); "
              f"{fit.evaluations} Laplace evaluations")
        print(f"  glmer      {r_wall:7.2f} s wall ({r_cpu:6.2f} s user CPU), lme4 default control")
        print(f"  speed-up   {r_wall / median_wall:5.1f}x wall, {r_cpu / median_cpu:5.1f}x CPU")
        geeglm = ref.get("timing_seconds", {}).get("geeglm", float("nan"))
        print(f"  fit_gee    {gee_wall:7.2f} s wall; geeglm {geeglm:.2f} s wall")
        print(f"  -2 logLik at our optimum {fit.laplace_deviance:.6f}; at glmer's default "
              f"estimates: ours {objective(cells, ref['glmm'], models):.6f}, R's formula "
              f"{ref['glmm']['laplace_deviance_formula']:.6f}, lme4's deviance function (PIRLS "
              f"to {ref['glmm']['exact_tolpwrss']:g}) {ref['glmm']['laplace_deviance_exact']:.6f}"
              f", glmer's reported {ref['glmm']['laplace_deviance']:.6f}")
        for key, label in [("glmm_tight", "tight control"), ("glmm", "default control")]:
            if key not in ref:
                continue
            r = ref[key]
            print(f"  vs glmer ({label}): fixef "
                  f"{max_rel(fit.fixed_effects, [r['fixef'][m] for m in models]):.1e}, theta "
                  f"{max_rel(theta, [r['theta']['question'], r['theta']['category']]):.1e}, "
                  f"logLik {max_rel(fit.loglik, r['loglik']):.1e} (relative)")
        print(f"  GEE alpha {gee_fit.alpha:.6f} (geeglm {ref['gee']['alpha']:.6f}); coefficients "
              f"vs geeglm {max_rel(gee_fit.coefficients, [ref['gee']['coef'][m] for m in models]):.1e}")


def objective(cells, r, models) -> float:
    """Our Laplace deviance at R's estimates ``r``."""
    return glmm.laplace_deviance(
        cells["successes"], cells["trials"], cells["model"], cells["question_id"],
        cells["category"], [r["theta"]["question"], r["theta"]["category"]],
        [r["fixef"][m] for m in models], models)

if __name__ == "__main__":
    main()
