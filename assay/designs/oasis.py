"""OASIS: optimal asymptotic sequential importance sampling for F_α (seed 002, Marchant &
Rubinstein, VLDB 2017).

The pool is cut into K score strata (CSF, seed 002 Algorithm 1, or equal size). Each stratum k
has a Beta–Bernoulli model of its match rate π_k (eqs. 7–11) whose prior comes from the scores
(Algorithm 2). At every draw t the design

1. forms the stratified asymptotically optimal instrumental distribution v* (the formula after
   eq. 11) from the posterior means π̂_k^(t−1) and the current AIS estimate F̂_α^(t−1), and mixes
   it with the passive distribution: v = ε ω + (1 − ε) v* (eq. 12), ω_k = |P_k| / N;
2. draws a stratum k ~ v and an item uniformly within P_k, with replacement (Algorithm 3,
   lines 6–7), so the item's selection probability is q_t = v_k / |P_k|;
3. after the label arrives, adds it to the stratum's posterior (eq. 10, Algorithm 3 line 11) and
   to the running sums of the AIS estimator (eq. 3) with weight w_t = ω_k / v_k.

By default (issue 11) step 1 first mixes v* with the static v*_0 of the prior alone (v* at
π̂^(0) and F̂^(0), Algorithm 2's output, computed once): v* ← (1 − d) v* + d v*_0 with
d = ``defensive`` = 0.5, then applies eq. 12 as published (section "The defensive mixture"
below), then holds each stratum's detection floor (section "Detection floors" below):
v ← max(v, φ)/Σ max(v, φ). ``defensive=0, floors=False`` is the published algorithm.

Why eq. 3 is the Hansen–Hurwitz ratio. With p = 1/N (Remark 3) the importance weight of draw t is
w_t = p(z_t)/q_t(z_t) = (1/N)/(v_k/|P_k|) = ω_k / v_k. Hansen–Hurwitz estimates a pool total
Σ_i g_i by (1/T) Σ_t g(z_t)/q_t = (N/T) Σ_t w_t g(z_t), so the ratio of the HH totals of
y = ℓŷ and x = αŷ + (1 − α)ℓ is Σ_t w_t ℓ_t ŷ_t / Σ_t w_t [αŷ_t + (1 − α)ℓ_t] — exactly eq. 3
(the factor N/T cancels). Each :class:`Draw` therefore records ``probability = v_k/|P_k|``.
The design steers by eq. 3 (:meth:`OasisDesign.f_hat`), as published; the estimate it reports
is Raj's ordered ratio over the same draws (:meth:`assay.core.totals.WithReplacementSample.
terms`, session 20): each draw's term is the value of the items labelled before it plus its
own item's HH term if the item is new. Each term is unbiased given the past whatever v_k the
labels chose, so the ratio keeps eq. 3's consistency, but an item drawn again counts once at
its value instead of once more at a weight ω_k/v_k that the labels moved. The interval keeps
the Hansen–Hurwitz variance at the new estimate (why: :meth:`assay.core.totals.
WithReplacementSample.total`).
On restaurant (every match in a top stratum of 559 items, drawn ~3,000 times) the F1 s.d. at
2,000 labels falls 0.0116 → 0.005 and eq. 3's bias (−0.0022 ± 0.0007 over 300 runs, not the
ratio's second-order term: a Taylor correction moved it 0.00015) goes (−0.0004 ± 0.0003);
tests/test_oasis.py, BENCHMARKS.md "Session 20".

The defensive mixture (``defensive``, the default d = 0.5; issue 11). As published (d = 0,
ε = 10⁻³, Remark 4's decaying prior), the Hansen–Hurwitz interval does not hold: recall
coverage 0.55 on the control world of :mod:`assay.worlds` at 2,000 labels, 0.69 on ties, 0.75
on ties at 500 (200 runs each, ``bench/out/oasis_per_pool.md``). Its variance rests on the few
false negatives drawn where a stratum's v_k had collapsed: the decaying prior makes π̂_k ≈
ηπ̂_k^(0)/n_k² once no match is seen there, v_k falls to εω_k and one false negative drawn
there weighs up to 1/ε = 1,000 (cross-fitting below). A defensive mixture bounds those
weights (Hesterberg 1995, "Weighted average importance sampling and defensive mixture
distributions", Technometrics 37; Owen & Zhou 2000, "Safe and effective importance
sampling", JASA 95): with v ≥ (1 − ε) d v*_0, every weight ω_k/v_k stays within
1/((1 − ε) d) of the static design the prior alone would choose, whatever the labels did to
v*, while the other 1 − d still follows the labels. A larger ε (the passive ω as the
defensive part) was tried first and is not enough: ε = 0.1 and 0.2 gave control recall
coverage 0.70 and 0.77 at 2,000 labels and ties 0.72 and 0.82 at 500 (60 runs): ω gives the
strata just below the top, where the false negatives are, a share of their size only. Nor is
a strong non-decaying prior (η = 300 pseudo-labels per stratum: control 0.92, but F1 RMSE on
amazon_google 0.27 at 2,000 labels against the published 0.135, because the allocation then
follows logistic(score), a poor guess on real pools, almost to the end). The mixture keeps
the adaptive half. Measured (``bench/out/oasis_defensive.md``, 200 runs per cell, the ten
pools of issue 11 at 500, 1,000 and 2,000 labels; published → default): recall coverage
control 2,000 0.55 → 0.90, ties 2,000 0.69 → 0.91, ties 1,000 0.87 → 0.88, ties 500 0.75 →
0.85, control 1,000 0.90 → 0.93, abt_buy 2,000 0.91 → 0.93; F1 coverage amazon_google 500
0.85 → 0.98; F1 RMSE lower in 24 of the 30 cells, equal in 2 (control 2,000 0.022 →
0.014, amazon_google 2,000 0.135 → 0.057, 500 0.350 → 0.107), higher in 4, most on dblp_acm
(2,000: 0.014 → 0.025; the published design labels every predicted positive there). Not met
(below 0.93): ties at 500 (precision 0.92, recall 0.85, F1 0.86) and 1,000 (recall 0.88, F1
0.91), control and ties at 2,000 (recall 0.90, 0.91; F1 0.92), duplicate scores' F1 at 1,000
and 2,000 (0.91, 0.90) and recall at 2,000 (0.92). What remains is the interval, not the
weights: the misses overestimate recall when the few false negatives in the strata just
below the top (control: 5 in a 741-item stratum) are not drawn, while the delta rule counts
the many false negatives drawn, again and again, in the top stratum; a per-stratum
small-count rule for draws with replacement (:mod:`assay.core.measures`) is what is
missing (session 13: the count rule within strata and the detection floors below). d = 0.8
was no better (control 2,000 recall 0.85, 60 runs).

Cross-fitting (``cross_fit=True``, an option; issue 11). As published, the Hansen–Hurwitz
interval does not hold: on the control world of :mod:`assay.worlds` at 2,000 labels (~33,000
draws) it covered recall in 0.55 of 200 runs. Its variance is right on average but rests on
the few false negatives drawn where v_k had collapsed (Remark 4's decaying prior makes π̂_k ≈
ηπ̂_k^(0)/n_k² in a stratum where none was seen): over 100 runs the recall estimate's s.d. was
0.025 while the median printed s.e. was 0.005. The stratified estimator of the distinct items,
valid for uniform draws within strata whatever v did, had an s.d. of 0.0085 but a bias of
+0.011 (12 SE): a stratum's count of draws rose with its own false negatives, and a sample
mean taken over a count that grows with its own successes is biased downwards (Nie, Tian,
Taylor & Zou 2018, "Why adaptively collected data have negative bias", AISTATS; the bias is
−Cov(μ̂_k, n_k)/E[n_k], Shin, Ramdas & Rinaldo 2019, NeurIPS): 5 false negatives in a
741-item stratum were estimated as 2.3 on average. Cross-fitting removes that dependence: each
stratum is cut into two interleaved halves (:func:`split_halves`), and the rate that sets a
half's share of v* is the posterior of its own prior and its *sibling's* labels
(:meth:`OasisDesign.allocation_rate`; sample splitting as in Nie et al. §4 and the cross-fitting
of Chernozhukov et al. 2018, "Double/debiased machine learning", Econometrics Journal). A
half's draws then never depend on its own labels, so its distinct items, given their number,
are a simple random sample of it (the optional-skipping theorem: a selection that looks only
at the past leaves an i.i.d. sequence i.i.d., Doob 1936, Halmos 1939), and the run is
estimated as the stratified sample of its distinct items over the halves
(:class:`assay.core.totals.DistinctStratifiedSample`: Cochran 1977 eq. 5.6 with the
finite-population correction, the census of fully labelled halves, and the small-count
fallback of :mod:`assay.core.measures`). Measured (control world, 2,000 labels): bias
+0.002 (±0.004), recall coverage 1.00 over 60 runs (hw 0.064) and 40 others; ties 0.98. With
``decaying_prior=False`` a half whose sibling showed no match is not starved (with the decay,
one or two labels in some runs, and a false negative found there weighs as hundreds: ties
recall s.d. 0.064 against 0.017), but the interval then covers less (0.80 over 40 runs) and
recall has a ratio bias on real pools with a long tail (1,000 labels: amazon_google +0.14,
abt_buy +0.08; with the decay amazon_google +0.02 ± 0.02, coverage 0.975, RMSE 0.13 against
the published 0.20, 40 runs). It is not the default: where false negatives lie in halves none
of whose labels is a match, the stratified interval still undercovers (control world, 1,000
labels: recall 0.83 over 60 runs, published 0.90): the interval's small-count rule and the
allocation of labels to the strata just below the census are what remained (session 13, below,
for the default design).

Detection floors and the count rule within strata (``floors``, on by default; issue 11,
session 13). With the defensive mixture and the logit-scale interval, what remained were runs
that labelled none of the few false negatives just below the top. Ties world at 500 labels:
8 false negatives among the 460 items of stratum 1 and 5 among the 1,039 of stratum 2; the
runs whose recall interval lay above the truth had labelled 40 and 36 items there and seen
none (runs that covered: 56 and 43, 0.9 and 0.3 seen); the control world at 2,000 labels:
its top stratum's 870 items all labelled, 76 false negatives among them, and 5 in the 741
items below, of which the missing runs saw none in 188 labels (the covered ones 2.0 in 292:
the posterior's decay thins a stratum whose first labels show no match). Two changes, both
the stratified design's:

* the detection floors (:func:`detection_shares`): from the top down, each stratum keeps a
  share φ_k of the draws, v ← max(v, φ)/Σ max(v, φ), φ_k the labels that see one of a tenth
  of the predicted positives with probability 0.9 if the stratum held them, over the budget
  (which :func:`assay.designs.build_design` passes; without one there is none), until it has
  φ_k·budget distinct labelled items (:meth:`OasisDesign.active_floors`). Every draw records
  the v it was drawn from, so the estimator is unchanged;
* the normal rule's ten failures counted within strata at 1 − f_h
  (:func:`assay.core.rule_counts.moving_counts`): draws are uniform within a stratum, so one
  whose items are all labelled is known, however often its false negatives were drawn, and
  they do not make the delta interval trustworthy when the strata below it showed 0–2
  (the Korn–Graubard fallback then applies: the stratified design's half-widths, 0.068–0.070
  for recall at 2,000 labels on the control world). The stratified rationale (a
  hypergeometric count's variance) does not carry over to Hansen–Hurwitz, which has no
  finite-population correction and still varies with a census stratum's multiplicities;
  what carries over is that only unlabelled items can hide failures not yet seen, so the
  rule errs on the wide side. Every stratum labelled in full is a census (exact).

Measured: BENCHMARKS.md, "Session 13" (``bench/out/oasis_floors2_s13.md``, the 30 cells of
``bench/adversarial.py`` × 200 runs). ``floors=False`` gives session 12's design (a run stored
before the setting existed replays so). ``cross_fit=False`` (the default) keeps the estimate
of the draws (Raj's ordered ratio); ``cross_fit=False, defensive=0, floors=False`` is the
published algorithm.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from assay.designs.base import Design, Draw
from assay.designs.oasis_model import (DEFAULT_DEFENSIVE, DEFAULT_PRIOR_STRENGTH, STRATA_METHODS,
                                       V_STAR_FORMS, OasisInit, VStar, _check_args,
                                       defensive_mixture, detection_shares, epsilon_greedy,
                                       initial_f, initialise, logistic, oasis_strata,
                                       optimal_stratum_weights, posterior_mean,
                                       rescaled_logistic, split_halves)
from assay.core.strata import Strata
from assay.core.types import Kind


class OasisDesign(Design):
    """OASIS (seed 002, Algorithm 3): adaptive stratified importance sampling with replacement.

    Parameters: ``prior`` per-item P(ℓ = 1) guesses (a calibrated probability column), or None
    to use logistic(score − ``threshold``) (Algorithm 2); ``predictions`` 0/1 per item;
    ``score`` the similarity scores to stratify on (the prior when None); ``alpha`` the F-measure
    weight; ``epsilon`` ε of eq. 12 (default 1e-3, as the original package); ``n_strata`` the
    desired K (30, the paper's suggested 30–60; CSF may build fewer); ``strata`` 'csf' or
    'equal'; ``prior_strength`` η per stratum (default 2); ``decaying_prior`` Remark 4;
    ``v_star`` 'paper' or 'rms' (see the module docstring); ``n_bins`` the CSF histogram bins;
    ``precomputed_strata`` strata already built from the same scores (they do not depend on the
    seed, so a simulation sorts once); ``budget`` the run's labels, for the detection floors
    (None: no floors; :func:`assay.designs.build_design` passes it unless ``floors=False``);
    ``cross_fit`` each stratum cut into two halves whose
    allocation is learnt from the other half (module docstring; False, the default: as
    published); ``defensive`` d, the share of v* taken from the prior's static v*_0 (module
    docstring; 0.5 by default, 0 for the published design); ``by_prediction`` the strata
    split by the prediction where it does not follow the score
    (:func:`assay.core.strata.by_prediction`; off here and in the published design).
    All randomness comes from ``rng`` (per draw one uniform for the stratum, then one integer
    for the item), so the same seed gives the same draws.
    """

    name = "oasis"
    adaptive = True
    by_prediction = False

    def __init__(self, prior: np.ndarray | None, predictions: np.ndarray,
                 score: np.ndarray | None, rng: np.random.Generator, alpha: float = 0.5,
                 epsilon: float = 1e-3, n_strata: int = 30, strata: str = "csf",
                 prior_strength: float | None = None, decaying_prior: bool = True,
                 threshold: float = 0.0, v_star: str = "paper",
                 n_bins: int | None = None, precomputed_strata: Strata | None = None,
                 cross_fit: bool = False, defensive: float = DEFAULT_DEFENSIVE,
                 budget: int | None = None, by_prediction: bool = False) -> None:
        _check_args(alpha, epsilon, n_strata, strata, prior_strength, v_star)
        predictions = np.asarray(predictions)
        n = int(predictions.shape[0])
        if n == 0:
            raise ValueError("the pool is empty")
        if prior is None and score is None:
            raise ValueError("OASIS needs a score or a probability column")
        if prior is not None and threshold != 0.0:
            raise ValueError("threshold applies only when the prior is the logistic of the "
                             "score (prior=None)")
        score_arr = None if score is None else np.asarray(score, dtype=np.float64)
        prior_arr = (logistic(score_arr - threshold) if prior is None  # type: ignore[operator]
                     else np.asarray(prior, dtype=np.float64))
        for what, arr in (("prior", prior_arr), ("score", score_arr)):
            if arr is not None and (arr.shape[0] != n or not np.all(np.isfinite(arr))):
                raise ValueError(f"{what} must be {n} finite numbers (one per prediction)")
        self.rng, self.alpha, self.epsilon, self.n = rng, float(alpha), float(epsilon), n
        self.n_strata_requested = int(n_strata)
        self.decaying_prior, self.threshold, self.v_star_form = decaying_prior, threshold, v_star
        self.n_bins = n_bins
        basis = score_arr if score_arr is not None else prior_arr
        self.by_prediction = bool(by_prediction)
        self.strata = oasis_strata(basis, predictions, strata, n_strata, n_bins,
                                   precomputed_strata, self.by_prediction)
        self.strata_method = self.strata.method
        self.cross_fit = bool(cross_fit)
        self.base_strata_count = self.strata.count
        if self.cross_fit:
            self.strata, self._sibling = split_halves(self.strata)
        else:
            self._sibling = np.arange(self.strata.count)
        init = initialise(self.strata, prior_arr, predictions.astype(np.float64), self.alpha)
        self._start_model(self.strata.sizes, init, prior_strength, defensive)
        self._predictions = predictions
        codes, k = self.strata.codes, self.strata.count
        pred = predictions.astype(np.float64)
        self._floor_sums = (np.bincount(codes, weights=pred, minlength=k),
                            np.bincount(codes, weights=prior_arr * pred, minlength=k),
                            np.bincount(codes, weights=prior_arr * (1.0 - pred), minlength=k))
        self._set_floors(budget)

    def _set_floors(self, budget: int | None) -> None:
        """The detection floors φ for a run of ``budget`` labels (:func:`detection_shares`;
        none without a budget): every draw's v becomes max(v, φ)/Σ max(v, φ) ≥ φ/(1 + Σφ)."""
        self.budget = None if budget is None else int(budget)
        k = self._sizes.shape[0]
        self.phi = (np.zeros(k) if budget is None
                    else detection_shares(int(budget), self._sizes, *self._floor_sums,
                                          self.alpha))
        self._floor_n = np.ceil(self.phi * (0 if budget is None else int(budget)) - 1e-9)
        if not hasattr(self, "_labelled"):
            self._labelled = np.zeros(k)          # distinct items labelled per stratum
            self._items: set[int] = set()
        self._live = np.where(self._labelled < self._floor_n, self.phi, 0.0)
        self._any_live = bool(self._live.any())
        self._v = None

    def active_floors(self) -> np.ndarray:
        """φ_k while stratum k has fewer distinct labelled items than its floor (φ_k·budget),
        0 once it has them: a floor is paid in labels, and OASIS draws an item again and
        again (the top stratum's 870 items took 6,880 draws at 2,000 labels), so a share of
        draws held for the whole run gave the floored strata ~1.45× their floor and took
        the labels from the strata it was to protect (review of session 13). The rule looks
        at the draws' items only, never at their labels, so every draw's v is still known
        when it is made."""
        return self._live.copy()

    def extend(self, budget: int) -> None:
        """A larger budget: the detection floors of the new budget apply from the next draw
        (every draw records its own probability, so the estimate is unchanged in form)."""
        if self.budget is not None and int(budget) > self.budget:
            self._set_floors(int(budget))

    def _start_model(self, sizes: np.ndarray, init: OasisInit, prior_strength: float | None,
                     defensive: float) -> None:
        """Algorithm 3 line 1 from the strata's sizes and Algorithm 2's output: ω, the prior
        rows Γ^(0), the prior's static v*_0 (``defensive``), empty counts and sums."""
        if not 0.0 <= defensive < 1.0:
            raise ValueError(f"defensive must be in [0, 1), got {defensive}")
        self._sizes = np.asarray(sizes).astype(np.int64)
        k = self._sizes.shape[0]
        self.omega = self._sizes / float(self._sizes.sum())
        self.pi0, self.lam, self.f0 = init.pi0, init.lam, init.f0
        self.eta = DEFAULT_PRIOR_STRENGTH if prior_strength is None else float(prior_strength)
        self.gamma1 = self.eta * self.pi0          # Γ^(0) row of label 1 (Algorithm 3 line 1)
        self.gamma0 = self.eta * (1.0 - self.pi0)  # Γ^(0) row of label 0
        self.defensive = float(defensive)
        self.v_prior = optimal_stratum_weights(self.alpha, self.f0, self.pi0, self.lam,
                                               self.omega, self.v_star_form)
        self.ones = np.zeros(k)
        self.zeros = np.zeros(k)
        self._num = 0.0          # Σ w ℓ ŷ
        self._pred = 0.0         # Σ w ŷ
        self._true = 0.0         # Σ w ℓ
        self._v: np.ndarray | None = None
        self._cum: np.ndarray | None = None
        self._vstar = VStar(self.alpha, self.omega, self.lam, self.gamma1, self.gamma0,
                            self.decaying_prior, self.defensive, self.v_prior, self.epsilon,
                            self.v_star_form)

    # --- the model -------------------------------------------------------------------------

    def pi_hat(self) -> np.ndarray:
        """Current posterior means π̂_k (eq. 11, with Remark 4 when ``decaying_prior``)."""
        return posterior_mean(self.ones, self.zeros, self.gamma1, self.gamma0,
                              self.decaying_prior)

    def allocation_rate(self) -> np.ndarray:
        """The π̂ the instrumental distribution uses: each stratum's own posterior mean
        (:meth:`pi_hat`, as published), or with ``cross_fit`` the posterior mean of its own
        prior and its sibling half's labels (eqs. 10–11, Remark 4 when ``decaying_prior``), so
        that a stratum's draws never depend on its own labels."""
        sib = self._sibling
        return posterior_mean(self.ones[sib], self.zeros[sib], self.gamma1, self.gamma0,
                              self.decaying_prior)

    def f_hat(self) -> float:
        """F̂_α^(t) by eq. 3 from the draws so far; the initial guess while it is 0/0."""
        den = self.alpha * self._pred + (1.0 - self.alpha) * self._true
        return self._num / den if den > 0 else self.f0

    def instrumental(self) -> np.ndarray:
        """The ε-greedy stratum distribution v^(t) for the next draw (eq. 12), v* mixed with
        the prior's v*_0 first when ``defensive`` > 0 (:func:`defensive_mixture`), the
        floors still unmet held after (:meth:`active_floors`)."""
        if self._v is None:
            ones, zeros = ((self.ones[self._sibling], self.zeros[self._sibling])
                           if self.cross_fit else (self.ones, self.zeros))
            self._v, self._cum = self._vstar(ones, zeros, self.f_hat(),
                                             self._live if self._any_live else None)
        return self._v

    # --- the Design interface --------------------------------------------------------------

    def draw(self) -> Draw:
        """Stratum k ~ v, then an item uniformly in P_k (Algorithm 3, lines 5–7); O(K)."""
        v = self.instrumental()
        assert self._cum is not None
        k = int(np.searchsorted(self._cum, self.rng.random(), side="right"))
        k = min(k, self.strata.count - 1)
        j = int(self.rng.integers(self._sizes[k]))
        pos = int(self.strata.bounds[k]) + j
        item = int(self.strata.order[pos])
        prob = float(v[k]) / float(self._sizes[k])
        return Draw(item, prob, k, Kind.SELECTION, position=pos)

    def update(self, draw: Draw, label: int) -> None:
        """Posterior update (eq. 10) and the running sums of eq. 3 with w = ω_k/v_k =
        1/(N q_t)."""
        k, ell = int(draw.stratum), int(label)
        if draw.index not in self._items:
            self._items.add(int(draw.index))
            self._labelled[k] += 1.0
            if self._any_live and self._live[k] > 0.0 and \
                    self._labelled[k] >= self._floor_n[k]:
                self._live[k] = 0.0           # the floor is paid
                self._any_live = bool(self._live.any())
        if ell == 1:
            self.ones[k] += 1.0
        else:
            self.zeros[k] += 1.0
        w = 1.0 / (self.n * draw.probability)
        yhat = float(self._predictions[draw.index])
        self._num += w * ell * yhat
        self._pred += w * yhat
        self._true += w * ell
        self._v = None

    def stratum_sizes(self) -> np.ndarray | None:
        """With ``cross_fit``, the half-strata sizes: the draws are then estimated as the
        stratified sample of their distinct items (:func:`assay.core.totals.sample_of`);
        without, None (Raj's ordered ratio over the draws; eq. 3 steers the design)."""
        return self._sizes.copy() if self.cross_fit else None

    def selection_strata(self) -> np.ndarray | None:
        """Without ``cross_fit``, the strata's sizes: draws are uniform within them, which the
        interval's count rule uses (:func:`assay.core.measures.f_measures`)."""
        return None if self.cross_fit else self._sizes.copy()

    def params(self) -> dict[str, Any]:
        """The design's settings; ``cross_fit`` only when on (the published design's keys are
        unchanged)."""
        out = {"design": "oasis", "alpha": self.alpha, "epsilon": self.epsilon,
               "strata": self.strata_method, "n_strata": self.n_strata_requested,
               "n_strata_built": self.base_strata_count, "n_bins": self.n_bins,
               "prior_strength": self.eta, "decaying_prior": self.decaying_prior,
               "threshold": self.threshold, "v_star": self.v_star_form}
        if self.cross_fit:
            out["cross_fit"] = True
        if self.by_prediction:
            out["by_prediction"] = True
        if self.defensive > 0.0:
            out["defensive"] = self.defensive
        if float(self.phi.sum()) > 0.0:
            out["detection_floors"] = [round(float(x), 6) for x in self.phi]
        return out

    def strata_table(self) -> list[dict[str, Any]]:
        v, pi = self.instrumental(), self.pi_hat()
        return [{"stratum": h, "size": int(self._sizes[h]), "prior_mean": float(self.pi0[h]),
                 "mean_prediction": float(self.lam[h]), "posterior_mean": float(pi[h]),
                 "labels_drawn": int(self.ones[h] + self.zeros[h]),
                 "instrumental_probability": float(v[h])}
                for h in range(self.strata.count)]


__all__ = ["OasisDesign", "OasisInit", "epsilon_greedy", "initial_f", "initialise", "logistic",
           "optimal_stratum_weights", "posterior_mean", "rescaled_logistic", "split_halves",
           "defensive_mixture", "detection_shares", "DEFAULT_DEFENSIVE"]
