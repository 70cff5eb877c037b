"""On-demand open-world recall of Cold Start runs against the truth (a measurement, not a test).

    .venv/bin/python bench/csscore_peer/ondemand_recall.py [--reps 20] [--units 10] [--seed 500]

Worlds of tests/kbp/test_ondemand_kbp.py (30 queries, 3 pooled and 3 unpooled runs); in each,
``--units`` queries, a simple random sample, are annotated exhaustively (every true instance)
and the campaign estimates each run's open-world recall (its true instances over all true
instances of the 30 queries). Prints the pooled recall's bias (pooled runs), the on-demand
recall's bias and 90% coverage, with Monte Carlo SEs both per interval and per world (the six
runs of a world share its annotated units, so their errors are correlated).
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from assay.labels.sources import CallableLabels
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.scorers.csscore.ondemand import normalise_filler, read_runs, score_on_demand

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "kbp"))
from test_ondemand_kbp import SLOT, write_world  # noqa: E402


def true_instances(query_file: str, true_fillers: int = 8) -> dict[str, list[str]]:
    """Every true instance of each query of a world (its true fillers, output or not)."""
    qids = re.findall(r'query id="([^"]+)"', Path(query_file).read_text())
    return {q: ["\t".join((q, SLOT, normalise_filler(f"T{qi}x{k}"),
                           f"T{qi}x{k}:0-9;T{qi}x{k}:0-9")) for k in range(true_fillers)]
            for qi, q in enumerate(qids)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--seed", type=int, default=500)
    a = ap.parse_args()
    err, cover, pooled_bias = [], [], []          # per world: lists over its runs
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.reps):
            folder = Path(tmp) / f"r{rep}"
            folder.mkdir()
            rng = np.random.default_rng(a.seed + rep)
            files, truth, _ = write_world(folder, rng)
            runs = read_runs(files)
            every = true_instances(files[0])
            total = sum(len(v) for v in every.values())
            camp = OnDemandCampaign.create(LabelStore(folder / "od.db"), "kbp", half_width=0.06,
                                           confidence=0.90, seed=rep, corpus_units=len(every))
            names = sorted(every)
            camp.annotate_units({names[i]: every[names[i]]
                                 for i in rng.choice(len(names), size=a.units, replace=False)})
            e_w, c_w, b_w = [], [], []
            for r in score_on_demand(camp, runs, CallableLabels(lambda k: truth.get(k, 0), "gold")):
                true_r = sum(truth[k] for k in runs.keys[r.runid]) / total
                e = r.ondemand["recall"]
                e_w.append(e.estimate - true_r)
                c_w.append(e.ci_low <= true_r <= e.ci_high)
                if r.runid in ("run0", "run1", "run2"):
                    b_w.append(r.pooled.recall - true_r)
            err.append(e_w)
            cover.append(c_w)
            pooled_bias.append(b_w)

    def line(name: str, per_world: list[list[float]]) -> str:
        flat = np.concatenate([np.asarray(w, dtype=float) for w in per_world])
        means = np.array([np.mean(w) for w in per_world])
        return (f"{name}: {flat.mean():+.4f} (SE {flat.std(ddof=1) / math.sqrt(len(flat)):.4f} "
                f"over {len(flat)} intervals, {means.std(ddof=1) / math.sqrt(len(means)):.4f} "
                f"over {len(means)} worlds)")
    print(line("pooled recall - true recall, pooled runs", pooled_bias))
    print(line("on-demand recall - true recall, all runs", err))
    print(line("on-demand 90% interval covers", cover))


if __name__ == "__main__":
    main()
