"""Scoring policies of seed 003: scorer2's disjunctive policy and the conjunctive one.

``disjunctive`` is what scorer2 computes (seed 003, first table, with the two rows the program
contradicts corrected: row 18 mixed 0.6, row 20 0.0 / 0.6 / 0.3), in C ``float`` arithmetic and
in the program's order of operations.  ``conjunctive`` is the seed's "probability of appearance"
policy (seed 003, last table and the precision/recall definitions after it), in double precision.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .cnum import c_div, f32, f32_add, f32_div, f32_mul
from .model import (AnswerLine, InstanceScore, KeyEntry, Problem, ScoringOptions, SensevalInputError,
                    UnscoredAnswer)
from .readers import SenseMap

Credit = Callable[[str, str], float]


@dataclass
class KeyItem:
    """A key instance as scored: its tags after filtering and granularity mapping.

    ``tags`` is emptied when the instance is excluded (``-m``, filters) and once it is scored,
    which is how scorer2 refuses a second answer ("Excluded or already scored.").
    """

    entry: KeyEntry
    tags: list[str]


@dataclass
class Totals:
    """Running sums: scored credit, attempted weight, instances (or tags) in the key."""

    correct: float = 0.0
    attempted: float = 0.0
    total: float = 0.0


# ------------------------------------------------------------------------------ granularity
def coarse_key_tags(tags: Iterable[str], smap: SenseMap | None) -> list[str]:
    """Coarse key: each tag replaced by its sense-map root, duplicates dropped (first kept)."""
    out: list[str] = []
    for tag in tags:
        root = smap.root(tag) if smap is not None else tag
        if root not in out:
            out.append(root)
    return out


def prepare_key(entries: Iterable[KeyEntry], smap: SenseMap | None, opts: ScoringOptions,
                add: Callable[[float, float], float]) -> tuple[dict[str, KeyItem], float]:
    """Key items by id and the number of instances (disjunctive) or key tags (conjunctive).

    Order as in scorer2, extended by the seed's filters: sense-tag filter, coarse mapping, ``-m``
    (so "minimal" counts tags after the coarse merge), instance filter.  A repeated id keeps its
    first line; every counted line adds to the total, as in the original.
    """
    items: dict[str, KeyItem] = {}
    total = 0.0
    for entry in entries:
        tags = list(entry.tags)
        if opts.sense_filter is not None:
            tags = [t for t in tags if t in opts.sense_filter]
        if opts.grain == "coarse":
            tags = coarse_key_tags(tags, smap)
        if opts.minimal and len(tags) > 1:
            tags = []
        if opts.instance_filter is not None and not _selected(entry, opts.instance_filter):
            tags = []
        if tags:
            total = add(total, float(len(tags)) if opts.policy == "conjunctive" else 1.0)
        items.setdefault(entry.id, KeyItem(entry, tags))
    return items, total


def _selected(entry: KeyEntry, wanted: frozenset) -> bool:
    return (entry.lexelt, entry.instance) in wanted or entry.instance in wanted


def credit_function(opts: ScoringOptions, smap: SenseMap | None, single: bool) -> Credit:
    """Credit of one answer tag against one key tag (seed 003, columns F, C and M).

    Fine and coarse: 1 for equal tags (coarse tags are mapped beforehand).  Mixed: 1 also when
    the key tag is an ancestor of the answer tag; 1 / (product of the branching factors on the
    path) when the answer tag is an ancestor of the key tag.  ``single`` selects C floats.
    """
    if opts.grain != "mixed" or smap is None:
        return lambda answer, key: 1.0 if answer == key else 0.0
    subsumption = smap.subsumption32 if single else smap.subsumption64

    def mixed(answer: str, key: str) -> float:
        if answer == key or subsumption(key, answer) > 0.0:
            return 1.0
        return subsumption(answer, key)
    return mixed


# ------------------------------------------------------------------------ the scorer2 policy
def disjunctive_weights(answer: AnswerLine, opts: ScoringOptions,
                        smap: SenseMap | None) -> tuple[list[str], list[float], float]:
    """Tags, weights and attempted weight of one answer line, as scorer2 derives them.

    Weights are C floats; if any tag lacks a weight all weigh 1.  The total is summed before
    the coarse merge (which adds the weights of tags with the same root); weights are divided
    by the total only when it exceeds 1, and the total attempted is then 1.
    """
    n = len(answer.tags)
    if any(w is None for w in answer.weights):
        weights, total = [1.0] * n, f32(float(n))
    else:
        weights, total = [f32(w) for w in answer.weights], 0.0  # type: ignore[arg-type]
        for w in weights:
            total = f32_add(total, w)
    tags = list(answer.tags)
    if opts.grain == "coarse":
        tags, weights = _merge(tags, weights, smap, f32_add)
    if total > 1.0:
        weights, total = [f32_div(w, total) for w in weights], 1.0
    return tags, weights, total


def _merge(tags: list[str], weights: list[float], smap: SenseMap | None,
           add: Callable[[float, float], float]) -> tuple[list[str], list[float]]:
    """Map tags to their roots (if a sense map is given) and merge equal tags' weights."""
    out_tags: list[str] = []
    out_weights: list[float] = []
    for tag, w in zip(tags, weights):
        root = smap.root(tag) if smap is not None else tag
        if root in out_tags:
            j = out_tags.index(root)
            out_weights[j] = add(out_weights[j], w)
        else:
            out_tags.append(root)
            out_weights.append(w)
    return out_tags, out_weights


