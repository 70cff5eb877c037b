"""Cold Start 2015 slot-filling responses: the 8-column SF submission and the 8-column
assessment file, read line by line with every malformed line an error naming file, line and
column (what CS-ValidateSF checks: column count, provenance syntax and offsets, confidence,
slot names, run IDs, judgment codes and equivalence classes).

Submission columns: query ID (hop 0: ``PREFIX_xxxxxxxxxx``; hop 1: parent's ID ``_`` 12 hex),
slot, run ID, relation provenance (1-4 triples), value, value type (PER, ORG, GPE or STRING),
value provenance, confidence in (0, 1].
Assessment columns: assessment ID, ``QUERYID:slot``, relation provenance, value, value
provenance, value judgment, provenance judgment (C correct, W wrong, X inexact, I ignore, S/L
inexact short/long), equivalence class (``QUERYID:n`` at hop 0, ``QUERYID:n:m`` at hop 1 for a
correct or inexact value; ``0`` otherwise).

A ``#`` at the start of a line makes it a comment; blank lines are skipped; carriage returns are
dropped.

>>> rs = parse_responses("CSSF15_ENG_0458206f71\\tper:title\\trun1\\tD1:0-9\\tmayor\\tSTRING"
...                      "\\tD1:3-7\\t0.9\\n", "run.tab")
>>> rs[0].kind, rs[0].runid, rs[0].value_provenance.key()
('submission', 'run1', 'D1:3-7')
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import KBPInputError
from .ids import QueryId, parse_queryid
from .provenance import Provenance, ProvenanceError, parse_provenance
from .slots import slot_quantity

JUDGMENTS = {"C": "CORRECT", "W": "INCORRECT", "X": "INEXACT", "I": "IGNORE",
             "S": "INEXACT_SHORT", "L": "INEXACT_LONG"}
VALUE_TYPES = ("PER", "ORG", "GPE", "STRING")
_CONFIDENCE = re.compile(r"^(?:1|1\.0*|0?\.[0-9]*[1-9][0-9]*)$")
SUBMISSION, ASSESSMENT = "submission", "assessment"
NCOLS = 8


@dataclass(frozen=True)
class Response:
    """One line of a submission (``kind='submission'``) or assessment file."""

    kind: str
    source: str
    line: int
    text: str
    full_query_id: str
    parts: QueryId
    slot: str
    relation_provenance: Provenance
    value: str
    value_provenance: Provenance
    runid: str | None = None              # submissions
    value_type: str | None = None         # submissions
    confidence: str | None = None         # submissions
    assessment_id: str | None = None      # assessments
    judgment: str | None = None           # assessments: CORRECT, INCORRECT, INEXACT, ...
    provenance_judgment: str | None = None
    ec: str | None = None                 # assessments: equivalence class or '0'

    @property
    def query_id(self) -> str:
        return self.parts.query_id

    @property
    def level(self) -> int:
        return self.parts.level


def _kind_of(fields: list[str]) -> str | None:
    if len(fields) != NCOLS:
        return None
    return ASSESSMENT if fields[1].count(":") >= 2 else SUBMISSION


def _clean_lines(text: str):
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.replace("\r", "")
        if re.match(r"^\s*#", line) or not line.strip():
            continue
        yield n, line


def _err(source: str, n: int, col: int, problem: str, expected: str | None = None) -> KBPInputError:
    return KBPInputError(source, problem, line=n, column=col, expected=expected)


def _prov(source: str, n: int, col: int, text: str) -> Provenance:
    try:
        return parse_provenance(text)
    except ProvenanceError as exc:
        raise _err(source, n, col, f"bad provenance: {exc}",
                   "1-4 comma-separated DOCID:START-END triples") from None


def _query(source: str, n: int, col: int, text: str) -> QueryId:
    parts = parse_queryid(text)
    if parts is None or parts.ldc or parts.level > 1:
        raise _err(source, n, col, f"{text!r} is no SF query ID",
                   "PREFIX_ and 10 hex digits, for hop 1 followed by _ and 12 hex digits")
    return parts


def _slot(source: str, n: int, col: int, slot: str) -> str:
    if slot_quantity(slot) is None:
        raise _err(source, n, col, f"unknown slot name {slot!r}", "a 2015 slot such as per:title")
    return slot


def parse_line(fields: list[str], kind: str, source: str, n: int, text: str) -> Response:
    """One split line of a file of ``kind`` as a :class:`Response`."""
    if len(fields) != NCOLS:
        raise _err(source, n, 1, f"wrong number of columns ({len(fields)})",
                   f"{NCOLS} tab-separated columns")
    for i, f in enumerate(fields):
        if not f.strip():
            raise _err(source, n, i + 1, f"empty column {i + 1}")
    if kind == SUBMISSION:
        qtext, slot, runid, rel, value, vtype, vprov, conf = fields
        if ":" in slot and slot.count(":") > 1:
            raise _err(source, n, 2, f"slot {slot!r} looks like an assessment's QUERYID:slot",
                       "a submission line")
        parts = _query(source, n, 1, qtext)
        _slot(source, n, 2, slot)
        if re.search(r"\s", runid):
            raise _err(source, n, 3, f"run ID {runid!r} contains white space")
        if vtype.upper() not in VALUE_TYPES:
            raise _err(source, n, 6, f"value type {vtype!r}", "PER, ORG, GPE or STRING")
        if not _CONFIDENCE.match(conf):
            raise _err(source, n, 8, f"confidence {conf!r} is not a number in (0, 1]",
                       "e.g. 1.0 or 0.75")
        return Response(SUBMISSION, source, n, text, qtext, parts, slot,
                        _prov(source, n, 4, rel), value, _prov(source, n, 7, vprov),
                        runid=runid, value_type=vtype, confidence=conf)
    aid, qslot, rel, value, vprov, vj, pj, ec = fields
    qtext, sep, slot = qslot.partition(":")
    if not sep or ":" not in slot:
        raise _err(source, n, 2, f"{qslot!r} is not QUERYID:slot")
    parts = _query(source, n, 2, qtext)
    _slot(source, n, 2, slot)
    for col, code in ((6, vj), (7, pj)):
        if code not in JUDGMENTS:
            raise _err(source, n, col, f"unknown judgment {code!r}", "one of C, W, X, I, S, L")
    judgment = JUDGMENTS[vj]
    hop0 = qtext.split("_")
    root = "_".join(hop0[:-1]) if parts.level else qtext
    if judgment in ("CORRECT", "INEXACT"):
        comps = ec.split(":")
        if (len(comps) != parts.level + 2 or comps[0] != root
                or not all(c.isdigit() for c in comps[1:]) or comps[-1] == "0" or int(comps[-1]) == 0):
            raise _err(source, n, 8, f"equivalence class {ec!r} of a {vj} judgment",
                       f"{root}:N" + (":M" if parts.level else "") + " with N, M > 0")
    elif ec != "0" and ec != "":
        raise _err(source, n, 8, f"equivalence class {ec!r} of a {vj} judgment", "0")
    return Response(ASSESSMENT, source, n, text, qtext, parts, slot, _prov(source, n, 3, rel),
                    value, _prov(source, n, 5, vprov), assessment_id=aid, judgment=judgment,
                    provenance_judgment=JUDGMENTS[pj], ec=ec)


def parse_responses(text: str, source: str = "<responses>", kind: str | None = None) -> list[Response]:
    """Every line of a submission or assessment file; the kind is read off the first line."""
    out: list[Response] = []
    for n, line in _clean_lines(text):
        fields = line.split("\t")
        if kind is None:
            kind = _kind_of(fields)
            if kind is None:
                raise _err(source, n, 1, f"unknown file type ({len(fields)} columns)",
                           "an 8-column 2015 SF submission or assessment file")
        out.append(parse_line(fields, kind, source, n, line))
    return out


def read_responses(path: str | Path, kind: str | None = None) -> list[Response]:
    """:func:`parse_responses` of a file (UTF-8)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KBPInputError(str(path), f"cannot read: {exc}") from None
    return parse_responses(text, str(path), kind)


def format_submission(r: Response) -> str:
    """A submission line (original provenance order), the inverse of :func:`parse_line`."""
    return "\t".join([r.full_query_id, r.slot, r.runid or "", r.relation_provenance.original(),
                      r.value, r.value_type or "", r.value_provenance.original(), r.confidence or ""])


__all__ = ["ASSESSMENT", "JUDGMENTS", "NCOLS", "Response", "SUBMISSION", "VALUE_TYPES",
           "format_submission", "parse_line", "parse_responses", "read_responses"]
