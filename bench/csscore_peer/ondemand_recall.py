"""On-demand open-world recall of Cold Start runs against the truth (a measurement, not a test).

    .venv/bin/python bench/csscore_peer/ondemand_recall.py [--reps 20] [--units 10] [--seed 500]
                                                          [--half-width 0.06] [--parts]

Worlds of tests/kbp/test_ondemand_kbp.py (30 queries, 3 pooled and 3 unpooled runs); in each,
``--units`` queries, a simple random sample, are annotated exhaustively (every true instance)
and the campaign estimates each run's open-world recall (its true instances over all true
instances of the 30 queries). Prints the pooled recall's bias (pooled runs), the on-demand
recall's bias and 90% coverage, with Monte Carlo SEs both per interval and per world (the six
runs of a world share its annotated units, so their errors are correlated). ``--parts`` also
prints, per part of the product estimate θ̂ν̂ (issue 13: where does the undercoverage come
from?), its error and coverage: ν̂, each run's share of the true instances the runs found
together (``pooled_recall``, against the truth of that share), the exhaustive-only estimate
(``exhaustive_recall``), and how often θ̂ had zero variance (every sampled unit's true
instances all found).
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
from assay.ondemand import OnDemandCampaign, joint
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
    ap.add_argument("--parts", action="store_true")
    ap.add_argument("--half-width", type=float, default=0.06)
    a = ap.parse_args()
    err, cover, pooled_bias = [], [], []          # per world: lists over its runs
    nu_err, nu_cover, ex_err, ex_cover, theta_zero = [], [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.reps):
            folder = Path(tmp) / f"r{rep}"
            folder.mkdir()
            rng = np.random.default_rng(a.seed + rep)
            files, truth, _ = write_world(folder, rng)
            runs = read_runs(files)
            every = true_instances(files[0])
            total = sum(len(v) for v in every.values())
            camp = OnDemandCampaign.create(LabelStore(folder / "od.db"), "kbp", half_width=a.half_width,
                                           confidence=0.90, seed=rep, corpus_units=len(every))
            names = sorted(every)
            chosen = rng.choice(len(names), size=a.units, replace=False)
            camp.annotate_units({names[i]: every[names[i]] for i in chosen})
            e_w, c_w, b_w = [], [], []
            nu_e, nu_c, ex_e, ex_c = [], [], [], []
            union_true = sum(truth.get(k, 0) for k in {k for r in runs.runids for k in runs.keys[r]})
            rows = score_on_demand(camp, runs, CallableLabels(lambda k: truth.get(k, 0), "gold"))
            st = camp.state()           # every part of the estimate (the report shows four)
            est, _parts = joint.estimate(st.uni, st.src, st.item, st.f, st.units, 0.90)
            pos = {s.name: k for k, s in enumerate(st.systems)}
            for r in rows:
                true_r = sum(truth[k] for k in runs.keys[r.runid]) / total
                e = r.ondemand["recall"]
                e_w.append(e.estimate - true_r)
                c_w.append(e.ci_low <= true_r <= e.ci_high)
                if r.runid in ("run0", "run1", "run2"):
                    b_w.append(r.pooled.recall - true_r)
                true_nu = sum(truth[k] for k in runs.keys[r.runid]) / union_true
                nu, ex = (est[m][pos[r.runid]] for m in ("pooled_recall", "exhaustive_recall"))
                nu_e.append(nu.estimate - true_nu)
                nu_c.append(nu.ci_low <= true_nu <= nu.ci_high)
                ex_e.append(ex.estimate - true_r)
                ex_c.append(ex.ci_low <= true_r <= ex.ci_high)
            output = {k for r in runs.runids for k in runs.keys[r]}
            theta_zero += all(k in output for u in chosen for k in every[names[u]])
            err.append(e_w)
            cover.append(c_w)
            pooled_bias.append(b_w)
            nu_err.append(nu_e)
            nu_cover.append(nu_c)
            ex_err.append(ex_e)
            ex_cover.append(ex_c)

    def line(name: str, per_world: list[list[float]]) -> str:
        flat = np.concatenate([np.asarray(w, dtype=float) for w in per_world])
        means = np.array([np.mean(w) for w in per_world])
        return (f"{name}: {flat.mean():+.4f} (SE {flat.std(ddof=1) / math.sqrt(len(flat)):.4f} "
                f"over {len(flat)} intervals, {means.std(ddof=1) / math.sqrt(len(means)):.4f} "
                f"over {len(means)} worlds)")
    print(line("pooled recall - true recall, pooled runs", pooled_bias))
    print(line("on-demand recall - true recall, all runs", err))
    print(line("on-demand 90% interval covers", cover))
    if a.parts:
        print(line("nu (share of the runs' true instances) - truth", nu_err))
        print(line("nu 90% interval covers", nu_cover))
        print(line("exhaustive-only recall - true recall", ex_err))
        print(line("exhaustive-only 90% interval covers", ex_cover))
        print(f"worlds whose sampled units' true instances were all output (theta-hat 1, "
              f"variance 0): {theta_zero} of {a.reps}")


if __name__ == "__main__":
    main()
