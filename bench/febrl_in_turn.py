"""FEBRL 4, the eight real matchers submitted one at a time to an on-demand campaign (issue 12,
first must-show).

The systems arrive in the order of ``systems.parquet`` (logistic regression first, splink last).
Each new system gets only the labels it still needs: the campaign's own rule
(:func:`assay.ondemand.planning.next_draws`, Stein's two-stage rule: a first stage fixed in
advance, then the least number of draws, from its output or from the part no earlier system
output, that brings the planning variance of its precision to ``--half-width`` given the labels
from before the submission and where its first stage drew, within ``--submission-cap`` draws;
``--sighted``: sized from every label so far, the first stage's included; ``--sequential``: the
earlier rule), run
by :func:`assay.ondemand.simulate.in_turn`, the store-free driver that calls the same planning
and estimation functions with the same seeded generators as
:class:`assay.ondemand.OnDemandCampaign` (``--campaign-reps`` repetitions are also run through
the real campaign on a SQLite store with a truth label source, and must give the same draws and
the same estimates). Recall: ``--units`` file-A records drawn at random without replacement and
annotated exhaustively (each record's set of true matches, blocking misses included; one link
each in FEBRL 4). Then every system is re-estimated jointly
(:func:`assay.ondemand.joint.estimate`): precision by mixture importance sampling, recall θ̂ν̂,
F1, and the closed-world pooled recall beside.

Reported per system over ``--reps`` seeded repetitions: bias / Monte Carlo SE and coverage of
the ``--confidence`` intervals for precision, recall and F1; the pooled recall's bias against
the true recall and its coverage of it; the labels the campaign used against per-system
sampling at the same target half-width (each system alone, by the same rule, own draws only).
The annotation of the ``--units`` records is counted apart (one record each).

    nice -n 10 .venv/bin/python bench/febrl_in_turn.py --reps 200 --campaign-reps 5
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,  # noqa: E402
                           TimeElapsedColumn, TimeRemainingColumn)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assay.core.types import Estimate  # noqa: E402
from assay.ondemand import joint  # noqa: E402
from assay.ondemand.simulate import InTurn, in_turn  # noqa: E402

from assay.ondemand import planning  # noqa: E402

DATA = Path(__file__).resolve().parent / "febrl" / "out"
MEASURES = ("precision", "recall", "f1", "pooled_recall")


@dataclass(frozen=True)
class Bed:
    """The FEBRL 4 test bed as arrays: systems in order of arrival, the pool's pairs
    (rows sorted by key), which are true, and each true link's pool row (−1 outside the pool)."""

    names: list[str]
    keys: np.ndarray
    memb: np.ndarray
    truth: np.ndarray
    link_row: np.ndarray

    def true_scores(self) -> dict[str, np.ndarray]:
        tp = (self.memb & self.truth[:, None]).sum(axis=0)
        size = self.memb.sum(axis=0)
        links = len(self.link_row)
        return {"precision": tp / size, "recall": tp / links, "f1": 2 * tp / (size + links),
                "pooled_recall": tp / self.truth.sum()}

    def units(self, records: np.ndarray) -> joint.Units:
        """Exhaustive annotation of file-A records ``records`` (indices into the links)."""
        row = self.link_row[records]
        found = np.where(row[:, None] >= 0, self.memb[np.maximum(row, 0)], False)
        return joint.Units(found.any(axis=1).astype(float), np.ones(len(row)),
                           found.astype(float), len(self.link_row))


def load(data: Path = DATA) -> Bed:
    """Read ``systems.parquet`` and ``truth.parquet``. Pool rows are sorted by their key
    ``p000000``… so the campaign's universe (keys sorted) has the same rows."""
    sysdf = pd.read_parquet(data / "systems.parquet")
    truth = pd.read_parquet(data / "truth.parquet")
    names = list(dict.fromkeys(sysdf["system"].tolist()))
    pairs = (sysdf[["left_id", "right_id"]].drop_duplicates()
             .sort_values(["left_id", "right_id"]).reset_index(drop=True))
    where = {p: k for k, p in enumerate(zip(pairs["left_id"], pairs["right_id"]))}
    memb = np.zeros((len(pairs), len(names)), dtype=bool)
    pos = {n: k for k, n in enumerate(names)}
    rows = np.array([where[p] for p in zip(sysdf["left_id"], sysdf["right_id"])])
    memb[rows, sysdf["system"].map(pos).to_numpy()] = True
    links = truth.sort_values("left_id").reset_index(drop=True)
    link_row = np.array([where.get(p, -1) for p in zip(links["left_id"], links["right_id"])])
    is_true = np.zeros(len(pairs), dtype=bool)
    is_true[link_row[link_row >= 0]] = True
    keys = np.array([f"p{k:06d}" for k in range(len(pairs))], dtype=object)
    return Bed(names, keys, memb, is_true, link_row)