def disjunctive_score(tags: list[str], weights: list[float], key: list[str], credit: Credit) -> float:
    """Seed 003, first table: each answer tag's credit summed over the key tags and capped at 1,
    weighted and summed; the instance's score is capped at 1.  All in C floats, in C's order."""
    score = 0.0
    for tag, w in zip(tags, weights):
        sub = 0.0
        for k in key:
            sub = f32_add(sub, credit(tag, k))
        if sub > 1.0:
            sub = 1.0
        score = f32_add(score, f32_mul(sub, w))
    return 1.0 if score > 1.0 else score


# --------------------------------------------------------------------- the conjunctive policy
def conjunctive_weights(answer: AnswerLine, opts: ScoringOptions, smap: SenseMap | None,
                        path: str) -> tuple[list[str], list[float], float]:
    """Probabilities of appearance (seed 003, last table): a tag without weight has 1; equal
    (or, coarse, same-root) tags merge to ``min(1, p + q)``; attempted = expected tag count."""
    probs: list[float] = []
    for tag, w in zip(answer.tags, answer.weights):
        p = 1.0 if w is None else w
        if not 0.0 <= p <= 1.0:
            raise SensevalInputError(
                path, f"probability of appearance of {tag!r} must lie in [0, 1], got {p!r}",
                answer.line)
        probs.append(p)
    tags, probs = _merge(list(answer.tags), probs, smap if opts.grain == "coarse" else None,
                         lambda a, b: min(1.0, a + b))
    return tags, probs, sum(probs)


def conjunctive_score(tags: list[str], probs: list[float], key: list[str], credit: Credit) -> float:
    """Seed 003, last table: each key tag is an item scored ``min(1, sum_a p_a credit(a, k))``;
    the instance's score is the sum over its key tags (so it may exceed 1)."""
    return sum(min(1.0, sum(p * credit(t, k) for t, p in zip(tags, probs))) for k in key)


# ------------------------------------------------------------------------------- the driver
@dataclass(frozen=True)
class RunResult:
    """Everything :func:`run` computes, in answer-file order."""

    totals: Totals
    scored: tuple[InstanceScore, ...]
    unscored: tuple[UnscoredAnswer, ...]


def run(answers: Iterable[AnswerLine], key: Iterable[KeyEntry], smap: SenseMap | None,
        opts: ScoringOptions, answer_path: str = "<answers>") -> RunResult:
    """Score every answer line against the key, as scorer2's main loop does."""
    conj = opts.policy == "conjunctive"
    add = (lambda a, b: a + b) if conj else f32_add
    items, total = prepare_key(key, smap, opts, add)
    credit = credit_function(opts, smap, single=not conj)
    totals = Totals(total=total)
    scored: list[InstanceScore] = []
    unscored: list[UnscoredAnswer] = []
    for answer in answers:
        item = items.get(answer.id)
        if item is None or not answer.tags or not item.tags:
            problem = (Problem.DOES_NOT_EXIST if item is None else
                       Problem.INVALID_ANSWER if not answer.tags else Problem.EXCLUDED)
            unscored.append(UnscoredAnswer(answer.index, answer.id, problem))
            continue
        if conj:
            tags, weights, attempted = conjunctive_weights(answer, opts, smap, answer_path)
            value = conjunctive_score(tags, weights, item.tags, credit)
        else:
            tags, weights, attempted = disjunctive_weights(answer, opts, smap)
            value = disjunctive_score(tags, weights, item.tags, credit)
        totals.attempted = add(totals.attempted, attempted)
        totals.correct = add(totals.correct, value)
        scored.append(InstanceScore(answer.index, item.entry.id, value, attempted,
                                    tuple(item.tags), tuple(zip(tags, weights))))
        item.tags = []
    return RunResult(totals, tuple(scored), tuple(unscored))


def ratios(totals: Totals, conj: bool) -> tuple[float, float, float]:
    """Precision, recall (C ``float`` quotients) and attempted percent (a ``double`` one)."""
    if conj:
        return (c_div(totals.correct, totals.attempted), c_div(totals.correct, totals.total),
                c_div(100.0 * totals.attempted, totals.total))
    return (f32_div(totals.correct, totals.attempted), f32_div(totals.correct, totals.total),
            c_div(100.0 * totals.attempted, totals.total))
