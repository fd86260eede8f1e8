"""Run lm-eval 0.4.13's own filters and ``exact_match`` on synthetic responses; write what they
return to ``tests/reference/harness/lm_eval_filter_output/filters.json``.

Test data only: the oracle of ``evalbars.data.readers.lm_eval_filters`` (which re-implements
the semantics without lm-eval's code). Run in the harness virtualenv of README.md::

    /tmp/harness-venv/bin/python tests/reference/harness/make_lm_eval_filter_reference.py

Each case is a filter list (lm-eval's ``filter_list`` entry syntax), one document's responses
(its repeats) and the document; the output holds, per case, the whole list's result
(``build_filter_ensemble(...).apply`` on one Instance, exactly as a task applies it) and each
response through the list's per-response steps alone (the list with its reducing steps
removed, applied to the one response). Each metric case is ``exact_match_hf_evaluate`` on one
prediction and reference with options.
"""

from __future__ import annotations

import json
import platform
from importlib.metadata import version
from pathlib import Path

from lm_eval.api.instance import Instance
from lm_eval.api.metrics import exact_match_hf_evaluate
from lm_eval.filters import build_filter_ensemble

OUT = Path(__file__).resolve().parent / "lm_eval_filter_output" / "filters.json"
REDUCING = {"take_first", "take_first_k", "majority_vote"}

MC_DOC = {"choices": ["Paris", "Lyon", "Marseille, the port", "Nice"]}
FILTER_CASES = [
    (
        "regex default",
        [{"function": "regex"}, {"function": "take_first"}],
        ["#### 1,234.5 then", "no number", "#### -7"],
        {},
    ),
    (
        "regex group_select -1",
        [
            {"function": "regex", "regex_pattern": "(-?[0-9]+)", "group_select": -1},
            {"function": "take_first"},
        ],
        ["3 apples and 41 pears", "none here", "-2"],
        {},
    ),
    (
        "regex two groups",
        [
            {"function": "regex", "regex_pattern": "answer: (\\w+)|final=(\\w+)"},
            {"function": "take_first"},
        ],
        ["final=Paris", "answer: Lyon", "nothing"],
        {},
    ),
    (
        "regex fallback",
        [
            {"function": "regex", "regex_pattern": "X(\\d)", "fallback": "NONE"},
            {"function": "take_first"},
        ],
        ["Y1", "X2 ", "X3X4"],
        {},
    ),
    (
        "regex stripped",
        [{"function": "regex", "regex_pattern": "is(.*)\\."}, {"function": "take_first"}],
        ["The answer is  42  .", "is .", "nope"],
        {},
    ),
    (
        "majority tie first seen",
        [
            {"function": "regex", "regex_pattern": "(\\d+)"},
            {"function": "majority_vote"},
            {"function": "take_first"},
        ],
        ["7", "8", "8", "7", "9"],
        {},
    ),
    (
        "majority of invalid",
        [
            {"function": "regex", "regex_pattern": "#### (\\d+)"},
            {"function": "majority_vote"},
            {"function": "take_first"},
        ],
        ["x", "#### 5", "y"],
        {},
    ),
    (
        "take_first_k then vote",
        [
            {"function": "take_first_k", "k": 2},
            {"function": "regex", "regex_pattern": "(\\d+)"},
            {"function": "majority_vote"},
            {"function": "take_first"},
        ],
        ["1", "2", "2", "2"],
        {},
    ),
    (
        "case and whitespace",
        [{"function": "remove_whitespace"}, {"function": "lowercase"}, {"function": "take_first"}],
        ["  Paris \n", "LYON", " Nice"],
        {},
    ),
    ("uppercase", [{"function": "uppercase"}, {"function": "take_first"}], ["b) lyon", "A"], {}),
    (
        "map",
        [
            {"function": "remove_whitespace"},
            {"function": "map", "mapping_dict": {"yes": "1", "no": "0"}, "default_value": "-1"},
            {"function": "take_first"},
        ],
        [" yes", "no ", "maybe"],
        {},
    ),
    (
        "multi_choice_regex",
        [
            {
                "function": "multi_choice_regex",
                "regex_pattern": "\\(([A-D])\\)",
                "ignore_case": True,
                "ignore_punctuation": True,
            },
            {"function": "take_first"},
        ],
        ["I pick (C).", "it is marseille the port!", "Answer: B", "no idea", "lyon"],
        MC_DOC,
    ),
]

METRIC_CASES = [
    ("plain", "42", "42", {}),
    ("case differs", "Paris", "paris", {}),
    ("ignore_case", "Paris", "paris", {"ignore_case": True}),
    ("ignore_punctuation ascii", "Paris!", "Paris", {"ignore_punctuation": True}),
    ("ignore_punctuation not unicode", "Paris\u00bf", "Paris", {"ignore_punctuation": True}),
    ("regexes_to_ignore", "1,234", "1234", {"regexes_to_ignore": [","]}),
    ("regexes_to_ignore on both", "$12", "12.00", {"regexes_to_ignore": ["\\$", "\\.00$"]}),
    ("ignore_numbers", "abc123", "abc", {"ignore_numbers": True}),
    (
        "all",
        " A,b! 1",
        " a,B 2",
        {
            "ignore_case": True,
            "ignore_punctuation": True,
            "ignore_numbers": True,
            "regexes_to_ignore": [" "],
        },
    ),
]


def run_filter_list(steps, responses, doc):
    components = [[s["function"], {k: v for k, v in s.items() if k != "function"}] for s in steps]
    ensemble = build_filter_ensemble("case", components)
    instance = Instance(request_type="generate_until", doc=doc, arguments=("", {}), idx=0)
    instance.resps = list(responses)
    ensemble.apply([instance])
    return instance.filtered_resps["case"]


def main() -> None:
    filters = []
    for name, steps, responses, doc in FILTER_CASES:
        per_response_steps = [s for s in steps if s["function"] not in REDUCING]
        one_each = [
            run_filter_list(per_response_steps + [{"function": "take_first"}], [r], doc)
            for r in responses
        ]
        filters.append(
            {
                "name": name,
                "steps": steps,
                "responses": responses,
                "doc": doc,
                "aggregate": run_filter_list(steps, responses, doc),
                "answers": one_each,
            }
        )
    metrics = [
        {
            "name": name,
            "prediction": prediction,
            "reference": reference,
            "options": options,
            "exact_match": float(
                exact_match_hf_evaluate(
                    predictions=[prediction], references=[reference], **options
                )["exact_match"]
            ),
        }
        for name, prediction, reference, options in METRIC_CASES
    ]
    payload = {
        "provenance": {
            "lm_eval": version("lm_eval"),
            "python": platform.python_version(),
            "script": "tests/reference/harness/make_lm_eval_filter_reference.py",
        },
        "filters": filters,
        "metrics": metrics,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for case in filters:
        print(f"{case['name']}: {case['aggregate']!r} <- {case['answers']!r}")
    for case in metrics:
        print(f"{case['name']}: {case['exact_match']}")


if __name__ == "__main__":
    main()
