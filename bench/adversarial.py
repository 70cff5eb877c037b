"""Adversarial worlds (issue 11, must-have 5): how today's intervals fare on pools built to break
their assumptions, with the control world beside them; and the double-sampling hard regime.

    python bench/adversarial.py [--reps 200] [--budgets 1000,500,2000] [--worlds ...]
                                [--designs auto,stratified,passive,importance] [--jobs 2]
                                [--time-limit 60] [--verify 3]
                                [--sweep realistic,ties --sweep-seeds 10 --sweep-reps 20]
                                [--out bench/out/adversarial_baseline.md]

Every repetition is one call of the public API, ``assay.evaluate(pool, gold, design=...,
budget=..., seed=rep_seed)`` without a store, on a world of :mod:`assay.worlds` built once from
``--world-seed``; repetition r has seed 1000 + r in every cell (common random numbers). Per
cell and measure: coverage of the 95% interval (ci_low ≤ truth ≤ ci_high, over the repetitions
where the measure is defined), mean half-width, RMSE, bias ± its Monte Carlo SE; for ``auto``
also the share of repetitions whose estimate is model-based and the coverage of the
design-based interval it prints beside (``extra["design_interval"]``; its own interval when
it fell back). Cells run in order (budgets in the order given, then worlds, then designs),
repetitions in parallel over ``--jobs`` processes; no new cell starts after ``--time-limit``
minutes. ``--sweep`` re-runs the listed worlds (``--sweep-designs``, ``--sweep-budget``) over
``--sweep-seeds`` other world seeds, for the coverage over worlds rather than conditional on one.
The double-sampling regimes are in ``bench/double_sampling.py`` (an older state file's
double-sampling section is still rendered). Results accumulate in
``--state`` (JSON; a re-run skips finished cells) and the
markdown is rewritten after every cell.

Speed without changing a result: each worker loads a world's pool once
(``assay.load_pool``, what ``evaluate`` does with a DataFrame), aligns the gold frame with it
once (``assay.labels.sources.label_source``, likewise), names the dataset (sparing the pool's
fingerprint, used only by a store) and, unless ``--full-history``,
replaces ``assay.evaluation._checkpoints`` so that ``evaluate`` does not compute the 60
intermediate estimates of ``EvaluationResult.history`` (with ``auto`` they are 90% of its
time). ``--verify K`` first checks, on K seeds of every world × design, that the final
estimates are identical to a plain ``evaluate(frame.drop(columns=['label']),
frame[['id', 'label']], ...)``.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adversarial_report import MEASURES, REP_SEED0, markdown, shell  # noqa: E402

# -- worker side ---------------------------------------------------------------------------
_CACHE: dict[tuple[str, int], Any] = {}


def _fast_history() -> bool:
    """Keep ``evaluate`` from computing its 60 intermediate history estimates (module doc)."""
    try:
        import assay.evaluation as ev
    except ImportError:
        return False
    if not hasattr(ev, "_checkpoints"):
        return False
    ev._checkpoints = lambda budget, points=60: {int(budget)}
    return True


def make_world(name: str, world_seed: int):
    """A world of :mod:`assay.worlds`, or ``er:NAME``: a real ER pool of ../shared/data/er/
    (its own truth; the world seed is ignored)."""
    from assay.worlds import WORLDS, World, truth_of
    if not name.startswith("er:"):
        return WORLDS[name](np.random.default_rng(world_seed))
    import pandas as pd
    f = pd.read_parquet(ROOT.parent / "shared" / "data" / "er" / f"{name[3:]}.parquet")
    f = f.assign(id=[f"r{i:08d}" for i in range(len(f))])[["id", "prediction", "score", "label"]]
    return World(name, f, {}, truth_of(f["prediction"].to_numpy(), f["label"].to_numpy()),
                 {"matches": int(f["label"].sum()), "predicted": int(f["prediction"].sum())})


def _world(name: str, world_seed: int):
    """The world, its pool (loaded once) and its gold frame, cached per worker."""
    key = (name, world_seed)
    if key not in _CACHE:
        import assay
        if len(_CACHE) >= 2:
            _CACHE.pop(next(iter(_CACHE)))
        w = make_world(name, world_seed)
        pool = assay.load_pool(w.frame.drop(columns=["label"]))
        gold: Any = w.frame[["id", "label"]]
        try:       # the gold frame aligned with the pool once, as evaluate does on every call
            from assay.labels.sources import label_source
            gold = label_source(gold, pool)
        except ImportError:
            pass
        _CACHE[key] = (w, pool, gold)
    return _CACHE[key]


def _record(est: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for m in MEASURES:
        e = est[m]
        di = e.extra.get("design_interval") if e.extra else None
        mi = e.extra.get("model_interval") if e.extra else None
        free = getattr(e, "assumption_free", None)
        out[m] = {"est": e.estimate, "lo": e.ci_low, "hi": e.ci_high, "method": e.method,
                  "dlo": None if di is None else float(di[0]),
                  "dhi": None if di is None else float(di[1]),
                  "mlo": None if mi is None else float(mi[0]),
                  "mhi": None if mi is None else float(mi[1]),
                  "flo": None if free is None else float(free[0]),
                  "fhi": None if free is None else float(free[1]),
                  "assumes": bool(getattr(e, "assumes", None))}
        for k in ("est", "lo", "hi"):
            out[m][k] = None if out[m][k] is None else float(out[m][k])
    return out


def run_chunk(task: tuple[str, int, str, int, list[int], bool, dict[str, Any] | None]
              ) -> list[dict[str, Any]]:
    """Repetitions ``seeds`` of one cell (a worker process); ``options`` as ``evaluate``'s."""
    name, world_seed, design, budget, seeds, full_history, options = task
    import assay
    if not full_history:
        _fast_history()
    _, pool, gold = _world(name, world_seed)
    rows = []
    for s in seeds:
        t0 = time.perf_counter()
        res = assay.evaluate(pool, gold, design=design, budget=budget, seed=s, dataset=name,
                             options=options)
        rows.append({"seed": s, "world_seed": world_seed, "labels": res.labels_used,
                     "sec": time.perf_counter() - t0,
                     **_record(res.estimates)})
    return rows