def repetition(bed: Bed, half_width: float, confidence: float, units: int, seed: int,
               submission_cap: int = 1000) -> tuple[InTurn, np.ndarray,
                                                    dict[str, list[Estimate]]]:
    """One campaign in turn (draws seeded by ``seed``, the campaign's seed) and the annotated
    records (seeded by (seed, 1)); every system's joint estimates at the end."""
    m = bed.memb.shape[1]
    sim = in_turn(bed.memb, bed.truth, half_width, confidence, seed=seed,
                  submission_cap=submission_cap)
    records = np.random.default_rng([seed, 1]).choice(len(bed.link_row), units, replace=False)
    uni, item = final_universe(sim, bed.memb)
    est, _ = joint.estimate(uni, sim.src(m), item, sim.f, bed.units(records), confidence)
    return sim, records, est


def final_universe(sim: InTurn, memb: np.ndarray) -> tuple[joint.Universe, np.ndarray]:
    """The campaign's universe at the end (the pool of ``memb``'s systems, with the fill
    proposals the campaign made where the driver records them) and each draw's row of it."""
    if hasattr(sim, "universe"):
        return sim.universe(memb)
    rows = np.flatnonzero(memb.any(axis=1))
    return joint.Universe(memb[rows]), np.searchsorted(rows, sim.item)


def per_system_labels(bed: Bed, half_width: float, confidence: float, seed: int,
                      submission_cap: int = 1000) -> np.ndarray:
    """Labels each system needs alone (own draws only, same rule, no label shared)."""
    return np.array([in_turn(bed.memb[:, [k]], bed.truth, half_width, confidence,
                             seed=seed, submission_cap=submission_cap).labels_by_system[0]
                     for k in range(bed.memb.shape[1])])


def campaign_repetition(bed: Bed, half_width: float, confidence: float, records: np.ndarray,
                        seed: int, submission_cap: int = 1000):
    """The same repetition through :class:`OnDemandCampaign` on a SQLite store: returns the
    campaign's draws (keys) and its report."""
    from assay.labels.sources import CallableLabels
    from assay.labels.store import LabelStore
    from assay.ondemand import OnDemandCampaign

    gold = dict(zip(bed.keys.tolist(), bed.truth.astype(int).tolist()))
    with tempfile.TemporaryDirectory() as tmp:
        store = LabelStore(Path(tmp) / "febrl.db")
        camp = OnDemandCampaign.create(store, "febrl", corpus_units=len(bed.link_row),
                                       confidence=confidence, half_width=half_width,
                                       submission_cap=submission_cap, seed=seed)
        source = CallableLabels(gold.__getitem__, "gold")
        for k, name in enumerate(bed.names):
            camp.submit(name, bed.keys[bed.memb[:, k]].tolist(), source)
        row = bed.link_row[records]
        camp.annotate_units({f"a{r}": [str(bed.keys[w])] if w >= 0 else [f"outside{r}"]
                             for r, w in zip(records.tolist(), row.tolist())})
        drawn = camp.od.draws(camp.row.id)["item"].tolist()
        return drawn, camp.report()


