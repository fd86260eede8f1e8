"""Each pair's verdict under the linear mixed model, the logistic mixed model and GEE, side by side.

:func:`verdict_table` lines up, pair by pair, the linear mixed model's contrasts
(:func:`evalbars.stats.mixed.lmm_contrasts`) and the logistic fits' contrasts
(:func:`evalbars.stats.logistic.contrasts.compare_logistic`), and judges each reading by its own Holm-adjusted
test (:func:`verdicts`). It needs numpy and pandas only: the job that writes the table reads the
fits from their files and imports none of the fitting code.

Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
6:65-70.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalbars.data.scores import text_column
from evalbars.defaults import ALPHA

__all__ = [
    "READINGS",
    "VERDICT_COLUMNS",
    "LMM_COLUMNS",
    "LOGISTIC_COLUMNS",
    "verdicts",
    "verdict_table",
    "not_fitted_reason",
]

#: Methods of :func:`verdict_table`, in column order: column prefix and label.
READINGS = {
    "lmm": "linear mixed model",
    "glmm": "logistic mixed model",
    "gee": "GEE, exchangeable",
}

#: Columns of :func:`verdict_table`, in order.
VERDICT_COLUMNS = (
    ["model_a", "model_b", "lmm_difference", "lmm_ci_low", "lmm_ci_high", "lmm_z", "lmm_p_holm"]
    + [
        f"{prefix}_{statistic}"
        for prefix in ("glmm", "gee")
        for statistic in (
            "log_odds_ratio",
            "accuracy_difference",
            "ci_low",
            "ci_high",
            "z",
            "p_holm",
        )
    ]
    + [f"{prefix}_verdict" for prefix in READINGS]
    + ["agree", "glmm_converged", "gee_converged"]
)

#: The columns :func:`verdict_table` reads from the linear mixed model's contrasts, and the
#: verdict columns they fill (read only these from the Parquet file).
LMM_COLUMNS = {
    "model_a": "model_a",
    "model_b": "model_b",
    "estimate": "lmm_difference",
    "ci_low": "lmm_ci_low",
    "ci_high": "lmm_ci_high",
    "z": "lmm_z",
    "p_holm": "lmm_p_holm",
}
#: The columns :func:`verdict_table` reads from the logistic contrasts (besides ``method``,
#: ``model_a`` and ``model_b``), and the suffix of the verdict column each fills.
LOGISTIC_COLUMNS = {
    "log_odds_ratio": "log_odds_ratio",
    "accuracy_difference": "accuracy_difference",
    "accuracy_difference_ci_low": "ci_low",
    "accuracy_difference_ci_high": "ci_high",
    "log_odds_ratio_z": "z",
    "log_odds_ratio_p_holm": "p_holm",
    "converged": "converged",
}
#: Logistic methods of :func:`verdict_table`: column prefix and ``method`` in the contrasts.
_METHODS = {"glmm": "glmm_laplace", "gee": "gee_exchangeable"}
#: The verdicts, indexed by :func:`_verdict_codes`.
_VERDICTS = np.array(["a < b", "not separated", "a > b"], dtype=object)
#: How :func:`evalbars.stats.logistic.contrasts.not_fitted` starts the ``note`` of its summary rows.
_NOT_FITTED = "not fitted: "


def _verdict_codes(difference, p_holm, alpha: float) -> np.ndarray:
    """Index into :data:`_VERDICTS`: 2 (``a > b``) or 0 (``a < b``) where the Holm-adjusted p is
    below ``alpha``, by the sign of the difference; 1 (``not separated``) elsewhere."""
    difference = np.asarray(difference, dtype=float)
    significant = np.asarray(p_holm, dtype=float) < alpha
    return np.where(significant, np.where(difference > 0, 2, 0), 1)


def verdicts(difference, p_holm, alpha: float) -> np.ndarray:
    """``"a > b"``, ``"a < b"`` or ``"not separated"``: the sign of a difference whose
    Holm-adjusted p is below ``alpha``."""
    return _VERDICTS[_verdict_codes(difference, p_holm, alpha)]


def _same(first: pd.Series, second: pd.Series) -> bool:
    """Whether two columns hold the same names in the same order. Two categorical columns (the
    workflow reads the contrast tables' names as a dictionary) are compared by their codes,
    each category looked up once: no string is made per pair."""
    if len(first) != len(second):
        return False
    if isinstance(first.dtype, pd.CategoricalDtype) and isinstance(
        second.dtype, pd.CategoricalDtype
    ):
        second_codes = second.cat.codes.to_numpy()
        if np.any(second_codes < 0):
            return False
        lookup = np.append(second.cat.categories.get_indexer(first.cat.categories), -2)
        return bool(np.array_equal(lookup[first.cat.codes.to_numpy()], second_codes))
    return bool(np.all(_as_text(first) == _as_text(second)))


def _as_text(names: pd.Series):
    """A column of model names as text (the type pandas gives text); a categorical one built
    from its codes (:func:`evalbars.data.scores.text_column`)."""
    if isinstance(names.dtype, pd.CategoricalDtype):
        codes = names.cat.codes.to_numpy()
        if not np.any(codes < 0):
            return text_column(list(names.cat.categories), codes)
    return names.astype("str").array


def verdict_table(
    lmm_contrasts: pd.DataFrame, logistic_contrasts: pd.DataFrame, alpha: float = ALPHA
) -> pd.DataFrame:
    """Every pair's verdict under the linear mixed model, the logistic GLMM and GEE, side by side.

    Parameters
    ----------
    lmm_contrasts : DataFrame
        :func:`evalbars.stats.mixed.lmm_contrasts` of the nested model (one ``model_spec``); only the
        columns of :data:`LMM_COLUMNS` are read.
    logistic_contrasts : DataFrame
        ``LogisticComparison.contrasts`` (:func:`evalbars.stats.logistic.contrasts.compare_logistic`) for the same
        pairs, in the same order; only ``method, model_a, model_b`` and the columns of
        :data:`LOGISTIC_COLUMNS` are read.
    alpha : float
        Family-wise level of the verdicts.

    Returns
    -------
    DataFrame
        One row per pair: ``model_a, model_b``; for the linear model ``lmm_difference`` (in
        accuracy), ``lmm_ci_low, lmm_ci_high, lmm_z, lmm_p_holm``; for ``glmm`` and ``gee``:
        ``{m}_log_odds_ratio``, ``{m}_accuracy_difference`` (marginal), its ``{m}_ci_low,
        {m}_ci_high``, ``{m}_z`` and ``{m}_p_holm`` of the log odds ratio; ``{m}_verdict`` for
        all three (:func:`verdicts`, Holm over the pairs at ``alpha``), ``agree``: whether the
        three verdicts are the same, and ``glmm_converged``, ``gee_converged``: whether each
        logistic fit converged (a verdict of a fit that did not is not to be trusted).

    Raises
    ------
    ValueError
        When a logistic method's contrasts do not hold the linear model's pairs in its order.

    Notes
    -----
    Each reading is judged by the test on its own scale: the linear model's difference in
    accuracy, and the logistic models' log odds ratio (the Wald test on the scale the model is
    fitted on; the accuracy differences are shown for size). The readings can disagree where
    accuracies are near 0 or 1 (a gap of a few points there is a large odds ratio) or where a
    pair sits at the edge of significance.
    """
    pairs = {name: _as_text(lmm_contrasts[name]) for name in ("model_a", "model_b")}
    columns = {
        name: lmm_contrasts[column].to_numpy()
        for column, name in LMM_COLUMNS.items()
        if name not in pairs
    }
    codes = {"lmm": _verdict_codes(columns["lmm_difference"], columns["lmm_p_holm"], alpha)}
    method = logistic_contrasts["method"]
    for prefix, name in _METHODS.items():
        positions = np.flatnonzero((method == name).to_numpy())
        if positions.size and positions[-1] - positions[0] + 1 == positions.size:
            # the method's rows in one run, as compare_logistic writes them: a slice (views of
            # the columns), not a copy of each of ten million rows a column
            positions = slice(int(positions[0]), int(positions[-1]) + 1)
        for pair in ("model_a", "model_b"):
            if not _same(logistic_contrasts[pair].iloc[positions], lmm_contrasts[pair]):
                raise ValueError(f"{name} contrasts do not hold the linear model's pairs in order")
        values = {
            f"{prefix}_{suffix}": logistic_contrasts[column].to_numpy()[positions]
            for column, suffix in LOGISTIC_COLUMNS.items()
        }
        values[f"{prefix}_converged"] = values[f"{prefix}_converged"].astype(bool)
        columns |= values
        codes[prefix] = _verdict_codes(
            values[f"{prefix}_log_odds_ratio"], values[f"{prefix}_p_holm"], alpha
        )
    columns |= pairs
    columns |= {f"{prefix}_verdict": _VERDICTS[code] for prefix, code in codes.items()}
    columns["agree"] = (codes["lmm"] == codes["glmm"]) & (codes["lmm"] == codes["gee"])
    # each column held as it is: no copy into one block per dtype (ten million pairs)
    return pd.DataFrame({column: columns[column] for column in VERDICT_COLUMNS}, copy=False)


def not_fitted_reason(summary: pd.DataFrame) -> str | None:
    """Why the logistic models were not fitted, read from their fit summary
    (``LogisticComparison.summary``, ``results/tables/logistic_fits.csv``): the reason
    :func:`evalbars.stats.logistic.contrasts.not_fitted` put in its ``note``, or None when they were fitted."""
    if "note" not in summary.columns:
        return None
    notes = summary["note"].dropna().astype(str)
    notes = notes[notes.str.startswith(_NOT_FITTED)]
    return None if notes.empty else notes.iloc[0].removeprefix(_NOT_FITTED)
