"""Before → after table of OASIS's detection floors and count rule within strata (issue 11,
session 13): "before" are session 12's captured final estimates (bench/offline/wr_capture.py
oasis, world seed 11, seeds 1000–1199: the logit-scale interval, no floors), "after" the state
file of ``bench/adversarial.py --designs oasis`` at 72c7ad3 (same worlds, seeds and budgets):

    .venv/bin/python bench/offline/oasis_floors_table.py /tmp/assay_wr_capture \
        /tmp/lead/s13/oasis_floors.json > bench/out/oasis_floors_s13_table.md
"""
import json, pickle, sys
from pathlib import Path
import numpy as np

before_dir, state = Path(sys.argv[1]), json.load(open(sys.argv[2]))
M = ("precision", "recall", "f1")
print("| budget | world | P cov | R cov | F1 cov | R hw | F1 hw | F1 RMSE | R RMSE |")
print("|---|---|---|---|---|---|---|---|---|")
below = {"before": 0, "after": 0}
for budget in (500, 1000, 2000):
    for key, cell in sorted(state["cells"].items()):
        if cell["budget"] != budget:
            continue
        world = cell["world"]
        p = before_dir / f"oasis_{world.replace(':', '_')}_{budget}.pkl"
        if not p.exists():
            continue
        d = pickle.load(open(p, "rb"))
        b = {}
        for m in M:
            t = d["truth"][m]
            es = [r["est"][m] for r in d["rows"] if r["est"][m].estimate is not None]
            est = np.array([e.estimate for e in es])
            b[m] = {"coverage": np.mean([e.ci_low <= t <= e.ci_high for e in es]),
                    "half_width": np.mean([(e.ci_high - e.ci_low) / 2 for e in es]),
                    "rmse": float(np.sqrt(np.mean((est - t) ** 2)))}
        a = cell["summary"]
        def cov(m):
            x, y = b[m]["coverage"], a[m]["coverage"]
            below["before"] += x < 0.92
            below["after"] += y < 0.92
            f = lambda v: f"**{v:.3f}**" if v < 0.92 else f"{v:.3f}"
            return f"{f(x)} → {f(y)}"
        row = [str(budget), world] + [cov(m) for m in M]
        row += [f"{b[m]['half_width']:.3f} → {a[m]['half_width']:.3f}" for m in ("recall", "f1")]
        row += [f"{b[m]['rmse']:.3f} → {a[m]['rmse']:.3f}" for m in ("f1", "recall")]
        print("| " + " | ".join(row) + " |")
print(f"\nMeasure-cells below 0.92: {below['before']} → {below['after']}.")
