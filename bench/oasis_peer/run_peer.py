"""Run the ORIGINAL OASIS package (PyPI ``oasis==0.1.3``, Marchant & Rubinstein 2017) on a real
ER pool, as a benchmark peer for assay's :mod:`assay.designs.oasis`.

Run it with the peer's own interpreter (``bash bench/oasis_peer/setup.sh`` makes it):

    bench/.venv-oasis/bin/python bench/oasis_peer/run_peer.py POOL BUDGET REPS SEED [--strata N]

POOL is a pool name under ``../shared/data/er`` (e.g. ``restaurant``) or a Parquet path. For each
repetition r (numpy's global seed SEED + r: the package draws through ``np.random``), an
``OASISSampler`` with the package's defaults (α = 0.5, ε = 1e-3, CSF strata with the package's
automatic number of strata, prior strength 2K, decaying prior) samples with
``sample_distinct(BUDGET)``: it iterates until BUDGET distinct items have been labelled, repeat
draws reusing the cached label, exactly as assay's budget counts labels. ``--strata N`` asks
for N CSF strata instead of the automatic number, ``--bins M`` for M histogram bins in the CSF
method instead of the package's Freedman–Diaconis choice (which fails when the scores' IQR is 0,
as for dblp_acm's probabilities).

Scores: when the pool has a calibrated ``probability`` column it is passed as the scores with
``proba=True`` (as the paper's experiments); otherwise the ``score`` column with
``proba=False`` (the package then applies its rescaled logistic). ``--scores score|probability``
overrides.

One JSON line per repetition on stdout: pool, rep, seed, budget, f1 (the package's final
estimate, null when undefined), truth, iterations, distinct, n_strata, seconds. The package's own
chatter goes to stderr.

``--crosscheck`` instead replays BUDGET draws of assay's ``OasisDesign(v_star="rms")`` through
the package's own update code with the same strata and prior, and prints the largest differences
of the instrumental pmf and of the F estimate over the run (both should be ~1e-15): evidence that
assay's implementation is the package's, up to the documented v* form.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy

# oasis 0.1.3 calls scipy.percentile / scipy.ptp, removed from SciPy's namespace in 1.12.
if not hasattr(scipy, "percentile"):
    scipy.percentile = np.percentile  # type: ignore[attr-defined]
if not hasattr(scipy, "ptp"):
    scipy.ptp = np.ptp  # type: ignore[attr-defined]

import oasis  # noqa: E402  (after the SciPy shim)
import pandas as pd  # noqa: E402

ER_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "er"


def load_pool(pool: str) -> tuple[str, pd.DataFrame]:
    """The pool's name and frame, from a name under ../shared/data/er or a Parquet path."""
    path = Path(pool)
    if not path.suffix:
        path = ER_DIR / f"{pool}.parquet"
    if not path.exists():
        sys.exit(f"run_peer: no pool at {path} (expected a name under {ER_DIR} or a path)")
    frame = pd.read_parquet(path)
    missing = {"score", "prediction", "label"} - set(frame.columns)
    if missing:
        sys.exit(f"run_peer: {path} lacks column(s) {sorted(missing)}")
    return path.stem, frame


def true_f1(labels: np.ndarray, predictions: np.ndarray) -> float:
    tp = float(np.sum(labels * predictions))
    den = 0.5 * float(np.sum(predictions)) + 0.5 * float(np.sum(labels))
    return tp / den if den > 0 else math.nan


def run_once(scores: np.ndarray, proba: bool, predictions: np.ndarray, labels: np.ndarray,
             budget: int, seed: int, n_strata: int | None, n_bins: int | None = None) -> dict:
    """One repetition of the package's sampler; returns its final estimate and counts."""
    np.random.seed(seed)
    kwargs: dict = {} if n_strata is None else {"stratification_n_strata": int(n_strata)}
    if n_bins is not None:
        kwargs["stratification_n_bins"] = int(n_bins)
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sampler = oasis.OASISSampler(0.5, predictions, scores, lambda i: int(labels[i]),
                                     proba=proba, max_iter=1000 * max(budget, 1), **kwargs)
        sampler.sample_distinct(budget)
    est = sampler.estimate_
    f1 = float(est[-1]) if est is not None and np.isfinite(est[-1]) else None
    distinct = int(np.sum(~np.isnan(sampler.cached_labels_)))
    return {"f1": f1, "iterations": int(sampler.t_), "distinct": distinct,
            "n_strata": int(sampler.strata.n_strata_),
            "seconds": round(time.perf_counter() - start, 4)}


