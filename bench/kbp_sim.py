"""A simulated KBP-like on-demand campaign (issue 12): 40 systems with overlapping outputs over a
corpus of documents, built after the structure of TAC KBP 2015 cold-start slot filling as the
seeds describe it (runs grouped in teams, precision and recall spread widely, heavy overlap of
outputs, a pool that misses true relations, ~100 exhaustively annotated documents).

The world (fixed by ``--world-seed``): ``--docs`` documents, Poisson(``--per-doc``) true relation
instances each and ``--false-ratio`` times as many plausible false candidates; 40 runs from 15
teams (1–5 runs each). A team has a recall in [0.05, 0.35] and a precision in [0.15, 0.60]; its
runs vary them by ±10–20%. Every item has a shared latent ease, a per-team and a per-run noise;
run k outputs its r_k·|C*| highest-scoring true items and the false items that make its precision
p_k. Runs of one team overlap heavily, teams overlap through the shared ease.

Per repetition, two parts:

1. **Widths at a fixed budget**: n draws per system (``--budgets``), labelled from the truth, 100
   documents annotated exhaustively. Median over systems and repetitions of the 90% interval
   width of precision and recall: *simple* (per-system sampling: precision from the system's own
   draws; recall from the exhaustively annotated documents alone) against *joint* (mixture
   importance sampling with optimal weights over every system's draws, the seed's estimator (M1)
   and the self-normalised one; recall θ̂ν̂). Coverage of
   each interval is reported beside. The variance of the optimal-weights precision estimate over
   repetitions is compared with the overlap heuristic's on the same draws, per system.
2. **In turn** (``--turn-reps``): the 40 systems arrive one at a time; each gets the draws the
   on-demand rule asks for (:func:`assay.ondemand.simulate.in_turn`, the campaign's rule) to reach
   the precision half-width that 500 per-system labels give it under simple sampling
   (z·√(p(1−p)/500)); reported: the labels needed in all, against 500 × 40 = 20,000.

    .venv/bin/python bench/kbp_sim.py --reps 20 --turn-reps 5
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # one core each: the machine is shared,
os.environ.setdefault("OMP_NUM_THREADS", "1")        # and threaded BLAS on small products is slow
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.core.mixture_variance import model_variance  # noqa: E402
from assay.ondemand import joint, planning  # noqa: E402
from assay.ondemand.simulate import in_turn  # noqa: E402

Z90 = 1.6448536269514722
PUBLISHED = {"precision": (0.135, 0.063), "recall": (0.141, 0.081), "labels": 7570}
VARIANTS = (("optimal", "optimal", True), ("overlap", "overlap", True), ("own", "own", True),
            ("m1", "optimal", False), ("m1_overlap", "overlap", False))
NAMES = {"optimal": "joint, self-normalised, optimal weights (ours)",
         "m1": "joint, seed's (M1), optimal weights"}


def build(seed: int, docs: int, per_doc: float, false_ratio: float, m: int = 40,
          teams: int = 15) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_true = rng.poisson(per_doc, docs)
    n_false = rng.poisson(per_doc * false_ratio, docs)
    doc = np.concatenate([np.repeat(np.arange(docs), n_true), np.repeat(np.arange(docs), n_false)])
    truth = np.concatenate([np.ones(n_true.sum(), bool), np.zeros(n_false.sum(), bool)])
    n = len(truth)
    runs = 1 + rng.multinomial(m - teams, np.full(teams, 1 / teams))
    while runs.max() > 5:
        runs = 1 + rng.multinomial(m - teams, np.full(teams, 1 / teams))
    team_of = np.repeat(np.arange(teams), runs)
    t_rec, t_prec = rng.uniform(0.05, 0.35, teams), rng.uniform(0.15, 0.60, teams)
    ease = rng.normal(0, 1, n)
    team_noise = rng.normal(0, 1, (n, teams)).astype(np.float32)
    memb = np.zeros((n, m), dtype=bool)
    trues, falses = np.flatnonzero(truth), np.flatnonzero(~truth)
    for k in range(m):
        t = team_of[k]
        score = ease + 0.8 * team_noise[:, t] + 0.35 * rng.normal(0, 1, n)
        r = t_rec[t] * rng.uniform(0.8, 1.1)
        p = float(np.clip(t_prec[t] * rng.uniform(0.8, 1.2), 0.08, 0.9))
        n_t = max(int(round(r * len(trues))), 5)
        n_f = int(round(n_t * (1 - p) / p))
        memb[trues[np.argsort(-score[trues])[:n_t]], k] = True
        memb[falses[np.argsort(-score[falses])[:n_f]], k] = True
    return {"doc": doc, "truth": truth, "memb": memb, "team": team_of}


def widths_rep(rng: np.random.Generator, w: dict, uni: joint.Universe, rows: np.ndarray,
               n: int, docs: int, n_ex: int) -> dict[str, np.ndarray]:
    memb, truth, doc = w["memb"][rows], w["truth"][rows], w["doc"]
    m = memb.shape[1]
    items = np.concatenate([rng.choice(np.flatnonzero(memb[:, k]), n) for k in range(m)])
    src = np.repeat(np.arange(m), n)
    f = truth[items].astype(np.float64)
    us = rng.choice(docs, n_ex, replace=False)
    pooled = w["memb"].any(axis=1)
    a = np.zeros(n_ex)
    b = np.zeros(n_ex)
    c = np.zeros((n_ex, m))
    for j, u in enumerate(us):
        sel = (doc == u) & w["truth"]
        b[j], a[j] = sel.sum(), (sel & pooled).sum()
        c[j] = w["memb"][sel].sum(axis=0)
    units = joint.Units(a, b, c, docs)
    out = {}
    for name, rule, normalised in VARIANTS:
        est, parts = joint.estimate(uni, src, items, f, units, 0.90, rule, normalised)
        rule = name
        for meas in ("precision", "recall"):
            es = est[meas]
            lo = np.array([np.nan if e.ci_low is None else e.ci_low for e in es])
            hi = np.array([np.nan if e.ci_high is None else e.ci_high for e in es])
            out[f"{rule}_{meas}"] = np.array([np.nan if e.estimate is None else e.estimate
                                              for e in es])
            out[f"{rule}_{meas}_w"], out[f"{rule}_{meas}_lo"] = hi - lo, lo
            out[f"{rule}_{meas}_hi"] = hi
        if rule == "own":     # simple recall: the exhaustively annotated documents alone
            se = np.sqrt(parts.exhaustive_var)
            out["simple_recall"] = parts.exhaustive
            out["simple_recall_w"] = 2 * Z90 * se
            out["simple_recall_lo"] = parts.exhaustive - Z90 * se
            out["simple_recall_hi"] = parts.exhaustive + Z90 * se
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--turn-reps", type=int, default=5)
    ap.add_argument("--budgets", type=int, nargs="+", default=[500, 140])
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--per-doc", type=float, default=5.0)
    ap.add_argument("--false-ratio", type=float, default=4.0)
    ap.add_argument("--exhaustive", type=int, default=100)
    ap.add_argument("--world-seed", type=int, default=2015)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sequential", action="store_true",
                    help="in turn by the earlier sequential rule (planning.TWO_STAGE = False)")
    ap.add_argument("--stein-t", action="store_true",
                    help="plan the second stage with Student's t and an upper variance bound, "
                    "not z (planning.STEIN_T, off by default)")
    ap.add_argument("--variance-bound", type=float, default=None,
                    help="β of the second stage's upper variance bound, 0 for none "
                    "(planning.VARIANCE_BOUND)")
    ap.add_argument("--top-ups", type=int, default=None,
                    help="top-up stages after the second (planning.TOP_UPS)")
    ap.add_argument("--sighted", action="store_true",
                    help="size the second stage from the submission's own first-stage labels, "
                    "the earlier rule (planning.BLIND_SECOND_STAGE = False; biased, "
                    "tests/test_ondemand_nu_bias.py)")
    ap.add_argument("--turn-only", action="store_true",
                    help="run only the in-turn part and replace its section of --out")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out"
                    / "kbp_sim.md")
    args = ap.parse_args()
    if args.sequential:
        planning.TWO_STAGE = False
    if args.sighted:
        planning.BLIND_SECOND_STAGE = False
    if args.stein_t:
        planning.STEIN_T = True
    if args.variance_bound is not None:
        planning.VARIANCE_BOUND = args.variance_bound
    if args.top_ups is not None:
        planning.TOP_UPS = args.top_ups
    started = time.time()
    w = build(args.world_seed, args.docs, args.per_doc, args.false_ratio)
    memb, truth = w["memb"], w["truth"]
    m = memb.shape[1]
    rows = np.flatnonzero(memb.any(axis=1))
    uni = joint.Universe(memb[rows])
    sizes = memb.sum(axis=0)
    prec = (memb & truth[:, None]).sum(axis=0) / sizes
    rec = (memb & truth[:, None]).sum(axis=0) / truth.sum()
    overlap = np.mean([(memb[:, i] & memb[:, j]).sum() / min(sizes[i], sizes[j])
                       for i in range(m) for j in range(i + 1, m)])
    singletons = float((memb[rows].sum(axis=1) == 1).mean())
    rng = np.random.default_rng(args.seed)
    lines = ["# A simulated KBP-like on-demand campaign: 40 systems", "",
             f"`{' '.join(['python', 'bench/kbp_sim.py'] + sys.argv[1:])}` "
             f"(defaults: see `--help`), "
             f"{subprocess.run(['date', '-u'], capture_output=True, text=True).stdout.strip()}, "
             f"{platform.machine()}, {os.cpu_count()} cores.", "",
             f"World (seed {args.world_seed}): {args.docs} documents, {int(truth.sum()):,} true "
             f"relation instances, {len(rows):,} distinct items in the pool of 40 runs from "
             f"{len(set(w['team'].tolist()))} teams; the pool holds "
             f"{(memb.any(axis=1) & truth).sum() / truth.sum():.3f} of the true instances. "
             f"Systems' precision {prec.min():.2f}–{prec.max():.2f} (median "
             f"{np.median(prec):.2f}), recall {rec.min():.3f}–{rec.max():.3f} (median "
             f"{np.median(rec):.3f}); sizes {sizes.min():,}–{sizes.max():,}; mean pairwise "
             f"overlap |X_i ∩ X_j| / min(|X_i|, |X_j|) = {overlap:.2f}; {singletons:.2f} of the "
             f"pool's items are output by one system only.", ""]
    head = len(lines)
    for n in ([] if args.turn_only else args.budgets):
        tp, qp, mult = uni.patterns()
        nn = np.r_[np.full(m, n), np.zeros(2 * m)]
        rate = float((memb[rows] & truth[rows, None]).sum() / memb.sum())
        opt = joint.mixtures(uni, nn, rate, "optimal")
        ovl = joint.mixtures(uni, nn, rate, "overlap")
        model = np.array([model_variance(qp, nn, i, opt[i], rate, mult, True, tp[:, i])
                          / model_variance(qp, nn, i, ovl[i], rate, mult, True, tp[:, i])
                          for i in range(m)])
        reps = [widths_rep(rng, w, uni, rows, n, args.docs, args.exhaustive)
                for _ in range(args.reps)]
        stack = {k: np.stack([r[k] for r in reps]) for k in reps[0]}
        lines += [f"## {n} labelled draws per system, {args.exhaustive} documents annotated "
                  f"exhaustively, {args.reps} repetitions", "",
                  "| measure | estimator | median 90% CI width | mean coverage (90%) | "
                  "published width |", "|---|---|---:|---:|---:|"]
        truths = {"precision": prec, "recall": rec}
        for meas, pub in (("precision", PUBLISHED["precision"]),
                          ("recall", PUBLISHED["recall"])):
            simple = "own_precision" if meas == "precision" else "simple_recall"
            for name, key, p in (("simple", simple, pub[0]),
                                 (NAMES["m1"], f"m1_{meas}", pub[1]),
                                 (NAMES["optimal"], f"optimal_{meas}", pub[1])):
                cov = ((stack[key + "_lo"] <= truths[meas]) & (truths[meas] <= stack[key + "_hi"]))
                lines.append(f"| {meas} | {name} | {np.nanmedian(stack[key + '_w']):.3f} | "
                             f"{np.nanmean(cov):.3f} | {p:.3f} |")
        lines += ["", f"Model variance (self-normalised, the labels Bernoulli at the pool's "
                  f"rate; exact over the universe, no sampling noise) with optimal / with "
                  f"overlap weights, {n} draws per system: median {np.median(model):.3f}, range "
                  f"{model.min():.3f}–{model.max():.3f}; per system: "
                  + ", ".join(f"{r:.2f}" for r in model) + ".", ""]
        for label, a, b in (("self-normalised", "optimal", "overlap"),
                            ("seed's (M1)", "m1", "m1_overlap")):
            e_opt, e_ov = stack[f"{a}_precision"], stack[f"{b}_precision"]
            ratio = e_opt.var(axis=0, ddof=1) / e_ov.var(axis=0, ddof=1)
            bias = ((e_opt.mean(axis=0) - prec)
                    / (e_opt.std(axis=0, ddof=1) / math.sqrt(args.reps)))
            lines += [f"Precision, {label} estimator: variance over the {args.reps} "
                      "repetitions with optimal mixture weights / with the overlap heuristic's "
                      f"weights (same draws), per system: median {np.median(ratio):.2f}, "
                      f"quartiles {np.quantile(ratio, 0.25):.2f}–{np.quantile(ratio, 0.75):.2f}, "
                      f"range {ratio.min():.2f}–{ratio.max():.2f}; below 1 for "
                      f"{int((ratio < 1).sum())} of {m} systems (a ratio of two variances from "
                      f"{args.reps} repetitions is itself noisy, roughly ±"
                      f"{2 * math.sqrt(2 / (args.reps - 1)):.0%}). Bias of the optimal-weights "
                      f"estimate: max |bias/SE| over systems {np.abs(bias).max():.1f}.", "",
                      "Per system: " + ", ".join(f"{r:.2f}" for r in ratio) + ".", ""]
    if args.turn_reps:
        target = Z90 * np.sqrt(prec * (1 - prec) / 500)
        labels, within, took, cover, errs, zs = [], [], [], [], [], []
        missed: list[str] = []
        for r in range(args.turn_reps):
            t0 = time.time()
            sim = in_turn(memb, truth, target, 0.90, seed=args.seed * 1000 + r,
                          submission_cap=2000)
            took.append(time.time() - t0)
            labels.append(int(sim.labels_by_system.sum()))
            u_sim, at = sim.universe(memb)
            est, _ = joint.estimate(u_sim, sim.src(m), at, sim.f, None, 0.90)
            hw = np.array([(e.ci_high - e.ci_low) / 2 for e in est["precision"]])
            within.append(float(np.mean(hw <= target * 1.0001)))
            missed += [f"campaign {r}, system {i} (p {prec[i]:.2f}): {hw[i]:.4f} > "
                       f"{target[i]:.4f}, {int(np.count_nonzero(sim.system == i))} draws"
                       for i in np.flatnonzero(hw > target * 1.0001)]
            cover.append(float(np.mean([e.covers(p) for e, p in zip(est["precision"], prec)])))
            e_hat = np.array([e.estimate for e in est["precision"]])
            errs.append(e_hat - prec)
            zs.append((e_hat - prec) / (hw / Z90))
        lines += [f"## All 40 systems in turn at the precision width of 500 per-system labels "
                  f"({args.turn_reps} repetitions)", "",
                  "Each arriving system is sampled by the campaign's rule "
                  "(assay.ondemand.planning.next_draws"
                  + (", the sequential rule: the least draws from its own output, its novel "
                     "part or its fill proposal under the planning variance with a rate per "
                     "membership pattern, then calibrated top-up rounds until its realised "
                     if not planning.TWO_STAGE else
                     ", Stein's two-stage rule: a first stage fixed in advance from the target "
                     "and the novel share of its output, then a second stage, the least "
                     "draws from its own output, its novel part or its fill proposal under the "
                     + ("planning variance calibrated on the first stage"
                        if not planning.BLIND_SECOND_STAGE else
                        "planning variance with each pattern's rate fitted on the labels that "
                        "existed before the submission, not on its own first stage's "
                        "(planning.planning_labels)")
                     + (", planned for the half-width ε·z/t_ν (Stein's Student quantile, ν + 1 "
                        "the distinct labelled items of its output)" if planning.STEIN_T else "")
                     + (f" on the upper {1 - planning.VARIANCE_BOUND:.0%} confidence bound of "
                        "the variance (×√(χ²_β,ν/ν) on the half-width)"
                        if planning.STEIN_T and planning.VARIANCE_BOUND else "")
                     + (f", then at most {planning.TOP_UPS} top-up stages planned the same way "
                        "while the realised half-width is still wider" if planning.TOP_UPS
                        else "") + "; no stage is drawn once the ")
                  + "90% half-width is at most z·√(p(1−p)/500), p its true precision).", "",
                  f"Precision labels needed for all 40 systems: median "
                  f"{np.median(labels):,.0f}, mean {np.mean(labels):,.0f} "
                  f"(range {min(labels):,}–{max(labels):,}) against 20,000 for per-system "
                  f"sampling and the published ≈{PUBLISHED['labels']:,}; target ≤ 3,000. At the "
                  f"end, {np.mean(within):.2f} of the systems' joint precision half-widths are "
                  f"within their target; their 90% intervals cover the true precision for "
                  f"{np.mean(cover):.3f} of the {m * args.turn_reps} (system, campaign) pairs "
                  f"(binomial tolerance ±{Z90 * math.sqrt(0.09 / (m * args.turn_reps)):.3f}, "
                  "pairs of one campaign not independent). Per campaign: "
                  + ", ".join(f"{x:,}" for x in labels)
                  + f" labels. Mean {np.mean(took):.0f} s per campaign.", "",
                  "Coverage per campaign (40 systems each): "
                  + ", ".join(f"{c:.3f}" for c in cover) + ". The systems of one campaign "
                  "share their labels, so their misses come together: the s.d. of the "
                  f"campaigns' coverage is {np.std(cover, ddof=1):.3f} against "
                  f"{math.sqrt(0.09 / m):.3f} for 40 independent pairs, and the tolerance of "
                  f"the mean coverage is ±{Z90 * np.std(cover, ddof=1) / math.sqrt(len(cover)):.3f} "
                  "(90%, from the campaigns' spread).", "",
                  f"Bias over the {args.turn_reps} campaigns: mean of (estimate − p) over all "
                  f"pairs {np.mean(errs):+.4f}; mean z = (estimate − p)/SE {np.mean(zs):+.3f}; "
                  "per system, max |mean error| / (its s.d. over campaigns/√campaigns) "
                  + (f"{np.max(np.abs(np.mean(errs, axis=0)) / (np.std(errs, axis=0, ddof=1) / math.sqrt(len(errs)))):.1f}"
                     if len(errs) > 1 else "n/a") + ".", "",
                  "Half-widths beyond their target at the end: "
                  + ("; ".join(missed) if missed else "none") + ".", ""]
    lines += [f"Total run time {time.time() - started:.0f} s."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.turn_only and args.out.exists():     # keep the widths sections as they were
        old = args.out.read_text()
        cut = old.find("## All 40 systems in turn")
        lines = [old[:cut].rstrip("\n"), "", f"In-turn section: `{' '.join(sys.argv[1:])}`, "
                 f"{subprocess.run(['date', '-u'], capture_output=True, text=True).stdout.strip()}"
                 ".", ""] + lines[head:]
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
