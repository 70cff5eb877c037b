"""Cold Start 2015 query files (XML): SF queries (one entry point each) and LDC queries (several
entry points), with ``<slot0>`` and, for two-hop queries, ``<slot1>``.

Each ``<query id="...">`` holds ``<enttype>``, ``<slot0>``, optionally ``<slot1>``, and one or more
entry points, each a ``<name>``, ``<docid>``, ``<beg>`` and ``<end>`` (a repeated tag starts the
next entry point). :func:`expand` turns each entry point of an LDC query into an SF query named
``BASE_`` and the hash of the entry point and slots (:func:`assay.formats.kbp.ids.entrypoint_uuid`).

>>> qs = parse_queries('<query id="CS15_ENG_0001"><name>A &amp; B</name><docid>D1</docid>'
...                    '<beg>0</beg><end>4</end><enttype>per</enttype>'
...                    '<slot0>per:title</slot0></query>', "q.xml")
>>> qs[0].entrypoints[0].name, qs[0].slots, expand(qs, "CSSF15_ENG")[0].full_id
('A & B', ('per:title',), 'CSSF15_ENG_b4b0ba6833')
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import KBPInputError, read_text
from .ids import QueryId, entrypoint_uuid, parse_queryid, require_queryid
from .slots import slot_quantity

_QUERY = re.compile(r"<query .*?>.*?</query>", re.DOTALL)
_WHOLE = re.compile(r"^\s*<query\s+id=\"(.*?)\">\s*(.*?)\s*</query>\s*$", re.DOTALL)
_TAG = re.compile(r"<(.*?)>(.*?)</(.*?)>", re.DOTALL)
_ENTITIES = {"quot": '"', "amp": "&", "apos": "'", "lt": "<", "gt": ">"}
_EP_TAGS = {"name": "name", "docid": "docid", "beg": "beg", "end": "end"}
_SINGLE = {"enttype", "slot", "slot0", "slot1"}
ENTITY_TYPES = ("per", "org", "gpe")


@dataclass(frozen=True)
class EntryPoint:
    """One mention of the query entity: its name and span (offsets kept as written)."""

    name: str
    docid: str
    beg: str
    end: str


@dataclass(frozen=True)
class Query:
    """One query: its full ID and parts, entity type, slots (hop 0, hop 1) and entry points."""

    full_id: str
    parts: QueryId
    enttype: str
    slots: tuple[str, ...]
    entrypoints: tuple[EntryPoint, ...]
    source: str = ""
    line: int = 0
    ldc_id: str | None = None      # for an expanded SF query: the LDC query it came from

    @property
    def query_id(self) -> str:
        return self.parts.query_id

    @property
    def prefix(self) -> str | None:
        return self.parts.prefix


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _decode(value: str, source: str, line: int, col: int) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in _ENTITIES:
            raise KBPInputError(source, f"unknown entity &{m.group(1)}; in <name>", line=line,
                                column=col, expected="&quot; &amp; &apos; &lt; or &gt;")
        return _ENTITIES[m.group(1)]
    return re.sub(r"&(.+?);", sub, value)


def _parse_one(text: str, start: int, source: str) -> Query:
    block = text[start:text.index("</query>", start) + len("</query>")]
    line, col = _line_col(text, start)
    m = _WHOLE.match(block)
    if not m:
        raise KBPInputError(source, "malformed <query> element", line=line, column=col,
                            expected='<query id="..."> ... </query>')
    full_id, body = m.group(1), m.group(2)
    parts = require_queryid(full_id, source, line, col, what="query id ")
    body_at = start + m.start(2)
    fields: dict[str, str] = {}
    entrypoints: list[EntryPoint] = []
    current: dict[str, str] = {}
    for t in _TAG.finditer(body):
        tl, tc = _line_col(text, body_at + t.start())
        tag, value, closer = t.group(1).lower(), t.group(2), t.group(3).lower()
        if tag != closer:
            raise KBPInputError(source, f"<{tag}> closed with </{closer}> in query {full_id}",
                                line=tl, column=tc)
        if tag in _EP_TAGS:
            if tag == "name":
                value = _decode(value, source, tl, tc)
            elif tag in ("beg", "end") and not re.fullmatch(r"\d+", value):
                raise KBPInputError(source, f"<{tag}>{value}</{tag}> is not a valid offset",
                                    line=tl, column=tc, expected="a whole number")
            if tag in current:
                entrypoints.append(_entrypoint(current, source, full_id, line, col))
                current = {}
            current[tag] = value
        elif tag in _SINGLE:
            if tag in fields:
                raise KBPInputError(source, f"duplicate <{tag}> in query {full_id}", line=tl, column=tc)
            if tag.startswith("slot") and tag != "slot" and slot_quantity(value) is None:
                raise KBPInputError(source, f"unknown slot name {value!r} in query {full_id}",
                                    line=tl, column=tc, expected="a 2015 slot such as per:title")
            fields[tag] = value
        else:
            raise KBPInputError(source, f"<{tag}> is not a recognized query field in query {full_id}",
                                line=tl, column=tc)
    if current:
        entrypoints.append(_entrypoint(current, source, full_id, line, col))
    for need in ("enttype", "slot0"):
        if need not in fields:
            raise KBPInputError(source, f"missing <{need}> in query {full_id}", line=line, column=col)
    if not entrypoints:
        raise KBPInputError(source, f"query {full_id} has no entry point", line=line, column=col)
    slots = (fields["slot0"],) + ((fields["slot1"],) if "slot1" in fields else ())
    return Query(full_id, parts, fields["enttype"], slots, tuple(entrypoints), source, line)


def _entrypoint(current: dict[str, str], source: str, qid: str, line: int, col: int) -> EntryPoint:
    missing = [t for t in ("name", "docid", "beg", "end") if t not in current]
    if missing:
        raise KBPInputError(source, f"entry point of query {qid} lacks <{missing[0]}>", line=line,
                            column=col, expected="<name>, <docid>, <beg> and <end> for each entry point")
    if int(current["end"]) < int(current["beg"]):
        raise KBPInputError(source, f"entry point of query {qid}: end {current['end']} before "
                            f"beg {current['beg']}", line=line, column=col)
    return EntryPoint(current["name"], current["docid"], current["beg"], current["end"])


def parse_queries(text: str, source: str = "<queries>") -> list[Query]:
    """Every query of a query file's text, in file order (a later duplicate ID is an error)."""
    out: list[Query] = []
    seen: dict[str, int] = {}
    for m in _QUERY.finditer(text):
        q = _parse_one(text, m.start(), source)
        if q.query_id in seen:
            raise KBPInputError(source, f"duplicate query ID {q.full_id} (first at line "
                                f"{seen[q.query_id]})", line=q.line)
        seen[q.query_id] = q.line
        out.append(q)
    if not out:
        raise KBPInputError(source, "no queries found", expected='<query id="..."> elements')
    return out


