"""A pytest plugin (a check, not part of the suite): every call of
:func:`assay.core.search.least_reaching` from the sizing rules also runs plain bisection on the
same width; the tests go on with bisection's answer, and each worker writes its counts of calls,
differing answers and probes to ``$CHECK_SEARCH_OUT/count_<pid>.json``. BENCHMARKS.md,
session 21:

    CHECK_SEARCH_OUT=/tmp/cs PYTHONPATH=bench .venv/bin/python -m pytest -q -n 2 \\
        -p check_search tests/test_ondemand_*.py tests/kbp tests/test_golden.py \\
        tests/test_campaign_api.py
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import assay.core.search as search

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))
from test_search import bisection  # noqa: E402  (the oracle of the unit tests: the old rule)

ORIGINAL = search.least_reaching
COUNT = {"calls": 0, "differ": 0, "probes_new": 0, "probes_bisection": 0}


def both(width, goal, lo, hi, check_low=True, check_high=True) -> int:
    new_probes: list[int] = []
    old_probes: list[int] = []

    def w_new(d: int) -> float:
        new_probes.append(d)
        return width(d)

    def w_old(d: int) -> float:
        old_probes.append(d)
        return width(d)
    new = ORIGINAL(w_new, goal, lo, hi, check_low, check_high)
    old = bisection(w_old, goal, lo, hi, check_low, check_high)
    COUNT["calls"] += 1
    COUNT["differ"] += int(new != old)
    COUNT["probes_new"] += len(new_probes)
    COUNT["probes_bisection"] += len(old_probes)
    out = Path(os.environ.get("CHECK_SEARCH_OUT", "."))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"count_{os.getpid()}.json").write_text(json.dumps(COUNT))
    return old


def pytest_configure(config) -> None:
    import assay.core.mixture_variance as mixture_variance
    import assay.ondemand.planning as planning
    import assay.ondemand.sizing as sizing
    for module in (sizing, planning, mixture_variance):
        module.least_reaching = both
