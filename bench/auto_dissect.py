"""Per-run dissection of `auto` on a generated world (issue 11): for each run, the recall
estimate and interval, and per geometric stratum the labels taken, the matches they saw and the
matches it holds; JSON out, coverage printed, and (session 28) a table by the matches the
labels hold within the world's bump: primary coverage and half-width, the share whose primary
interval names its assumption, and the assumption-free interval's coverage.

    [ASSAY_WORLD=non_monotone] [ASSAY_SRC=path/to/checkout] python bench/auto_dissect.py BUDGET
        FIRST_WORLD_SEED N_WORLDS OUT.json [{"o": {"explore": 0.1}}]

World seeds FIRST_WORLD_SEED … + N_WORLDS − 1, 10 runs each (run r: seed 1000 + r), as
`ASSAY_WSEED` in bench/auto_cells.py.
"""
import os, sys, json
import numpy as np
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, os.environ.get("ASSAY_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
from assay.worlds import WORLDS
from assay.core.strata import _descending_order
from assay.simulation import auto_runs

def one(args):
    wseed, g, budget, opts = args
    for k, v in opts.get("env", {}).items(): os.environ[k] = v
    world = WORLDS[os.environ.get("ASSAY_WORLD", "non_monotone")](np.random.default_rng(wseed))
    f = world.frame
    bump = world.params.get("bump", (0, 0))
    y, pred, score = f["label"].to_numpy(), f["prediction"].to_numpy(), f["score"].to_numpy()
    ys = y[_descending_order(score)]
    out = []
    for r, (des, col, res) in zip(g, auto_runs(y, pred, score, budget, [1000 + r for r in g],
                                              opts.get("o", {}), bounds=True)):
        e = res["recall"]
        b = des.strata.bounds
        true_h = np.add.reduceat(ys, b[:-1])
        seen = np.zeros(len(b) - 1); nl = np.zeros(len(b) - 1)
        labelled = list(zip((d.position for d in col.draws), col.labels))   # (rank − 1, label)
        for pos, lab in labelled:
            h = np.searchsorted(b, pos, side="right") - 1
            nl[h] += 1; seen[h] += lab
        tp = (y * pred).sum(); truth = tp / y.sum()
        out.append(dict(w=wseed, r=r, truth=truth, est=e.estimate, lo=e.ci_low, hi=e.ci_high,
                        n=nl.tolist(), seen=seen.tolist(), true=true_h.tolist(), size=np.diff(b).tolist(),
                        primary=getattr(e, "method", None), assumes=e.assumes,
                        free=list(e.assumption_free or (None, None)),
                        bump_seen=int(sum(lab for pos, lab in labelled
                                          if bump[0] <= pos < bump[1]))))
    return out

if __name__ == "__main__":
    budget = int(sys.argv[1]); w0 = int(sys.argv[2]); nw = int(sys.argv[3]); out = sys.argv[4]
    opts = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
    jobs = [(w0 + i, range(i * 10, i * 10 + 10), budget, opts) for i in range(nw)]
    with ProcessPoolExecutor(2) as ex:
        rows = [x for o in ex.map(one, jobs) for x in o]
    json.dump(rows, open(out, "w"))
    cov = np.mean([(r["lo"] <= r["truth"] <= r["hi"]) for r in rows])
    print("cov", cov, "n", len(rows))
    # by the matches the labels hold within the world's bump (ranks bump[0] … bump[1] − 1)
    seen = np.array([r["bump_seen"] for r in rows])
    hit = np.array([r["lo"] <= r["truth"] <= r["hi"] for r in rows])
    free = np.array([r["free"][0] <= r["truth"] <= r["free"][1] for r in rows])
    named = np.array([bool(r["assumes"]) for r in rows])
    print("bump matches labelled | runs | primary coverage | half-width | assumption named | "
          "assumption-free coverage")
    for k, m in (("0", seen == 0), ("1", seen == 1), ("2", seen == 2), ("≥ 3", seen >= 3),
                 ("≥ 2", seen >= 2), ("all", seen >= 0)):
        if m.any():
            hw = np.mean([(r["hi"] - r["lo"]) / 2 for r, x in zip(rows, m) if x])
            print(f"{k} | {m.sum()} | {hit[m].mean():.3f} | {hw:.3f} | {named[m].mean():.2f} | "
                  f"{free[m].mean():.3f}")
