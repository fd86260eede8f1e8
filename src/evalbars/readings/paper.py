"""What the paper analyses and reports, as data.

"The paper" throughout evalbars is J. F. Mandujano R., *Statistical Methods for
Multi-Model LLM Evaluation* (code and data:
https://github.com/JFMandujanoR/Statistical-Methods-for-Multi-Model-LLM-Evaluation).
It compares K > 2 models on one question set with paired tests, Bonferroni and
Holm, repeated-measures vs one-way ANOVA, Friedman's test and the nested linear
mixed model ``(1|category) + (1|category:question)``, applied in its section 5.2
to six ~7B models on a 1,497-question category-stratified subsample of MMLU-Pro
(Wang et al. 2024, arXiv:2406.01574), and it runs a family-wise error simulation
in its section 5.1.

This module holds only the paper's inputs and reported numbers, so that the
workflow can ask whether a configuration is the paper's without importing any
analysis code.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["PAPER_MODELS", "PAPER_SUBSAMPLE_SIZE", "EXAMPLE_CLAIMS", "PAPER_VALUES"]

#: The six ~7B models of the paper's section 5.2 (names as in upstream's archive names).
PAPER_MODELS = (
    "Yi-6B",
    "Yi-6b-Chat",
    "Qwen1.5-7B-Chat",
    "Mistral-7B-v0.1",
    "Mistral-7B-Instruct-v0.1",
    "Mistral-7B-Instruct-v0.2",
)

#: Questions of the paper's category-stratified subsample of MMLU-Pro (its section 5.2).
PAPER_SUBSAMPLE_SIZE = 1497

#: The example claims config/config.yaml ships, about the paper's models. On other data they
#: name models that are not analysed, so they are not tested there (evalbars.pipeline.smk.run_choices).
EXAMPLE_CLAIMS = (
    "best: Mistral-7B-v0.1",
    "Mistral-7B-Instruct-v0.2 > Qwen1.5-7B-Chat",
    "Mistral-7B-v0.1 > Yi-6B in math",
)

#: The numbers the paper reports in section 5.2 (text and Tables 1, 3, 4): key, what it is,
#: the paper's value, and the axis label of its figure panel (p-values on log10).
PAPER_VALUES = pd.DataFrame(
    [
        ("spread_points", "top minus bottom accuracy", 5.3, "accuracy points"),
        ("n_significant_unpaired", "pairs with unpaired p < alpha", 5, "pairs of 15"),
        ("n_significant_paired", "pairs with paired p < alpha", 5, "pairs of 15"),
        ("n_significant_bonferroni", "pairs significant after Bonferroni", 3, "pairs of 15"),
        ("n_significant_holm", "pairs significant after Holm", 3, "pairs of 15"),
        ("contrast_se_lmm_category", "contrast SE, (1|category) LMM", 0.0157, "SE (proportion)"),
        ("contrast_se_lmm_nested", "contrast SE, nested LMM", 0.0130, "SE (proportion)"),
        ("contrast_se_paired", "paired contrast SE (mean over pairs)", 0.0128, "SE (proportion)"),
        ("rm_anova_f", "RM-ANOVA F(5, 7480)", 4.45, "F"),
        ("rm_anova_p", "RM-ANOVA p", 4.8e-4, "log10 p"),
        ("oneway_f", "one-way ANOVA F(5, 8976)", 2.90, "F"),
        ("oneway_p", "one-way ANOVA p", 0.013, "log10 p"),
        ("friedman_chi2", "Friedman chi-square(5)", 22.2, "chi-square"),
        ("friedman_p", "Friedman p", 4.8e-4, "log10 p"),
    ],
    columns=["quantity", "description", "paper_value", "axis_label"],
)
