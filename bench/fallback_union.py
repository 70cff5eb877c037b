"""`auto`'s design-based fallback with and without session 28's union (Clopper–Pearson joined
with the false negatives' counts interval after a rank model the labels contradict;
assay.core.stratified_counts), paired: each run's draws once, both estimates from them.

    python bench/fallback_union.py WORLDS REPS BUDGETS OUT.json

WORLDS: comma-separated names of assay.worlds.WORLDS (built from seed 11) or er:<pool>
(../shared/data/er/); run r has seed 1000 + r. Prints per cell recall and F1 coverage,
mean half-width and RMSE before / after, and how many runs' recall interval changed.
"""
import os, sys, json, time
import numpy as np, pandas as pd
from concurrent.futures import ProcessPoolExecutor
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)
from assay.worlds import WORLDS
from assay.simulation import collect_known, build_design, MEASURES, true_f_measure
from assay.estimation import estimate_all
from assay.core.strata import _descending_order
import assay.core.measures as M

def frame(world):
    if world.startswith("er:"):
        return pd.read_parquet(os.path.join(ROOT, "..", "shared", "data", "er", f"{world[3:]}.parquet"))
    return WORLDS[world](np.random.default_rng(11)).frame

ORIG = M.f_measures
def no_union(*a, **k):
    k["contradicted"] = False
    return ORIG(*a, **k)

def run(args):
    world, budget, seed, reps = args
    f = frame(world)
    y, pred, score = f["label"].to_numpy(), f["prediction"].to_numpy(), f["score"].to_numpy()
    order = _descending_order(score)
    out = []
    for s in range(seed, seed + reps):
        des = build_design("auto", n=len(y), predictions=pred, score=score, prior=None, budget=budget,
                           rng=np.random.default_rng(s), alpha=0.5, options={"precomputed_order": order})
        col = collect_known(des, y, budget)
        rec = {}
        for tag in ("after", "before"):
            M.f_measures = ORIG if tag == "after" else no_union
            res = estimate_all(des, col, pred, 0.95, MEASURES, "auto", bounds=False, prior=None)
            rec[tag] = {m: (e.estimate, e.ci_low, e.ci_high, e.method) for m, e in res.items()}
        M.f_measures = ORIG
        rec["truth"] = {m: true_f_measure(y, pred, a) for m, a in MEASURES.items()}
        out.append(rec)
    return world, budget, out

if __name__ == "__main__":
    worlds = sys.argv[1].split(","); reps = int(sys.argv[2]); budgets = [int(b) for b in sys.argv[3].split(",")]
    jobs = [(w, b, 1000 + c, min(10, reps - c)) for b in budgets for w in worlds for c in range(0, reps, 10)]
    t = time.time(); res = {}
    with ProcessPoolExecutor(2) as ex:
        for w, b, o in ex.map(run, jobs):
            res.setdefault(f"{w}|{b}", []).extend(o)
    json.dump(res, open(sys.argv[4], "w"))
    for key, rows in res.items():
        line = [key]
        for m in ("recall", "f1"):
            t_ = rows[0]["truth"][m]
            for tag in ("before", "after"):
                v = [r[tag][m] for r in rows if r[tag][m][0] is not None]
                cov = np.mean([lo <= t_ <= hi for _, lo, hi, _ in v]); hw = np.mean([(hi - lo) / 2 for _, lo, hi, _ in v])
                rmse = np.sqrt(np.mean([(e - t_) ** 2 for e, _, _, _ in v]))
                line.append(f"{m} {tag} {cov:.3f} {hw:.4f} {rmse:.4f}")
        changed = sum(r["before"]["recall"] != r["after"]["recall"] for r in rows)
        print(" | ".join(line), "| changed", changed)
    print("time", round(time.time() - t))
