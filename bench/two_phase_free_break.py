"""The two-phase assumption-free bound on worlds built to break it: cells left without
adjudication (their assessments taken as correct) while the assessor errs there (session 30;
200 runs, world seed 5). Prints one row per world: run A's recall and precision, coverage /
mean half-width of the assumption-free interval.

    python bench/two_phase_free_break.py
"""
import sys, numpy as np
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from assay.core.allocation import allocate_by_rule
from assay.core.two_phase import SampleCounts
from assay.core.two_phase_bounds import run_bounds
from assay.simulation import simulate_two_phase
from assay.worlds_assessor import assessor_error_world
reps = 200
for label, adj, alloc in (("hard regime, 300 adjudications allocated as bench (control)", 300, None),
                          ("hard regime, 8 adjudications spread in proportion (most cells get none)", 8, None),
                          ("hard regime, adjudications never in the bottom stratum's assessed-not-relevant cell", 300, "skip")):
    w = assessor_error_world(np.random.default_rng(5))
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    fn = None
    if alloc == "skip":
        def fn(s, k=adj):
            a = np.zeros(s.first.shape[:2], np.int64)
            ass = s.first.sum(-1)
            a[:, 1:] = np.minimum(ass[:, 1:], 40)
            a[3, 1] = 0          # bottom stratum, assessed not relevant: never adjudicated
            return a
    sc = simulate_two_phase(pop, n, adj, reps, np.random.default_rng(6), allocate=fn)
    t = pop.truth()
    hit = {m: [] for m in ("recall", "precision")}; hw = {m: [] for m in hit}
    for b in range(reps):
        one = SampleCounts(sc.population, sc.patterns, sc.assessable, sc.fallible, sc.first[b],
                           sc.second[b], sc.relevant[b], sc.run_ids, sc.strata)
        fb = run_bounds(one, 0.95, pattern_sizes=np.diag(pop.sizes))["A"]
        for m in hit:
            hit[m].append(fb[m][0] - 1e-12 <= t[m][0] <= fb[m][1] + 1e-12); hw[m].append((fb[m][1] - fb[m][0]) / 2)
    print(f"| {label} | " + " | ".join(f"{np.mean(hit[m]):.3f} / {np.mean(hw[m]):.3f}" for m in hit) + " |", flush=True)
