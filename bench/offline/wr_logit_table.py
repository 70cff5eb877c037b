"""Coverage and half-width of the with-replacement designs' intervals with the delta interval
on the Wald and on the logit scale (``assay.core.measures.WR_SCALE``), recomputed by the real
``f_measures`` on the samples bench/offline/wr_capture.py captured:

    .venv/bin/python bench/offline/wr_logit_table.py /tmp/assay_wr_capture/importance_*.pkl

Prints a markdown table (coverage below 0.92 in bold: the binomial tolerance of a 95% coverage
at 200 repetitions) and the minimum per design and measure."""
import sys, pickle, math, glob, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import assay.core.measures as M
files = sys.argv[1:]
rows = []
for f in files:
    d = pickle.load(open(f, "rb")); cells = []
    for alpha, mname in ((1.0, "precision"), (0.0, "recall"), (0.5, "f1")):
        tr = d["truth"][mname]; c = {"wald": [0, 0.0], "logit": [0, 0.0]}; n = 0
        for row in d["rows"]:
            if alpha not in row["cap"]: continue
            sample, ell, yhat, a, kw, e = row["cap"][alpha]
            if e.estimate is None: continue
            n += 1
            for k in c:
                M.WR_SCALE = k
                g = M.f_measures(sample, ell, yhat, alpha, *a, **kw)[0]
                c[k][0] += g.ci_low <= tr <= g.ci_high; c[k][1] += (g.ci_high - g.ci_low) / 2
        cells.append((c["wald"][0] / n, c["logit"][0] / n, c["wald"][1] / n, c["logit"][1] / n, n))
    name = f.split("/")[-1][:-4]
    design, rest = name.split("_", 1); world, budget = rest.rsplit("_", 1)
    rows.append((design, int(budget), world, cells))
rows.sort()
def fmt(x): return f"**{x:.3f}**" if x < 0.92 else f"{x:.3f}"
print("| design | labels | world | P cov | R cov | F1 cov | hw P / R / F1 |")
print("|---|---|---|---|---|---|---|")
mins = {}
for design, b, world, cells in rows:
    print(f"| {design} | {b} | {world.replace('er_', 'er:')} | " + " | ".join(f"{fmt(c[0])} → {fmt(c[1])}" for c in cells)
          + " | " + " / ".join(f"{c[2]:.3f}→{c[3]:.3f}" for c in cells) + " |")
    for i, c in enumerate(cells):
        key = (design, i); lo = mins.setdefault(key, [1, 1]); lo[0] = min(lo[0], c[0]); lo[1] = min(lo[1], c[1])
print(mins)
