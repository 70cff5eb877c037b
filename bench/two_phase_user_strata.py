"""Double sampling with user strata that mix run-patterns (issue 11, a world built to break
the estimator's pooling): the estimator pools the run-patterns within each stratum × assessed
label, so an adjudicated subsample whose pattern mix departs from the assessed one moves each
run's totals. Coverage of the primary (Jeffreys) and the assumption-free interval of each run's
recall, precision and F1, per run, over fresh first- and second-phase samples of one collection.

    python bench/two_phase_user_strata.py [--reps 200] [--adjudications 150] [--seed 7]

World: 20,000 documents, 3% relevant; run A returns a relevant document with probability 0.7
and another with 0.01, run B 0.5 and 0.005; four user strata by a score correlated with
relevance (top 2%, next 8%, next 30%, the rest), 150 documents assessed in each; the assessor
marks 3% of the non-relevant relevant and misses 10% of the relevant; adjudications allocated
for run A's recall (``allocate_adjudication``, at least 2 per cell).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from assay.core.double_sampling import (NOT_ADJUDICATED, allocate_adjudication,  # noqa: E402
                                        build_counts)
from assay.core.two_phase import CUT_TO_RANGE, estimate  # noqa: E402
from assay.core.two_phase_bounds import run_bounds  # noqa: E402

MEASURES = ("recall", "precision", "f1")


def world(rng: np.random.Generator, D: int = 20000):
    rel = rng.random(D) < 0.03
    ret = np.stack([rng.random(D) < np.where(rel, 0.7, 0.01),
                    rng.random(D) < np.where(rel, 0.5, 0.005)], axis=1)
    score = rel * 1.5 + ret.sum(axis=1) * 0.5 + rng.normal(0, 1, D)
    cut = np.quantile(score, [0.6, 0.9, 0.98])
    stratum = np.searchsorted(cut, score)             # 0 = bottom … 3 = top
    fal = np.where(rel, rng.random(D) > 0.10, rng.random(D) < 0.03).astype(int)
    pats, g = np.unique(ret, axis=0, return_inverse=True)
    tp = (ret & rel[:, None]).sum(axis=0)
    truth = {"recall": tp / rel.sum(), "precision": tp / ret.sum(axis=0),
             "f1": 2 * tp / (ret.sum(axis=0) + rel.sum())}
    return rel, stratum, fal, pats, g.ravel(), truth


def one_run(rng, rel, stratum, fal, pats, g, adjudications: int, per_stratum: int = 150):
    L = stratum.max() + 1
    M = np.bincount(stratum, minlength=L)
    idx = np.concatenate([rng.choice(np.flatnonzero(stratum == l), per_stratum, replace=False)
                          for l in range(L)])
    s, f, gg = stratum[idx], fal[idx], g[idx]
    naive = build_counts(M, pats, s, gg, f, run_ids=("A", "B"))
    alloc = allocate_adjudication(naive, adjudications, run=0)       # (L, C)
    true = np.full(len(idx), NOT_ADJUDICATED)
    cell = np.where(f == 1, 2, 1)
    for l in range(L):
        for c in (1, 2):
            members = np.flatnonzero((s == l) & (cell == c))
            k = min(int(alloc[l, c]), len(members))
            pick = rng.choice(members, k, replace=False)
            true[pick] = rel[idx[pick]].astype(int)
    sc = build_counts(M, pats, s, gg, f, true, run_ids=("A", "B"))
    est = estimate(sc)
    return est, run_bounds(sc), any(CUT_TO_RANGE in n for n in est.notes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--adjudications", type=int, default=150)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rel, stratum, fal, pats, g, truth = world(np.random.default_rng(a.seed))
    rng = np.random.default_rng(a.seed + 1)
    hit = {(r, m, k): [] for r in "AB" for m in MEASURES for k in ("primary", "free")}
    hw = {key: [] for key in hit}
    err = {(r, m): [] for r in "AB" for m in MEASURES}
    cut = 0
    for _ in range(a.reps):
        est, free, was_cut = one_run(rng, rel, stratum, fal, pats, g, a.adjudications)
        cut += was_cut
        for j, r in enumerate("AB"):
            for m in MEASURES:
                t = float(truth[m][j])
                e = est.runs[r][m]
                err[(r, m)].append(e.estimate - t)
                for k, (lo, hi) in (("primary", (e.ci_low, e.ci_high)), ("free", free[r][m])):
                    hit[(r, m, k)].append(lo - 1e-12 <= t <= hi + 1e-12)
                    hw[(r, m, k)].append((hi - lo) / 2)
    print(f"{a.reps} runs, {a.adjudications} adjudications; runs with a measure cut to [0, 1]: "
          f"{cut}\n")
    print("| run | measure | truth | bias (± SE) | RMSE | primary coverage / half-width | "
          "assumption-free coverage / half-width |")
    print("|---|---|---|---|---|---|---|")
    for j, r in enumerate("AB"):
        for m in MEASURES:
            e = np.array(err[(r, m)])
            print(f"| {r} | {m} | {float(truth[m][j]):.3f} | {e.mean():+.4f} (± "
                  f"{e.std(ddof=1) / np.sqrt(len(e)):.4f}) | {np.sqrt((e ** 2).mean()):.4f} | "
                  + " | ".join(f"{np.mean(hit[(r, m, k)]):.3f} / {np.mean(hw[(r, m, k)]):.3f}"
                               for k in ("primary", "free")) + " |")


if __name__ == "__main__":
    main()
