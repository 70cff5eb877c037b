"""The stratified design's default allocation on a pool whose score is not a probability
(session 31's audit): without a probability column, ``evaluate`` takes logistic(score) as each
item's prior P(match) and allocates by Neyman on it. On a pool whose score is N(0, 1) + 2·match
(2% matches: logistic(score) averages ~0.5), that leaves most low strata with a handful of
labels and no match seen. Coverage of the primary interval (200 runs per cell, seeds 0–199)
with the default and with ``allocation="proportional"`` (the prior unused), and how often the
primary named its assumption.

    python bench/stratified_logistic_prior.py [--reps 200]
"""
from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import assay  # noqa: E402

BUDGETS = (300, 500, 1000)


def pool(seed: int = 6, n: int = 5000, prevalence: float = 0.02, sep: float = 2.0):
    r = np.random.default_rng(seed)
    y = (r.random(n) < prevalence).astype(int)
    s = r.normal(0, 1, n) + sep * y
    pred = (s > np.quantile(s, 1 - prevalence)).astype(int)
    return pd.DataFrame({"id": np.arange(n), "score": s, "prediction": pred, "label": y})


def one(job):
    allocation, budget, seed = job
    d = pool()
    opts = None if allocation == "default" else {"allocation": allocation}
    res = assay.evaluate(d.drop(columns=["label"]), d[["id", "label"]], design="stratified",
                         budget=budget, seed=seed, options=opts, history=False)
    y, p = d.label.to_numpy(), d.prediction.to_numpy()
    tp = (y * p).sum()
    truth = {"precision": tp / p.sum(), "recall": tp / y.sum(), "f1": 2 * tp / (p.sum() + y.sum())}
    return allocation, budget, {m: (e.ci_low <= truth[m] <= e.ci_high, e.assumes is not None,
                                    (e.ci_high - e.ci_low) / 2) for m, e in res.estimates.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    reps = ap.parse_args().reps
    jobs = [(a, b, s) for a in ("default", "proportional") for b in BUDGETS for s in range(reps)]
    with ProcessPoolExecutor(2) as ex:
        res = list(ex.map(one, jobs, chunksize=8))
    print("| allocation | labels | precision cov. / hw | recall cov. / hw | F1 cov. / hw | "
          "primary named its assumption |")
    print("|---|---|---|---|---|---|")
    for a in ("default", "proportional"):
        for b in BUDGETS:
            rows = [r for aa, bb, r in res if aa == a and bb == b]
            cells = [f"{np.mean([r[m][0] for r in rows]):.3f} / {np.mean([r[m][2] for r in rows]):.3f}"
                     for m in ("precision", "recall", "f1")]
            named = np.mean([r["recall"][1] for r in rows])
            print(f"| {a} | {b} | " + " | ".join(cells) + f" | {named:.2f} |", flush=True)


if __name__ == "__main__":
    main()
