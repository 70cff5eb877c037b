"""Cold Start query IDs: their parts, and the hashed IDs of expanded and hop-1 queries.

A 2015 SF query ID is ``PREFIX_xxxxxxxxxx`` (10 hex digits); a hop-1 query is its parent's full
ID, ``_`` and 12 hex digits; an LDC query ID ends in decimal digits (``CS15_ENG_0001``). The
hashes are the last digits of a name-based (MD5, version 3) UUID in the nil namespace, RFC 4122
section 4.3: of ``DOCID:BEG:END:SLOT0[:SLOT1]`` for an entry point (10 digits), and of the
JSON-escaped ``PARENT_FULL_ID:VALUE:PROVENANCE`` for a hop-1 query (12 digits).

>>> parse_queryid("CSSF15_ENG_0458206f71_a0b1c2d3e4f5")
QueryId(prefix='CSSF15_ENG', base='0458206f71', query_id='a0b1c2d3e4f5', level=1, ldc=False)
>>> parse_queryid("CS15_ENG_0001").query_id
'0001'
>>> short_uuid("D1:0:4:per:title", 10)
'b4b0ba6833'
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache

from .errors import KBPInputError

_SF = re.compile(r"^(?:(.+)_)?([0-9A-F]{10})((?:_[0-9A-F]{12})*)$", re.IGNORECASE)
_LDC = re.compile(r"^(?:(.+)_)?(\d+)$")


@dataclass(frozen=True)
class QueryId:
    """The parts of a full query ID."""

    prefix: str | None
    base: str          # the hop-0 (or LDC) component
    query_id: str      # the last component: the key queries are known by
    level: int         # number of hop components after the base (0 for hop 0)
    ldc: bool          # an LDC (decimal) query ID


def _query_id(prefix: str | None, base: str, query_id: str, level: int) -> QueryId:
    """``QueryId(prefix, base, query_id, level, False)`` without the frozen dataclass's
    five ``object.__setattr__`` calls (a run has a hop-1 query ID a line or so)."""
    q = object.__new__(QueryId)
    q.__dict__.update(prefix=prefix, base=base, query_id=query_id, level=level, ldc=False)
    return q


@lru_cache(maxsize=1 << 17)
def parse_queryid(full: str) -> QueryId | None:
    """The parts of ``full``, or ``None`` if it is no Cold Start query ID."""
    m = _SF.match(full)
    if m:
        prefix, base, tail = m.groups()
        if not tail:                    # hop 0 and hop 1 without findall (the usual IDs)
            return _query_id(prefix, base, base, 0)
        if len(tail) == 13:
            return _query_id(prefix, base, tail[1:], 1)
        hops = re.findall(r"_([0-9A-Fa-f]{12})", tail)
        return QueryId(prefix, base, hops[-1], len(hops), False)
    m = _LDC.match(full)
    if m:
        return QueryId(m.group(1), m.group(2), m.group(2), 1, True)
    return None


try:        # CPython's own MD5: twice as fast as OpenSSL's on strings this short
    from _md5 import md5 as _md5
except ImportError:  # pragma: no cover - a Python without it
    _md5 = hashlib.md5
def query_key(text: str) -> str:
    """The ID a query is known by (the last component of its full ID; ``text`` itself if it is
    no query ID).

    >>> query_key("CSSF15_ENG_0458206f71_a0b1c2d3e4f5"), query_key("x y")
    ('a0b1c2d3e4f5', 'x y')
    """
    parts = parse_queryid(text)
    return parts.query_id if parts else text


_SF_EXPECTED = "PREFIX_ and 10 hex digits, for hop 1 followed by _ and 12 hex digits"
_ANY_EXPECTED = "PREFIX_ and 10 hex digits, or an LDC ID ending in digits"


def require_queryid(text: str, source: str, line: int, column: int, sf: bool = False,
                    what: str = "", noun: str = "Cold Start query ID") -> QueryId:
    """:func:`parse_queryid` of ``text``, or a :class:`KBPInputError` at file, line and column
    (``what``: words before the ID; ``noun``: what it is not); ``sf``: an SF query ID of hop 0
    or 1 only (what a submission or assessment line names)."""
    parts = parse_queryid(text)
    if sf and (parts is None or parts.ldc or parts.level > 1):
        raise KBPInputError(source, f"{what}{text!r} is no SF query ID", line=line, column=column,
                            expected=_SF_EXPECTED)
    if parts is None:
        raise KBPInputError(source, f"{what}{text!r} is no {noun}", line=line, column=column,
                            expected=_ANY_EXPECTED)
    return parts


_NIL = _md5(b"\0" * 16)              # the nil namespace, hashed once


def short_uuid(text: str, length: int) -> str:
    """The last ``length`` hex digits of the version-3 UUID of ``text`` (nil namespace)."""
    h = _NIL.copy()
    h.update(text.encode("utf-8"))
    return h.hexdigest()[-length:]


_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def json_escape(text: str) -> str:
    r"""``text`` as the inside of a JSON string (UTF-8 kept, controls and quotes escaped).

    >>> json_escape('say "hi"'), json_escape('café')
    ('say \\"hi\\"', 'café')
    """
    if (text.isprintable() and '"' not in text and "\\" not in text) or not _ESCAPED.search(text):
        return text
    return json.dumps(text, ensure_ascii=False)[1:-1]


def hop1_uuid(parent_full_id: str, value: str, provenance_key: str) -> str:
    """The 12-digit ID of the query generated from an answer (its parent query, value, provenance)."""
    return short_uuid(json_escape(f"{parent_full_id}:{value}:{provenance_key}"), 12)


def entrypoint_uuid(docid: str, start: int | str, end: int | str, slots: tuple[str, ...]) -> str:
    """The 10-digit ID of the SF query expanded from one entry point."""
    return short_uuid(f"{docid}:{start}:{end}:" + ":".join(slots), 10)


__all__ = ["QueryId", "entrypoint_uuid", "hop1_uuid", "json_escape", "parse_queryid", "query_key",
           "require_queryid", "short_uuid"]