def crosscheck(scores: np.ndarray, proba: bool, predictions: np.ndarray, labels: np.ndarray,
               draws: int, seed: int, n_strata: int | None) -> dict:
    """Replay assay's draws through the package: max |pmf difference| and |F difference|."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from assay.designs.oasis import OasisDesign  # the repository's, imported from this venv

    from assay.designs.oasis import rescaled_logistic
    pkg_probs = oasis.input_verification.scores_to_probs(scores[:, None], np.array([proba]))
    ours = scores if proba else rescaled_logistic(scores)
    if not np.allclose(ours, pkg_probs.ravel(), rtol=0, atol=1e-12):
        sys.exit("run_peer: assay's rescaled_logistic differs from the package's scores_to_probs")
    des = OasisDesign(ours, predictions, scores, np.random.default_rng(seed),
                      n_strata=n_strata or 30, v_star="rms")
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pkg = oasis.OASISSampler(0.5, predictions, scores, lambda i: int(labels[i]),
                                 proba=proba, strata=oasis.Strata(des.strata.codes),
                                 max_iter=draws + 1)
    d_pmf = d_f = 0.0
    for _ in range(draws):
        pkg._calc_inst_pmf()
        pmf = pkg.inst_pmf_.copy()
        d_pmf = max(d_pmf, float(np.abs(pmf - des.instrumental()).max()))
        dr = des.draw()
        ell = pkg._query_label(dr.index)
        pkg._update_estimate_and_sampler(ell, pkg.predictions[dr.index, :],
                                         pkg.strata.weights_[dr.stratum] / pmf[dr.stratum],
                                         {"stratum": dr.stratum})
        pkg.t_ += 1
        des.update(dr, int(labels[dr.index]))
        f_pkg = pkg._estimate[pkg.t_ - 1, 0]
        if np.isfinite(f_pkg):
            d_f = max(d_f, abs(float(f_pkg) - des.f_hat()))
    return {"draws": draws, "n_strata": des.strata.count, "max_pmf_diff": d_pmf,
            "max_f_diff": d_f}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pool")
    ap.add_argument("budget", type=int, help="distinct labels per repetition")
    ap.add_argument("reps", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("--strata", type=int, default=None, help="CSF strata (default: automatic)")
    ap.add_argument("--bins", type=int, default=None,
                    help="CSF histogram bins (default: the package's automatic choice)")
    ap.add_argument("--scores", choices=("auto", "score", "probability"), default="auto")
    ap.add_argument("--crosscheck", action="store_true",
                    help="replay BUDGET assay draws through the package (see the docstring)")
    args = ap.parse_args(argv)
    name, frame = load_pool(args.pool)
    use_prob = args.scores == "probability" or (args.scores == "auto"
                                                and "probability" in frame.columns)
    if use_prob and "probability" not in frame.columns:
        sys.exit(f"run_peer: pool {name} has no probability column")
    scores = frame["probability" if use_prob else "score"].to_numpy(np.float64)
    predictions = frame["prediction"].to_numpy(np.int64)
    labels = frame["label"].to_numpy(np.int64)
    truth = true_f1(labels, predictions)
    if args.crosscheck:
        print(json.dumps({"pool": name, **crosscheck(scores, use_prob, predictions, labels,
                                                      args.budget, args.seed, args.strata)}))
        return 0
    for r in range(args.reps):
        try:
            out = run_once(scores, use_prob, predictions, labels, args.budget, args.seed + r,
                           args.strata, args.bins)
        except ValueError as exc:
            if args.bins is None and "bins" in str(exc):
                sys.exit(f"run_peer: the package's automatic histogram bins fail on {name} "
                         f"({exc}); pass --bins")
            raise
        print(json.dumps({"pool": name, "rep": r, "seed": args.seed + r,
                          "budget": args.budget, "truth": truth,
                          "scores": "probability" if use_prob else "score", **out}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
