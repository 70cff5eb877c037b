"""The on-demand rule for a submission (issue 12 must-have 5): when it draws and on which labels
each stage is sized. Stein's two-stage rule (:func:`next_draws`): a first stage fixed before any
of the submission's labels (:func:`first_stage`), then one second stage sized blind, on the
labels from before the submission (:func:`planning_labels`); the options kept for comparison
(:data:`STEIN_T` with :func:`stein_factor`, :data:`TOP_UPS`, the sequential rule) are read here.

How many draws a stage needs and from which set (the planning variance under the optimal
mixture, the post-stratified floor, the fill proposal) is :mod:`assay.ondemand.sizing`; its
public names are re-exported here (``from assay.ondemand.planning import plan`` keeps working).
Its knobs (``OPTIMAL_PLAN``, ``RATE_MODEL``, ``FILL_PLAN``, ``CALIBRATION``) are read there: set
them on :mod:`assay.ondemand.sizing`, not on this module.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from assay.core.search import least_reaching
from assay.ondemand.joint import FILL, NOVEL, OWN, Universe, precision_half_width, single_thread
from assay.ondemand.sizing import (CALIBRATION, FILL_PLAN, KINDS, OPTIMAL_PLAN, RATE_MODEL,
                                   new_fill, pattern_rates, plan, region_draws)

TWO_STAGE = True
STEIN_T = False
VARIANCE_BOUND = 0.10
TOP_UPS = 0
BLIND_SECOND_STAGE = True


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

    def width(n: int) -> float:
        return share * (1 - stats.beta.ppf(alpha / 2, n + 0.5, 0.5)) / 2
    return least_reaching(width, half_width, max(int(minimum), 1), None)


__all__ = ["BLIND_SECOND_STAGE", "CALIBRATION", "FILL_PLAN", "KINDS", "OPTIMAL_PLAN", "RATE_MODEL",
           "STEIN_T", "TOP_UPS", "TWO_STAGE", "VARIANCE_BOUND", "first_stage", "stein_factor",
           "new_fill", "next_draws", "pattern_rates", "plan", "planning_labels", "region_draws",
           "single_thread"]
