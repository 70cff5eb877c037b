"""A measurement, not a feature: Fay & Feuer's (1997) gamma upper bound on a stratified sample's
false-negative total, joined with the primary recall interval's lower end (TP⁻/(TP⁻ + FN⁺)),
on the path the adversarial bench runs (``assay.evaluate``). BENCHMARKS.md, session 21.

    .venv/bin/python bench/ff_gamma_recall.py non_monotone 2000 1000 1200 stratified [world_seed]

prints one JSON line: runs, primary recall coverage without (``cov0``) and with (``cov1``) the
bound, mean half-widths (``hw0``, ``hw1``). The gamma interval's upper end adds one draw at the
largest weight N_h/n_h·√(1 − f_h) of a stratum whose draws showed a false negative; TP⁻ is the
normal lower bound of the true positives; each at a/4 (Bonferroni over the two, two-sided).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT), str(ROOT.parent)]

import adversarial as adv  # noqa: E402
import assay  # noqa: E402
import assay.core.measures as measures  # noqa: E402
from assay.core.totals import StratifiedSample  # noqa: E402

ORIGINAL = measures.f_measures
LOWER: dict[int, float] = {}


def _total(stratum: np.ndarray, sizes: np.ndarray, n_h: np.ndarray, c: np.ndarray
           ) -> tuple[float, float, np.ndarray]:
    """The stratified total of indicator c, its variance (with the fpc) and the counts k_h."""
    k_h = np.bincount(stratum, weights=c, minlength=sizes.size)
    some = n_h > 0
    p = np.where(some, k_h / np.maximum(n_h, 1), 0.0)
    s2 = np.where(n_h > 1, p * (1 - p) * n_h / np.maximum(n_h - 1, 1), 0.0)
    f = np.where(some, n_h / sizes, 1.0)
    return (float((sizes * p).sum()),
            float((sizes ** 2 * (1 - f) * s2 / np.maximum(n_h, 1)).sum()), k_h)


def with_gamma_bound(sample, labels, predictions, alpha, confidence=0.95, measure=None,
                     *args, **kwargs):
    """f_measures, recording for recall the lower end joined with the gamma bound."""
    out = ORIGINAL(sample, labels, predictions, alpha, confidence, measure, *args, **kwargs)
    if alpha != 0.0 or not isinstance(sample, StratifiedSample):
        return out
    ell = np.asarray(labels, float)
    yhat = np.asarray(predictions, float)
    yhat = yhat[:, None] if yhat.ndim == 1 else yhat
    sizes = np.asarray(sample.sizes, float)
    n_h = np.bincount(sample.stratum, minlength=sizes.size).astype(float)
    a = 1 - confidence
    for j, e in enumerate(out):
        fn, vfn, k_fn = _total(sample.stratum, sizes, n_h, ell * (1 - yhat[:, j]))
        tp, vtp, _ = _total(sample.stratum, sizes, n_h, ell * yhat[:, j])
        weights = np.where((k_fn > 0) & (n_h < sizes),
                           sizes / np.maximum(n_h, 1) * np.sqrt(np.clip(1 - n_h / sizes, 0, 1)),
                           0.0)
        w_max = float(weights.max()) if weights.size else 0.0
        low = e.ci_low
        if w_max > 0 and e.estimate is not None:
            m, v = fn + w_max, vfn + w_max ** 2
            fn_hi = stats.gamma.ppf(1 - a / 4, m * m / v, scale=v / m)
            tp_lo = max(tp - stats.norm.ppf(1 - a / 4) * np.sqrt(vtp), 0.0)
            if tp_lo + fn_hi > 0:
                low = min(low, tp_lo / (tp_lo + fn_hi))
        LOWER[j] = low
    return out


def main() -> None:
    name, budget, s0, s1, design = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                    int(sys.argv[4]), sys.argv[5])
    world_seed = int(sys.argv[6]) if len(sys.argv) > 6 else 11
    measures.f_measures = with_gamma_bound
    adv._fast_history()
    w, pool, gold = adv._world(name, world_seed)
    truth = float((w.frame["prediction"] * w.frame["label"]).sum() / w.frame["label"].sum())
    hit0 = hit1 = 0
    hw0 = hw1 = 0.0
    for s in range(s0, s1):
        LOWER.clear()
        res = assay.evaluate(pool, gold, design=design, budget=budget, seed=s, dataset=name)
        e = res.estimates["recall"]
        low = min(LOWER.get(0, e.ci_low), e.ci_low)
        hit0 += int(e.ci_low <= truth <= e.ci_high)
        hit1 += int(low <= truth <= e.ci_high)
        hw0 += (e.ci_high - e.ci_low) / 2
        hw1 += (e.ci_high - low) / 2
    n = s1 - s0
    print(json.dumps({"world": name, "world_seed": world_seed, "design": design,
                      "budget": budget, "seeds": [s0, s1], "n": n, "cov0": hit0, "cov1": hit1,
                      "hw0": hw0 / n, "hw1": hw1 / n, "truth": truth}))


if __name__ == "__main__":
    main()