def verify(worlds: list[str], designs: list[str], budget: int, k: int, world_seed: int) -> str:
    """Fast path (pool loaded once, no history) against the plain call: identical estimates."""
    import assay
    import assay.evaluation as ev
    original = ev._checkpoints
    checked = 0
    for name in worlds:
        w = make_world(name, world_seed)
        _, pool, gold = _world(name, world_seed)
        for d in designs:
            for s in range(REP_SEED0, REP_SEED0 + k):
                ev._checkpoints = original
                plain = _record(assay.evaluate(w.frame.drop(columns=["label"]),
                                               w.frame[["id", "label"]], design=d,
                                               budget=budget, seed=s).estimates)
                _fast_history()
                fast = _record(assay.evaluate(pool, gold, design=d, budget=budget, seed=s,
                                              dataset=name).estimates)
                ev._checkpoints = original
                if plain != fast:
                    raise SystemExit(f"fast path differs: {name} {d} seed {s}:\n{plain}\n{fast}")
                checked += 1
    return f"{checked} runs ({len(worlds)} worlds × {len(designs)} designs × {k} seeds, " \
           f"budget {budget}): identical estimates, intervals and methods"


# -- aggregation ---------------------------------------------------------------------------
def summarise(rows: list[dict[str, Any]], truth: dict[str, float], design: str) -> dict:
    out: dict[str, Any] = {"reps": len(rows),
                           "sec_per_rep": float(np.mean([r["sec"] for r in rows])),
                           "labels": float(np.mean([r["labels"] for r in rows]))}
    for m in MEASURES:
        t = truth[m]
        rs = [r[m] for r in rows if r[m]["est"] is not None]
        d: dict[str, Any] = {"defined": len(rs), "truth": t}
        if rs and t is not None and not math.isnan(t):
            est = np.array([r["est"] for r in rs])
            lo = np.array([r["lo"] for r in rs])
            hi = np.array([r["hi"] for r in rs])
            err = est - t
            miss = ~((lo <= t) & (t <= hi))
            d["near_misses"] = int(np.sum(miss & (np.minimum(np.abs(lo - t), np.abs(hi - t))
                                                  < 1e-9)))
            d.update(coverage=float(np.mean((lo <= t) & (t <= hi))),
                     half_width=float(np.mean((hi - lo) / 2)),
                     rmse=float(np.sqrt(np.mean(err ** 2))), bias=float(err.mean()),
                     bias_se=float(err.std(ddof=1) / np.sqrt(err.size)) if err.size > 1
                     else float("nan"),
                     sd=float(est.std(ddof=1)) if est.size > 1 else float("nan"))
            methods = [r["method"] for r in rs]
            d["methods"] = {k: methods.count(k) for k in sorted(set(methods))}
            d["assumes_share"] = float(np.mean([bool(r.get("assumes")) for r in rs]))
            free = [r for r in rs if r.get("flo") is not None]
            if free:                      # the assumption-free interval (issue 11)
                flo = np.array([r["flo"] for r in free])
                fhi = np.array([r["fhi"] for r in free])
                d["free_coverage"] = float(np.mean((flo <= t) & (t <= fhi)))
                d["free_half_width"] = float(np.mean((fhi - flo) / 2))
            # the model-based interval, primary or not (kept beside a design-based fallback)
            mod = [(r["lo"], r["hi"]) if r["method"] == "model" else (r.get("mlo"), r.get("mhi"))
                   for r in rs]
            mod = [x for x in mod if x[0] is not None]
            if mod:
                ml, mh = np.array(mod).T
                d["any_model_coverage"] = float(np.mean((ml <= t) & (t <= mh)))
                d["any_model_half_width"] = float(np.mean((mh - ml) / 2))
            if design == "auto":
                model = [r for r in rs if r["method"] == "model"]
                d["model_share"] = len(model) / len(rs)
                if model:
                    mlo = np.array([r["lo"] for r in model])
                    mhi = np.array([r["hi"] for r in model])
                    d["model_coverage"] = float(np.mean((mlo <= t) & (t <= mhi)))
                    d["model_half_width"] = float(np.mean((mhi - mlo) / 2))
                # the design-based interval: printed beside a model estimate, else the primary
                dlo = np.array([r["dlo"] if r["dlo"] is not None else r["lo"] for r in rs])
                dhi = np.array([r["dhi"] if r["dhi"] is not None else r["hi"] for r in rs])
                d["design_coverage"] = float(np.mean((dlo <= t) & (t <= dhi)))
                d["design_half_width"] = float(np.mean((dhi - dlo) / 2))
        out[m] = d
    return out


