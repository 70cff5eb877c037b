"""Quick coverage cells for ``auto`` (issue 11): coverage, half-width, RMSE and bias of the
primary 95% interval per world/pool × mode, through :func:`assay.simulation.simulate`.

    python bench/auto_cells.py WORLDS MODES REPS BUDGET

WORLDS: comma-separated names of :data:`assay.worlds.WORLDS` or ``er:<pool>`` (a real pool in
../shared/data/er/); MODES: comma-separated ``key=value+key=value`` design options (e.g.
``tail_sd=1,tail_sd=2``; ``ASSAY_*=…`` items are set as environment variables in the workers).
Repetition r has seed 1000 + r. The world is built from seed 11, or, with ``ASSAY_WSEED=s``
set, from seed s + (r // ``ASSAY_WBLOCK``) (default 10): ``ASSAY_WSEED=100`` with 200 reps
gives 20 fresh worlds of 10 reps each (the coverage over worlds rather than on one).
"""
import os, sys, time
import numpy as np
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from assay.worlds import WORLDS
from assay.simulation import simulate

def run(args):
    world, budget, seed, reps, mode = args
    for k in [k for k in os.environ if k.startswith("ASSAY_")]:
        if k not in ("ASSAY_WSEED", "ASSAY_WBLOCK"): del os.environ[k]
    for kv in mode.split("+"):
        if "=" in kv:
            k, v = kv.split("=")
            if k.startswith("ASSAY"): os.environ[k] = v
    if world.startswith("er:"):
        import pandas as pd
        f = pd.read_parquet(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "er", f"{world[3:]}.parquet"))
    else:
        f = WORLDS[world](np.random.default_rng(int(os.environ.get("ASSAY_WSEED", "11")) + ((seed - 1000) // int(os.environ.get("ASSAY_WBLOCK", "10")) if os.environ.get("ASSAY_WSEED") else 0))).frame
    opts = {k: float(v) for k, v in (kv.split("=") for kv in mode.split("+") if "=" in kv and not kv.startswith("ASSAY"))}
    res = simulate("auto", f["label"].to_numpy(), f["prediction"].to_numpy(), f["score"].to_numpy(),
                   None, budget, reps, seed=seed, options=opts)
    return {m: (r.truth, r.estimate.tolist(), r.ci_low.tolist(), r.ci_high.tolist()) for m, r in res.items()}

if __name__ == "__main__":
    worlds = sys.argv[1].split(","); modes = sys.argv[2].split(","); reps = int(sys.argv[3]); budget = int(sys.argv[4])
    jobs = []
    for wd in worlds:
        for mode in modes:
            for c in range(0, reps, 10):
                jobs.append((wd, budget, 1000 + c, min(10, reps - c), mode))
    t = time.time()
    with ProcessPoolExecutor(2) as ex:
        outs = list(ex.map(run, jobs))
    agg = {}
    for j, o in zip(jobs, outs):
        key = (j[0], j[4])
        for m, (tr, e, lo, hi) in o.items():
            a = agg.setdefault(key + (m,), [[], [], [], []])
            a[0] += [tr] * len(e); a[1] += e; a[2] += lo; a[3] += hi
    for key, (tr, e, lo, hi) in sorted(agg.items()):
        tr, e, lo, hi = map(np.array, (tr, e, lo, hi)); d = ~np.isnan(e); tr = tr[d]
        cov = np.mean((lo[d] <= tr) & (tr <= hi[d])); hw = np.mean(hi[d] - lo[d]) / 2
        rmse = np.sqrt(np.mean((e[d] - tr) ** 2)); bias = np.mean(e[d] - tr)
        print(f"{key[0]:16s} {key[1]:6s} {key[2]:9s} cov {cov:.3f} hw {hw:.4f} rmse {rmse:.4f} bias {bias:+.4f} n {d.sum()}")
    print("time", round(time.time() - t, 1))
