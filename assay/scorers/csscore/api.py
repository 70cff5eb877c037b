"""Scoring Cold Start runs as CS-Score 2.4.4 does: :func:`score_files` returns the report text.

Queries to score: every query of the query files (with ``expand``, every expanded SF query), or
those of a ``-queries`` list (a file of ``LDC_ID SF_ID [HOP]`` lines, or SF query IDs separated by
colons); a list's HOP is the last hop whose lines are reported (default: all of the query's).
"""
from __future__ import annotations

import gc
import glob
import multiprocessing
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from assay.formats.kbp import KBPInputError, parse_queryid, read_query_list
from assay.formats.kbp.ids import query_key

from .load import Loaded, load
from .model import Options, ScoreLine
from .report import COLUMNS, Report, render
from .query import score_query
from .variants import ldc_max, ldc_mean


@dataclass(frozen=True)
class Result:
    """The report, warnings about the input, and notes where v2.4.4 depends on hash order."""

    text: str
    warnings: tuple[str, ...]
    hash_order_notes: tuple[str, ...] = ()


def _files(paths: list[str]) -> tuple[list[str], list[str]]:
    expanded: list[str] = []
    for p in paths:
        expanded.extend(sorted(glob.glob(os.path.join(p, "*.tab.txt"))) if os.path.isdir(p) else [p])
    return ([p for p in expanded if p.endswith(".xml")], [p for p in expanded if not p.endswith(".xml")])


def queries_to_score(ld: Loaded, spec: str | None) -> tuple[dict[str, int | None], list[str]]:
    """Query ID -> last hop to report; and warnings for unknown queries."""
    warnings: list[str] = []
    slots: dict[str, int | None] = {}
    if spec is None:
        slots = {qid: len(ld.queries[qid].slots) - 1 for qid in ld.top_ids}
    elif os.path.isfile(spec):
        for e in read_query_list(spec):
            qid = query_key(e.sf_id)
            q = ld.queries.get(qid)
            if q is None or qid not in ld.top_ids:
                warnings.append(f"{spec}, line {e.line}: unknown query {qid}; skipped")
                continue
            most = len(q.slots) - 1
            hop = most if e.hop is None else e.hop
            if hop > most:
                raise KBPInputError(spec, f"hop {hop} for {e.ldc_id}, but {e.sf_id} has "
                                    f"{most + 1} hop(s)", line=e.line, column=3)
            slots[qid] = hop
    else:
        for word in spec.split(":"):
            qid = query_key(word)
            if qid not in ld.top_ids:
                warnings.append(f"-queries: unknown query {qid}; skipped")
                continue
            slots[qid] = len(ld.queries[qid].slots) - 1
    out: dict[str, int | None] = {}
    for qid in slots:
        root = ld.queries[qid]
        if not root.expanded_ids:
            out[qid] = slots[qid]
        for e in root.expanded_ids:
            out[e] = slots.get(e)
    return out, warnings


def sf_lines(ld: Loaded, opts: Options, runid: str,
             to_score: dict[str, int | None]) -> list[ScoreLine]:
    """The SF lines of a run (one per query and per hop-0 class, up to each query's hop)."""
    scores: list[ScoreLine] = []
    limits: dict[str, int] = {}             # a class's query (its ID's head) -> last hop
    for qid in sorted(to_score):
        q = ld.queries[qid]
        parts = parse_queryid(q.full_id)
        base = parts.base if parts else qid
        for s in score_query(ld, opts, runid, base):
            head = s.ec.split(":", 1)[0]
            limit = limits.get(head)
            if limit is None:
                limit = limits[head] = to_score.get(query_key(head)) or 0
            if int(s.level) <= limit:
                scores.append(s)
    return scores


def score_run(ld: Loaded, opts: Options, runid: str, to_score: dict[str, int | None],
              notes: list[str] | None = None) -> str:
    """The report of one run (its SF, LDC-MAX and LDC-MEAN tables and summary)."""
    scores = sf_lines(ld, opts, runid, to_score)
    report = Report([COLUMNS[f] for f in opts.fields.split(":")], opts.tabs, opts.fix_precision)
    sections = [("SF", "SF", scores, ("MICRO", "MACRO"), False)]
    if ld.index:
        ldc_full = {qid: ld.queries[qid].full_id for qid in set(ld.index.values())}
        keys = set(to_score)
        sections.append(("LDCMAX", "LDC-MAX",
                         ldc_max(scores, ld.index, ldc_full, keys, opts.fix_precision, notes),
                         ("MICRO", "MACRO"), False))
        sections.append(("LDCMEAN", "LDC-MEAN",
                         ldc_mean(scores, ld.index, ldc_full, keys, opts.fix_precision, notes),
                         ("MACRO",), True))
    return render(report, sections, runid, opts.verbose)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: loading makes millions of acyclic objects, and its
    repeated full passes over them took over half the time (bench/csscore_peer/speed.py)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def score_files(paths: list[str], opts: Options, queries: str | None = None,
                runids: list[str] | None = None) -> Result:
    """Read query, submission and assessment files (in this order of loading) and score."""
    with _gc_paused():
        return _score_files(paths, opts, queries, runids)


