"""The ``auto`` design with and without its opt-in tail knee (``tail_sd``), side by side on the
worlds of :mod:`assay.worlds` and the real ER pools (issue 11).

    python bench/tail_knee.py --reps 200 --budget 1000 [--cells realistic,er:abt_buy,...]
                              [--modes default,tail_sd=1] [--designs auto,stratified] [--jobs 2]

A mode is ``default`` or ``key=value+key=value`` design options; with ``--designs`` other
than ``auto`` each design runs in each mode and is labelled ``design:mode``.

Each repetition is :func:`assay.simulation.simulate` (seed ``--seed0`` + r, default 1000, in every cell: common random
numbers; worlds built from seed 11), 95% intervals. Per cell, mode and measure: coverage, mean
half-width, RMSE and bias ± its Monte Carlo SE. Results accumulate in ``--out`` (markdown,
rewritten after every cell) with the command, the machine and the date.
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assay.simulation import simulate  # noqa: E402
from adversarial import make_world  # noqa: E402  (bench/, the script's folder)

DEFAULT_CELLS = ("realistic,ties,duplicate_scores,er:amazon_google,er:abt_buy,er:tweets100k,"
                 "er:restaurant,er:dblp_acm,miscalibrated,weak_balanced,second_family,"
                 "score_blind,non_monotone")


def _frame(cell: str) -> pd.DataFrame:
    return make_world(cell, 11).frame       # a world of seed 11, or er:NAME (a real pool)


def _options(mode: str) -> dict[str, float]:
    return {} if mode == "default" else {k: float(v) for k, v in
                                         (kv.split("=") for kv in mode.split("+"))}


def _chunk(args: tuple[str, str, str, int, int, int]) -> dict[str, tuple]:
    cell, design, mode, budget, seed, reps = args
    f = _frame(cell)
    res = simulate(design, f["label"].to_numpy(), f["prediction"].to_numpy(),
                   f["score"].to_numpy(), None, budget, reps, seed=seed,
                   options=_options(mode))
    return {m: (r.truth, r.estimate, r.ci_low, r.ci_high) for m, r in res.items()}


def _row(cell: str, mode: str, m: str, parts: list[tuple]) -> str:
    truth = parts[0][0]
    est, lo, hi = (np.concatenate([p[i] for p in parts]) for i in (1, 2, 3))
    d = ~np.isnan(est)
    err = est[d] - truth
    cov = float(np.mean((lo[d] <= truth) & (truth <= hi[d])))
    hw = float(np.mean(hi[d] - lo[d]) / 2)
    rmse = float(np.sqrt(np.mean(err**2)))
    se = float(err.std(ddof=1) / math.sqrt(err.size)) if err.size > 1 else float("nan")
    return (f"| {cell} | {mode} | {m} | {truth:.4f} | {cov:.3f} | {hw:.4f} | {rmse:.4f} | "
            f"{err.mean():+.4f} ± {se:.4f} | {int(d.sum())} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--cells", default=DEFAULT_CELLS)
    ap.add_argument("--modes", default="default,tail_sd=1")
    ap.add_argument("--designs", default="auto",
                    help="designs, each run in every mode (e.g. auto,stratified,importance)")
    ap.add_argument("--seed0", type=int, default=1000,
                    help="seed of the first repetition (more repetitions of a cell: a new range)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "tail_knee.md"))
    a = ap.parse_args()
    cells, designs = a.cells.split(","), a.designs.split(",")
    modes = [m if d == "auto" else f"{d}:{m}" for d in designs for m in a.modes.split(",")]
    tol = 1.96 * math.sqrt(0.95 * 0.05 / a.reps)
    head = [f"# auto with and without the tail knee ({a.budget} labels, {a.reps} repetitions)", "",
            f"`python bench/tail_knee.py {' '.join(sys.argv[1:])}`; {platform.machine()}, "
            f"{os.cpu_count()} cores, Python {platform.python_version()}; "
            f"{datetime.date.today().isoformat()}. Coverage of the 95% interval "
            f"(binomial tolerance ±{tol:.3f}), mean half-width, RMSE, bias ± MC SE.", "",
            "| pool | mode | measure | truth | coverage | half-width | RMSE | bias | reps |",
            "|---|---|---|---|---|---|---|---|---|"]
    rows: list[str] = []
    with ProcessPoolExecutor(a.jobs) as ex, Progress() as bar:
        task = bar.add_task("cells", total=len(cells) * len(modes) * a.reps)
        for cell in cells:
            for mode in modes:
                design, _, opts = mode.rpartition(":")
                jobs = [(cell, design or "auto", opts, a.budget, a.seed0 + s,
                         min(a.chunk, a.reps - s))
                        for s in range(0, a.reps, a.chunk)]
                parts: dict[str, list[tuple]] = {}
                for j, out in zip(jobs, ex.map(_chunk, jobs)):
                    for m, p in out.items():
                        parts.setdefault(m, []).append(p)
                    bar.advance(task, j[5])
                rows += [_row(cell, mode, m, parts[m]) for m in ("precision", "recall", "f1")]
                Path(a.out).write_text("\n".join(head + rows) + "\n")


if __name__ == "__main__":
    main()
