"""Model-based (predictive) estimation of F_α for a stratified sample of a ranked pool.

The labelled items are known; only the unlabelled ones are uncertain. With the rank calibration
(C1 of :mod:`assay.core.calibration`) and its parameter uncertainty, the unseen true positives and
false negatives are predicted cell by cell (stratum h, predicted positive or negative):

    TP = TP_seen + Σ_h Bin(U¹_h, p¹_h),   FN = FN_seen + Σ_h Bin(U⁰_h, p⁰_h),
    p^y_h ~ Beta(c·m^y_h(θ) + k^y_h, c·(1 − m^y_h(θ)) + n^y_h − k^y_h),   θ ~ N(θ̂, Σ̂)

where U¹_h, U⁰_h count the unlabelled predicted positives/negatives of stratum h, k^y_h of the
n^y_h labelled ones are matches, and m^y_h(θ) is the calibration's mean match rate over the
cell's ranks (π made non-increasing down the ranking: a higher score never means a lower match
rate). Cells matter where the prediction threshold falls inside a stratum: its predicted
positives sit at better ranks than its predicted negatives. F_α = TP / (α·PP + (1−α)(TP + FN))
(seed 002, eq. 1) is computed for each of D draws; the interval is their percentile interval,
the estimate the plug-in at θ̂. As the labels approach a census the prediction vanishes and the
estimate becomes exact (finite-population consistency).

**The labels' floor** (issue 11: the labels win where they can speak). The calibration is a
prior worth c = 100 labels with mean m; where m is tiny its match pseudo-count c·m ≪ ½ makes
the prior more certain of "no match" than any number of labels with none could be, and a
stratum sampled at a sizeable fraction with no match labelled is predicted to hold none. On
amazon_google at 5,000 labels the top 2,048 ranks were labelled in full and five matches sat
at ranks 2,049–16,384 (strata sampled at 3–38%); when none was drawn the interval claimed at
most four unseen and covered 0.71 (100 reps). A cell is *checked by its labels* when their
Jeffreys posterior mean of its unlabelled matches, u·(k + ½)/(n + 1), is at most
:data:`CHECKED` = 2 (:func:`checked_cells`); there the match pseudo-count is at least k + ½
(Jeffreys), and the interval is widened to hold the spread of that posterior, placed around
the unchanged estimate as in :mod:`assay.core.small_counts` (eq. 3):

    [min(lo, F̂ − (q̃_½ − q̃_{a})),  max(hi, F̂ + (q̃_{1−a} − q̃_½))],

q̃ the quantiles of F_α under the floored posterior. The estimate is not moved (a Jeffreys
pseudo-match in every such cell would bias it). Measured (auto, 100 reps, seeds 1000+ and
2000+): amazon_google at 5,000 labels, recall coverage 0.71 → 1.00 (half-width 0.0068 →
0.0077–0.0084, RMSE 0.0033); at 1,000 labels on the real pools and the adversarial worlds
the half-width grows 2–7% at the same coverage, and where every match was labelled (restaurant, dblp_acm at
1,000) the interval is no longer a point (recall half-width 0.028 and 0.075: one or two
matches could hide where the labels are half the stratum's items). The floor also holds
the predicted negatives of a stratum labelled in part that showed no match directly below one
that showed some, at a pseudo-count the rate above bounds (:func:`below_a_match`, session
24: fresh non-monotone worlds at 2,000 labels, recall coverage 0.64 → 0.88). Other cells with u·½/(n + 1) > 2 (the large, lightly
sampled tail) stay the model's: that is the assumption.

Assumption (stated with every such estimate): the match rate falls with the rank as (C1) says
where the labels are too few to bound the unlabelled matches to a handful; the design-based
estimate and interval are reported beside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.special import betaln

from assay.core.calibration import FitCheck, RankCalibration, RankGrid

DRAWS = 2000
CONCENTRATION = 100.0
SEED = 20261122  # fixed: the interval is a function of the data only


@dataclass(frozen=True)
class StratumCounts:
    """Per stratum: size, predicted positives, and labelled counts by cell."""

    bounds: np.ndarray        # K + 1 rank offsets
    pp: np.ndarray            # predicted positives in the stratum (whole pool)
    lab1: np.ndarray          # labelled items with ŷ = 1
    lab0: np.ndarray          # labelled items with ŷ = 0
    tp: np.ndarray            # labelled, ℓ = 1, ŷ = 1
    fn: np.ndarray            # labelled, ℓ = 1, ŷ = 0

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.bounds)


STEEPEST = -3.0   # the predicted rates fall at most as rank^STEEPEST (:func:`cell_rates`)


def cell_rates(theta: np.ndarray, grid: RankGrid, cal: RankCalibration,
               steepest: float | None = STEEPEST) -> tuple[np.ndarray, np.ndarray]:
    """Mean π over each stratum's predicted positives and predicted negatives for each
    parameter row of ``theta`` (D × p) of the calibration ``cal``'s form (its knee and tail
    knee), π made non-increasing down the ranking and falling no faster than the
    rank^:data:`STEEPEST` (:meth:`~assay.core.calibration.RankGrid.monotone`). Returns two
    D × K arrays (an empty cell takes the stratum's mean).

    **The bounded decay** (issue 11, session 27). Labels that show no match in the near tail
    make the fitted hinge steeper than any decay the world has: on the control world at 500
    labels, with the exploration below matches, a run whose 41 and 66 labels of ranks
    497–1,984 held none fitted a rate falling 22-fold per doubling of the rank (the world's
    falls 2.5–8-fold) and its interval missed a tail 4–10 times richer (BENCHMARKS.md, session
    26). The calibration is the prior mean of each cell (worth c labels); here it may fall at
    most 2³ = 8-fold per doubling of the rank (the real pools fall as rank^−1.8 past the knee,
    :mod:`assay.core.calibration`), as a power law of the rate π̃(r) = max_{r′ ≤ r}
    π(r′)·(r/r′)^−3 — a shape constraint of the kind of Grenander's monotone estimator,
    bounding the slope of log π against log r instead of its sign. Where labels show a
    steeper fall (a cliff at the prediction threshold: restaurant, dblp_acm) the cells' own
    labels overrule the prior; the fit and the design's allocation are unchanged. Measured
    (``auto`` with the exploration below matches and the robust prior, :func:`vague_weight`;
    95% recall coverage, 200 runs, world seed 11; BENCHMARKS.md, session 27): at 500 labels
    the control 0.905 → 0.965, ties 0.900 → 0.965, duplicate scores 0.925 → 0.960, off_score
    0.925 → 0.985; the non-monotone worlds at 2,000 labels unchanged (0.953 / 0.948 over two
    sets of 40 fresh worlds). Bounded on the odds instead (tried), a saturated top (logit 23
    at rank 1 on restaurant) lifted the whole tail: recall bias −0.73; on the rate, −0.002.
    Bound −3.5 on the rate (tried): the control 0.935, ties 0.915."""
    p = grid.monotone(cal.inverse(np.atleast_2d(theta), grid.log_ranks - cal.knee),
                      steepest=steepest)
    m, m1, m0 = grid.means(p)
    return np.where(np.isfinite(m1), m1, m), np.where(np.isfinite(m0), m0, m)


@dataclass(frozen=True)
class PredictiveResult:
    estimate: float
    ci_low: float
    ci_high: float
    tp: float
    fn: float
    fit: FitCheck | None = None
    std_error: float | None = None     # the standard deviation of the posterior draws of F_α


J = 0.5   # Jeffreys prior for the cells whose own labels suffice
CHECKED = 2.0   # the labels' floor (module docstring; 0 = off): see :func:`checked_cells`
RICH = 10   # matches and non-matches a cell needs to speak for itself (the normal-approximation rule)


def cell_strength(k: np.ndarray, n: np.ndarray, c: float) -> np.ndarray:
    """The calibration's weight in each cell: none where the cell's own labels hold at least
    ``RICH`` matches and ``RICH`` non-matches (its rate is then estimated from them alone, with
    Jeffreys' prior), ``c`` labels elsewhere."""
    rich = (k >= RICH) & (n - k >= RICH)
    return np.where(rich, 0.0, c)


def checked_cells(k: np.ndarray, n: np.ndarray, u: np.ndarray, limit: float) -> np.ndarray:
    """Cells whose own labels bound their unlabelled matches to a handful: the Jeffreys
    posterior mean of the unlabelled matches, u·(k + ½)/(n + 1), is at most ``limit``.

    >>> checked_cells(np.array([0, 0]), np.array([780, 20]), np.array([1268, 600000]), 5.0).tolist()
    [True, False]
    """
    return (n > 0) & (u * (k + J) / (n + 1.0) <= limit)


def below_a_match(counts: StratumCounts, reach: int = 1) -> np.ndarray:
    """The labels' floor for more predicted-negative cells (session 24): in a stratum labelled
    in part whose labelled predicted negatives hold no match, directly below a stratum whose
    labels hold some at rate ρ, the match pseudo-count is at least min(½, ρ·(n + 1)) (n the
    cell's labels; 0 elsewhere). The calibration decays through such a stratum and more labels
    showing none make the model surer still, while the matches just above say the decay may
    not have begun (a bump the score does not believe, or a power law the hinge under-states:
    session 23 measured the model's bias in such a stratum of the control world, −1.9 of 4
    false negatives). Jeffreys' ½ where the rate above could show itself in the cell's labels,
    less where it could not (amazon_google at 5,000 labels: 0 of 276 below 2 of 1,994; the full
    ½ there widened F1's interval to 3.5 × its RMSE). The interval keeps that spread around the
    unchanged estimate. Measured (``auto``, recall, 95%): 40 fresh non-monotone worlds at 2,000
    labels (world seeds 200–239, 10 runs each) 0.637 → **0.880**, half-width 0.086 → 0.099;
    world seed 11 (200 runs): non_monotone 0.890 → 0.895, the control at 1,000 labels 0.955 →
    0.960 (half-width +14%), duplicate scores 0.925 → 0.940 (+14%), ties 0.965 → 0.980 (+9%),
    off_score 0.960 → 0.970 (+15%); the real pools' within ±1.5%.

    With ``reach`` > 1 (the allocation's exploration, :func:`assay.designs.auto.
    exploration_rates`) the floor runs on through up to ``reach`` such strata in a row, each
    labelled in part with no match at all, at the rate of the last stratum that showed some
    (a non-increasing rate allows no more). The estimator's interval uses ``reach`` = 1.

    >>> c = StratumCounts(np.array([0, 10, 30, 70]), np.zeros(3), np.zeros(3),
    ...                   np.array([10.0, 5, 5]), np.zeros(3), np.array([2.0, 0, 0]))
    >>> below_a_match(c).tolist()     # 2 of 10 above: min(½, 0.2 × 6)
    [0.0, 0.5, 0.0]
    >>> below_a_match(c, reach=2).tolist()
    [0.0, 0.5, 0.5]
    """
    n = counts.lab0 + counts.lab1
    held = counts.tp + counts.fn
    part = (n > 0) & (n < counts.sizes)
    rate = np.divide(held, n, out=np.zeros_like(held, dtype=float), where=n > 0)
    above = np.r_[0.0, rate[:-1]]
    steps = (above > 0).astype(int)        # strata since the last that showed matches
    for h in range(1, len(rate)):
        if steps[h] == 0 and 0 < steps[h - 1] < reach and part[h - 1] and held[h - 1] == 0:
            above[h], steps[h] = above[h - 1], steps[h - 1] + 1
    cell = part & (counts.fn == 0) & (counts.lab0 > 0) & (above > 0)
    return np.where(cell, np.minimum(J, above * (counts.lab0 + 1.0)), 0.0)


EPSILON = 0.1   # the robust prior's vague share (:func:`vague_weight`)


def vague_weight(m: np.ndarray, c: np.ndarray, k: np.ndarray, n: np.ndarray,
                 eps: float = EPSILON) -> np.ndarray:
    """The posterior weight of the vague component of the robust mixture prior
    (1 − ε)·Beta(c·m, c(1 − m)) + ε·Beta(½, ½) of a cell whose n labels hold k > 0 matches
    (Schmidli, Gsteiger, Roychoudhury, O'Hagan, Spiegelhalter & Neuenschwander 2014, "Robust
    meta-analytic-predictive priors", Biometrics 70:1023–1032): each component re-weighted by
    its beta-binomial marginal likelihood B(a + k, b + n − k)/B(a, b). A cell with no match,
    or whose labels speak for themselves (c = 0), keeps the calibration's prior (weight 0):
    a vague component there predicts ½/(n + 1) over a large, lightly sampled tail.

    Two matches in 100 labels where the calibration's rate 10⁻⁴ expects 0.01 give the labels
    two thirds of the weight (at 10⁻³, 0.16; BENCHMARKS.md, session 26):

    >>> round(float(vague_weight(np.array([1e-4]), np.array([100.0]), np.array([2.0]),
    ...                          np.array([100.0]))[0]), 2)
    0.65
    """
    mm = np.clip(m, 1e-12, 1 - 1e-12)
    ci = np.where(c > 0, c, 1.0)
    li = betaln(ci * mm + k, ci * (1 - mm) + n - k) - betaln(ci * mm, ci * (1 - mm))
    lv = betaln(k + J, n - k + J) - betaln(J, J)
    z = np.log(eps) + lv - np.logaddexp(np.log(eps) + lv, np.log1p(-eps) + li)
    return np.where((c > 0) & (k > 0), np.exp(z), 0.0)


def predictive_f_measure(counts: StratumCounts, cal: RankCalibration | Sequence[
                             tuple[RankCalibration, float]], grid: RankGrid, alpha: float,
                         confidence: float, draws: int = DRAWS,
                         concentration: float = CONCENTRATION) -> PredictiveResult | None:
    """Estimate and interval of F_α, robust over two priors for the cells' rates: the
    calibration as fitted, and its bounded decay (:func:`cell_rates`, :data:`STEEPEST`).

    The interval is the union of the two posteriors' intervals (:func:`one_prior`): the range
    of posterior intervals over a class of priors (Berger 1990, "Robust Bayesian analysis:
    sensitivity to the prior", J. Statist. Plann. Inference 25:303–328), so it holds under
    either shape of the unseen tail; the estimate is their average weighted by the likelihood
    of each prior's cell rates given the labelled counts (:func:`bounded_weight`). Why both:
    the bounded decay alone filled in matches below a real cliff where the labels were few to
    overrule it (restaurant at 100 labels: F1 coverage 0.815, bias −0.043; with the union
    0.980, −0.013), and the fitted shape alone made surer by labels showing nothing covered
    the control at 500 labels 0.905 (the union 0.965; BENCHMARKS.md, session 27).
    """
    models = [(cal, 1.0)] if isinstance(cal, RankCalibration) else list(cal)
    plain = one_prior(counts, models, grid, alpha, confidence, draws, concentration, None)
    bounded = one_prior(counts, models, grid, alpha, confidence, draws, concentration,
                        STEEPEST)
    if plain is None or bounded is None:
        return plain or bounded
    w = bounded_weight(counts, models, grid)
    est = (1 - w) * plain.estimate + w * bounded.estimate
    return PredictiveResult(est, min(plain.ci_low, bounded.ci_low, est),
                            max(plain.ci_high, bounded.ci_high, est),
                            (1 - w) * plain.tp + w * bounded.tp,
                            (1 - w) * plain.fn + w * bounded.fn,
                            std_error=max(plain.std_error or 0.0, bounded.std_error or 0.0))


def bounded_weight(counts: StratumCounts, models: Sequence[tuple[RankCalibration, float]],
                   grid: RankGrid) -> float:
    """The bounded decay's posterior weight against the fitted shape, equal prior weights:
    1/(1 + exp(ℓ_plain − ℓ_bounded)), ℓ the binomial log-likelihood of the labelled counts of
    every cell at its mean rate, Σ k·log m + (n − k)·log(1 − m), averaged over the
    calibrations by their weights.

    A cliff below the top four ranks, every rank below labelled: 124 labels with no match
    where the bounded decay expects ~1.5 keep a quarter of the weight; matches going on below
    give it all:

    >>> b = np.array([0, 4, 8, 16, 32, 64, 128]); z = np.zeros(6)
    >>> cal = RankCalibration(np.array([2.0, -12.0]), np.zeros((2, 2)), 128, 3, knee=np.log(4))
    >>> [round(bounded_weight(StratumCounts(b, z, z, np.diff(b) * 1.0, z, np.array(fn)),
    ...                       [(cal, 1.0)], RankGrid.build(b)), 3)
    ...  for fn in ([3.0, 0, 0, 0, 0, 0], [3.0, 1, 1, 1, 1, 1])]
    [0.249, 1.0]
    """
    def loglik(steepest: float | None) -> float:
        total = 0.0
        for model, w in models:
            m1, m0 = (np.clip(m[0], 1e-12, 1 - 1e-12)
                      for m in cell_rates(model.theta, grid, model, steepest))
            total += w * float(
                np.sum(counts.tp * np.log(m1) + (counts.lab1 - counts.tp) * np.log1p(-m1))
                + np.sum(counts.fn * np.log(m0) + (counts.lab0 - counts.fn) * np.log1p(-m0)))
        return total / sum(w for _, w in models)
    return float(1.0 / (1.0 + np.exp(np.clip(loglik(None) - loglik(STEEPEST), -700, 700))))


def one_prior(counts: StratumCounts, models: Sequence[tuple[RankCalibration, float]],
              grid: RankGrid, alpha: float, confidence: float, draws: int,
              concentration: float, steepest: float | None) -> PredictiveResult | None:
    """Estimate and percentile interval of F_α under one prior (see the module docstring):
    the calibration's cell rates, with the decay bounded by ``steepest`` (None: as fitted).

    Each cell's rate (stratum h, predicted positives or negatives) has the calibration's mean
    over the cell's ranks as its prior, worth ``concentration`` labels:
    p ~ Beta(c·m + k, c·(1 − m) + n − k) with k of the cell's n labels positive, so a
    well-labelled cell speaks for itself and the model fills in where labels are few
    (:func:`cell_strength`). ``models`` lists (calibration, weight): the prediction is their
    mixture (model averaging: draws are split by weight, the point estimate is the weighted
    mean of the plug-in counts).
    """
    total_w = sum(w for _, w in models)
    pp_total = float(counts.pp.sum())
    u1 = np.maximum(counts.pp - counts.lab1, 0).astype(np.int64)
    u0 = np.maximum(counts.sizes - counts.pp - counts.lab0, 0).astype(np.int64)
    tp_seen, fn_seen = float(counts.tp.sum()), float(counts.fn.sum())
    c1 = cell_strength(counts.tp, counts.lab1, concentration)
    c0 = cell_strength(counts.fn, counts.lab0, concentration)

    def posterior(m: np.ndarray, c: np.ndarray, k: np.ndarray, n: np.ndarray,
                  vague: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Beta(c·m + k, c·(1 − m) + n − k), or Jeffreys' Beta(k + ½, n − k + ½) where c = 0
        or where ``vague`` (the robust prior's vague component was drawn)."""
        j = J * (c == 0)
        a, b = c * m + k + j, c * (1 - m) + n - k + j
        if vague is not None:
            a, b = np.where(vague, k + J, a), np.where(vague, n - k + J, b)
        return a, b

    def f(tp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        den = alpha * pp_total + (1.0 - alpha) * (tp + fn)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, tp / den, np.nan)

    rng = np.random.default_rng(SEED)
    rng_f = np.random.default_rng(SEED + 1)   # the floor's own stream: the model's draws stay
    tp_hat = fn_hat = 0.0
    tps, fns = [], []
    tps_f, fns_f = [], []
    # the labels' floor: each cell's least match pseudo-count beyond its k (0: none)
    j1 = np.where(checked_cells(counts.tp, counts.lab1, u1, CHECKED), J, 0.0)
    j0 = np.where(checked_cells(counts.fn, counts.lab0, u0, CHECKED), J, below_a_match(counts))

    def floored(ab: tuple[np.ndarray, np.ndarray], j: np.ndarray, k: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """The labels' floor: a floored cell's match pseudo-count is at least k + j."""
        a, b = ab
        return np.where(j > 0, np.maximum(a, k + j), a), b
    for k, (model, w) in enumerate(models):
        m1_hat, m0_hat = (m[0] for m in cell_rates(model.theta, grid, model, steepest))
        a1, b1 = posterior(m1_hat, c1, counts.tp, counts.lab1)
        a0, b0 = posterior(m0_hat, c0, counts.fn, counts.lab0)
        v1 = vague_weight(m1_hat, c1, counts.tp, counts.lab1)
        v0 = vague_weight(m0_hat, c0, counts.fn, counts.lab0)
        p1_hat = (1 - v1) * a1 / (a1 + b1) + v1 * (counts.tp + J) / (counts.lab1 + 1.0)
        p0_hat = (1 - v0) * a0 / (a0 + b0) + v0 * (counts.fn + J) / (counts.lab0 + 1.0)
        tp_hat += w / total_w * (tp_seen + float(u1 @ p1_hat))
        fn_hat += w / total_w * (fn_seen + float(u0 @ p0_hat))
        d = int(round(draws * w / total_w)) if k < len(models) - 1 else draws - sum(map(len, tps))
        if d <= 0:
            continue
        m1, m0 = (np.clip(m, 1e-12, 1 - 1e-12)
                  for m in cell_rates(model.draw(rng, d), grid, model, steepest))   # d × K
        vague1 = rng.random(m1.shape) < vague_weight(m1, c1, counts.tp, counts.lab1)
        vague0 = rng.random(m0.shape) < vague_weight(m0, c0, counts.fn, counts.lab0)
        ab1 = posterior(m1, c1, counts.tp, counts.lab1, vague1)
        ab0 = posterior(m0, c0, counts.fn, counts.lab0, vague0)
        p1, p0 = rng.beta(*ab1), rng.beta(*ab0)
        tps.append(tp_seen + rng.binomial(u1[None, :], p1).sum(axis=1))
        fns.append(fn_seen + rng.binomial(u0[None, :], p0).sum(axis=1))
        if CHECKED:
            q1 = rng_f.beta(*floored(ab1, j1, counts.tp))
            q0 = rng_f.beta(*floored(ab0, j0, counts.fn))
            tps_f.append(tp_seen + rng_f.binomial(u1[None, :], q1).sum(axis=1))
            fns_f.append(fn_seen + rng_f.binomial(u0[None, :], q0).sum(axis=1))
    est = float(f(np.array(tp_hat), np.array(fn_hat)))
    if not np.isfinite(est):
        return None
    vals = f(np.concatenate(tps).astype(float), np.concatenate(fns).astype(float))
    vals = vals[np.isfinite(vals)]
    a = (1.0 - confidence) / 2.0
    lo, hi = (np.quantile(vals, [a, 1.0 - a]) if vals.size else (0.0, 1.0))
    se = (float(vals.std(ddof=1)) if np.ptp(vals) > 0 else 0.0) if vals.size > 1 else None
    if CHECKED and tps_f:
        fv = f(np.concatenate(tps_f).astype(float), np.concatenate(fns_f).astype(float))
        fv = fv[np.isfinite(fv)]
        if fv.size:
            ql, qm, qh = np.quantile(fv, [a, 0.5, 1.0 - a])
            # (shifted to the estimate: kept within the measure's range [0, 1])
            lo, hi = max(min(lo, est - (qm - ql)), 0.0), min(max(hi, est + (qh - qm)), 1.0)
    return PredictiveResult(est, float(min(lo, est)), float(max(hi, est)), tp_hat, fn_hat,
                            std_error=se)
