"""The two-phase intervals on worlds built to break them: cells left without adjudication (the
estimate takes their assessments as correct) while the assessor errs there (issue 11's hard
regime, world seed 5, 200 runs). Session 30 found the assumption-free bound took such cells as
correct too (recall covered 0.315 with 8 adjudications); since session 31 it bounds such a cell
by [0, N']. The primary (Jeffreys) interval takes such a cell's assessments as correct, and says
so. Prints one row per world: run A's recall and precision, coverage / mean half-width of the
primary and of the assumption-free interval.

    python bench/two_phase_free_break.py [--reps 200]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from assay.core.allocation import allocate_by_rule  # noqa: E402
from assay.core.small_counts import jeffreys_two_phase_intervals  # noqa: E402
from assay.core.two_phase import estimate_arrays  # noqa: E402
from assay.core.two_phase_bounds import run_bounds  # noqa: E402
from assay.simulation import simulate_two_phase  # noqa: E402
from assay.worlds_assessor import assessor_error_world  # noqa: E402

MEASURES = ("recall", "precision")


def _skip_bottom_not_relevant(s):
    """40 adjudications per assessable cell, none in the bottom stratum's assessed-not-relevant
    cell."""
    a = np.zeros(s.first.shape[:2], np.int64)
    a[:, 1:] = np.minimum(s.first.sum(-1)[:, 1:], 40)
    a[3, 1] = 0
    return a


WORLDS = (("300 adjudications allocated as bench/double_sampling.py (control)", 300, None),
          ("8 adjudications spread in proportion (most cells get none)", 8, None),
          ("40 per cell, none in the bottom stratum's assessed-not-relevant cell", 300,
           _skip_bottom_not_relevant))


def row(label: str, adjudications: int, allocate, reps: int) -> str:
    w = assessor_error_world(np.random.default_rng(5))
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    sc = simulate_two_phase(pop, n, adjudications, reps, np.random.default_rng(6),
                            allocate=allocate)
    truth, point = pop.truth(), estimate_arrays(sc)
    res = {(k, m): ([], []) for k in ("primary", "free") for m in MEASURES}
    for b in range(reps):
        one = sc.one(b)
        free = run_bounds(one, 0.95, pattern_sizes=np.diag(pop.sizes))["A"]
        prim = jeffreys_two_phase_intervals(one, seed=b,
                                            point={k: v[b] for k, v in point.items()}).bounds
        for m in MEASURES:
            for k, (lo, hi) in (("primary", (prim[m][0][0], prim[m][1][0])), ("free", free[m])):
                res[(k, m)][0].append(lo - 1e-12 <= truth[m][0] <= hi + 1e-12)
                res[(k, m)][1].append((hi - lo) / 2)
    cells = float(sc.filled.any(axis=(1, 2)).mean())
    return (f"| {label} | {cells:.2f} | " + " | ".join(
        f"{np.mean(res[(k, m)][0]):.3f} / {np.mean(res[(k, m)][1]):.3f}"
        for m in MEASURES for k in ("primary", "free")) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    reps = ap.parse_args().reps
    print("| world (hard regime) | runs with a cell unadjudicated | recall primary | recall "
          "assumption-free | precision primary | precision assumption-free |")
    print("|---|---|---|---|---|---|")
    for label, adj, alloc in WORLDS:
        print(row(label, adj, alloc, reps), flush=True)


if __name__ == "__main__":
    main()