def _z(est: np.ndarray, truth: np.ndarray) -> np.ndarray:
    se = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, (est.mean(axis=0) - truth) / se, 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--campaign-reps", type=int, default=5)
    ap.add_argument("--half-width", type=float, default=0.03)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--units", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--proposed-fix", action="store_true",
                    help="kept for the recorded commands: the variance floor and its plan "
                    "are in assay since session 5 (assay.ondemand.regions, "
                    "planning.region_draws); nothing to patch")
    ap.add_argument("--two-stage", action="store_true",
                    help="kept for the recorded commands: the two-stage rule is assay's "
                    "default since 15c1098 (assay.ondemand.planning.next_draws)")
    ap.add_argument("--sequential", action="store_true",
                    help="the earlier sequential rule instead (planning.TWO_STAGE = False: "
                    "stop once the realised half-width meets the target, up to 4 rounds)")
    ap.add_argument("--sighted", action="store_true",
                    help="size the second stage from the submission's own first-stage labels, "
                    "the earlier rule (planning.BLIND_SECOND_STAGE = False)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out"
                    / "febrl_in_turn.md")
    args = ap.parse_args()
    if args.sequential:
        planning.TWO_STAGE = False
    if args.sighted:
        planning.BLIND_SECOND_STAGE = False
    bed = load()
    m, reps = len(bed.names), args.reps
    truth = bed.true_scores()
    est = {k: np.full((reps, m), np.nan) for k in MEASURES}
    cover = {k: np.zeros((reps, m)) for k in MEASURES}
    half = {k: np.full((reps, m), np.nan) for k in MEASURES}
    method = np.empty((reps, m), dtype=object)
    labels, alone = np.zeros((reps, m)), np.zeros((reps, m))
    agree: list[str] = []
    t0 = time.time()
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*cols) as prog:
        task = prog.add_task("FEBRL in turn", total=reps)
        for r in range(reps):
            seed = args.seed + r
            sim, records, res = repetition(bed, args.half_width, args.confidence, args.units,
                                           seed)
            labels[r] = sim.labels_by_system
            alone[r] = per_system_labels(bed, args.half_width, args.confidence, seed)
            for k in MEASURES:
                target = truth["recall"] if k == "pooled_recall" else truth[k]
                est[k][r] = [np.nan if e.estimate is None else e.estimate for e in res[k]]
                cover[k][r] = [e.covers(target[i]) for i, e in enumerate(res[k])]
                half[k][r] = [np.nan if e.ci_low is None else (e.ci_high - e.ci_low) / 2
                              for e in res[k]]
            method[r] = [e.method for e in res["precision"]]
            prog.advance(task)
        task2 = prog.add_task("OnDemandCampaign (SQLite)", total=args.campaign_reps)
        for r in range(args.campaign_reps):
            seed = args.seed + r
            sim, records, res = repetition(bed, args.half_width, args.confidence, args.units,
                                           seed)
            drawn, rep = campaign_repetition(bed, args.half_width, args.confidence, records,
                                             seed)
            same_draws = drawn == bed.keys[sim.item].tolist()
            diff = max(abs((s.estimates[k].estimate or 0.0) - (res[k][i].estimate or 0.0))
                       for i, s in enumerate(rep.systems) for k in MEASURES)
            agree.append(f"seed {seed}: draws identical {same_draws}, labels "
                         f"{rep.labels_total} vs {int(sim.labels_by_system.sum())}, largest "
                         f"estimate difference {diff:.1e}")
            prog.advance(task2)
    elapsed = time.time() - t0
    _write(args, bed, truth, est, cover, half, method, labels, alone, agree, elapsed)


