"""Loading queries and response files the way CS-Score 2.4.4 does, in command-line order.

Each answer (submission or assessment line) generates the hop-1 query it leads to (named by
:func:`assay.formats.kbp.ids.hop1_uuid`); a hop-1 line must therefore come after a hop-0 line
(in any earlier file or line) giving its parent answer. A line whose slot is not the slot its
query asks for is skipped with a warning, as CS-Score does.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from assay.formats.kbp import (ASSESSMENT, SUBMISSION, KBPInputError, Query, Response, expand,
                               hop1_uuid, read_queries, read_responses, slot_quantity)

from .model import Entry


@dataclass(slots=True)
class QInfo:
    """A query the scorer knows: from a file, expanded, or generated from an answer."""

    query_id: str
    full_id: str
    level: int
    slots: tuple[str, ...]
    parent_id: str | None = None
    expanded_ids: list[str] = field(default_factory=list)
    ldc: bool = False

    @classmethod
    def of(cls, q: Query) -> "QInfo":
        """A query read from a file or expanded from one (:func:`expand`); its full ID is
        ``PREFIX_ID`` (an LDC query is known at level 1)."""
        return cls(q.query_id, f"{q.prefix or ''}_{q.query_id}", q.parts.level if q.parts.ldc
                   else 0, q.slots, ldc=q.parts.ldc)

    @property
    def slot(self) -> str | None:
        return self.slots[0] if self.slots else None

    @property
    def quantity(self) -> str | None:
        return slot_quantity(self.slots[0]) if self.slots else None


@dataclass
class Loaded:
    """Queries, the expanded-to-LDC index, and the entries in load order."""

    queries: dict[str, QInfo]
    top_ids: list[str]                      # query IDs read from the files (and expanded)
    index: dict[str, str]                   # expanded SF query ID -> LDC query ID
    by_base: dict[str, dict[str, list[Entry]]]
    parent_assessment: dict[str, Entry]
    parent_query_id: dict[str, str]
    runids: list[str]
    warnings: list[str]
    by_run: dict[tuple[str, str], list[Entry]] = field(default_factory=dict)  # (run, base)
    ec_cache: dict[str, str] = field(default_factory=dict)      # full query ID -> its class
    qid_ec: dict[str, str] = field(default_factory=dict)        # query ID -> its class
    templates: dict[str, Any] = field(default_factory=dict)     # base -> its assessments' nodes
    notes: list[str] = field(default_factory=list)              # hash-order choices made
    gt_index: dict[tuple[str, str], tuple[dict, dict]] = field(default_factory=dict)
    # C/X assessments by (query's full ID, value, value provenance): what parent_assessment
    # holds under the hop-1 query ID hashed from the same three (hop1_uuid)
    answer_assessment: dict[tuple[str, str, str], Entry] = field(default_factory=dict)
    # (query ID, value, provenances) of an assessed answer -> (its parent class, its
    # assessment): what the ASSESSED discipline matched it to (run-independent)
    resolved: dict[tuple[str, str, str, str], tuple[str, Any]] = field(default_factory=dict)
    # answers added without registering their hop-1 query yet (:func:`flush`)
    # (each one's query: ``queries[entry.r.parts.query_id]``, as when it was added)
    pending: list[Entry] = field(default_factory=list)


def load(query_files: list[str], response_files: list[str], expand_base: str | None) -> Loaded:
    """Read everything; raise :class:`KBPInputError` on the first malformed line."""
    queries: dict[str, QInfo] = {}
    file_queries: list[Query] = []
    for path in query_files:
        file_queries.extend(read_queries(path))
    for q in file_queries:
        queries[q.query_id] = QInfo.of(q)
    index: dict[str, str] = {}
    if expand_base:
        for e in expand(file_queries, expand_base):
            assert e.ldc_id is not None
            queries[e.query_id] = QInfo.of(e)
            queries[e.ldc_id].expanded_ids.append(e.query_id)
            index[e.query_id] = e.ldc_id
    top_ids = sorted(queries)
    loaded = Loaded(queries, top_ids, index, {SUBMISSION: {}, ASSESSMENT: {}}, {}, {}, [], [])
    runids: set[str] = set()
    for path in response_files:
        responses = read_responses(path)
        if not responses and os.path.getsize(path) > 0:
            # a zero-byte file is skipped; one of blank lines or comments stops the original
            raise KBPInputError(path, "no answer lines (only blank lines or comments)",
                                expected="an 8-column submission or assessment file")
        _add_all(loaded, responses, runids)
    loaded.runids = sorted(runids)
    return loaded


def _add_all(ld: Loaded, responses: list[Response], runids: set[str]) -> None:
    """:func:`_add` of each response: submissions whose query is known (or made from an earlier
    answer, :func:`_find`) and whose slot is the query's are added here with the ID of the query
    they generate left to compute (:attr:`Entry.target_id`; that query is registered when a
    later line may name it, :func:`_find`); any other line goes through :func:`_add`."""
    queries, by_run, pending, quantities = ld.queries, ld.by_run, ld.pending, _QUANTITY
    for r in responses:
        if r.kind != SUBMISSION:
            _add(ld, r, runids)
            continue
        parts = r.parts
        q = queries.get(parts.query_id)
        if q is None and pending:       # a hop-1 answer: its query, made from a pending answer
            q = _find(ld, parts.query_id)
        slot = r.slot
        quantity = quantities.get(slot)
        if q is None or quantity is None or not q.slots or slot != q.slots[0]:
            _add(ld, r, runids)
            continue
        runid = r.runid or ""
        key = (runid, parts.base)
        run = by_run.get(key)
        if run is None:
            runids.add(runid)
            run = by_run[key] = []
        entry = Entry(r, quantity, None, q.level, q.full_id)
        run.append(entry)
        pending.append(entry)


def _register(ld: Loaded, target: str, q: QInfo) -> None:
    """The query generated from an answer to ``q``."""
    if target not in ld.queries:
        ld.queries[target] = QInfo(target, f"{q.full_id}_{target}", q.level + 1, q.slots[1:],
                                   q.query_id)
    ld.parent_query_id[target] = q.query_id


def flush(ld: Loaded, qid: str | None = None) -> None:
    """Register the queries generated by answers added without them, newest first, until
    ``qid`` is met (all of them if ``qid`` is None or never met). The result is the same as
    registering each when it is read: a generated query depends only on its answer."""
    pending, queries = ld.pending, ld.queries
    while pending:
        entry = pending.pop()
        target = entry.target_id
        _register(ld, target, queries[entry.r.parts.query_id])
        if target == qid:
            return


def _find(ld: Loaded, qid: str) -> QInfo | None:
    q = ld.queries.get(qid)
    if q is None and ld.pending:
        flush(ld, qid)
        q = ld.queries.get(qid)
    return q


def _add(ld: Loaded, r: Response, runids: set[str]) -> None:
    parts = r.parts
    q = _find(ld, parts.query_id)
    if q is None:
        hint = " (its hop-0 answer must come on an earlier line)" if parts.level else ""
        raise KBPInputError(r.source, f"unknown query {r.full_query_id}{hint}", line=r.line,
                            column=1 if r.kind == SUBMISSION else 2)
    target = hop1_uuid(q.full_id, r.value, r.value_provenance.normal)
    if target not in ld.queries:
        ld.queries[target] = QInfo(target, f"{q.full_id}_{target}", q.level + 1, q.slots[1:],
                                   q.query_id)
    slot = r.slot
    if not q.slots or slot != q.slots[0]:
        ld.warnings.append(f"{r.source}, line {r.line}: slot {slot} is not the requested slot "
                           f"for query {parts.query_id} (expected {q.slot}); line skipped")
        return
    quantity = _QUANTITY.get(slot)
    if quantity is None:
        quantity = _QUANTITY[slot] = slot_quantity(slot)
    entry = Entry(r, quantity, target, q.level, q.full_id)
    ld.parent_query_id[target] = q.query_id
    if r.kind == SUBMISSION:
        runid = r.runid or ""
        runids.add(runid)
        key = (runid, parts.base)
        run = ld.by_run.get(key)
        if run is None:
            run = ld.by_run[key] = []
        run.append(entry)
        return
    if r.judgment in ("CORRECT", "INEXACT"):
        ld.parent_assessment[target] = entry
        ld.answer_assessment[(q.full_id, r.value, r.value_provenance.normal)] = entry
    ld.by_base[r.kind].setdefault(parts.base, []).append(entry)


_QUANTITY: dict[str, str | None] = {}      # slot -> quantity, filled as slots are met
__all__ = ["Loaded", "QInfo", "flush", "load"]
