"""Keep text from the data from ending the script blocks of Snakemake's HTML report.

Snakemake 9's report writes its data (every result's job parameters, the rules, the captions)
into ``<script>`` blocks as ``var results = <json.dumps(...)>;``. ``json.dumps`` leaves ``</`` as
it is, so a claim or a model name holding ``</script>`` ends the block early and the rest of the
data is parsed as HTML: a model named ``"><script>...</script>`` next to one named
``<img src=x onerror=...>`` runs its code when the report opens (the claims reach the job
parameters of the claims rules). :func:`guard_report_data` makes the report modules' ``json``
write ``<\\/`` instead, which a JavaScript string reads as the same ``</``; nothing else in the
report changes. ``workflow/rules/common.smk`` calls it when Snakemake is asked for a report, so
``snakemake --report`` and ``evalbars report`` are both covered;
``tests/workflow/test_report_in_browser.py`` opens such a report in a browser.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import types

__all__ = ["guard_report_data", "script_safe_dumps"]

#: Snakemake's HTML report package, whose modules serialise the report's data.
REPORT_PACKAGE = "snakemake.report.html_reporter"


def script_safe_dumps(value, **options) -> str:
    """:func:`json.dumps`, with ``</`` written ``<\\/`` so that the JSON can sit in a ``<script>``.

    >>> script_safe_dumps(["</script><b>"])
    '["<\\\\/script><b>"]'
    """
    return json.dumps(value, **options).replace("</", "<\\/")


def guard_report_data() -> list[str]:
    """Point the ``json`` of every module of Snakemake's HTML report at one whose ``dumps`` is
    :func:`script_safe_dumps`. Returns the modules changed (none when Snakemake has no such
    package: a later Snakemake may have fixed it another way)."""
    try:
        package = importlib.import_module(REPORT_PACKAGE)
    except ImportError:
        return []
    safe = types.SimpleNamespace(**{**vars(json), "dumps": script_safe_dumps})
    names = [REPORT_PACKAGE]
    names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{REPORT_PACKAGE}.")]
    changed = []
    for name in names:
        module = importlib.import_module(name)
        if getattr(module, "json", None) is json:
            module.json = safe
            changed.append(name)
    return changed
