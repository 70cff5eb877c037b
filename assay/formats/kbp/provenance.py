"""Provenance of Cold Start answers: up to four ``DOCID:START-END`` triples, comma-separated.

As the 2015 task description bounds it (and CS-Score applies it when it reads a file): at most
4 triples (later ones are dropped), at most 150 characters a triple (a longer one is cut to
150), START <= END. :meth:`Provenance.key` is the normalised form answers are compared by
(triples sorted by document, then start, then end compared as text).

>>> p = parse_provenance("D2:10-20,D1:5-9")
>>> p.key(), p.original()
('D1:5-9,D2:10-20', 'D2:10-20,D1:5-9')
>>> parse_provenance("D1:0-400").triples[0].end
149
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

MAX_TRIPLES = 4
MAX_CHARS_PER_TRIPLE = 150
_TRIPLE = re.compile(r"^\s*([^:]+):(\d+)-(\d+)\s*$")


class Triple(NamedTuple):
    """One ``DOCID:START-END`` span (offsets inclusive, in characters)."""

    docid: str
    start: int
    end: int

    def text(self) -> str:
        return f"{self.docid}:{self.start}-{self.end}"


class Provenance(NamedTuple):
    """The triples of one provenance column, in file order (after the bounds are applied), and
    their normalised string (named tuples: a run has two of these a line)."""

    triples: tuple[Triple, ...]
    normal: str

    def key(self) -> str:
        """The normalised string CS-Score compares provenance by."""
        return self.normal

    def original(self) -> str:
        return ",".join(t.text() for t in self.triples)


def _normal(triples: list[Triple]) -> str:
    if len(triples) == 1:
        return triples[0].text()
    ordered = sorted(triples, key=lambda t: (t.docid, t.start, str(t.end)))
    return ",".join(t.text() for t in ordered)


_new = tuple.__new__


class ProvenanceError(ValueError):
    """A provenance string that is not a list of ``DOCID:START-END`` triples."""


@lru_cache(maxsize=1 << 17)
def parse_provenance(text: str) -> Provenance:
    """Parse, apply the bounds, or raise :class:`ProvenanceError` with the reason."""
    if "," not in text:                 # one triple: string methods, the regex only if unusual
        docid, sep, span = text.partition(":")
        start, dash, end = span.partition("-")
        if (sep and dash and docid and not docid[0].isspace() and start.isascii()
                and start.isdigit() and end.isascii() and end.isdigit()):
            b, e = int(start), int(end)
            if b <= e and e - b < MAX_CHARS_PER_TRIPLE:
                normal = f"{docid}:{b}-{e}"
                # the tuples made directly (a third of the time of the named tuples' __new__;
                # same values); the text itself kept as the normal form when it is one
                return _new(Provenance, ((_new(Triple, (docid, b, e)),),
                                         text if normal == text else normal))
    parts = text.split(",")
    if len(parts) > MAX_TRIPLES:
        parts = parts[:MAX_TRIPLES]
    triples = []
    for part in parts:
        m = _TRIPLE.match(part)
        if not m:
            raise ProvenanceError(f"{part!r} is not a DOCID:START-END triple")
        docid, start, end = m.group(1), int(m.group(2)), int(m.group(3))
        if end < start:
            raise ProvenanceError(f"({start}, {end}) is not a valid offset pair (end before start)")
        if end - start + 1 > MAX_CHARS_PER_TRIPLE:
            end = start + MAX_CHARS_PER_TRIPLE - 1
        triples.append(Triple(docid, start, end))
    return Provenance(tuple(triples), _normal(triples))


__all__ = ["MAX_CHARS_PER_TRIPLE", "MAX_TRIPLES", "Provenance", "ProvenanceError", "Triple",
           "parse_provenance"]
