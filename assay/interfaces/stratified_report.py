"""The JSON report and the terminal summary of ``assay stratified estimate``: each estimate
with what its interval assumes and the assumption-free interval beside it (issue 11,
must-haves 3 and 6; :mod:`assay.core.two_phase_bounds`)."""
from __future__ import annotations

import numpy as np

from assay.core.two_phase import CUT_TO_RANGE, RUN_MEASURES, TopicEstimate
from assay.core.two_phase import estimate_dict as _interval_dict
from assay.core.two_phase_bounds import topics_bounds, yield_bounds

__all__ = ["free_bounds", "named", "report", "summary_lines"]


def named(e, assumes: str, free: tuple[float, float]) -> dict:
    """An estimate's JSON with what its interval assumes and the assumption-free interval
    beside it (issue 11, must-have 3; :mod:`assay.core.two_phase_bounds`)."""
    return {**_interval_dict(e), "assumes": assumes,
            "assumption_free": {"ci_low": free[0], "ci_high": free[1]}}


def report(ds: TopicEstimate, naive: TopicEstimate, free: tuple, assumes: tuple[str, str]
           ) -> dict:
    """``free``: (corrected, naive) × (run bounds, yield bounds); ``assumes``: (corrected,
    naive)."""
    ms = tuple(RUN_MEASURES)
    runs = {}
    for run, est in ds.runs.items():
        nv = naive.runs[run]
        runs[run] = {**{m: named(est[m], assumes[0], free[0][0][run][m]) for m in ms},
                     "naive": {m: named(nv[m], assumes[1], free[1][0][run][m]) for m in ms}}
    return {"runs": runs, "yield": named(ds.yield_, assumes[0], free[0][1]),
            "naive_yield": named(naive.yield_, assumes[1], free[1][1]),
            "unassessable_share": _interval_dict(ds.unassessable_share),
            "strata": ds.strata, "notes": list(ds.notes)}


def free_bounds(scs: list, sizes: list, confidence: float) -> tuple:
    """The assumption-free run and yield bounds of one topic or of the mean over topics (one
    topic: its own bounds, the error not split)."""
    runs = topics_bounds(scs, confidence, sizes)
    ys = [yield_bounds(sc, confidence, 1.0 / len(scs)) for sc in scs]
    return runs, (float(np.mean([y[0] for y in ys])), float(np.mean([y[1] for y in ys])))


def summary_lines(result: dict) -> list[str]:
    """The terminal's summary of a report: each run's corrected measures with both intervals,
    then which to trust (issue 11, must-have 6): the assumption-free ones outright where cells
    went unadjudicated (``unadjudicated``), else if the primary's assumption may fail.

    >>> e = {"estimate": 0.5, "ci_low": 0.4, "ci_high": 0.6, "assumes": "X",
    ...      "assumption_free": {"ci_low": 0.1, "ci_high": 0.9}}
    >>> summary_lines({"runs": {"A": {"recall": e}}})[0]
    'A: recall 0.5000 [0.4000, 0.6000] (assumption-free [0.1000, 0.9000])'
    """
    out, assumes = [], set()
    for run, ms in result["runs"].items():
        parts = []
        for m in RUN_MEASURES:
            if m in ms:
                e, f = ms[m], ms[m]["assumption_free"]
                assumes.add(e["assumes"])
                parts.append(f"{m} {e['estimate']:.4f} [{e['ci_low']:.4f}, {e['ci_high']:.4f}] "
                             f"(assumption-free [{f['ci_low']:.4f}, {f['ci_high']:.4f}])")
        out.append(f"{run}: " + ", ".join(parts))
    tops = [result] + list((result.get("topics") or {}).values())
    out += [f"* {n}" for t in tops for n in t.get("notes", []) if CUT_TO_RANGE in n]
    blank = result.get("unadjudicated") or {}
    if blank.get("cells"):
        out.append(f"* {blank['documents']:,} assessed document(s) in {blank['cells']} "
                   "stratum × assessed-label cell(s) were never adjudicated: the intervals take "
                   "their assessments as correct, which no label here checks; trust the "
                   "assumption-free ones (or adjudicate some of each cell)")
    out += [f"* the intervals assume {a}: if that may fail here, trust the assumption-free "
            "ones" for a in sorted(assumes)]
    return out
