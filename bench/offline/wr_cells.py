"""Coverage and mean half-width of the design-based intervals of captured with-replacement
samples (bench/offline/wr_capture.py), recomputed by the ``assay`` on ``sys.path``; and a
before → after table of two such runs:

    PYTHONPATH=<old checkout> .venv/bin/python bench/offline/wr_cells.py --json before.json CAPTURE/importance_*.pkl
    .venv/bin/python bench/offline/wr_cells.py --json after.json CAPTURE/importance_*.pkl
    .venv/bin/python bench/offline/wr_cells.py --table before.json after.json

The table marks coverage below 0.92 in bold (the binomial tolerance of a 95% coverage at 200
repetitions) and gives the intervals' methods after."""
import argparse, json, pickle, sys

ap = argparse.ArgumentParser()
ap.add_argument("--json")
ap.add_argument("--table", nargs=2)
ap.add_argument("files", nargs="*")
args = ap.parse_args()
if args.table:
    before, after = (json.load(open(f)) for f in args.table)
    fmt = lambda x: f"**{x:.3f}**" if x < 0.92 else f"{x:.3f}"
    print("| cell | precision cov | recall cov | F1 cov | half-width P / R / F1 | methods (R, after) |")
    print("|---|---|---|---|---|---|")
    for cell in sorted(after):
        b, a = before[cell], after[cell]
        print(f"| {cell} | " + " | ".join(f"{fmt(b[m]['cov'])} → {fmt(a[m]['cov'])}"
                                          for m in ("precision", "recall", "f1"))
              + " | " + " / ".join(f"{b[m]['hw']:.3f}→{a[m]['hw']:.3f}" for m in ("precision", "recall", "f1"))
              + f" | {a['recall']['methods']} |")
    sys.exit(0)
import assay.core.measures as M
out = {}
for f in args.files:
    d = pickle.load(open(f, "rb"))
    cell = f.split("/")[-1][:-4]
    out[cell] = {}
    for alpha, name in ((1.0, "precision"), (0.0, "recall"), (0.5, "f1")):
        tr = d["truth"][name]; cov = hw = n = 0; methods = {}
        for row in d["rows"]:
            if alpha not in row["cap"]:
                continue
            sample, ell, yhat, a, kw, e = row["cap"][alpha]
            if e.estimate is None:
                continue
            g = M.f_measures(sample, ell, yhat, alpha, *a, **kw)[0]
            n += 1; cov += g.ci_low <= tr <= g.ci_high; hw += (g.ci_high - g.ci_low) / 2
            methods[g.method] = methods.get(g.method, 0) + 1
        out[cell][name] = {"cov": cov / n, "hw": hw / n, "n": n, "methods": methods}
json.dump(out, open(args.json, "w"), indent=1)
