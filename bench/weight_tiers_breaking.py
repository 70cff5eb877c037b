"""Worlds built to break the weight tiers' interval (assay.core.weight_tiers): a heavy tier of
false negatives that importance draws reach only a few times per run, so that some runs draw
none of it (no draw-based interval can see a tier never drawn) or one or two.

A pool of 150 predicted positives (120 matches) at q ∝ 1, 2,000 items below them with 80 false
negatives at q ∝ ``--mid``, and 30,000 items further down with 56 false negatives at q ∝ each
of ``--low``; T draws with replacement, Raj's ordered estimate (as the importance design),
recall's 95% interval with the tiers (today) and without them (the logit delta rule), on the
same draws.

    .venv/bin/python bench/weight_tiers_breaking.py --reps 400 --draws 3000 --mid 4 \
        --low 0.2 0.3 0.5 1.0
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import assay.core.measures as measures  # noqa: E402
from assay.core.measures import f_measures  # noqa: E402
from assay.core.totals import WithReplacementSample  # noqa: E402

TOP, MID, LOW = 150, 2000, 30000


def world(mid: float, low: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    kind = np.zeros(TOP + MID + LOW, dtype=np.int8)        # 0 TN, 1 FN, 2 TP, 3 FP
    kind[:120], kind[120:TOP] = 2, 3
    kind[TOP:TOP + 80] = 1
    kind[TOP + MID:TOP + MID + 56] = 1
    q = np.r_[np.full(TOP, 1.0), np.full(MID, mid), np.full(LOW, low)]
    return q / q.sum(), (kind % 3 != 0).astype(np.int8), (kind >= 2).astype(np.int8), 120 / 256


def coverage(q, lab, pred, truth, draws, reps, seed, tiers=True):
    rng = np.random.default_rng(seed)
    hit, width, used = 0, 0.0, 0
    orig = measures.tiered_f_interval
    if not tiers:
        measures.tiered_f_interval = lambda *a, **k: None
    try:
        for _ in range(reps):
            it = rng.choice(q.shape[0], size=draws, p=q)
            e = f_measures(WithReplacementSample(q=q[it], item=it, ordered=True), lab[it],
                           pred[it], 0.0)[0]
            hit += int(e.ci_low <= truth <= e.ci_high)
            width += (e.ci_high - e.ci_low) / 2
            used += int(e.method == "tiers")
    finally:
        measures.tiered_f_interval = orig
    return hit / reps, width / reps, used / reps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--draws", type=int, default=3000)
    ap.add_argument("--mid", type=float, default=4.0)
    ap.add_argument("--low", type=float, nargs="+", default=[0.2, 0.3, 0.5, 1.0])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print("| q low | heavy FN draws expected | runs with none | recall cov (hw) tiers | "
          "without | tiers used |")
    print("|---|---|---|---|---|---|")
    for low in a.low:
        q, lab, pred, truth = world(a.mid, low)
        expect = a.draws * q[-1] * 56
        new = coverage(q, lab, pred, truth, a.draws, a.reps, a.seed)
        old = coverage(q, lab, pred, truth, a.draws, a.reps, a.seed, tiers=False)
        print(f"| {low} | {expect:.2f} | {np.exp(-expect):.3f} | {new[0]:.3f} ({new[1]:.3f}) | "
              f"{old[0]:.3f} ({old[1]:.3f}) | {new[2]:.2f} |")


if __name__ == "__main__":
    main()