# -- driver --------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--budgets", default="1000,500,2000")
    ap.add_argument("--worlds", default="")
    ap.add_argument("--designs", default="auto,stratified,passive,importance")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=5)
    ap.add_argument("--world-seed", type=int, default=11)
    ap.add_argument("--time-limit", type=float, default=float("inf"),
                    help="minutes after which no new cell starts")
    ap.add_argument("--ds-reps", type=int, default=0,
                    help="kept for the recorded commands: only 0 (see bench/double_sampling.py)")
    ap.add_argument("--verify", type=int, default=0)
    ap.add_argument("--full-history", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "adversarial_baseline.md"))
    ap.add_argument("--state", default="")
    ap.add_argument("--title", default="the intervals of today")
    ap.add_argument("--sweep", default="", help="worlds to re-run over other world seeds")
    ap.add_argument("--sweep-seeds", type=int, default=10)
    ap.add_argument("--sweep-reps", type=int, default=20)
    ap.add_argument("--sweep-budget", type=int, default=1000)
    ap.add_argument("--sweep-designs", default="auto,stratified")
    ap.add_argument("--options", default="", help="JSON of evaluate's options dict for every "
                    "cell, e.g. '{\"oasis_epsilon\": 0.2}' (default: none)")
    a = ap.parse_args()
    if a.ds_reps:
        ap.error("--ds-reps: the double-sampling regimes moved to bench/double_sampling.py")

    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    from assay.worlds import WORLDS
    worlds = a.worlds.split(",") if a.worlds else list(WORLDS)
    designs = a.designs.split(",")
    options = json.loads(a.options) if a.options else None
    budgets = [int(b) for b in a.budgets.split(",")]
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    state_path = Path(a.state) if a.state else out.with_suffix(".json")
    state: dict[str, Any] = {}
    if state_path.exists():
        state = json.loads(state_path.read_text())
        if state.get("reps") != a.reps or state.get("world_seed") != a.world_seed:
            state = {}
    state.setdefault("cells", {})
    state.pop("skipped", None)
    command = "python bench/adversarial.py " + " ".join(sys.argv[1:])
    state["commands"] = state.get("commands", [state["command"]] if "command" in state
                                  else []) + [command]
    state["dates"] = state.get("dates", [state["date"]] if "date" in state else []) \
        + [shell("date")]
    state["commits"] = state.get("commits", [state["commit"]] if "commit" in state else []) \
        + [shell(f"git -C {ROOT} rev-parse --short HEAD")]
    state.update(reps=a.reps, world_seed=a.world_seed, command=command, title=a.title,
                 date=shell("date"), nproc=shell("nproc"), free=shell("free -g"),
                 python=platform.python_version(),
                 commit=shell(f"git -C {ROOT} rev-parse --short HEAD"))
    state.setdefault("worlds", {})
    for name in worlds:
        w = make_world(name, a.world_seed)
        state["worlds"][name] = {"n": w.n, "matches": w.facts["matches"],
                                 "predicted": w.facts["predicted"], "truth": w.truth}

    def save() -> None:
        state_path.write_text(json.dumps(state, indent=1))
        out.write_text(markdown(state))

    if a.verify:
        state["verify"] = verify(worlds, designs, budgets[0], a.verify, a.world_seed)
        print(state["verify"])
    seeds = list(range(REP_SEED0, REP_SEED0 + a.reps))
    chunks = [seeds[i:i + a.chunk] for i in range(0, len(seeds), a.chunk)]
    # a job: (key, kind, world, design, budget, [(world seed, repetition seeds), ...])
    todo = deque((f"{w}|{d}|{b}", "cell", w, d, b, [(a.world_seed, ch) for ch in chunks])
                 for b in budgets for w in worlds for d in designs
                 if f"{w}|{d}|{b}" not in state["cells"])
    sweep_truth: dict[str, dict[int, dict[str, float]]] = {}
    if a.sweep:
        wseeds = list(range(a.world_seed + 1, a.world_seed + 1 + a.sweep_seeds))
        sseeds = list(range(REP_SEED0, REP_SEED0 + a.sweep_reps))
        state.setdefault("sweep", {})
        for w in a.sweep.split(","):
            sweep_truth[w] = {ws: WORLDS[w](np.random.default_rng(ws)).truth for ws in wseeds}
            for d in a.sweep_designs.split(","):
                key = f"{w}|{d}|{a.sweep_budget}"
                if key not in state["sweep"]:
                    todo.append((key, "sweep", w, d, a.sweep_budget,
                                 [(ws, sseeds[i:i + a.chunk]) for ws in wseeds
                                  for i in range(0, len(sseeds), a.chunk)]))
    t_start = time.perf_counter()
    inflight: dict[tuple, list] = {}
    with ProcessPoolExecutor(a.jobs) as ex, Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn()) as prog:
        bar = prog.add_task("repetitions", total=sum(len(s) for j in todo for _, s in j[5]))
        counted: set = set()      # futures already counted in the bar
        while todo or inflight:
            while todo and len(inflight) < 2:
                if (time.perf_counter() - t_start) / 60 > a.time_limit:
                    state["skipped"] = [f"{j[2]}/{j[3]}/{j[4]}" + (" (seed sweep)" if j[1]
                                        == "sweep" else "") for j in todo]
                    todo.clear()
                    break
                job = todo.popleft()
                inflight[job[:5]] = [ex.submit(run_chunk, (job[2], ws, job[3], job[4], ch,
                                                           a.full_history, options))
                                     for ws, ch in job[5]]
            if not inflight:
                break
            prog.update(bar, description=" + ".join(f"{j[2]}/{j[3]}/{j[4]}" for j in inflight))
            wait([f for fs in inflight.values() for f in fs], return_when=FIRST_COMPLETED)
            for fs in inflight.values():
                for f in fs:
                    if f.done() and f not in counted:
                        counted.add(f)
                        prog.advance(bar, len(f.result()))
            for job in [j for j, fs in inflight.items() if all(f.done() for f in fs)]:
                fs = inflight.pop(job)
                counted.difference_update(fs)
                rows = [r for f in fs for r in f.result()]
                key, kind, w, d, b = job
                if kind == "cell":
                    state["cells"][key] = {"world": w, "design": d, "budget": b,
                                           "summary": summarise(rows, state["worlds"][w]["truth"],
                                                                d)}
                else:
                    by_seed = {ws: summarise([r for r in rows if r["world_seed"] == ws], t, d)
                               for ws, t in sweep_truth[w].items()}
                    state["sweep"][key] = {"world": w, "design": d, "budget": b,
                                           "seeds": {str(k): v for k, v in by_seed.items()}}
                save()
    save()
    print(markdown(state))


if __name__ == "__main__":
    main()