def _score_files(paths: list[str], opts: Options, queries: str | None,
                 runids: list[str] | None) -> Result:
    query_files, response_files = _files(paths)
    ld = load(query_files, response_files, opts.expand)
    to_score, warnings = queries_to_score(ld, queries)
    runs = runids or ld.runids
    jobs = _jobs(opts.jobs, len(runs), sum(len(v) for v in ld.by_run.values()))
    per_run = _score_parallel(ld, opts, runs, to_score, jobs) if jobs > 1 else None
    if per_run is None:                 # one process (or a worker met an error: redo it here)
        per_run = [_score_one(ld, opts, r, to_score) for r in runs]
    text = "".join(t for t, _, _ in per_run)
    notes = [n for _, ns, _ in per_run for n in ns]
    tree_notes = [n for _, _, ns in per_run for n in ns]
    return Result(text, tuple(ld.warnings + warnings), tuple(notes + ld.notes + tree_notes))


PARALLEL_MIN_ANSWERS = 200_000      # below this, forking costs more than it saves


def _jobs(asked: int, nruns: int, nanswers: int) -> int:
    """Processes scoring runs (this one and ``jobs - 1`` forked workers): ``asked`` if > 0,
    else the CPU count (at most 2 on this project's machines) for a large case; never more
    than the runs."""
    if asked <= 0:
        if nanswers < PARALLEL_MIN_ANSWERS or not hasattr(os, "fork"):
            return 1
        asked = min(2, os.cpu_count() or 1)
    return max(1, min(asked, nruns))


def _score_one(ld: Loaded, opts: Options, runid: str,
               to_score: dict[str, int | None]) -> tuple[str, list[str], list[str]]:
    """One run's report, its LDC notes and the tree notes it adds (each run is independent:
    the caches it fills in ``ld`` depend only on the assessments and the query set)."""
    notes: list[str] = []
    before = len(ld.notes)
    text = score_run(ld, opts, runid, to_score, notes)
    tree_notes = ld.notes[before:]
    del ld.notes[before:]
    return text, notes, tree_notes


_SHARED: tuple | None = None     # (ld, opts, to_score, runs, next run) inherited by forked workers


def _share(_task: int = 0) -> list[tuple[int, tuple[str, list[str], list[str]] | None]]:
    """Score runs one at a time, each claimed from the shared count, until none is left (or
    one fails: ``None`` for it, and the parent redoes the whole scoring and raises its error)."""
    assert _SHARED is not None
    ld, opts, to_score, runs, counter = _SHARED
    out: list[tuple[int, tuple[str, list[str], list[str]] | None]] = []
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= len(runs):
            return out
        try:
            out.append((i, _score_one(ld, opts, runs[i], to_score)))
        except Exception:
            out.append((i, None))
            return out


def _score_parallel(ld: Loaded, opts: Options, runs: list[str], to_score: dict[str, int | None],
                    jobs: int) -> list[tuple[str, list[str], list[str]]] | None:
    """Runs scored by this process and ``jobs - 1`` forked ones sharing the loaded data (copy
    on write), each taking the next run not yet taken; ``None`` if one failed."""
    global _SHARED
    ctx = multiprocessing.get_context("fork")
    _SHARED = (ld, opts, to_score, runs, ctx.Value("i", 0))
    before = len(ld.notes)
    try:
        with ctx.Pool(jobs - 1) as pool:
            theirs = pool.map_async(_share, range(jobs - 1), chunksize=1)
            done = _share()
            for part in theirs.get():
                done.extend(part)
    finally:
        _SHARED = None
        del ld.notes[before:]           # (a run that failed here may have left some)
    out: list = [None] * len(runs)
    for i, scored in done:
        out[i] = scored
    return None if any(o is None for o in out) else out


__all__ = ["Result", "queries_to_score", "score_files", "score_run", "sf_lines"]
