"""Adversarial test worlds (issue 11, must-have 5): seeded pools whose truth is known, one per
assumption that an interval may rest on, and a control that satisfies them all.

Every ``make_<family>(rng, n, **params) -> World`` builds a fully labelled pool of ``n`` items
(columns ``id``, ``prediction``, ``score``, ``label``; ``probability`` in one variant) from an
explicit ``numpy.random.Generator``, so the same seed gives the same world. Rows are shuffled, so
the file order tells nothing about the ranking. Most worlds start from the control's *top
family*: a match rate by score rank r (0 = best) that is flat at p₀ down to a knee k and decays
as a power law below it,

    ρ(r) = p₀ · min(1, k / (r + 1))^β,

with labels drawn independently, ``label ~ Bernoulli(ρ(r))``, the score the log-odds of the rate
the scorer believes in (``logit ρ(r)`` with a vanishing tie-breaker, so the ranking is strict)
and the prediction the top ``predicted`` ranks. Each family then breaks one assumption: matches
the score does not see, a second family lower down, ties, a weak score, miscalibrated
probabilities, a rate that is not monotone in the score, predictions that do not follow the
score. ``World.facts`` holds what the
generator realised (counts of each kind of match, the rank of every row), for the tests.

:func:`assessor_error_world` is the stratified (TREC) counterpart: a two-run collection whose
assessor error is concentrated in one stratum, as a :class:`assay.simulation.Population`.

``WORLDS`` maps each name to its generator with the default parameters (10⁵ items; 10⁶ for
``ultra_rare``): ``WORLDS[name](rng)``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from assay.worlds_assessor import AssessorWorld, assessor_error_world

__all__ = ["World", "AssessorWorld", "truth_of", "knee_rate", "make_realistic",
           "make_second_family", "make_score_blind", "make_ultra_rare", "make_ties",
           "make_weak_balanced", "make_miscalibrated", "make_non_monotone",
           "make_duplicate_scores", "make_off_score", "assessor_error_world", "WORLDS"]

_TIE_BREAK = 1e-9      # score step between consecutive ranks (far below any rounding used here)


@dataclass(frozen=True, eq=False)
class World:
    """A fully labelled pool: ``frame`` (id, prediction, score, label[, probability]), the
    family ``name``, the generator's ``params``, the ``truth`` (precision, recall, f1 of the
    predictions, from the frame) and the realised ``facts``."""

    name: str
    frame: pd.DataFrame
    params: dict[str, Any]
    truth: dict[str, float]
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.frame.shape[0])


def truth_of(prediction: np.ndarray, label: np.ndarray) -> dict[str, float]:
    """Precision TP/PP, recall TP/P and F1 = 2TP/(PP + P) of 0/1 predictions (NaN when 0/0).

    >>> truth_of(np.array([1, 1, 0, 0]), np.array([1, 0, 1, 0]))
    {'precision': 0.5, 'recall': 0.5, 'f1': 0.5}
    """
    p = np.asarray(prediction, np.int64)
    y = np.asarray(label, np.int64)
    tp, pp, pos = int((p * y).sum()), int(p.sum()), int(y.sum())
    div = lambda a, b: a / b if b else float("nan")  # noqa: E731
    return {"precision": div(tp, pp), "recall": div(tp, pos), "f1": div(2 * tp, pp + pos)}


def knee_rate(n: int, knee: int, p0: float, beta: float) -> np.ndarray:
    """The control's match rate by rank: ρ(r) = p₀·min(1, knee/(r+1))^β, r = 0 … n−1.

    >>> knee_rate(6, 2, 0.8, 2.0).round(3).tolist()
    [0.8, 0.8, 0.356, 0.2, 0.128, 0.089]
    """
    r = np.arange(n, dtype=np.float64)
    return p0 * np.minimum(1.0, knee / (r + 1.0)) ** beta


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)


def _ranked_score(rate: np.ndarray) -> np.ndarray:
    """Log-odds of a non-increasing rate, made strictly decreasing in the rank."""
    return _logit(rate) - _TIE_BREAK * np.arange(rate.shape[0])


def _build(rng: np.random.Generator, name: str, params: dict[str, Any], label: np.ndarray,
           score: np.ndarray, prediction: np.ndarray, family: np.ndarray | None = None,
           extra: dict[str, np.ndarray] | None = None, facts: dict[str, Any] | None = None
           ) -> World:
    """Shuffle rank-ordered arrays into a frame with string ids; record truth and facts."""
    n = label.shape[0]
    perm = rng.permutation(n)
    cols: dict[str, Any] = {"id": [f"{name[:2]}{i:07d}" for i in range(n)],
                            "prediction": prediction[perm].astype(np.int8),
                            "score": score[perm].astype(np.float64),
                            "label": label[perm].astype(np.int8)}
    for k, v in (extra or {}).items():
        cols[k] = v[perm]
    frame = pd.DataFrame(cols)
    frame["id"] = frame["id"].astype(str)
    fam = np.where(label > 0, 1, 0).astype(np.int8) if family is None else family
    facts = dict(facts or {})
    facts.update(rank=perm.astype(np.int64), family=fam[perm].astype(np.int8),
                 matches=int(label.sum()), predicted=int(prediction.sum()))
    return World(name, frame, dict(params),
                 truth_of(frame["prediction"].to_numpy(), frame["label"].to_numpy()), facts)


def _top_family(rng: np.random.Generator, n: int, knee: int, p0: float, beta: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Labels by rank drawn from :func:`knee_rate`, and the rate itself."""
    rate = knee_rate(n, knee, p0, beta)
    return (rng.random(n) < rate).astype(np.int8), rate


