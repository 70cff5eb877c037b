"""Speed and memory of the designs at pool scale (default 10^7 items):

* set-up: building the design (sorting, strata, allocation / instrumental distribution);
* next item: mean cost of a draw over 100,000 draws, at 10^5, 10^6 and 10^7 items; for the
  adaptive designs (auto, oasis) the cost per label over a 5,000-label run, each draw labelled
  (Bernoulli(prior)) and fed back, batch re-planning and model refits included;
* memory: bytes per item retained by the design (tracemalloc, numpy allocations included).

    python bench/speed.py [--n 10000000] [--out bench/out/speed.md]
"""
from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assay.designs import build_design  # noqa: E402


def synthetic(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    score = rng.normal(-3.0, 1.5, n)
    pred = (score > 0.5).astype(np.int8)
    prior = 1.0 / (1.0 + np.exp(-score))
    return score, pred, prior


ADAPTIVE = {"auto": 5_000, "oasis": 5_000}   # labels per run for the adaptive designs


def measure(design: str, n: int, draws: int = 100_000) -> dict:
    score, pred, prior = synthetic(n)
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    des = build_design(design, n=n, predictions=pred, score=score, prior=prior,
                       budget=draws, rng=np.random.default_rng(1), options={})
    setup = time.perf_counter() - t0
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    adaptive = design in ADAPTIVE
    truth = (np.random.default_rng(2).random(n) < prior).astype(np.int8) if adaptive else None
    seen: set[int] = set()
    t0 = time.perf_counter()
    k = 0
    while (len(seen) if adaptive else k) < draws and not des.exhausted():
        d = des.draw()
        if adaptive:
            des.update(d, int(truth[d.index]))
            seen.add(d.index)
        k += 1
    per = (time.perf_counter() - t0) / max(len(seen) if adaptive else k, 1)
    return {"design": design, "n": n, "setup_s": setup, "us_per_draw": per * 1e6,
            "bytes_per_item": retained / n, "peak_bytes_per_item": peak / n}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "speed.md"))
    ap.add_argument("--designs", default="passive,stratified,importance,auto,oasis")
    a = ap.parse_args()
    rows = []
    for design in a.designs.split(","):
        for n in sorted({100_000, 1_000_000, a.n}):
            rows.append(measure(design, n, ADAPTIVE.get(design, 100_000)))
            print(rows[-1], flush=True)
    lines = [f"## Speed (`python bench/speed.py --n {a.n}`)", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; date {dt.date.today().isoformat()}. Synthetic pool "
             "(normal scores); next-item cost is the mean over 100,000 draws (auto and oasis: per "
             "distinct label over a 5,000-label run with labels fed back, re-planning "
             "included); memory is what the design keeps (tracemalloc), divided by the pool "
             "size.", "",
             "| design | items | set-up (s) | next item / label (µs) | kept (bytes/item) | "
             "peak during set-up (bytes/item) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['design']} | {r['n']:,} | {r['setup_s']:.2f} | "
                     f"{r['us_per_draw']:.1f} | {r['bytes_per_item']:.1f} | "
                     f"{r['peak_bytes_per_item']:.1f} |")
    text = "\n".join(lines) + "\n"
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
