"""Label efficiency of every design on the five real ER pools: RMSE, bias, 95% CI coverage and
mean half-width of precision, recall and F1 at several budgets (distinct labels).

    python bench/label_efficiency.py [--reps 100] [--budgets 250,500,1000,2000,5000]
                                     [--pools ...] [--designs ...] [--out BENCHMARKS-label.md]

Writes a markdown section (command, machine, date, table) to stdout and to --out.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ER = ROOT.parent / "shared" / "data" / "er"
POOLS = ["amazon_google", "restaurant", "dblp_acm", "abt_buy", "tweets100k"]
DESIGNS = {
    "passive": ("passive", {}),
    "stratified-neyman": ("stratified", {"allocation": "neyman"}),
    "stratified-prop": ("stratified", {"allocation": "proportional"}),
    "importance": ("importance", {}),
    "auto": ("auto", {}),
    "oasis": ("oasis", {}),
}
DEFAULT_DESIGNS = ["auto", "passive", "stratified-neyman", "stratified-prop", "importance"]


def run_cell(args: tuple[str, str, int, int]) -> dict:
    from assay.formats.pool import load_pool
    from assay.simulation import simulate
    pool_name, design_key, budget, reps = args
    df = pd.read_parquet(ER / f"{pool_name}.parquet")
    pool = load_pool(df)
    design, opts = DESIGNS[design_key]
    score = pool.score if pool.score is not None else pool.probability
    t0 = time.perf_counter()
    res = simulate(design, df["label"].to_numpy(), pool.prediction, score,
                   pool.prior_probability(), budget, reps, seed=1000, options=opts)
    row = {"pool": pool_name, "design": design_key, "budget": budget, "reps": reps,
           "seconds": time.perf_counter() - t0}
    for m, r in res.items():
        b, se = r.bias()
        row[m] = {"defined": r.n_defined, "bias": b, "bias_se": se, "rmse": r.rmse(),
                  "coverage": r.coverage(), "half_width": r.half_width(), "truth": r.truth}
    return row


def fmt(x: float, p: int = 3) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{x:.{p}f}"


def markdown(rows: list[dict], command: str) -> str:
    lines = [f"## Label efficiency (`{command}`)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; date {dt.date.today().isoformat()}; "
             f"{rows[0]['reps']} repetitions per cell. Coverage is of the 95% interval over the "
             "repetitions where the measure is defined (`def`); RMSE and bias likewise.", "",
             "| pool | design | budget | F1 RMSE | F1 bias (±SE) | F1 cov | F1 half-width | "
             "P RMSE | P cov | R RMSE | R cov | def F1/P/R |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f, p, rc = r["f1"], r["precision"], r["recall"]
        lines.append(
            f"| {r['pool']} | {r['design']} | {r['budget']} | {fmt(f['rmse'])} | "
            f"{fmt(f['bias'])} (±{fmt(f['bias_se'])}) | {fmt(f['coverage'], 2)} | "
            f"{fmt(f['half_width'])} | {fmt(p['rmse'])} | {fmt(p['coverage'], 2)} | "
            f"{fmt(rc['rmse'])} | {fmt(rc['coverage'], 2)} | "
            f"{f['defined']}/{p['defined']}/{rc['defined']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--budgets", default="250,500,1000,2000,5000")
    ap.add_argument("--pools", default=",".join(POOLS))
    ap.add_argument("--designs", default=",".join(DEFAULT_DESIGNS))
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "label_efficiency.md"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    cells = [(p, d, int(b), a.reps) for p in a.pools.split(",") for d in a.designs.split(",")
             for b in a.budgets.split(",")]
    from rich.progress import track
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = list(track(ex.map(run_cell, cells), total=len(cells), description="cells"))
    command = "python bench/label_efficiency.py " + " ".join(sys.argv[1:])
    text = markdown(rows, command.strip())
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    print(text)


if __name__ == "__main__":
    main()
