"""Sanity checks of the committed R reference values (run after regenerating them).

``uv run python tests/reference/check_r_reference.py [extra.csv=name ...]`` recomputes what has a
closed form from the CSV with numpy/scipy and checks the identities the analysis relies on:

- complete data: nested-LMM residual variance = RM-ANOVA error mean square, and every
  nested-LMM contrast SE = sqrt(2 sigma^2 / n_questions); contrast estimates = accuracy gaps;
- Friedman (tie-corrected) = Cochran's Q on 0/1 data; both equal scipy's friedmanchisquare;
- one-way F = scipy.stats.f_oneway; exact McNemar p = scipy.stats.binomtest;
- emmeans' Bonferroni/Holm p-values = our own adjustment of its unadjusted p-values;
- the boundary fixtures sit on the boundary they were built for;
- repeated samples (an ``epoch`` column), complete and balanced: the three-term model's residual
  variance = the within-cell mean square, and its question-by-model variance = the cell means'
  RM-ANOVA error mean square minus residual / samples per cell (all components interior).

Prints one line per check and exits non-zero if any fails. The real subsample's CSV is not in the
repository; pass its path as ``/tmp/mmlu_pro_default_subsample.csv=mmlu_pro_default_subsample``.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from r_results import R_RESULTS  # noqa: E402

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
failures = []


def check(label: str, got, want, tol: float, relative: bool = False) -> None:
    got, want = np.asarray(got, float), np.asarray(want, float)
    err = np.abs(got - want) / (np.abs(want) if relative else 1.0)
    worst = float(np.max(err)) if err.size else 0.0
    ok = worst <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {label}: max {'rel ' if relative else ''}err {worst:.2e}")
    if not ok:
        failures.append(label)


def holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p)
    adjusted = np.maximum.accumulate((len(p) - np.arange(len(p))) * p[order])
    out = np.empty_like(p)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def check_dataset(name: str, csv: Path) -> None:
    r = R_RESULTS[name]
    long = pd.read_csv(csv)
    if "epoch" in long.columns:
        check_epochs(name, long)
        return
    wide = long.pivot(index="question_id", columns="model", values="correct")[r["models"]]
    n = len(wide)
    print(f"== {name} ({n} questions, complete={r['complete']})")

    groups = [long.loc[long["model"] == m, "correct"].to_numpy(float) for m in r["models"]]
    check(
        "one-way F vs scipy f_oneway",
        r["oneway"]["F"],
        stats.f_oneway(*groups).statistic,
        1e-10,
        True,
    )

    mcn = r["mcnemar"]
    n10 = [int(((wide[m["model_a"]] == 1) & (wide[m["model_b"]] == 0)).sum()) for m in mcn]
    n01 = [int(((wide[m["model_a"]] == 0) & (wide[m["model_b"]] == 1)).sum()) for m in mcn]
    check(
        "McNemar n10/n01 vs pandas counts",
        [m["n10"] for m in mcn] + [m["n01"] for m in mcn],
        n10 + n01,
        0,
    )
    p_scipy = [
        stats.binomtest(a, a + b).pvalue if a + b else 1.0 for a, b in zip(n10, n01, strict=True)
    ]
    check("exact McNemar p vs scipy binomtest", [m["p"] for m in mcn], p_scipy, 1e-12, True)

    for spec, fit in r["lmm"].items():
        c = fit["contrasts"]
        p = np.array([x["p_none"] for x in c])
        check(
            f"{spec}: bonferroni vs own",
            [x["p_bonferroni"] for x in c],
            np.minimum(p * len(p), 1),
            1e-12,
        )
        check(f"{spec}: holm vs own", [x["p_holm"] for x in c], holm(p), 1e-12)
        check(
            f"{spec}: z = estimate/se",
            [x["z"] for x in c],
            [x["estimate"] / x["se"] for x in c],
            1e-12,
        )
        fe = fit["fixef"]
        check(
            f"{spec}: estimate = fixef diff",
            [x["estimate"] for x in c],
            [fe[x["model_a"]] - fe[x["model_b"]] for x in c],
            1e-12,
        )

    if not r["complete"]:
        return
    nested = r["lmm"]["category_question"]
    sigma2 = nested["variance"]["residual"]
    se = [x["se"] for x in nested["contrasts"]]
    check(
        "nested contrast SE = sqrt(2 sigma^2/n) (lme4 sigma^2)",
        se,
        math.sqrt(2 * sigma2 / n),
        1e-12,
        True,
    )
    if nested["variance"]["question"] > 0:
        # interior sigma_q^2: the likelihood separates and sigma^2 is the within-question MS
        check(
            "nested residual variance = RM-ANOVA MS error", sigma2, r["rm_anova"]["ms_error"], 1e-6
        )
        check(
            "nested contrast SE = sqrt(2 MS_error/n)",
            se,
            math.sqrt(2 * r["rm_anova"]["ms_error"] / n),
            1e-6,
        )
    else:
        # sigma_q^2 on the boundary: the identity does NOT hold; the nested fit is the
        # category-only fit, whose sigma^2 pools between-question variation too
        only = r["lmm"]["category"]["variance"]
        check(
            "sigma_q^2 = 0: nested variances = category-only fit's",
            [sigma2, nested["variance"]["category"]],
            [only["residual"], only["category"]],
            1e-6,
        )
        print(
            f"note sigma_q^2 = 0: sigma^2 {sigma2:.9f} vs RM-ANOVA MS error "
            f"{r['rm_anova']['ms_error']:.9f} (identity holds only for interior sigma_q^2)"
        )
    acc = wide.mean()
    for spec, fit in r["lmm"].items():
        check(
            f"{spec}: estimate = accuracy gap (complete data)",
            [x["estimate"] for x in fit["contrasts"]],
            [acc[x["model_a"]] - acc[x["model_b"]] for x in fit["contrasts"]],
            1e-9,
        )
    check(
        "Friedman = Cochran's Q",
        r["friedman"]["statistic"],
        r["friedman"]["cochran_q"],
        1e-12,
        True,
    )
    fr = stats.friedmanchisquare(*wide.to_numpy(float).T)
    check(
        "Friedman vs scipy friedmanchisquare",
        [r["friedman"]["statistic"], r["friedman"]["p"]],
        [fr.statistic, fr.pvalue],
        1e-10,
        True,
    )
    # RM-ANOVA error SS = sum of squared double-centred residuals
    y = wide.to_numpy(float)
    resid = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    check("RM-ANOVA SS_error vs numpy", r["rm_anova"]["ss_error"], (resid**2).sum(), 1e-10, True)


def check_epochs(name: str, long: pd.DataFrame) -> None:
    """Checks of a fixture with repeated samples per (model, question) cell."""
    r = R_RESULTS[name]
    cells = long.groupby(["question_id", "model"])["correct"]
    counts = cells.size()
    print(f"== {name} ({long['question_id'].nunique()} questions, epochs {r['epochs']})")
    check(
        "cells by number of samples",
        [r["epochs"].get(str(k), 0) for k in range(1, counts.max() + 1)],
        [int((counts == k).sum()) for k in range(1, counts.max() + 1)],
        0,
    )
    groups = [long.loc[long["model"] == m, "correct"].to_numpy(float) for m in r["models"]]
    check("one-way F vs scipy f_oneway", r["oneway"]["F"], stats.f_oneway(*groups).statistic, 1e-10)
    for spec, fit in r["lmm"].items():
        c = fit["contrasts"]
        p = np.array([x["p_none"] for x in c])
        check(f"{spec}: holm vs own", [x["p_holm"] for x in c], holm(p), 1e-12)
        fe = fit["fixef"]
        check(
            f"{spec}: estimate = fixef diff",
            [x["estimate"] for x in c],
            [fe[x["model_a"]] - fe[x["model_b"]] for x in c],
            1e-12,
        )
    n_rep = int(counts.max())
    if not (r["complete"] and (counts == n_rep).all()):
        return
    means = cells.mean().unstack()[r["models"]].to_numpy()
    q, k = means.shape
    ms_cells = float(cells.var(ddof=0).sum() * n_rep / (q * k * (n_rep - 1)))
    resid = means - means.mean(1, keepdims=True) - means.mean(0, keepdims=True) + means.mean()
    ms_error = float(np.sum(resid**2) / ((q - 1) * (k - 1)))
    three = r["lmm"]["category_question_model"]["variance"]
    check("3-term residual = within-cell mean square", three["residual"], ms_cells, 1e-6)
    check(
        "3-term question_model = cell-mean MS error - residual / n",
        three["question_model"],
        ms_error - ms_cells / n_rep,
        1e-6,
    )


def main(argv) -> None:
    datasets = {p.stem: p for p in sorted(DATA_DIR.glob("synthetic_*.csv"))}
    for arg in argv:
        path, name = arg.rsplit("=", 1)
        datasets[name] = Path(path)
    for name, csv in datasets.items():
        check_dataset(name, csv)
    # the boundary fixtures must sit on the boundary they were built for
    vb = R_RESULTS["synthetic_boundary"]["lmm"]
    check(
        "boundary: category variance = 0 (both fits)",
        [vb["category"]["variance"]["category"], vb["category_question"]["variance"]["category"]],
        [0, 0],
        0,
    )
    vq = R_RESULTS["synthetic_boundary_question"]["lmm"]["category_question"]
    check("boundary_question: question variance = 0", vq["variance"]["question"], 0, 0)
    singular = {n: {s: f["singular"] for s, f in r["lmm"].items()} for n, r in R_RESULTS.items()}
    print("isSingular:", singular)
    if failures:
        sys.exit(f"{len(failures)} checks failed: {failures}")


if __name__ == "__main__":
    main(sys.argv[1:])
