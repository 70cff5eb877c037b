"""How many new draws a submission needs, and from which of its sets (on-demand rule, issue 12
must-have 5; seed 000's "bisection on a conservative variance bound, or better").

The planning variance is :func:`assay.core.mixture_variance.model_variance` under the optimal mixture,
with the labels Bernoulli at a rate per membership pattern (:func:`pattern_rates`) instead of
the worst constant rate of an interval: where systems' outputs differ, the items few systems
output are mostly false, and the constant-rate bound overstated a low-precision system's
variance by up to 1.5×, so its first round overshot the width. In rounds that may read the
submission's own labels (not the two-stage rule's second stage, :func:`next_draws`) the model
is calibrated to the realised variance (:func:`_calibrated`). Three sets compete for the new draws
of system t — its output (``own``), the part no earlier system output (``novel``), and a
*fill* proposal that raises the least-sampled items of its output to one level
(:func:`assay.ondemand.joint.fill_density`) — and the one expected to need the fewest new labels
(a draw on an item already labelled is free) among those that reach the width within the cap
wins. Only the number and place of draws depend on the model; the estimates never do.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from assay.core.mixture import optimal_weights_fast
from assay.core.mixture_variance import draws_needed, model_variance
from assay.ondemand.joint import (FILL, NOVEL, OWN, Universe, _floor_on, defend, drawn,
                                  fill_density, precision_half_width, single_thread,
                                  water_fill)
from assay.ondemand.regions import post_stratified_variance, regions

OPTIMAL_PLAN = True
RATE_MODEL = True
FILL_PLAN = True
CALIBRATION = (0.25, 4.0)
TWO_STAGE = True
STEIN_T = False
VARIANCE_BOUND = 0.10
TOP_UPS = 0
BLIND_SECOND_STAGE = True
KINDS = (OWN, NOVEL, FILL)


def plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
         half_width: float, confidence: float, cap: int, minimum: int = 10,
         normalised: bool = True, kinds: tuple[str, ...] = KINDS, least_drawn: int = 1,
         calibrate: bool = True) -> tuple[int, str]:
    """:func:`_plan`'s draws, raised to what the variance floor of the estimate needs
    (:func:`region_draws`: the post-stratified variance over the output's regions,
    :mod:`assay.ondemand.regions`), within ``cap``; ``kinds``: the sets allowed;
    ``least_drawn`` and ``calibrate`` as in :func:`_plan`."""
    d, kind = _plan(uni, src, item, f, target, half_width, confidence, cap, minimum,
                    normalised, kinds, least_drawn, calibrate)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    low = min(d, cap)
    need = region_draws(uni, item, f, target, kind, half_width, z, low, cap)
    if need >= cap and kind == NOVEL and OWN in kinds:   # the novel part alone cannot lower the floor of
        own = region_draws(uni, item, f, target, OWN, half_width, z, low, cap)   # the rest
        if own < cap:
            return own, OWN
    return need, kind


def region_draws(uni: Universe, item: np.ndarray, f: np.ndarray, target: int, kind: str,
                 half_width: float, z: float, low: int, cap: int) -> int:
    """The least d in [low, cap] (cap if none) of new draws from system ``target``'s
    ``kind`` set (own: its output; novel: its novel part, both uniform over the set; fill: the
    fill proposal's density once it exists, else taken as uniform over the output) whose expected new labels per region bring z·√V (the post-stratified floor) to
    ``half_width``, each region's new labels true at its Jeffreys posterior mean rate.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [1, 1], [1, 0]], dtype=bool))
    >>> region_draws(uni, np.array([1, 2]), np.array([1.0, 1.0]), 0, OWN, 0.2, 1.96, 1, 50)
    3
    """
    where, size, n, k = regions(uni.memb, item, f, target, uni.strata())
    members = uni.memb[:, target] if kind != NOVEL else uni.novel()[:, target]
    into = np.bincount(where[members], minlength=len(size)) / max(int(members.sum()), 1)
    if kind == FILL and uni.fill is not None and uni.fill[:, target].any():
        dens = np.asarray(uni.fill[:, target], dtype=np.float64)    # its own shape
        on = where >= 0
        into = np.bincount(where[on], weights=dens[on], minlength=len(size)) / dens.sum()
    rate = (k + 0.5) / (n + 1)

    def ok(d: int) -> bool:
        nn = np.minimum(n + d * into, size)
        kk = k + rate * (nn - n)
        return z * math.sqrt(post_stratified_variance(size, nn, kk)) <= half_width
    if ok(low) or not ok(cap):
        return low if ok(low) else cap
    lo, hi = low, cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _plan(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
          half_width: float, confidence: float, cap: int, minimum: int = 10,
          normalised: bool = True, kinds: tuple[str, ...] = KINDS, least_drawn: int = 1,
          calibrate: bool = True) -> tuple[int, str]:
    """How many new draws, and from which of system ``target``'s sets (own, novel or fill),
    bring its planning variance (module docstring) to ``half_width``, given every draw so
    far. A set not drawn from yet gets at least ``minimum`` draws (a set of two draws has a
    noisy variance); a top-up adds to a set already drawn from unless that set cannot reach
    the width. The rate interval (used when :data:`RATE_MODEL` is off): the system's current
    interval when it has draws; before, a 95% Wilson interval from the labelled items of its
    output; (0, 1) when none is labelled. ``least_drawn``: the fewest new draws asked of a set
    already drawn from (0: the plan may answer that none is needed); ``calibrate``: scale
    the model to the realised variance (:func:`_calibrated`; off when ``f`` holds planning
    values instead of labels, :func:`planning_labels`)."""
    m = uni.m
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=3 * m).astype(np.float64)
    est, hw = precision_half_width(uni, src, item, f, target, confidence, normalised)
    if math.isfinite(hw):
        rate: tuple[float, float] = (max(est - hw, 0.0), min(est + hw, 1.0))
    else:
        mine = uni.memb[item[ok], target]
        k, t = float(f[ok][mine].sum()), float(mine.sum())
        rate = (0.0, 1.0) if t == 0 else _wilson(k, t)
    tp, qp, mult = uni.patterns()
    rates = pattern_rates(uni, item[ok], f[ok], target) if RATE_MODEL else None
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    fresh = drawn(n, target, m) == 0
    if rates is not None and not fresh and calibrate:
        half_width = _calibrated(n, target, qp, tp, mult, rates, hw, half_width, z,
                                 normalised)
    unlabelled = np.ones(len(uni.memb))
    unlabelled[item[ok]] = 0.0
    best: tuple = (True, math.inf, cap + 1, kinds[0])   # (misses the width, new labels, draws, set)
    for kind, k in ((OWN, target), (NOVEL, m + target), (FILL, 2 * m + target)):
        if kind not in kinds:
            continue
        if kind == NOVEL and (target == 0 or not uni.novel()[:, target].any()):
            continue
        if kind == NOVEL and fresh and n[:target].sum() == 0:
            continue
        if kind == FILL and (n[k] == 0 and (not FILL_PLAN or n.sum() == 0)) and \
                kinds != (FILL,):
            continue
        if not fresh and n[k] == 0 and kind != FILL:
            continue
        least = min(minimum, cap) if n[k] == 0 else least_drawn
        try:
            if kind == FILL and n[k] == 0 and not (uni.fill is not None
                                                    and uni.fill[:, target].any()):
                d = _fill_needed(uni, n, target, half_width, z, cap, least, normalised, rates)
                dens = fill_density(uni, n, target, d)
            else:
                d = draws_needed(qp, n, target, half_width, z, rate, cap, mult,
                                 minimum=least, normalised=normalised,
                                 target_density=tp[:, target], add_to=k, rates=rates)
                if OPTIMAL_PLAN and d > 1:
                    d = _refine(qp, tp[:, target], mult, n, target, k, d, half_width, z,
                                rate, normalised, least, rates)
                dens = uni.proposals()[:, k]
        except ValueError:                    # the set does not cover the output: skip it
            continue
        cost = d * float(dens @ unlabelled)   # expected new labels: labelled items are free
        # a set that cannot reach the width within the cap (a small novel part: the variance
        # sits in the shared part) loses to one that can; among those, fewer new labels win
        best = min(best, (d >= cap, cost, d, kind))
    return min(best[2], cap), best[3]


def _fill_needed(uni: Universe, n: np.ndarray, target: int, half_width: float, z: float,
                 cap: int, least: int, normalised: bool, rates: np.ndarray | None) -> int:
    """The least d in [``least``, ``cap``] whose fill proposal (recomputed for each d) brings
    the planning variance under the optimal mixture to the width; bisection."""
    m = uni.m
    t, q, first, _, mult = uni.groups()
    tp, qp = t[first][:, target], q[first].copy()
    have = qp @ n
    k = 2 * m + target

    def ok(d: int) -> bool:
        nn = n.copy()
        nn[k] = d
        qp[:, k] = water_fill(tp, have, mult, d)
        pi = defend(optimal_weights_fast(qp, nn, target, 0.5, mult, normalised=normalised,
                                         target_density=tp,
                                         floor_on=_floor_on(nn, target, m)), nn)
        v = model_variance(qp, nn, target, pi, 0.5, mult, normalised, tp, rates)
        return z * math.sqrt(v) <= half_width
    lo, hi = max(least, 1), max(cap, least, 1)
    if ok(lo):
        return lo
    if not ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _calibrated(n: np.ndarray, target: int, qp: np.ndarray, tp: np.ndarray, mult: np.ndarray,
                rates: np.ndarray, hw: float, half_width: float, z: float,
                normalised: bool) -> float:
    """The half-width the planning model must reach so that the realised one reaches
    ``half_width``: the model's variance at the current draws and the estimate's differ by a
    factor κ = V̂/V_model (the rates are a model, the draws a sample), taken to hold for the
    next few draws too; κ kept within :data:`CALIBRATION`."""
    m = len(n) // 3
    pi = defend(optimal_weights_fast(qp, n, target, 0.5, mult, normalised=normalised,
                                     target_density=tp[:, target],
                                     floor_on=_floor_on(n, target, m)), n)
    v = model_variance(qp, n, target, pi, 0.5, mult, normalised, tp[:, target], rates)
    if not (v > 0 and math.isfinite(hw) and hw > 0):
        return half_width
    kappa = float(np.clip((hw / z) ** 2 / v, *CALIBRATION))
    return half_width / math.sqrt(kappa)


def pattern_rates(uni: Universe, item: np.ndarray, f: np.ndarray, target: int,
                  prior: float = 2.0) -> np.ndarray:
    """A planning rate for each distinct row (the patterns of :meth:`Universe.patterns`): the
    labelled share of true items among system ``target``'s items output by as many systems
    (the vote count v), shrunk towards that share over every system's items with v votes
    (weight ``prior``), itself shrunk towards the overall labelled rate (weight 1). Within a
    pattern every item has the same proposal densities, so the labelled items of a pattern are
    a uniform sample of it; the vote count pools patterns whose rates are alike (items that
    many systems output are more often true). A planning value only: the estimates and their
    intervals never use it.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [0, 1]], dtype=bool))
    >>> pattern_rates(uni, np.array([0, 1]), np.array([0.0, 1.0]), 0).round(2).tolist()
    [0.25, 0.17, 0.83]
    """
    _, _, first, inv, _ = uni.groups()
    pats = uni.memb[first]
    votes = pats.sum(axis=1)
    m = uni.m
    seen, where = np.unique(np.asarray(item, dtype=np.int64), return_index=True)
    lab = np.asarray(f, dtype=np.float64)[where]
    overall = float(lab.mean()) if lab.size else 0.5
    v_seen, mine = votes[inv[seen]], pats[inv[seen], target]
    k_all = np.bincount(v_seen, weights=lab, minlength=m + 1)
    n_all = np.bincount(v_seen, minlength=m + 1)
    k_own = np.bincount(v_seen[mine], weights=lab[mine], minlength=m + 1)
    n_own = np.bincount(v_seen[mine], minlength=m + 1)
    r_all = (k_all + overall) / (n_all + 1.0)
    r_own = (k_own + prior * r_all) / (n_own + prior)
    return np.where(pats[:, target], r_own[votes], r_all[votes])


def _refine(qp: np.ndarray, tdens: np.ndarray, mult: np.ndarray, n: np.ndarray, target: int,
            k: int, d_max: int, half_width: float, z: float, rate: tuple[float, float],
            normalised: bool, minimum: int, rates: np.ndarray | None = None) -> int:
    """The least d ≤ ``d_max`` (the overlap-weights bound's answer) whose planning variance
    under the optimal mixture for n + d meets the width; bisection."""
    m = len(n) // 3

    def ok(d: int) -> bool:
        nn = n.copy()
        nn[k] += d
        pi = defend(optimal_weights_fast(qp, nn, target, 0.5, mult, normalised=normalised,
                                         target_density=tdens,
                                         floor_on=_floor_on(nn, target, m)), nn)
        v = model_variance(qp, nn, target, pi, rate, mult, normalised, tdens, rates)
        return z * math.sqrt(v) <= half_width
    lo, hi = minimum, d_max
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def next_draws(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray, target: int,
               rounds: int, room: int, half_width: float, confidence: float,
               max_rounds: int = 4, minimum: int = 10, normalised: bool = True,
               kinds: tuple[str, ...] = KINDS) -> tuple[int, str]:
    """The on-demand rule for a submission (the campaign and the simulations share it): the
    number of draws of round ``rounds`` and their set; 0 — stop. Within ``room`` (what the caps
    leave). A new fill proposal's density is :func:`new_fill` of the same arguments.

    With :data:`TWO_STAGE` (the default), Stein's two-stage procedure (Stein 1945, "A
    two-sample test for a linear hypothesis whose power is independent of the variance", Ann.
    Math. Statist. 16: 243–258; for a proportion, Cochran 1977 §4.6): round 0 draws a first
    stage whose size is fixed before any of the submission's labels is seen
    (:func:`first_stage`: from the target, the confidence and a conservative variance, the
    Jeffreys interval of an all-true sample); round 1 draws the second stage, sized by
    :func:`plan` (none when the plan says the first stage already gives the width: Stein's
    N = max(n₀, ⌈z²s₀²/ε²⌉)); then the submission stops, whatever its realised width.

    With :data:`BLIND_SECOND_STAGE` (the default) the second stage is sized without what the
    submission's own first stage showed: from the labels that existed before the submission,
    the membership patterns and where the first stage drew (:func:`planning_labels`; the
    model's calibration to the realised variance, which would read the first stage's labels,
    is off for it). Stein's rule sizes it from the first stage's variance s₀², which leaves the
    pooled mean of n₀ + d draws unbiased only where s₀² is independent of the first stage's
    mean (the normal); for a proportion s₀² = p̂(1 − p̂) moves with p̂, and with it the first
    stage's weight n₀/(n₀ + d) in the estimate: ν̂ was biased +0.0097 (z +9.2) and precision
    −0.0072 (z −5.3) over 300 worlds (tests/test_ondemand_nu_bias.py), and sized blind
    −0.0013 (z −1.3) and −0.0006 (z −0.4). A size that depends on no label at all (a
    variance bound) would be exactly the fixed-draws design; earlier labels still enter this
    one, through the pattern rates shrunk over many patterns, a dependence the same test
    finds no trace of (600 worlds). The price is paid where nothing was labelled before: the
    first submission (and a system evaluated alone) is sized on the rate ½ (p(1 − p) ≤ ¼):
    on FEBRL the first matcher, of precision 1.0, took 863 labels against 48, all eight in
    turn 982 against 307 sized from the first stage (same seeds,
    bench/out/febrl_in_turn_blind.md and febrl_in_turn_sighted.md); 40 KBP-like systems
    (precisions 0.22–0.63) 2,645 against 2,573 (bench/out/kbp_sim_blind.md). ``BLIND_SECOND_STAGE = False``: the second stage sized from every
    label after the first stage, calibrated, and none drawn when the realised half-width
    already meets the target (the earlier rule, kept for comparison).

    Two options, off by default and measured in
    bench/out/kbp_sim_top_ups.md (40 KBP-like systems in turn, 10 campaigns): :data:`STEIN_T`
    plans the second stage with Student's t on the variance estimate's degrees of freedom and
    an upper bound of the variance (:func:`stein_factor`); :data:`TOP_UPS` adds up to that many
    stages, each planned the same way from every label so far, while the realised half-width
    is still wider than the target and the plan reaches it within the room. With both (two
    top-ups) 0.98 of the final half-widths met the target against 0.90 without, for 2,821
    labels against 2,573 (2 of 10 campaigns above 3,000); a top-up drawn only after a
    realised width above the target is a mild optional-stopping dependence (mean z of the
    estimates −0.22 over 400 pairs with both options on), so the default stays the plain
    two-stage rule (both figures measured before :data:`BLIND_SECOND_STAGE`; the top-ups
    still read every label). The number of draws never depends on the labels drawn after
    the decision, so stopping cannot select the repetitions whose early draws happened to be
    true (optional stopping: with the sequential rule, which stops as soon as the realised
    half-width is at most the target, a system of precision 0.94 on FEBRL stopped early with
    its estimate 10 SE high and its 95% interval covering 0.565, at a 0.05 target).

    ``kinds``: the sets the submission may draw from; ``(FILL,)`` for structured sampling
    (its fill proposal is then a level's distribution over its output, set before its first
    draw: :mod:`assay.ondemand.structured`), whose first stage covers the whole output.

    With ``TWO_STAGE = False``, the sequential rule (kept for comparison): stop when the
    realised half-width is at most ``half_width`` or after ``max_rounds`` rounds, else plan.
    """
    with single_thread():
        if room <= 0 or rounds >= (min(2 + TOP_UPS, max_rounds) if TWO_STAGE else max_rounds):
            return 0, OWN
        if TWO_STAGE and rounds == 0:
            if kinds == (FILL,):
                return min(first_stage(uni, target, half_width, confidence, minimum,
                                       share=1.0), room), FILL
            return min(first_stage(uni, target, half_width, confidence, minimum), room), \
                (NOVEL if target > 0 and uni.novel()[:, target].any() else OWN)
        blind = TWO_STAGE and rounds == 1 and BLIND_SECOND_STAGE
        if blind:                   # sized without the submission's own labels
            g = planning_labels(uni, src, item, f, target)
        else:
            _, hw = precision_half_width(uni, src, item, f, target, confidence, normalised)
            if hw <= half_width:
                return 0, OWN
            g = f
        aim = half_width
        if TWO_STAGE and STEIN_T:
            aim = half_width * stein_factor(uni, item, f, target, confidence)
        d, kind = plan(uni, src, item, g, target, aim, confidence, room, minimum,
                       normalised, kinds, least_drawn=0 if blind else 1,
                       calibrate=not blind)
        if d == 0:
            return 0, OWN
        if TWO_STAGE and rounds >= 2 and d >= room:   # a top-up that cannot reach the width
            return 0, OWN                              # within the room is not drawn
    return max(2, min(d, room)) if room >= 2 else room, kind


def planning_labels(uni: Universe, src: np.ndarray, item: np.ndarray, f: np.ndarray,
                    target: int) -> np.ndarray:
    """``f`` as the second stage of system ``target``'s submission is planned on: the labels
    that existed before the submission (every item labelled by another system's draws) as
    they are; each label the submission itself paid for replaced by its pattern's planning
    rate (:func:`pattern_rates`) fitted on the labels from before. The draws, their items and
    their count stay: where the first stage drew is fixed before its labels are seen.

    Why (tests/test_ondemand_nu_bias.py): a second stage sized from the first stage's own
    labels makes the stage sizes, and so the weight the estimate gives the first stage,
    depend on what the first stage showed. For a precision below ½ a first stage showing fewer
    true items shows a smaller p(1 − p), gets fewer second-stage draws and keeps more weight:
    ν̂ was biased +0.0097 (z +9.2), precision −0.0072 (z −5.3) over 300 worlds. A mean over
    n₀ + d draws is unbiased when d is independent of the first n₀ draws' values: Stein
    1945's pooled mean is, because for the normal x̄ and s² are independent; for a proportion
    they are not (the pooled proportion after a design whose second stage depends on the
    first is biased; Jung & Kim 2004, Statist. Med. 23: 881–896). The membership patterns
    and the positions of the first-stage draws are independent of their labels, so sizing on
    them and on earlier labels keeps the first stage's mean out of d.

    >>> uni = Universe(np.array([[1, 0], [1, 1], [0, 1]], dtype=bool))
    >>> src, item = np.array([0, 0, 1]), np.array([0, 1, 2])
    >>> planning_labels(uni, src, item, np.array([0.0, 1.0, 0.0]), 1).round(2).tolist()
    [0.0, 1.0, 0.25]
    """
    f = np.asarray(f, dtype=np.float64)
    ok = ~np.isnan(f)
    mine = (np.asarray(src) % uni.m) == target
    before = ok & ~mine
    known = np.zeros(len(uni.memb), dtype=bool)
    known[item[before]] = True
    hidden = ok & mine & ~known[item]
    if not hidden.any():
        return f
    _, _, _, inv, _ = uni.groups()
    rate = pattern_rates(uni, item[before], f[before], target)[inv]
    out = f.copy()
    out[hidden] = rate[item[hidden]]
    return out


def stein_factor(uni: Universe, item: np.ndarray, f: np.ndarray, target: int,
                 confidence: float) -> float:
    """z/t: the factor on the target half-width that a stage after the first plans for
    (Stein 1945: N = ⌈t²_{ν} s²/ε²⌉ with t the Student quantile on the ν degrees of freedom
    of the variance estimate s², instead of z); ν = the distinct labelled items of system
    ``target``'s output − 1 (its variance estimate's sample). With :data:`VARIANCE_BOUND` = β,
    also √(χ²_{β,ν}/ν): the plan uses the upper 1 − β confidence bound s²ν/χ²_{β,ν} of the
    variance (Cochran 1977 §4.7, a conservative variance for the sample size), so that the
    realised half-width, not only the interval's coverage, meets the target in most
    submissions.

    >>> uni = Universe(np.ones((30, 1), dtype=bool))
    >>> round(stein_factor(uni, np.arange(11), np.ones(11), 0, 0.90), 2)
    0.63
    """
    ok = ~np.isnan(f)
    seen = np.unique(np.asarray(item)[ok])
    nu = int(uni.memb[seen, target].sum()) - 1
    if nu < 1:
        return 1.0
    a = 0.5 + confidence / 2
    out = float(stats.norm.ppf(a) / stats.t.ppf(a, nu))
    if VARIANCE_BOUND:      # plan on the upper (1 − β) bound s²ν/χ²_β,ν of the variance
        out *= math.sqrt(float(stats.chi2.ppf(VARIANCE_BOUND, nu)) / nu)
    return out


def first_stage(uni: Universe, target: int, half_width: float, confidence: float,
                minimum: int = 10, share: float | None = None) -> int:
    """The first stage of :func:`next_draws`, fixed before any of the submission's labels: n₀
    draws from its novel part (its output when it has none or comes first), the least n₀ ≥
    ``minimum`` such that the most optimistic first stage — every draw true — would give the
    novel part's share s of the output a Jeffreys interval of half-width at most the target:
    s·(1 − B⁻¹(α/2; n₀ + ½, ½))/2 ≤ ε, B⁻¹ the Beta quantile (Brown, Cai & DasGupta 2001,
    Statist. Sci. 16: 101–133, the Jeffreys interval; its width at zero failures is the least
    any sample of n₀ can have, so a smaller first stage could not back the width whatever it
    shows). ``share``: the share drawn (default: the novel part's).

    >>> uni = Universe(np.array([[1, 0], [1, 1], [1, 1], [1, 0]], dtype=bool))
    >>> first_stage(uni, 0, 0.03, 0.95), first_stage(uni, 0, 0.05, 0.95)
    (41, 24)
    """
    if share is None:
        members = uni.memb[:, target]
        novel = uni.novel()[:, target] if target > 0 else members
        share = float(novel.sum()) / max(float(members.sum()), 1.0) if novel.any() else 1.0
    alpha = 1 - confidence

    def ok(n: int) -> bool:
        return share * (1 - stats.beta.ppf(alpha / 2, n + 0.5, 0.5)) / 2 <= half_width
    lo = max(int(minimum), 1)
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def new_fill(uni: Universe, src: np.ndarray, f: np.ndarray, target: int, d: int) -> np.ndarray:
    """The fill density (per row of the universe) that :func:`plan` planned d draws of: the
    draw counts are those of the labelled draws, as in the plan."""
    ok = ~np.isnan(f)
    n = np.bincount(src[ok], minlength=3 * uni.m).astype(np.float64)
    return fill_density(uni, n, target, d)


def _wilson(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(mid - half, 0.0), min(mid + half, 1.0)


__all__ = ["BLIND_SECOND_STAGE", "CALIBRATION", "FILL_PLAN", "OPTIMAL_PLAN", "RATE_MODEL", "STEIN_T", "TOP_UPS",
           "TWO_STAGE", "VARIANCE_BOUND", "first_stage", "stein_factor",
           "new_fill", "next_draws",
           "pattern_rates", "plan", "planning_labels", "single_thread"]
