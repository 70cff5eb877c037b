"""Side by side: assay's OASIS (:class:`assay.designs.oasis.OasisDesign`) against the original
``oasis`` 0.1.3 package (run in its own venv by ``bench/oasis_peer/run_peer.py``).

For every real ER pool and budget (distinct labels), both samplers run REPS seeded repetitions
and the RMSE of their final F1 estimates against the pool's true F1 is printed as a markdown
table, with the ratio assay/peer (below 1: assay is more accurate).

    bash bench/oasis_peer/setup.sh            # once: the peer's venv bench/.venv-oasis
    .venv/bin/python bench/oasis_compare.py --reps 200
    .venv/bin/python bench/oasis_compare.py --reps 20 --pools restaurant abt_buy --budgets 250 500
    .venv/bin/python bench/oasis_compare.py --reps 200 --auto   # and assay's auto, same seeds

Like for like: both samplers get the same inputs. When a pool has a calibrated ``probability``
column, both stratify on it and take it as the prior (the peer with ``proba=True``, as in the
paper's experiments); otherwise both stratify on ``score``, assay with the plain logistic prior of
Algorithm 2 (``--prior package``: the package's rescaled logistic) and the peer with its own
rescaled logistic. ``--v-star rms --prior package`` makes assay the package's algorithm exactly
(see ``run_peer.py --crosscheck``), so remaining differences are Monte Carlo noise. Both use K = ``--n-strata`` CSF strata
(the peer's automatic choice with ``--peer-strata auto``) from the same number of histogram
bins, min(N, 10000) (the peer's Freedman–Diaconis rule with ``--peer-bins auto``), α = ½, ε = 1e-3, prior strength 2
per stratum and the decaying prior. The peer runs as a subprocess while assay runs in this
process, so the two share the machine's two cores.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assay.designs.oasis import OasisDesign, logistic, rescaled_logistic  # noqa: E402
from assay.core.strata import Strata, csf_strata  # noqa: E402
from assay.core.measures import true_f_measure# noqa: E402
from assay.estimation import estimate_all  # noqa: E402
from assay.evaluation import collect  # noqa: E402

ER = ROOT.parent / "shared" / "data" / "er"
POOLS = ("restaurant", "dblp_acm", "abt_buy", "amazon_google", "tweets100k")
PEER_PY = ROOT / "bench" / ".venv-oasis" / "bin" / "python"
PEER = ROOT / "bench" / "oasis_peer" / "run_peer.py"


@dataclass(frozen=True)
class PoolArrays:
    name: str
    basis: np.ndarray        # what both samplers stratify on
    prior: np.ndarray        # assay's per-item prior probability
    predictions: np.ndarray
    labels: np.ndarray
    truth: float


def load(name: str, prior_rule: str = "paper") -> PoolArrays:
    frame = pd.read_parquet(ER / f"{name}.parquet")
    pred = frame["prediction"].to_numpy(np.int64)
    lab = frame["label"].to_numpy(np.int64)
    if "probability" in frame.columns:
        basis = frame["probability"].to_numpy(np.float64)
        prior = basis
    else:
        basis = frame["score"].to_numpy(np.float64)
        prior = logistic(basis) if prior_rule == "paper" else rescaled_logistic(basis)
    return PoolArrays(name, basis, prior, pred, lab, true_f_measure(lab, pred, 0.5))


def algorithm1_strata(scores: np.ndarray, n_strata: int, n_bins: int) -> Strata:
    """Seed 002 Algorithm 1 as written (and as oasis 0.1.3 codes it): one stratum boundary per
    histogram bin at most, so a bin that spans several CSF widths does not swallow strata."""
    counts, edges = np.histogram(scores, bins=n_bins)
    csf = np.cumsum(np.sqrt(counts))
    width = csf[-1] / n_strata
    j, cuts = 0, []
    for idx, value in enumerate(csf):
        if j == n_strata or idx == len(csf) - 1:
            cuts.append(edges[-1])
            break
        if value >= j * width:
            cuts.append(edges[idx])
            j += 1
    cuts[0] -= 0.01
    cuts[-1] += 0.01
    asc = np.digitize(scores, bins=cuts, right=True) - 1          # stratum, ascending score
    order = np.argsort(-scores, kind="stable")
    lab = asc[order]                                              # non-increasing along order
    change = np.flatnonzero(np.diff(lab)) + 1
    bounds = np.concatenate(([0], change, [scores.shape[0]])).astype(np.int64)
    return Strata(order=order.astype(np.int64), bounds=bounds, method="csf-algorithm1")


def run_assay(pool: PoolArrays, budget: int, reps: int, seed: int, n_strata: int,
              v_star: str = "paper", strata_rule: str = "assay") -> tuple[np.ndarray, np.ndarray, int]:
    """Final F1 estimates (NaN when undefined), draw counts over ``reps`` seeds, and K."""
    strata = (csf_strata(pool.basis, n_strata) if strata_rule == "assay" else
              algorithm1_strata(pool.basis, n_strata, min(pool.basis.shape[0], 10_000)))
    est, draws = np.full(reps, np.nan), np.zeros(reps)
    for r in range(reps):
        des = OasisDesign(pool.prior, pool.predictions, pool.basis,
                          np.random.default_rng(seed + r), n_strata=n_strata,
                          precomputed_strata=strata, v_star=v_star)
        col = collect(des, lambda i: int(pool.labels[i]), budget)
        e = estimate_all(des, col, pool.predictions, 0.95, {"f1": 0.5})["f1"]
        est[r] = e.estimate if e.defined else np.nan
        draws[r] = len(col.draws)
    return est, draws, strata.count


def run_auto(name: str, budget: int, reps: int, seed: int) -> tuple[np.ndarray, float, float]:
    """assay's ``auto`` design on the same pool and seeds: final F1 estimates, the coverage of
    its 95% intervals and their mean half-width."""
    from assay.formats.pool import load_pool
    from assay.simulation import simulate
    frame = pd.read_parquet(ER / f"{name}.parquet")
    pool = load_pool(frame)
    score = pool.score if pool.score is not None else pool.probability
    res = simulate("auto", frame["label"].to_numpy(), pool.prediction, score, None, budget,
                   reps, seed=seed, measures={"f1": 0.5})["f1"]
    return res.estimate, res.coverage(), res.half_width()


def start_peer(pool: str, budget: int, reps: int, seed: int, peer_strata: str,
               peer_bins: str) -> subprocess.Popen:
    cmd = [str(PEER_PY), str(PEER), pool, str(budget), str(reps), str(seed)]
    if peer_strata != "auto":
        cmd += ["--strata", peer_strata]
    if peer_bins != "auto":
        cmd += ["--bins", peer_bins]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def finish_peer(proc: subprocess.Popen) -> tuple[np.ndarray, np.ndarray, int]:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"peer failed ({proc.returncode}): {' '.join(proc.args)}")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    est = np.array([np.nan if r["f1"] is None else r["f1"] for r in rows])
    its = np.array([r["iterations"] for r in rows], dtype=np.float64)
    return est, its, int(rows[0]["n_strata"]) if rows else 0


def rmse(est: np.ndarray, truth: float) -> float:
    d = est[~np.isnan(est)] - truth
    return float(np.sqrt(np.mean(d**2))) if d.size else math.nan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="assay OASIS vs the original oasis package")
    ap.add_argument("--pools", nargs="+", default=list(POOLS))
    ap.add_argument("--budgets", nargs="+", type=int, default=[250, 500, 1000, 2000])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-strata", type=int, default=30)
    ap.add_argument("--peer-strata", default=None,
                    help="peer's CSF strata: a number or 'auto' (default: --n-strata)")
    ap.add_argument("--peer-bins", default="assay",
                    help="peer's CSF histogram bins: 'assay' (the same as assay's, min(N, "
                         "10000); default), 'auto' (the package's rule) or a number")
    ap.add_argument("--v-star", choices=("paper", "rms"), default="paper",
                    help="assay's v* form: the paper's (default) or the package's ('rms')")
    ap.add_argument("--prior", choices=("paper", "package"), default="paper",
                    help="assay's prior from uncalibrated scores: the paper's logistic "
                         "(default) or the package's rescaled logistic")
    ap.add_argument("--assay-strata", choices=("assay", "algorithm1"), default="assay",
                    help="assay's strata: assay.core.strata.csf_strata (default) or "
                         "Algorithm 1 exactly as the package codes it")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument("--auto", action="store_true",
                    help="also run assay's auto design on the same seeds (RMSE, ratio to the "
                         "peer, coverage and half-width of its 95%% intervals)")
    args = ap.parse_args(argv)
    if not PEER_PY.exists():
        sys.exit(f"no peer venv at {PEER_PY}: run `bash bench/oasis_peer/setup.sh` first")
    peer_strata = args.peer_strata or str(args.n_strata)
    started = time.time()
    rows = []
    print(f"# assay OASIS vs oasis 0.1.3 — F1 RMSE over {args.reps} reps (seeds {args.seed}…), "
          f"K = {args.n_strata} (peer: {peer_strata}, bins {args.peer_bins}), v* {args.v_star}, prior {args.prior}, assay strata {args.assay_strata}, "
          f"{platform.node()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| pool | budget | true F1 | assay RMSE | peer RMSE | ratio | assay bias | peer bias "
          "| assay draws | peer iters | K assay/peer |"
          + (" auto RMSE | auto/peer | auto coverage | auto half-width |" if args.auto else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
          + ("---:|---:|---:|---:|" if args.auto else ""))
    for name in args.pools:
        pool = load(name, args.prior)
        for budget in args.budgets:
            bins = (str(min(pool.basis.shape[0], 10_000)) if args.peer_bins == "assay"
                    else args.peer_bins)
            proc = start_peer(name, budget, args.reps, args.seed, peer_strata, bins)
            a_est, a_draws, a_k = run_assay(pool, budget, args.reps, args.seed, args.n_strata,
                                       args.v_star, args.assay_strata)
            auto = run_auto(name, budget, args.reps, args.seed) if args.auto else None
            p_est, p_its, p_k = finish_peer(proc)
            a_rmse, p_rmse = rmse(a_est, pool.truth), rmse(p_est, pool.truth)
            row = {"pool": name, "budget": budget, "truth": pool.truth, "reps": args.reps,
                   "assay_rmse": a_rmse, "peer_rmse": p_rmse,
                   "assay_bias": float(np.nanmean(a_est) - pool.truth),
                   "peer_bias": float(np.nanmean(p_est) - pool.truth),
                   "assay_draws": float(a_draws.mean()), "peer_iterations": float(p_its.mean()),
                   "assay_strata": a_k, "peer_strata": p_k}
            extra = ""
            if auto is not None:
                row.update({"auto_rmse": rmse(auto[0], pool.truth),
                            "auto_bias": float(np.nanmean(auto[0]) - pool.truth),
                            "auto_coverage": auto[1], "auto_half_width": auto[2]})
                extra = (f" {row['auto_rmse']:.4f} | {row['auto_rmse'] / p_rmse:.2f} | "
                         f"{auto[1]:.3f} | {auto[2]:.4f} |")
            rows.append(row)
            print(f"| {name} | {budget} | {pool.truth:.4f} | {a_rmse:.4f} | {p_rmse:.4f} | "
                  f"{a_rmse / p_rmse:.2f} | {row['assay_bias']:+.4f} | {row['peer_bias']:+.4f} | "
                  f"{row['assay_draws']:.0f} | {row['peer_iterations']:.0f} | {a_k}/{p_k} |"
                  + extra, flush=True)
    print(f"\n({time.time() - started:.0f} s; command: {' '.join(sys.argv)})")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
