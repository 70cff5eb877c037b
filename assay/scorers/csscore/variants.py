"""The three score variants of CS-Score 2.4.4 and their aggregates (README-Scoring, section 4).

* SF: one line per SF query (hop 0) and per hop-0 equivalence class (hop 1);
* LDC-MAX: per LDC query, the lines of the entry point (expanded SF query) whose F1 over all its
  lines' summed counts is highest; **ties go to the entry point whose SF query ID sorts first**
  (v2.4.4 keeps whichever perl's hash order meets first);
* LDC-MEAN: per LDC query and class suffix, the mean F1 over the entry points that have it; GT
  (which decides whether the line counts in the macro average) and hop come from the entry point
  whose SF class sorts first (v2.4.4: the first in hash order).

Micro: P, R, F1 of the summed counts, per hop and ALL. Macro: the mean F1 over lines whose GT is
not 0 (0 when there are none).
"""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from operator import attrgetter

from assay.formats.kbp.ids import query_key

from .model import COUNT_FIELDS, ScoreLine


def ec_sort_key(line: ScoreLine) -> tuple[str, tuple[int, ...]]:
    """CS-Score's order of class names: the query ID as text, then each component as a number.

    >>> names = ["Q:10", "Q:2", "Q", "Q:2:1", "P:3"]
    >>> sorted(names, key=lambda e: ec_sort_key(ScoreLine(e, "r", 0)))
    ['P:3', 'Q', 'Q:2', 'Q:2:1', 'Q:10']
    """
    return _ec_key(line.ec)


@lru_cache(maxsize=1 << 16)
def _ec_key(ec: str) -> tuple[str, tuple[int, ...]]:
    head, *rest = ec.split(":")
    return head, tuple(int(c) for c in rest)


def _split(ec: str) -> tuple[str, str | None]:
    head, _, rest = ec.partition(":")
    return head, (rest.split(":")[0] if rest else None)


def _ldc_lines(scores: list[ScoreLine], index: dict[str, str], ldc_full: dict[str, str],
               to_score: set[str], unknown_prefix: str
               ) -> list[tuple[ScoreLine, str, str, str, str]]:
    """Each SF line of a query to score: (line, its query's full ID, SF query ID, LDC query ID,
    the line's name at LDC level: the LDC query's full ID and the class suffix). An SF query
    outside ``index`` has LDC ID ""; its LDC-level name is ``unknown_prefix`` + "" (LDC-MAX
    and LDC-MEAN name it differently)."""
    out = []
    for s in scores:
        head, ec = _split(s.ec)
        sf = query_key(head)
        if to_score and sf not in to_score:
            continue
        ldc = index.get(sf, "")
        name = ldc_full.get(ldc, unknown_prefix + ldc) + (f":{ec}" if ec is not None else "")
        out.append((s, head, sf, ldc, name))
    return out


def ldc_max(scores: list[ScoreLine], index: dict[str, str], ldc_full: dict[str, str],
            to_score: set[str], fix_precision: bool,
            notes: list[str] | None = None) -> list[ScoreLine]:
    """The LDC-MAX lines (unsorted); a tie for the best entry point is noted in ``notes``."""
    lines = _ldc_lines(scores, index, ldc_full, to_score, "")
    groups: dict[str, dict[str, list[ScoreLine]]] = {}
    full: dict[str, str] = {}
    for s, head, sf, ldc, _name in lines:
        full[sf] = head
        groups.setdefault(ldc, {}).setdefault(sf, []).append(s)
    best: dict[str, str] = {}
    for ldc in sorted(groups):
        best_f1 = None
        for sf in sorted(groups[ldc]):
            total = ScoreLine(sf, "", "ALL")
            for s in groups[ldc][sf]:
                total.add_counts(s)
            f1 = total.f1(fix_precision)
            if best_f1 is None or best_f1 < f1:
                best[ldc], best_f1, tied = sf, f1, [sf]
            elif f1 == best_f1:
                tied.append(sf)
        if notes is not None and len(tied) > 1:
            runid = groups[ldc][tied[0]][0].runid
            notes.append(f"LDC-MAX of {ldc_full.get(ldc, ldc)} ({runid}): entry points "
                         f"{', '.join(full[t] for t in tied)} tie at F1 {best_f1:.4f}; assay takes "
                         f"{full[best[ldc]]} "
                         "(CS-Score 2.4.4: whichever perl's hash order gives)")
    return [replace(s, ec=name, components=[]) for s, _head, sf, ldc, name in lines
            if best.get(ldc) == sf]


def ldc_mean(scores: list[ScoreLine], index: dict[str, str], ldc_full: dict[str, str],
             to_score: set[str], fix_precision: bool,
             notes: list[str] | None = None) -> list[ScoreLine]:
    """The LDC-MEAN lines (F1 only); entry points disagreeing on GT = 0 are noted."""
    groups: dict[str, dict[str, ScoreLine]] = {}
    for s, _head, _sf, _ldc, name in _ldc_lines(scores, index, ldc_full, to_score, "_"):
        groups.setdefault(name, {})[s.ec] = s
    out = []
    for name in sorted(groups):
        members = [groups[name][k] for k in sorted(groups[name])]
        total = 0.0
        for m in members:
            total += m.f1(fix_precision)
        first = members[0]
        if notes is not None and len({m.gt == 0 for m in members}) > 1:
            notes.append(f"LDC-MEAN of {name} ({first.runid}): entry points disagree on whether "
                         f"GT is 0; assay takes GT {first.gt} from {first.ec} (CS-Score 2.4.4: "
                         "whichever perl's hash order gives)")
        out.append(ScoreLine(name, first.runid, first.level, gt=first.gt,
                             f1_value=total / len(members)))
    return out


def micro(lines: list[ScoreLine], runid: str, presorted: bool = False) -> list[ScoreLine]:
    """One ALL-Micro line per hop (in text order of the hop: 0, 1, ALL); ``presorted``: the
    lines are already in :func:`ec_sort_key` order. Each keeps its lines (``components``, in
    that order) for the macro average."""
    ordered = lines if presorted else sorted(lines, key=ec_sort_key)
    groups: dict[str, list[ScoreLine]] = {}
    for s in ordered:
        level = str(s.level)
        group = groups.get(level)
        if group is None:
            groups[level] = [s]
        else:
            group.append(s)
    if ordered:
        groups["ALL"] = list(ordered)
    out = []
    for level in sorted(groups):
        members = groups[level]
        a = ScoreLine("ALL-Micro", runid, level, *[sum(map(get, members)) for get in _COUNTS])
        a.components = members
        out.append(a)
    return out


_COUNTS = [attrgetter(f) for f in COUNT_FIELDS]


def macro_f1(line: ScoreLine, fix_precision: bool) -> float:
    """Mean F1 of the components whose GT is not 0 (0 if none)."""
    non_nil = sum(1 for c in line.components if c.gt != 0)
    if non_nil <= 0:
        return 0
    total = 0.0
    for c in line.components:
        total += c.f1(fix_precision)
    return total / non_nil


__all__ = ["ec_sort_key", "ldc_max", "ldc_mean", "macro_f1", "micro"]