def _write(args, bed, truth, est, cover, half, method, labels, alone, agree, elapsed) -> None:
    reps, m = labels.shape
    z = 1.959963984540054
    conf = args.confidence
    tol = z * math.sqrt(conf * (1 - conf) / reps)
    lo_ok = conf - tol
    env = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
    code = os.environ.get("ASSAY_COMMIT") or subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
        cwd=Path(__file__).resolve().parent).stdout.strip() or "unknown"
    date = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"# FEBRL 4: {m} real matchers submitted one at a time (on-demand campaign)", "",
        "Command: `nice -n 10 .venv/bin/python bench/febrl_in_turn.py --reps "
        f"{reps} --campaign-reps {args.campaign_reps} --half-width {args.half_width} "
        f"--confidence {args.confidence} --units {args.units} --seed {args.seed}"
        + (" --proposed-fix" if args.proposed_fix else "")
        + (" --two-stage" if args.two_stage else "")
        + (" --sequential" if args.sequential else "")
        + f" --out {os.path.relpath(args.out)}`", "",
        f"Machine: {env}, {os.cpu_count()} cores (`nproc`), Python "
        f"{platform.python_version()}, numpy {np.__version__}; shared with other jobs, under "
        f"`nice`. Date: {date}. Wall time {elapsed / 60:.1f} min. Code: assay at {code}.", "",
        f"Each repetition (seed {args.seed} + r): the systems arrive in the order below; each "
        f"gets the draws the campaign's rule asks for to bring its {conf:.0%} precision interval "
        f"to half-width {args.half_width} given every earlier label ("
        + ("sequential rule, at most 4 rounds" if args.sequential else
           "two-stage rule: a first stage fixed in advance, one second stage sized from it"
           if args.sighted else
           "two-stage rule: a first stage fixed in advance, one second stage sized from the "
           "labels that existed before the submission and where its first stage drew, not from "
           "what the first stage showed (planning.planning_labels)")
        + f", 1,000 draws); then {args.units} file-A records are annotated exhaustively and every "
        "system is re-estimated jointly. Truth: the full FEBRL 4 truth (5,000 links). "
        f"Coverage of {conf:.0%} intervals over {reps} repetitions: binomial tolerance "
        f"±{tol:.3f} (1.96·√({conf}·{1 - conf:.2f}/{reps})), so a true {conf:.0%} interval "
        f"shows ≥ {lo_ok:.3f}.", "",
        "Driver: `assay.ondemand.simulate.in_turn` (store-free: the campaign's `joint.next_draws`"
        " plan, the same seeded generators `[seed, system, round]`, labels from the truth at "
        "once) and `joint.estimate` at the end, as `OnDemandCampaign.report` calls it. "
        f"{len(agree)} repetitions were also run through `OnDemandCampaign` on a SQLite label "
        "store with a truth label source:", ""]
    lines += [f"- {a}" for a in agree]
    lines += ["", "## Bias and coverage", "",
              "bias/SE: (mean estimate − truth) / Monte Carlo SE of the mean; |bias/SE| ≤ 3 "
              "passes. Pooled recall is compared with the *true* recall (its bias is the point).",
              "", "| system | measure | truth | mean estimate | bias | bias/SE | coverage | "
              "mean half-width |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    zs = {k: _z(est[k], truth["recall"] if k == "pooled_recall" else truth[k])
          for k in MEASURES}
    for i, name in enumerate(bed.names):
        for k in MEASURES:
            t = truth["recall"][i] if k == "pooled_recall" else truth[k][i]
            e = est[k][:, i]
            lines.append(f"| {name} | {k} | {t:.4f} | {np.nanmean(e):.4f} | "
                         f"{np.nanmean(e) - t:+.4f} | {zs[k][i]:+.1f} | "
                         f"{cover[k][:, i].mean():.3f} | {np.nanmean(half[k][:, i]):.4f} |")
    lines += ["", "## Summary", ""]
    for k in ("precision", "recall", "f1"):
        c = cover[k].mean(axis=0)
        lines.append(f"- {k}: coverage {c.min():.3f}–{c.max():.3f} (mean {c.mean():.3f}; "
                     f"systems below {lo_ok:.3f}: "
                     f"{', '.join(n for n, x in zip(bed.names, c) if x < lo_ok) or 'none'}); "
                     f"max |bias/SE| {np.max(np.abs(zs[k])):.1f}")
    pb = np.nanmean(est["pooled_recall"], axis=0) - truth["recall"]
    ob = np.nanmean(est["recall"], axis=0) - truth["recall"]
    lines.append(f"- pooled (closed-world) recall: bias {pb.min():+.4f} to {pb.max():+.4f} "
                 f"(coverage of the true recall {cover['pooled_recall'].mean(axis=0).min():.3f}"
                 f"–{cover['pooled_recall'].mean(axis=0).max():.3f}); open-world recall θ̂ν̂: "
                 f"bias {ob.min():+.4f} to {ob.max():+.4f}")
    hw_p = half["precision"]
    lines.append(f"- precision half-width within the target {args.half_width}: "
                 f"{np.mean(hw_p <= args.half_width * 1.0001):.3f} of system-repetitions "
                 f"(per system {np.nanmean(hw_p, axis=0).min():.4f}–"
                 f"{np.nanmean(hw_p, axis=0).max():.4f} on average)")
    kinds = pd.Series(method.ravel()).value_counts()
    lines.append("- precision interval methods: " + ", ".join(f"{k} {v}" for k, v in
                                                               kinds.items()))
    zq = float(__import__("scipy.stats").stats.norm.ppf(0.5 + conf / 2))
    formula = np.ceil(zq**2 * truth["precision"] * (1 - truth["precision"])
                      / args.half_width**2)
    lines += ["", "## Labels", "",
              "In turn: new labels each submission paid for (an item labelled earlier is free). "
              "Alone: the same rule for the system by itself (own draws only, nothing shared), "
              "the per-system sampling cost at the same target half-width. Formula: "
              "z²p(1−p)/ε² at the true precision (per-system simple random sampling, knowing p);"
              f" the conservative z²/4ε² is {math.ceil(zq**2 / (4 * args.half_width**2))} per "
              f"system. Excluding the {args.units} exhaustively annotated records.", "",
              "| system | in turn (mean) | alone (mean) | formula |", "|---|---:|---:|---:|"]
    for i, name in enumerate(bed.names):
        lines.append(f"| {name} | {labels[:, i].mean():.1f} | {alone[:, i].mean():.1f} | "
                     f"{formula[i]:.0f} |")
    tot, tot_alone = labels.sum(axis=1), alone.sum(axis=1)
    lines.append(f"| **all {m}** | **{tot.mean():.1f}** (range {tot.min():.0f}–{tot.max():.0f})"
                 f" | **{tot_alone.mean():.1f}** | **{formula.sum():.0f}** |")
    lines += ["", f"In turn the campaign used {tot.mean():.0f} labels on average for all {m} "
              f"systems, against {tot_alone.mean():.0f} for per-system sampling by the same "
              f"rule ({tot.mean() / tot_alone.mean():.2f}×) and "
              f"{m * math.ceil(zq**2 / (4 * args.half_width**2))} for conservative per-system "
              "sampling."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
