"""Double sampling (issue 11, 'Honest intervals'): coverage of the corrected recall and precision
intervals of ``assay stratified``, the delta-method (logit) interval beside the small-count
Jeffreys interval (:mod:`assay.core.small_counts`, the CLI's default), per regime, with the
ratio of the estimated to the Monte Carlo variance; and the assumption-free interval printed beside
them (:mod:`assay.core.two_phase_bounds`, session 30) on the first ``--free-reps`` repetitions of
each population.

    python bench/double_sampling.py [--reps 1000] [--populations 5] [--draws 4000] [--free-reps 100]

Writes bench/out/double_sampling.md (and .json). The regimes (on
assay.worlds.assessor_error_world; bench/adversarial.py used to run the first four), one where hidden false
negatives in the bottom stratum are about as frequent as one per adjudicated sample (what the
Jeffreys interval's width guards against), and one with a handful of disagreements (strata
assessed in full, six adjudications per stratum and assessed label).
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assay.core.allocation import allocate_by_rule  # noqa: E402
from assay.core.double_sampling import allocate_adjudication  # noqa: E402
from assay.core.small_counts import jeffreys_two_phase_intervals  # noqa: E402
from assay.core.two_phase import estimate_arrays, interval  # noqa: E402
from assay.core.two_phase_bounds import run_bounds  # noqa: E402
from assay.simulation import make_population, simulate_two_phase  # noqa: E402
from assay.worlds import assessor_error_world  # noqa: E402

Z = float(norm.ppf(0.975))
HARD = "issue 11 hard regime (FP 2% in the bottom stratum only, FN 15% everywhere), " \
       "adjudications allocated for Var(recall A)"
REGIMES = {
    HARD: ({}, "optimal"),
    "the same, adjudications proportional to the assessed cells": ({}, "proportional"),
    "FP 2% and FN 15% in every stratum, allocated for Var(recall A)":
        ({"fpr_other": 0.02}, "optimal"),
    "control: bottom relevance 2%, FP 3–5%, FN 5–10% (tests/stratified/test_strat_coverage)":
        ({"p_bottom": 0.02, "fpr_other": (0.03, 0.05, 0.03), "fpr_bottom": 0.03,
          "fnr_other": (0.05, 0.10, 0.10), "fnr_bottom": 0.05}, "optimal"),
    "built to break the delta method: bottom relevance 0.5%, FN 50% there (a hidden false "
    "negative per ~400 assessed-not-relevant bottom documents), allocated for Var(recall A)":
        ({"p_bottom": 0.005, "fnr_bottom": 0.5}, "optimal"),
    "a handful of disagreements: run A's two strata (80 / 150) assessed in full, bottom 4,000 "
    "sampled 300, FP 2%, FN 4%, 6 adjudications per stratum and assessed label": (None, "few"),
}
MEASURES = ("recall", "precision")


def _world(label: str, p: int, seed: int, reps: int):
    kw, alloc = REGIMES[label]
    rng = np.random.default_rng(10_000 + seed + p)
    if alloc == "few":
        pop = make_population([80, 150, 4000], [0.85, 0.5, 0.02], [0.02] * 3, [0.04] * 3,
                              np.array([[True], [True], [False]]), np.random.default_rng(seed + p),
                              run_ids=("A",), strata=("a", "b", "rest"))
        fn = lambda s: np.minimum(np.array([[0, 6, 6]] * 3), s.first.sum(-1))  # noqa: E731
        return pop, simulate_two_phase(pop, [80, 150, 300], 36, reps, rng, allocate=fn)
    w = assessor_error_world(np.random.default_rng(seed + p), **kw)
    pop = w.population
    n = allocate_by_rule(pop.sizes, w.assessments, "legal", bottom=3, bottom_share=0.75)
    fn = ((lambda s, k=w.adjudications: allocate_adjudication(s, k, run=0))
          if alloc == "optimal" else None)
    return pop, simulate_two_phase(pop, n, w.adjudications, reps, rng, allocate=fn)


def run_regime(label: str, reps: int, populations: int, draws: int, seed: int = 11,
               free_reps: int = 100) -> dict:
    per_pop = []
    t0 = time.perf_counter()
    for p in range(populations):
        pop, sc = _world(label, p, seed, reps)
        truth = pop.truth()
        r = estimate_arrays(sc)
        K = len(pop.run_ids)
        res = {m: {k: np.zeros((reps, K)) for k in ("dlo", "dhi", "jlo", "jhi")} for m in MEASURES}
        nf = min(free_reps, reps)
        for m in MEASURES:
            res[m]["flo"], res[m]["fhi"] = np.zeros((nf, K)), np.zeros((nf, K))
        for b in range(reps):
            one = sc.one(b)
            pt = {k: v[b] for k, v in r.items()}
            iv = jeffreys_two_phase_intervals(one, draws=draws, seed=b, point=pt).bounds
            if b < nf:    # simulate_two_phase puts stratum l's documents in run-pattern l
                fb = run_bounds(one, 0.95, pattern_sizes=np.diag(pop.sizes))
                for m in MEASURES:
                    for k, run in enumerate(pop.run_ids):
                        res[m]["flo"][b, k], res[m]["fhi"][b, k] = fb[run][m]
            for m in MEASURES:
                res[m]["jlo"][b], res[m]["jhi"][b] = iv[m]
                for k in range(K):
                    d = interval(pt[m][k], pt[m + "_var"][k], method="logit")
                    res[m]["dlo"][b, k], res[m]["dhi"][b, k] = d.ci_low, d.ci_high
        out = {}
        for m in MEASURES:
            t, e, v, x = truth[m], r[m], r[m + "_var"], res[m]
            mc = e.var(axis=0)
            hw_j = (x["jhi"] - x["jlo"]) / 2
            out[m] = {
                "delta_cov": ((x["dlo"] <= t) & (t <= x["dhi"])).mean(0),
                "jeff_cov": ((x["jlo"] <= t) & (t <= x["jhi"])).mean(0),
                "jeff_miss_low": (t < x["jlo"]).mean(0), "jeff_miss_high": (t > x["jhi"]).mean(0),
                "delta_hw": ((x["dhi"] - x["dlo"]) / 2).mean(0), "jeff_hw": hw_j.mean(0),
                "delta_zero": (x["dhi"] == x["dlo"]).mean(0), "jeff_zero": (hw_j == 0).mean(0),
                "delta_ratio": v.mean(0) / mc, "jeff_ratio": ((hw_j / Z) ** 2).mean(0) / mc,
                "bias": e.mean(0) - t, "sd": e.std(0),
                "free_cov": ((x["flo"] <= t + 1e-12) & (t <= x["fhi"] + 1e-12)).mean(0),
                "free_hw": ((x["fhi"] - x["flo"]) / 2).mean(0)}
        per_pop.append(out)
    agg = {}
    for m in MEASURES:
        agg[m] = {k: np.mean([pp[m][k] for pp in per_pop], axis=0).tolist() for k in per_pop[0][m]}
        for k in ("delta_cov", "jeff_cov", "delta_ratio", "jeff_ratio"):
            vals = np.array([pp[m][k] for pp in per_pop])
            agg[m][k + "_range"] = [vals.min(0).tolist(), vals.max(0).tolist()]
    return {"regime": label, "reps": reps, "populations": populations, "draws": draws,
            "free_reps": min(free_reps, reps), "seconds": time.perf_counter() - t0,
            "measures": agg}


def _pair(xs, p=3, rng=None) -> str:
    s = " / ".join(f"{x:.{p}f}" for x in xs)
    if rng is not None:
        lo, hi = min(rng[0]), max(rng[1])
        s += f" ({lo:.{p}f}–{hi:.{p}f})"
    return s


def markdown(results: list[dict], command: str) -> str:
    r0 = results[0]
    n = r0["reps"] * r0["populations"]
    tol = 1.96 * math.sqrt(0.95 * 0.05 / n)
    tol1 = 1.96 * math.sqrt(0.95 * 0.05 / r0["reps"])
    lines = [
        "# Double sampling: honest intervals (issue 11)", "",
        f"Command: `{command}` ({platform.python_version()}, numpy {np.__version__}).", "",
        "Per regime, the population is drawn "
        f"{r0['populations']} times (world seeds 11…{10 + r0['populations']}), each with "
        f"{r0['reps']:,} seeded repetitions of both phases (assay.simulation.simulate_two_phase); "
        "estimates by assay.core.two_phase.estimate_arrays (unchanged, unbiased). `delta`: the "
        "95% logit interval from the delta-method variance (the CLI's interval before); "
        "`jeffreys`: the small-count interval of assay.core.small_counts ("
        f"{r0['draws']:,} posterior draws, the CLI's default now). Coverage pooled over the "
        f"{n:,} repetitions (range over populations in parentheses); binomial tolerance of the "
        f"pooled coverage ±{tol:.3f} (1.96 SD at {n:,}; ±{tol1:.3f} for one population of "
        f"{r0['reps']:,}). Variance ratio: `delta` = mean delta-method variance ÷ Monte Carlo "
        "variance of the estimate; `jeffreys` = mean (half-width / 1.96)² ÷ Monte Carlo "
        "variance (the variance its interval implies). Runs A / B (one run in the last regime). "
        f"`free`: the assumption-free interval (exact two-phase bounds, "
        f"assay.core.two_phase_bounds) on the first {r0.get('free_reps', 0):,} repetitions of "
        "each population: its coverage and mean half-width.",
        ""]
    for m in MEASURES:
        lines += [f"## Corrected {m}", "",
                  "| regime | cov delta | cov jeffreys | jeffreys misses (truth below / above) | "
                  "half-width delta / jeffreys | zero-width delta / jeffreys | var ratio delta |"
                  " var ratio jeffreys | bias | SD | free cov / half-width |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results:
            a = r["measures"][m]
            lines.append(
                f"| {r['regime']} | {_pair(a['delta_cov'], 3, a['delta_cov_range'])} | "
                f"{_pair(a['jeff_cov'], 3, a['jeff_cov_range'])} | "
                f"{_pair(a['jeff_miss_low'])} ; {_pair(a['jeff_miss_high'])} | "
                f"{_pair(a['delta_hw'])} ; {_pair(a['jeff_hw'])} | "
                f"{_pair(a['delta_zero'])} ; {_pair(a['jeff_zero'])} | "
                f"{_pair(a['delta_ratio'], 2, a['delta_ratio_range'])} | "
                f"{_pair(a['jeff_ratio'], 2, a['jeff_ratio_range'])} | "
                f"{_pair(a['bias'], 4)} | {_pair(a['sd'], 4)} | "
                f"{_pair(a.get('free_cov', []))} ; {_pair(a.get('free_hw', []))} |")
        lines.append("")
    secs = sum(r["seconds"] for r in results)
    lines += [f"Total time {secs / 60:.1f} min (one process).", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--populations", type=int, default=5)
    ap.add_argument("--draws", type=int, default=4000)
    ap.add_argument("--free-reps", type=int, default=100)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "double_sampling.md"))
    a = ap.parse_args()
    command = "python bench/double_sampling.py " + " ".join(sys.argv[1:])
    results = []
    for label in REGIMES:
        results.append(run_regime(label, a.reps, a.populations, a.draws, free_reps=a.free_reps))
        print(f"{label[:60]}: {results[-1]['seconds']:.0f}s", file=sys.stderr, flush=True)
        out = Path(a.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown(results, command.strip()))
        out.with_suffix(".json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
