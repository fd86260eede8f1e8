"""Text from the data cannot end the script blocks of Snakemake's report (evalbars.pipeline.report_guard).

The report in a browser, with model names that are HTML: tests/workflow/test_report_in_browser.py.
"""

from __future__ import annotations

import json

from snakemake.report.html_reporter.data import results, rules

from evalbars.pipeline.report_guard import guard_report_data, script_safe_dumps


def test_script_safe_json_reads_back_the_same_and_holds_no_closing_tag():
    value = {"claims": ['<img src=x onerror=alert(1)> > "></SCRIPT><script>window.x=1</script>']}
    written = script_safe_dumps(value)
    assert "</" not in written and json.loads(written) == value
    # What json.dumps would have written, but for the one escape JavaScript reads as "/".
    assert written.replace("<\\/", "</") == json.dumps(value)


def test_every_report_module_that_writes_json_writes_it_script_safe():
    changed = guard_report_data()
    assert {results.__name__, rules.__name__} <= set(changed)
    assert rules.json.dumps(["</script>"]) == r'["<\/script>"]'
    assert rules.json.loads('["a"]') == ["a"]
    assert guard_report_data() == []  # once is enough: nothing left to change