def read_queries(path: str | Path) -> list[Query]:
    """:func:`parse_queries` of a file (UTF-8)."""
    text = read_text(path)
    return parse_queries(text, str(path))


def expand(queries: list[Query], base: str) -> list[Query]:
    """One SF query per entry point of each query, named ``base_`` + the entry point's hash."""
    out = []
    for q in queries:
        for ep in q.entrypoints:
            full = f"{base}_{entrypoint_uuid(ep.docid, ep.beg, ep.end, q.slots)}"
            parts = parse_queryid(full)
            assert parts is not None
            out.append(replace(q, full_id=full, parts=parts, entrypoints=(ep,), ldc_id=q.query_id))
    return out


def _escape(name: str) -> str:
    return name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def format_queries(queries: list[Query]) -> str:
    """A query file of ``queries`` (each entry point's name, docid, beg, end, then enttype and
    slots, as CS-ValidateQueries writes them); :func:`parse_queries` reads it back.

    >>> qs = parse_queries('<query id="CS15_ENG_0001"><name>A &amp; B</name><docid>D1</docid>'
    ...                    '<beg>0</beg><end>4</end><enttype>per</enttype>'
    ...                    '<slot0>per:title</slot0></query>', "q.xml")
    >>> [(q.full_id, q.entrypoints) for q in parse_queries(format_queries(qs))] == [
    ...     (q.full_id, q.entrypoints) for q in qs]
    True
    """
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<query_set>"]
    for q in queries:
        out.append(f'  <query id="{q.full_id}">')
        for ep in q.entrypoints:
            out += [f"    <name>{_escape(ep.name)}</name>", f"    <docid>{ep.docid}</docid>",
                    f"    <beg>{ep.beg}</beg>", f"    <end>{ep.end}</end>"]
        out.append(f"    <enttype>{q.enttype}</enttype>")
        out += [f"    <slot{i}>{slot}</slot{i}>" for i, slot in enumerate(q.slots)]
        out.append("  </query>")
    out.append("</query_set>")
    return "\n".join(out) + "\n"


__all__ = ["ENTITY_TYPES", "EntryPoint", "Query", "expand", "format_queries", "parse_queries",
           "read_queries"]