def _add_uniform(rng: np.random.Generator, label: np.ndarray, family: np.ndarray,
                 lo: int, hi: int, count: int, tag: int) -> int:
    """Turn ``count`` non-matches drawn uniformly from ranks [lo, hi) into matches of family
    ``tag``; returns how many were added (at most the non-matches there)."""
    free = lo + np.flatnonzero(label[lo:hi] == 0)
    count = min(int(count), free.size)
    pick = rng.choice(free, size=count, replace=False)
    label[pick] = 1
    family[pick] = tag
    return count


def _extra_count(top_matches: int, share: float) -> int:
    """Matches to add so that they are ``share`` of all: share/(1−share) × the others."""
    if not 0.0 <= share < 1.0:
        raise ValueError(f"share must be in [0, 1), got {share}")
    return int(round(share / (1.0 - share) * top_matches))


def make_realistic(rng: np.random.Generator, n: int = 100_000, knee: int = 150,
                   p0: float = 0.85, beta: float = 2.5, predicted: int | None = None) -> World:
    """The control: breaks nothing. A flat top of ``knee`` ranks at rate p₀ then a power-law
    decay (like the real ER pools: amazon_google's rate is ~0.5 over its top 300 ranks and
    falls by a factor ~10 per tripling of the rank below), a calibrated score (the log-odds of
    the rate) and the top ``predicted`` (default ``knee``) ranks predicted positive. With the
    defaults: ~127 true positives, ~210 matches, F1 ≈ 0.70.

    >>> w = make_realistic(np.random.default_rng(1), 20_000)
    >>> list(w.frame.columns), int(w.frame["prediction"].sum()), 0.6 < w.truth["f1"] < 0.8
    (['id', 'prediction', 'score', 'label'], 150, True)
    """
    params = dict(n=n, knee=knee, p0=p0, beta=beta, predicted=predicted)
    label, rate = _top_family(rng, n, knee, p0, beta)
    pred = (np.arange(n) < (knee if predicted is None else predicted)).astype(np.int8)
    return _build(rng, "realistic", params, label, _ranked_score(rate), pred)


