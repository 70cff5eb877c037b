"""The markdown of bench/adversarial.py: the worlds' descriptions, the tables and the
binomial tolerance (split out to keep each file small; see that script's docstring)."""
from __future__ import annotations

import math
import subprocess
from typing import Any

import numpy as np

MEASURES = ("precision", "recall", "f1")
SHORT = {"precision": "P", "recall": "R", "f1": "F1"}
DESIGNS = ("auto", "stratified", "passive", "importance", "oasis")
BREAKS = {
    "realistic": "nothing (control: flat top, power-law decay, calibrated score)",
    "second_family": "monotone rate: 30% of matches in ranks at the 5th–20th percentile",
    "score_blind": "score sees every match: 10% of matches uniform over the ranking",
    "ultra_rare": "enough matches: ~40 in 10⁶, a quarter uniform over the ranking",
    "ties": "strict ranking: score rounded to ~20 values",
    "duplicate_scores": "distinct top scores: top 2,000 ranks in blocks of 50 equal scores",
    "weak_balanced": "sparse top: prevalence 0.5, AUC 0.6",
    "miscalibrated": "logistic(score) = probability: inflated ~45×",
    "miscalibrated_probability": "the same, given as a `probability` column",
    "non_monotone": "monotone rate: dip in the top 30 ranks, bump at ranks 2,000–6,000",
}
REP_SEED0 = 1000


def tolerance(reps: int) -> float:
    return 1.96 * math.sqrt(0.95 * 0.05 / reps)


# -- markdown ------------------------------------------------------------------------------
def f3(x: Any, p: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{p}f}"


def cov_cell(d: dict, tol: float, key: str = "coverage") -> str:
    c = d.get(key)
    if c is None:
        return "—" if d["defined"] else "— (0)"
    s = f"{c:.2f}"
    s = f"**{s}**" if c < 0.95 - tol else s
    return s if d["defined"] == d.get("_reps", d["defined"]) else f"{s} ({d['defined']})"


def shell(cmd: str) -> str:
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception as exc:  # noqa: BLE001 - machine facts are best effort
        return f"({cmd}: {exc})"


