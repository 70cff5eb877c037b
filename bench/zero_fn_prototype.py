"""A measurement, not a feature (session 22): recall's and F_α's interval for a stratified sample
whose strata labelled in part showed no false negative at all, every predicted positive lying in
fully labelled strata. Then TP, FP and the false negatives of the census strata are known
exactly, the estimate is an upper bound of recall that holds for certain, and only the lower end
rests on a model: FN = FN_census + M, M ~ Poisson(λ), λ the false negatives the partial strata
may hide by their neighbours' rate (:func:`assay.core.stratified_counts.neighbour_allowance`)
and by the prior's recalibrated rate (eqs. 2–3 of :mod:`assay.core.unseen_cells`). Compared
with the intervals the runs printed (Clopper–Pearson at the effective size where it applied), on
samples kept by ``bench/capture_samples.py``:

    .venv/bin/python bench/zero_fn_prototype.py '/tmp/assay_samples/cap_*_1000_1200.pkl'

prints per file and measure: the share of runs where it applies, the RMSE, coverage and mean
half-width printed (``cur``) and with the prototype (``new``). Figures: BENCHMARKS.md, session 22.
"""
from __future__ import annotations

import glob
import os
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from assay.core.intervals import simulated_f_interval  # noqa: E402
from assay.core.stratified_counts import neighbour_allowance  # noqa: E402
from assay.core.totals import StratifiedSample  # noqa: E402
from assay.core.unseen_cells import REACH  # noqa: E402

MEASURES = {"recall": 0.0, "f1": 0.5}


def prior_lambda(s: StratifiedSample, ell: np.ndarray, yhat: np.ndarray,
                 prior: np.ndarray) -> float:
    """Σ U·π over the predicted negatives of partial strata that showed no match, π the
    prior's rate recalibrated on the labels (eq. 2 of assay.core.unseen_cells), within reach."""
    sizes = np.asarray(s.sizes, float)
    k = sizes.size
    st = np.asarray(s.stratum)
    n_h = s.counts().astype(float)
    partial = (n_h > 0) & (n_h < sizes)
    weight = np.divide(sizes, n_h, out=np.zeros(k), where=n_h > 0)[st]
    w = (yhat == 0).astype(float)
    n_c = np.bincount(st, weights=w, minlength=k)
    pos = np.bincount(st, weights=w * ell, minlength=k)
    rate = np.divide(np.bincount(st, weights=w * prior, minlength=k), n_c, out=np.zeros(k),
                     where=n_c > 0)
    none = partial & (n_c > 0) & (pos == 0)
    kappa = (w * weight @ ell + 0.5) / (w * weight @ prior + 0.5)
    p = np.minimum(np.where(none, kappa * rate, 0.0), 0.5 / (n_c + 1))
    p = np.where(n_c * p >= REACH, p, 0.0)
    unseen = np.maximum(np.divide(sizes * n_c, n_h, out=np.zeros(k), where=n_h > 0) - n_c, 0)
    return float((unseen * p).sum())


def interval(s: StratifiedSample, ell: np.ndarray, yhat: np.ndarray, prior: np.ndarray,
             alpha: float) -> tuple[float, float] | None:
    """The prototype (module docstring), or None where it does not apply."""
    sizes = np.asarray(s.sizes, float)
    st = np.asarray(s.stratum)
    n_h = s.counts().astype(float)
    partial = ((n_h > 0) & (n_h < sizes))[st]
    census = ((n_h > 0) & (n_h >= sizes) & (sizes > 0))[st]
    fn = ell * (1 - yhat)
    tp, fp = ell * yhat, (1 - ell) * yhat
    if fn[partial].sum() > 0 or tp.sum() < 10 or np.any(yhat[partial] > 0):
        return None
    (t_tp, t_fp, _), (v_tp, v_fp, v_sum) = s.total(np.stack([tp, fp, tp + fp], axis=1))
    lam = neighbour_allowance(s, ell, yhat) + prior_lambda(s, ell, yhat, prior)
    cov = (float(v_tp), 0.5 * float(v_sum - v_tp - v_fp), float(v_fp))
    return simulated_f_interval((float(t_tp), float(t_fp)), cov,
                                (float(fn[census].sum()), 0.0, 0.0, 1.0), alpha, 0.05,
                                hidden=lam)


def main() -> None:
    for f in sorted(glob.glob(sys.argv[1])):
        with open(f, "rb") as fh:
            d = pickle.load(fh)
        y, p = d["world"]["label"].to_numpy(), d["world"]["prediction"].to_numpy()
        for m, al in MEASURES.items():
            truth = (y * p).sum() / (al * p.sum() + (1 - al) * y.sum())
            cur, new, est, used = [], [], [], 0
            for r in d["rows"]:
                c, e = r["caps"].get(al), r["ests"][m]
                if c is None or e.ci_low is None:
                    continue
                est.append(e.estimate)
                cur.append((e.ci_low, e.ci_high))
                x = None
                if e.method == "exact" and c["prior"] is not None:
                    x = interval(StratifiedSample(stratum=c["stratum"], sizes=c["sizes"]),
                                 c["labels"].astype(float), c["pred"].ravel().astype(float),
                                 c["prior"], al)
                used += x is not None
                new.append(cur[-1] if x is None else (min(x[0], e.estimate),
                                                      max(x[1], e.estimate)))
            cur_a, new_a, est_a = np.array(cur), np.array(new), np.array(est)
            rmse = float(np.sqrt(((est_a - truth) ** 2).mean()))

            def cov(v: np.ndarray) -> float:
                return float(((v[:, 0] <= truth + 1e-12) & (truth <= v[:, 1] + 1e-12)).mean())

            def hw(v: np.ndarray) -> float:
                return float(((v[:, 1] - v[:, 0]) / 2).mean())

            print(f"{os.path.basename(f)[4:-4]:40s} {m:6s} applies {used / len(est):.2f} "
                  f"rmse {rmse:.4f} cur {cov(cur_a):.3f} {hw(cur_a):.4f} "
                  f"new {cov(new_a):.3f} {hw(new_a):.4f}", flush=True)


if __name__ == "__main__":
    main()