def make_second_family(rng: np.random.Generator, n: int = 100_000, share: float = 0.3,
                       band: tuple[float, float] = (0.05, 0.20), knee: int = 150,
                       p0: float = 0.85, beta: float = 2.5) -> World:
    """Breaks *a match rate that only falls with the rank*: ``share`` of the matches form a
    second family, spread uniformly over a band of ranks (by default the 5th–20th percentile
    of the ranking), where the rate rises again ~50-fold above the top family's decayed rate.
    The score ignores them (it believes the top family's rate) and none is predicted.

    >>> w = make_second_family(np.random.default_rng(2), 20_000)
    >>> f = w.facts; round(f["second"] / f["matches"], 2), f["band"]
    (0.3, (1000, 4000))
    """
    params = dict(n=n, share=share, band=band, knee=knee, p0=p0, beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    family = label.copy()
    lo, hi = int(band[0] * n), int(band[1] * n)
    added = _add_uniform(rng, label, family, lo, hi, _extra_count(int(label.sum()), share), 2)
    pred = (np.arange(n) < knee).astype(np.int8)
    return _build(rng, "second_family", params, label, _ranked_score(rate), pred, family,
                  facts={"second": added, "band": (lo, hi)})


def make_off_score(rng: np.random.Generator, n: int = 100_000, share: float = 0.3,
                   band: tuple[float, float] = (0.05, 0.20), knee: int = 150,
                   p0: float = 0.85, beta: float = 2.5) -> World:
    """Breaks *the predictions follow the score*: the system's output comes from another model
    than the score the design sorts by (a second system in a campaign, a score column from
    blocking). Its top ``knee`` ranks are predicted, and ``share`` of its predicted positives
    are scattered uniformly over a band of ranks (by default the 5th–20th percentile) where
    the match rate is ~10⁻⁴: false positives that a design led by the score draws rarely and
    weighs heavily (the rare, heavy kind of F1's and precision's counts).

    >>> w = make_off_score(np.random.default_rng(6), 20_000)
    >>> f = w.facts; round(f["off_score"] / f["predicted"], 2), f["off_score_fp"] >= 60
    (0.3, True)
    """
    params = dict(n=n, share=share, band=band, knee=knee, p0=p0, beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    lo, hi = int(band[0] * n), int(band[1] * n)
    pred = (np.arange(n) < knee).astype(np.int8)
    off = lo + rng.choice(hi - lo, size=_extra_count(knee, share), replace=False)
    pred[off] = 1
    return _build(rng, "off_score", params, label, _ranked_score(rate), pred,
                  facts={"off_score": int(off.size), "off_score_fp": int((label[off] == 0).sum()),
                         "band": (lo, hi)})


def _top_plus_uniform(rng: np.random.Generator, name: str, fact: str, n: int, share: float,
                      knee: int, p0: float, beta: float) -> World:
    """A well-scored top family plus ``share`` of the matches uniform over the ranks."""
    params = dict(n=n, share=share, knee=knee, p0=p0, beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    family = label.copy()
    added = _add_uniform(rng, label, family, 0, n, _extra_count(int(label.sum()), share), 2)
    pred = (np.arange(n) < knee).astype(np.int8)
    return _build(rng, name, params, label, _ranked_score(rate), pred, family,
                  facts={fact: added})


def make_score_blind(rng: np.random.Generator, n: int = 100_000, share: float = 0.10,
                     knee: int = 150, p0: float = 0.85, beta: float = 2.5) -> World:
    """Breaks *the score sees every match*: ``share`` of the matches are invisible to the
    score, placed uniformly over the whole ranking (a constant rate of ~2.4·10⁻⁴ with the
    defaults, below what a few hundred tail labels can detect); the rest are well scored.

    >>> w = make_score_blind(np.random.default_rng(3), 20_000)
    >>> f = w.facts; round(f["blind"] / f["matches"], 2)
    0.1
    """
    return _top_plus_uniform(rng, "score_blind", "blind", n, share, knee, p0, beta)


def make_ultra_rare(rng: np.random.Generator, n: int = 1_000_000, share: float = 0.25,
                    knee: int = 25, p0: float = 0.8, beta: float = 3.0) -> World:
    """Breaks *enough matches to fit a curve, and none far from the top*: a few dozen matches
    in ``n`` items (≈ 30 well scored with the defaults) and ``share`` of them anywhere,
    uniform over the ranks; the top ``knee`` ranks are predicted.

    >>> w = make_ultra_rare(np.random.default_rng(4), 200_000)
    >>> f = w.facts; 20 <= f["matches"] <= 70, abs(f["anywhere"] / f["matches"] - 0.25) < 0.03
    (True, True)
    """
    return _top_plus_uniform(rng, "ultra_rare", "anywhere", n, share, knee, p0, beta)


def make_ties(rng: np.random.Generator, n: int = 100_000, step: float = 1.0, knee: int = 150,
              p0: float = 0.85, beta: float = 2.5) -> World:
    """Breaks *a strict ranking*: the control's scores rounded to multiples of ``step`` (about
    twenty distinct values over 10⁵ items, tie groups of thousands); the prediction is a
    threshold on the rounded score (score ≥ the knee's rounded score), so no tie is split.

    >>> w = make_ties(np.random.default_rng(5), 20_000)
    >>> w.frame["score"].nunique() <= 25, int(w.frame["score"].value_counts().max()) > 1000
    (True, True)
    """
    params = dict(n=n, step=step, knee=knee, p0=p0, beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    score = np.round(_logit(rate) / step) * step
    pred = (score >= score[knee - 1]).astype(np.int8)
    counts = np.unique(score, return_counts=True)[1]
    return _build(rng, "ties", params, label, score, pred,
                  facts={"distinct": int(counts.size), "largest_tie": int(counts.max())})


def make_duplicate_scores(rng: np.random.Generator, n: int = 100_000, region: int = 2000,
                          block: int = 50, knee: int = 150, p0: float = 0.85,
                          beta: float = 2.5) -> World:
    """Breaks *distinct scores where the labels are*: the top ``region`` ranks share a few exact
    score values (blocks of ``block`` consecutive ranks take the block's mean score: 40 values
    over the top 2,000 with the defaults), the rest stay distinct. ``knee`` is a multiple of
    ``block`` by default, so the prediction (the top ``knee`` ranks) splits no block.

    >>> w = make_duplicate_scores(np.random.default_rng(6), 20_000)
    >>> top = w.frame.nlargest(2000, "score"); top["score"].nunique(), w.frame["score"].nunique()
    (40, 18040)
    """
    params = dict(n=n, region=region, block=block, knee=knee, p0=p0, beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    score = _ranked_score(rate)
    blocks = np.arange(region) // block
    means = np.bincount(blocks, weights=score[:region]) / np.bincount(blocks)
    score[:region] = means[blocks]
    pred = (np.arange(n) < knee).astype(np.int8)
    return _build(rng, "duplicate_scores", params, label, score, pred,
                  facts={"top_distinct": int(np.unique(score[:region]).size)})


def make_weak_balanced(rng: np.random.Generator, n: int = 100_000, prevalence: float = 0.5,
                       auc: float = 0.6) -> World:
    """Breaks *a sparse top and an empty tail*: a balanced task (``prevalence`` ≈ 0.5) with a
    weak score of the given ``auc`` (binormal, equal variances: x | y ~ N(y·d, 1) with
    d = √2·Φ⁻¹(auc)); the score is the calibrated log-odds d·x − d²/2 + logit(prevalence) and
    the prediction score > 0. Matches are everywhere, at rates 0.3–0.7.

    >>> w = make_weak_balanced(np.random.default_rng(7), 20_000)
    >>> round(float(w.frame["label"].mean()), 2), round(w.facts["auc"], 2)
    (0.5, 0.6)
    """
    from scipy.stats import norm
    params = dict(n=n, prevalence=prevalence, auc=auc)
    d = np.sqrt(2.0) * norm.ppf(auc)
    y = (rng.random(n) < prevalence).astype(np.int8)
    x = rng.standard_normal(n) + d * y
    score = d * x - d * d / 2 + float(_logit(np.array([prevalence]))[0])
    order = np.argsort(-score, kind="stable")
    y, score = y[order], score[order]
    pred = (score > 0).astype(np.int8)
    return _build(rng, "weak_balanced", params, y, score, pred,
                  facts={"auc": _auc(score, y), "d": float(d)})


def _auc(score: np.ndarray, label: np.ndarray) -> float:
    """Mann–Whitney AUC with mid-ranks for ties."""
    from scipy.stats import rankdata
    r = rankdata(score)
    pos = label > 0
    n1, n0 = int(pos.sum()), int((~pos).sum())
    return float((r[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def make_miscalibrated(rng: np.random.Generator, n: int = 100_000, shift: float = 4.0,
                       slope: float = 0.5, probability: bool = False, knee: int = 150,
                       p0: float = 0.85, beta: float = 2.5) -> World:
    """Breaks *logistic(score) is the match probability*: the control's labels and ranking,
    but the score is slope·logit ρ(r) + shift, so its logistic inflates the probabilities
    (with the defaults the tail's 10⁻⁵ becomes ~0.15 and the probabilities sum to ~45× the
    matches). With ``probability=True`` the frame also carries that inflated ``probability``
    column (the importance design's prior then comes from it).

    >>> w = make_miscalibrated(np.random.default_rng(8), 20_000, probability=True)
    >>> f = w.frame; "probability" in f, bool(f["probability"].sum() > 20 * f["label"].sum())
    (True, True)
    """
    params = dict(n=n, shift=shift, slope=slope, probability=probability, knee=knee, p0=p0,
                  beta=beta)
    label, rate = _top_family(rng, n, knee, p0, beta)
    score = slope * _logit(rate) + shift - _TIE_BREAK * np.arange(n)
    pred = (np.arange(n) < knee).astype(np.int8)
    extra = {"probability": 1.0 / (1.0 + np.exp(-score))} if probability else None
    return _build(rng, "miscalibrated_probability" if probability else "miscalibrated",
                  params, label, score, pred, extra=extra,
                  facts={"stated_matches": float((1.0 / (1.0 + np.exp(-score))).sum())})


def make_non_monotone(rng: np.random.Generator, n: int = 100_000, dip: int = 30,
                      dip_rate: float = 0.3, bump: tuple[int, int] = (2000, 6000),
                      bump_rate: float = 0.015, knee: int = 150, p0: float = 0.85,
                      beta: float = 2.5, name: str = "non_monotone") -> World:
    """Breaks *a match rate monotone in the score*: the control's rate with a dip at the very
    top (the best ``dip`` ranks match at ``dip_rate`` instead of p₀) and a bump mid-way (ranks
    in ``bump`` match at ``bump_rate``, 10–180× the decayed rate there: ~60 matches). The
    score still believes the monotone rate. ``deep_bump`` (session 26) is the same world with
    the bump at ranks 5,000–15,000 at rate 0.008 (~80 matches): at 2,000 labels the designs
    label it too lightly to see it (recall coverage: `auto` 0.66, `stratified` 0.76 over 40
    fresh worlds), the case of a rising rate the budget does not reach.

    >>> w = make_non_monotone(np.random.default_rng(9), 20_000)
    >>> f = w.facts; f["top_rate"] < f["below_top_rate"], f["bump_rate"] > 3 * f["before_bump_rate"]
    (True, True)
    """
    params = dict(n=n, dip=dip, dip_rate=dip_rate, bump=bump, bump_rate=bump_rate, knee=knee,
                  p0=p0, beta=beta)
    believed = knee_rate(n, knee, p0, beta)
    rate = believed.copy()
    rate[:dip] = dip_rate
    lo, hi = bump
    rate[lo:hi] = np.maximum(rate[lo:hi], bump_rate)
    label = (rng.random(n) < rate).astype(np.int8)
    family = label.copy()
    family[lo:hi] *= 2
    pred = (np.arange(n) < knee).astype(np.int8)
    mean = lambda a, b: float(label[a:b].mean())  # noqa: E731
    return _build(rng, name, params, label, _ranked_score(believed), pred, family,
                  facts={"top_rate": mean(0, dip), "below_top_rate": mean(dip, knee),
                         "bump_rate": mean(lo, hi), "before_bump_rate": mean(lo // 2, lo)})


WORLDS: dict[str, Callable[..., World]] = {
    "realistic": functools.partial(make_realistic, n=100_000),
    "second_family": functools.partial(make_second_family, n=100_000),
    "score_blind": functools.partial(make_score_blind, n=100_000),
    "ultra_rare": functools.partial(make_ultra_rare, n=1_000_000),
    "ties": functools.partial(make_ties, n=100_000),
    "duplicate_scores": functools.partial(make_duplicate_scores, n=100_000),
    "weak_balanced": functools.partial(make_weak_balanced, n=100_000),
    "miscalibrated": functools.partial(make_miscalibrated, n=100_000),
    "miscalibrated_probability": functools.partial(make_miscalibrated, n=100_000,
                                                   probability=True),
    "non_monotone": functools.partial(make_non_monotone, n=100_000),
    "deep_bump": functools.partial(make_non_monotone, n=100_000, bump=(5000, 15000),
                                   bump_rate=0.008, name="deep_bump"),
    "off_score": functools.partial(make_off_score, n=100_000),
}
