"""Capture the call of ``assay.core.measures.f_measures`` (its sample, labels, predictions and
keyword arguments) behind each final estimate of ``assay.evaluate`` on bench/adversarial.py's
worlds, so that interval constructions can be compared offline on the same draws
(bench/offline/wr_logit_table.py; session 12, issue 11):

    nice -n 10 .venv/bin/python bench/offline/wr_capture.py importance \
        realistic@1000,ties@500,er:amazon_google@500 200 1000 [world_seed=11]

One pickle per cell: /tmp/assay_wr_capture/<design>_<world>_<budget>.pkl (a cell already
captured is skipped); repetition r has seed s0 + r, as in bench/adversarial.py."""
import sys, pickle, os, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import adversarial as A, assay
import assay.core.measures as M
A._fast_history()
design = sys.argv[1]; cells = sys.argv[2].split(","); reps = int(sys.argv[3]); s0 = int(sys.argv[4])
wseed = int(sys.argv[5]) if len(sys.argv) > 5 else 11
os.makedirs("/tmp/assay_wr_capture", exist_ok=True)
orig = M.f_measures
last = {}
def spy(sample, labels, predictions, alpha, *a, **k):
    out = orig(sample, labels, predictions, alpha, *a, **k)
    last[alpha] = (sample, np.asarray(labels).copy(), np.asarray(predictions).copy(), a, dict(k), out[0])
    return out
M.f_measures = spy
for cell in cells:
    name, budget = cell.rsplit("@", 1); budget = int(budget)
    path = f"/tmp/assay_wr_capture/{design}_{name.replace(':','_')}_{budget}.pkl"
    if os.path.exists(path): continue
    w, pool, gold = A._world(name, wseed)
    rows = []
    for s in range(s0, s0 + reps):
        last.clear()
        r = assay.evaluate(pool, gold, design=design, budget=budget, seed=s, dataset=name)
        rows.append({"seed": s, "cap": dict(last), "est": {m: r.estimates[m] for m in ("precision", "recall", "f1")}})
    pickle.dump({"truth": w.truth, "rows": rows}, open(path, "wb"))
    print("done", cell, flush=True)
