"""The ``-queries`` file of CS-Score 2.4.4: one ``LDC_ID SF_ID [HOP]`` a line (white-space
separated), the SF queries to score and the last hop to score for each (default: every hop of
the query). Every line naming the same LDC query must give it the same hop.

>>> [(e.ldc_id, e.sf_id, e.hop) for e in parse_query_list("CS15_ENG_0001 CSSF15_ENG_0458206f71 0\\n")]
[('CS15_ENG_0001', 'CSSF15_ENG_0458206f71', 0)]
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import KBPInputError, read_text
from .ids import require_queryid


@dataclass(frozen=True)
class QueryListEntry:
    """One line: the LDC query, the SF query, the last hop to score (``None``: all)."""

    ldc_id: str
    sf_id: str
    hop: int | None
    line: int


def parse_query_list(text: str, source: str = "<queries list>") -> list[QueryListEntry]:
    out: list[QueryListEntry] = []
    hops: dict[str, tuple[int | None, int]] = {}
    for n, line in enumerate(text.split("\n"), start=1):
        words = line.split()
        if not words:
            continue
        if len(words) not in (2, 3):
            raise KBPInputError(source, f"{len(words)} fields", line=n, column=1,
                                expected="LDC_ID SF_ID [HOP]")
        ldc, sf = words[0], words[1]
        require_queryid(sf, source, n, 2, noun="SF query ID")
        hop = None
        if len(words) == 3:
            if not re.fullmatch(r"\d+", words[2]):
                raise KBPInputError(source, f"hop {words[2]!r}", line=n, column=3,
                                    expected="a whole number")
            hop = int(words[2])
        if ldc in hops and hops[ldc][0] != hop:
            raise KBPInputError(source, f"{ldc} has conflicting hops ({hops[ldc][0]} at line "
                                f"{hops[ldc][1]}, {hop} here)", line=n, column=3)
        hops.setdefault(ldc, (hop, n))
        out.append(QueryListEntry(ldc, sf, hop, n))
    return out


def read_query_list(path: str | Path) -> list[QueryListEntry]:
    text = read_text(path)
    return parse_query_list(text, str(path))


__all__ = ["QueryListEntry", "parse_query_list", "read_query_list"]
