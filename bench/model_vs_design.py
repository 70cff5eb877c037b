"""The model's estimate against the design-based one beside it (session 29, issue 11): per cell
(a real pool or a world at a budget), `auto`'s primary estimate and interval and the
design-based estimate and interval it carries in ``extra``, over runs with seeds 1000 + r; the
RMSE of each, of their mean and of their inverse-variance composite (weights from the two
intervals' half-widths), and the primary interval's coverage.

    python bench/model_vs_design.py CELLS REPS OUT_DIR ['{"cs_imb": 0.25}']
    python bench/model_vs_design.py --table OUT_DIR      # the table again, from saved runs

CELLS: comma-separated ``pool:budget`` (a pool of ../shared/data/er/) or ``w:world:budget``
(:data:`assay.worlds.WORLDS`, built from seed 11). The optional JSON holds design options;
``cs_imb`` sets ``census_share`` where the design's imbalanced rule applies (every predicted
positive fits in half the budget; 0.1 elsewhere, as the default does). Per-run JSON goes to
OUT_DIR/<cell>.json; the table to stdout.
"""
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd

sys.path.insert(0, os.environ.get("ASSAY_SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
from assay.simulation import auto_runs  # noqa: E402
from assay.worlds import WORLDS  # noqa: E402

ER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data", "er")


def frame(pool: str) -> pd.DataFrame:
    if pool.startswith("w:"):
        return WORLDS[pool[2:]](np.random.default_rng(11)).frame
    return pd.read_parquet(os.path.join(ER, f"{pool}.parquet"))


def runs(args):
    pool, budget, seeds, opts = args
    f = frame(pool)
    y, pred, score = f["label"].to_numpy(), f["prediction"].to_numpy(), f["score"].to_numpy()
    opts = dict(opts)
    if "cs_imb" in opts:
        v = opts.pop("cs_imb")
        opts["census_share"] = v if 2 * int(pred.sum()) <= budget else 0.1
    out = []
    for _, _, res in auto_runs(y, pred, score, budget, [1000 + r for r in seeds], opts):
        row = {}
        for m in ("recall", "f1"):
            e = res[m]
            row[m] = dict(est=e.estimate, lo=e.ci_low, hi=e.ci_high, method=e.method,
                          dest=e.extra.get("design_estimate", e.estimate),
                          dint=list(e.extra.get("design_interval", (e.ci_low, e.ci_high))))
        out.append(row)
    return out


def table(pool: str, budget: int, rows: list) -> list[str]:
    f = frame(pool)
    y, p = f["label"].to_numpy(), f["prediction"].to_numpy()
    tp = float((y * p).sum())
    truth = {"recall": tp / y.sum(), "f1": 2 * tp / (p.sum() + y.sum())}
    lines = []
    for m, t in truth.items():
        g = lambda k: np.array([r[m][k] for r in rows], float)  # noqa: E731
        em, ed, lo, hi = g("est"), g("dest"), g("lo"), g("hi")
        dl, dh = (np.array([r[m]["dint"][i] for r in rows], float) for i in (0, 1))
        vm, vd = ((hi - lo) / 3.92) ** 2, ((dh - dl) / 3.92) ** 2
        w = np.where(vm + vd > 0, vm / np.where(vm + vd > 0, vm + vd, 1.0), 0.5)
        rmse = lambda e: np.sqrt(np.mean((e - t) ** 2))  # noqa: E731
        lines.append(f"| {pool}@{budget} | {m} | {rmse(em):.4f} | {rmse(ed):.4f} | "
                     f"{rmse((em + ed) / 2):.4f} | {rmse(w * ed + (1 - w) * em):.4f} | "
                     f"{np.mean((lo <= t) & (t <= hi)):.3f} | {np.mean((hi - lo) / 2):.4f} | "
                     f"{np.mean((dl <= t) & (t <= dh)):.3f} | {np.mean((dh - dl) / 2):.4f} |")
    return lines


HEAD = ("| cell | measure | model RMSE | design RMSE | mean RMSE | composite RMSE | "
        "primary coverage | primary half-width | design coverage | design half-width |\n"
        "|---|---|---|---|---|---|---|---|---|---|")

if __name__ == "__main__" and sys.argv[1] == "--table":
    print(HEAD)
    for name in sorted(os.listdir(sys.argv[2])):
        pool, b = name[:-len(".json")].rsplit("_", 1)
        pool = "w:" + pool[2:] if pool.startswith("w_") else pool
        rows = json.load(open(os.path.join(sys.argv[2], name)))
        print("\n".join(table(pool, int(b), rows)))
elif __name__ == "__main__":
    cells = [c.rsplit(":", 1) for c in sys.argv[1].split(",")]
    reps, out = int(sys.argv[2]), sys.argv[3]
    opts = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    os.makedirs(out, exist_ok=True)
    print(HEAD)
    with ProcessPoolExecutor(2) as ex:
        for pool, b in cells:
            jobs = [(pool, int(b), range(i, min(i + 10, reps)), opts) for i in range(0, reps, 10)]
            rows = [x for o in ex.map(runs, jobs) for x in o]
            json.dump(rows, open(os.path.join(out, f"{pool.replace(':', '_')}_{b}.json"), "w"))
            print("\n".join(table(pool, int(b), rows)), flush=True)