def markdown(state: dict[str, Any]) -> str:
    reps = state["reps"]
    tol = tolerance(reps)
    cmds = state.get("commands", [state["command"]])
    cells = state["cells"]
    lines = [f"# Adversarial worlds: {state.get('title', 'the intervals of today')} (issue 11)", "",
             "Command" + (f"s (one run, resumed; {len(cmds)} invocations)" if len(cmds) > 1
                          else "") + ": " + "; ".join(f"`{c}`" for c in cmds), "",
             "Date: " + " → ".join(dict.fromkeys(state.get("dates", [state["date"]])))
             + ". Repository at " + " → ".join(dict.fromkeys(state.get("commits",
                                                                     [state["commit"]])))
             + " (a working tree shared with other engineers' edits while this ran).", "",
             "Machine (`nproc`, `free -g`), Python " + state["python"] + ":", "", "```",
             state["nproc"], state["free"], "```", "",
             f"{reps} repetitions per cell (seeds {REP_SEED0}…{REP_SEED0 + reps - 1}, the same "
             f"in every cell); worlds built once from seed {state['world_seed']} "
             "(`assay.worlds.WORLDS[name](np.random.default_rng(seed))`). Binomial tolerance "
             f"of a 95% coverage at {reps} repetitions: ±1.96·√(.95·.05/{reps}) = ±{tol:.3f}, "
             f"so coverage below {0.95 - tol:.3f} is a failure (**bold**). Coverage, RMSE and "
             "bias are over the repetitions where the measure is defined (their count in "
             "parentheses when not all). hw = mean half-width of the printed 95% interval.", ""]
    if state.get("verify"):
        lines += [f"Fast path checked against the plain call: {state['verify']}.", ""]
    lines += ["## Worlds", "", "| world | items | matches | predicted | true P / R / F1 | "
              "assumption broken |", "|---|---|---|---|---|---|"]
    for name, w in state["worlds"].items():
        t = w["truth"]
        lines.append(f"| {name} | {w['n']:,} | {w['matches']:,} | {w['predicted']:,} | "
                     f"{t['precision']:.3f} / {t['recall']:.3f} / {t['f1']:.3f} | "
                     f"{BREAKS.get(name, '')} |")
    lines += ["", "## Coverage of the printed 95% interval", "",
              "| world | design | budget | P cov | R cov | F1 cov | P hw | R hw | F1 hw | "
              "F1 RMSE | F1 bias (±SE) | R RMSE | R bias (±SE) | s/rep |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = sorted(cells.values(), key=lambda c: (c["budget"], list(state["worlds"]).index(
        c["world"]) if c["world"] in state["worlds"] else 99, DESIGNS.index(c["design"])))
    for c in order:
        s = c["summary"]
        for m in MEASURES:
            s[m]["_reps"] = s["reps"]
        p, r, f = s["precision"], s["recall"], s["f1"]
        lines.append(
            f"| {c['world']} | {c['design']} | {c['budget']} | {cov_cell(p, tol)} | "
            f"{cov_cell(r, tol)} | {cov_cell(f, tol)} | {f3(p.get('half_width'))} | "
            f"{f3(r.get('half_width'))} | {f3(f.get('half_width'))} | {f3(f.get('rmse'))} | "
            f"{f3(f.get('bias'))} (±{f3(f.get('bias_se'))}) | {f3(r.get('rmse'))} | "
            f"{f3(r.get('bias'))} (±{f3(r.get('bias_se'))}) | {s['sec_per_rep']:.2f} |")
    if order:
        cpu = {d: [c["summary"]["sec_per_rep"] * c["summary"]["reps"] for c in order
                   if c["design"] == d] for d in DESIGNS}
        lines += ["", "Time in `evaluate` per cell (CPU seconds for all its repetitions; the wall "
                  "time is about half on 2 processes): " + "; ".join(
                      f"{d} {min(v):.0f}–{max(v):.0f} s (median {np.median(v):.0f})"
                      for d, v in cpu.items() if v)
                  + f"; all {len(order)} cells {sum(map(sum, cpu.values())) / 60:.0f} CPU-min."]
    if order and any("free_coverage" in c["summary"]["recall"] for c in order):
        lines += ["", "## Two intervals: the primary and the assumption-free one", "",
                  "free = the assumption-free interval (`assumption_free`; exact stratified "
                  "bounds for stratified draws, what the labels make certain for draws with "
                  "replacement); assumes = share of repetitions whose primary interval names an "
                  "assumption (`assumes` not null); model = share whose primary is the "
                  "model-based interval, and the model-based interval's coverage / half-width "
                  "over every repetition (kept beside a design-based fallback).", "",
                  "| world | design | budget | R cov | R cov free | R hw | R hw free | "
                  "P cov free | F1 cov free | F1 hw free | assumes R | model R | model cov R | "
                  "model hw R |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for c in order:
            s_ = c["summary"]
            p, r, f = s_["precision"], s_["recall"], s_["f1"]
            lines.append(
                f"| {c['world']} | {c['design']} | {c['budget']} | {cov_cell(r, tol)} | "
                f"{cov_cell(r, tol, 'free_coverage')} | {f3(r.get('half_width'))} | "
                f"{f3(r.get('free_half_width'))} | {cov_cell(p, tol, 'free_coverage')} | "
                f"{cov_cell(f, tol, 'free_coverage')} | {f3(f.get('free_half_width'))} | "
                f"{f3(r.get('assumes_share'), 2)} | {f3(r.get('model_share'), 2)} | "
                f"{f3(r.get('any_model_coverage'), 2)} | {f3(r.get('any_model_half_width'))} |")
    autos = [c for c in order if c["design"] == "auto"]
    if autos:
        lines += ["", "## `auto`: model-based estimate against the design-based interval it "
                  "prints beside", "",
                  "model = share of repetitions whose estimate is model-based (the rest fell "
                  "back to the design-based estimate); design cov = coverage of the "
                  "design-based interval (`extra[\"design_interval\"]`, or the primary where it "
                  "fell back); model cov / hw = coverage and half-width over the model-based "
                  "repetitions only.", "",
                  "| world | budget | model P / R / F1 | model cov P / R / F1 | model hw F1 | "
                  "design cov P / R / F1 | design hw P / R / F1 |",
                  "|---|---|---|---|---|---|---|"]
        for c in autos:
            s = c["summary"]
            g = lambda k, p=2: " / ".join(f3(s[m].get(k), p) for m in MEASURES)  # noqa: E731
            lines.append(f"| {c['world']} | {c['budget']} | {g('model_share')} | "
                         f"{g('model_coverage')} | {f3(s['f1'].get('model_half_width'))} | "
                         f"{g('design_coverage')} | {g('design_half_width', 3)} |")
    if cells:
        lines += ["", "## Worst cell per design", "",
                  "| design | cells | failing cells (any measure) | lowest coverage (world, "
                  "budget, measure) |", "|---|---|---|---|"]
        for d in DESIGNS:
            cs = [c for c in order if c["design"] == d]
            if not cs:
                continue
            worst, fails = None, 0
            for c in cs:
                covs = [(c["summary"][m].get("coverage"), m) for m in MEASURES]
                covs = [(v, m) for v, m in covs if v is not None]
                if any(v < 0.95 - tol for v, _ in covs):
                    fails += 1
                for v, m in covs:
                    if worst is None or v < worst[0]:
                        worst = (v, c["world"], c["budget"], m)
            lines.append(f"| {d} | {len(cs)} | {fails} | {worst[0]:.2f} ({worst[1]}, "
                         f"{worst[2]}, {SHORT[worst[3]]}) |" if worst else f"| {d} | "
                         f"{len(cs)} | {fails} | — |")
    ds = state.get("double_sampling")
    if ds:
        lines += ["", "## Double sampling (`assay stratified`), corrected recall", "",
                  "assay.worlds.assessor_error_world: 100,000 documents, two runs A, B, strata "
                  "11/10/01/00 (1,200 / 1,500 / 1,300 / 96,000), relevance 0.85 / 0.30 / 0.55 "
                  "and 0.1% in the bottom stratum, 1% unassessable; 1,500 assessments "
                  "(allocate_by_rule legal, bottom stratum capped at 75%), 300 adjudications; "
                  "estimates by assay.stratified.estimate_arrays on "
                  "assay.simulation.simulate_two_phase's vectorised repetitions; the 95% "
                  "logit interval of assay.core.two_phase.interval (the CLI's default). "
                  f"{ds[0]['populations']} populations × {ds[0]['reps']:,} repetitions per "
                  "regime; coverage pooled (range over populations); variance ratio = mean "
                  "estimated variance ÷ Monte Carlo variance of the estimate.", "",
                  "| regime | recall cov A / B (range) | naive cov A / B | var ratio A / B "
                  "(range) | bias A / B | SD A / B |", "|---|---|---|---|---|---|"]
        for r in ds:
            a = lambda k, p=3: " / ".join(f"{v:.{p}f}" for v in r[k])  # noqa: E731
            lo, hi = r["coverage_range"]
            vlo, vhi = r["var_ratio_range"]
            lines.append(f"| {r['regime']} | {a('coverage')} ({min(lo):.3f}–{max(hi):.3f}) | "
                         f"{a('naive_coverage')} | {a('var_ratio', 2)} ({min(vlo):.2f}–"
                         f"{max(vhi):.2f}) | {a('bias', 4)} | {a('sd', 4)} |")
        ds_tol = 1.96 * math.sqrt(0.95 * 0.05 / (ds[0]["reps"] * ds[0]["populations"]))
        lines += ["", f"Binomial tolerance of the pooled coverage: ±{ds_tol:.3f}."]
    sweep = state.get("sweep")
    if sweep:
        first = next(iter(sweep.values()))
        ns, nr = len(first["seeds"]), next(iter(first["seeds"].values()))["reps"]
        stol = tolerance(ns * nr)
        lines += ["", "## Over other world seeds", "",
                  f"Coverage is conditional on the one world drawn above. Here each world is "
                  f"redrawn from {ns} other seeds ({min(map(int, first['seeds']))}…"
                  f"{max(map(int, first['seeds']))}) with {nr} repetitions each: coverage "
                  f"pooled over the {ns * nr} (world, repetition) pairs (tolerance "
                  f"±{stol:.3f}), the range over world seeds in parentheses; hw and RMSE "
                  "averaged over seeds.", "",
                  "| world | design | budget | P cov | R cov | F1 cov | R hw | R RMSE | F1 hw | "
                  "F1 RMSE |", "|---|---|---|---|---|---|---|---|---|---|"]
        for c in sweep.values():
            cells_ = list(c["seeds"].values())

            def pooled(m: str, k: str = "coverage", cs: list = cells_) -> str:
                v = [x[m][k] for x in cs if x[m].get(k) is not None]
                n = [x[m]["defined"] for x in cs if x[m].get(k) is not None]
                if not v:
                    return "—"
                mean = float(np.average(v, weights=n)) if sum(n) else float("nan")
                if k != "coverage":
                    return f3(float(np.mean(v)))
                bold = mean < 0.95 - stol
                txt = f"{mean:.2f}"
                return (f"**{txt}**" if bold else txt) + f" ({min(v):.2f}–{max(v):.2f})"
            lines.append(f"| {c['world']} | {c['design']} | {c['budget']} | "
                         f"{pooled('precision')} | {pooled('recall')} | {pooled('f1')} | "
                         f"{pooled('recall', 'half_width')} | {pooled('recall', 'rmse')} | "
                         f"{pooled('f1', 'half_width')} | {pooled('f1', 'rmse')} |")
    near = [f"{c['world']}/{c['design']}/{c['budget']}"
            + (f" world seed {ws}" if ws else "") + f" {SHORT[m]}: {x[m]['near_misses']}"
            for c, ws, x in [(c, None, c["summary"]) for c in cells.values()]
            + [(c, k, v) for c in (sweep or {}).values() for k, v in c["seeds"].items()]
            for m in MEASURES if x[m].get("near_misses")]
    if near:
        lines += ["", "Misses by less than 10⁻⁹ (a zero-width `census` interval computed in "
                  "floating point that excludes the exact ratio by one rounding error; counted "
                  "as misses above): " + "; ".join(near) + "."]
    if state.get("skipped"):
        lines += ["", "Not run (time limit): " + ", ".join(state["skipped"]) + "."]
    return "\n".join(lines) + "\n"
