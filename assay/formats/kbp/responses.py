"""Cold Start 2015 slot-filling responses: the 8-column SF submission and the 8-column
assessment file, read line by line with every malformed line an error naming file, line and
column (what CS-ValidateSF checks: column count, provenance syntax and offsets, confidence,
slot names, run IDs, judgment codes and equivalence classes).

Submission columns: query ID (hop 0: ``PREFIX_xxxxxxxxxx``; hop 1: parent's ID ``_`` 12 hex),
slot, run ID, relation provenance (1-4 triples), value, value type (PER, ORG, GPE or STRING),
value provenance, confidence in (0, 1].
Assessment columns (8; the 11-column "expanded" file adds the LDC query ID after the first, and
the subject and its ``DOCID:START-END`` after the second): assessment ID, ``QUERYID:slot``, relation provenance, value, value
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
from pathlib import Path
from typing import Mapping, NamedTuple

from .errors import KBPInputError, read_text
from .ids import QueryId, parse_queryid, require_queryid
from .provenance import Provenance, ProvenanceError, parse_provenance
from .slots import slot_quantity

JUDGMENTS = {"C": "CORRECT", "W": "INCORRECT", "X": "INEXACT", "I": "IGNORE",
             "S": "INEXACT_SHORT", "L": "INEXACT_LONG"}
VALUE_TYPES = ("PER", "ORG", "GPE", "STRING")
_CONFIDENCE = re.compile(r"^(?:1|1\.0*|0?\.[0-9]*[1-9][0-9]*)$")
SUBMISSION, ASSESSMENT = "submission", "assessment"
EXPANDED_ASSESSMENT = "expanded assessment"     # 11 columns: adds LDC query, subject, its span
NCOLS = 8
EXPANDED_NCOLS = 11


class Response(NamedTuple):
    """One line of a submission (``kind='submission'``) or assessment file (immutable; a named
    tuple rather than a frozen dataclass because a run has a line per answer: 4x faster to make).
    """

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
    if len(fields) == EXPANDED_NCOLS:
        return EXPANDED_ASSESSMENT
    if len(fields) != NCOLS:
        return None
    return ASSESSMENT if fields[1].count(":") >= 2 else SUBMISSION


def _clean_lines(text: str):
    """(line number, line) of each line that is not blank or a ``#`` comment; CRs dropped."""
    if "\r" in text:
        text = text.replace("\r", "")
    for n, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped and stripped[0] != "#":
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
    return require_queryid(text, source, n, col, sf=True)


def _slot(source: str, n: int, col: int, slot: str) -> str:
    if slot_quantity(slot) is None:
        raise _err(source, n, col, f"unknown slot name {slot!r}", "a 2015 slot such as per:title")
    return slot


# column (1-based) of each assessment field in the 8-column and the 11-column (expanded) files
_ASSESS_COLS = {8: dict(aid=1, qslot=2, rel=3, value=4, vprov=5, vj=6, pj=7, ec=8),
                11: dict(aid=1, ldc=2, qslot=3, subject=4, sprov=5, rel=6, value=7, vprov=8,
                         vj=9, pj=10, ec=11)}
_WHITE = re.compile(r"\s")
_TRIPLE1 = re.compile(r"^[^:]+:\d+-\d+$")


_GOOD_MAX = 4096                    # values remembered (a run with many confidences: the regex)
_GOOD_SLOTS: set[str] = set()      # submission columns already checked (a run repeats them)
_GOOD_RUNIDS: set[str] = set()
_GOOD_CONF: set[str] = set()
_GOOD_VTYPES = set(VALUE_TYPES) | {v.lower() for v in VALUE_TYPES}
_new = tuple.__new__


def _submission(fields: list[str], source: str, n: int, text: str) -> Response | None:
    """Fast path of a well-formed submission line (slot, run ID and confidence looked up in
    sets of values already checked, at most :data:`_GOOD_MAX` each; a confidence not there is
    matched by the same regex); ``None`` sends the line to :func:`parse_line`'s checks, which
    name the problem."""
    if len(fields) != NCOLS or not all(map(str.strip, fields)):
        return None
    qtext, slot, runid, rel, value, vtype, vprov, conf = fields
    if slot not in _GOOD_SLOTS or runid not in _GOOD_RUNIDS or vtype not in _GOOD_VTYPES \
            or (conf not in _GOOD_CONF and not _CONFIDENCE.match(conf)):
        return None
    parts = parse_queryid(qtext)
    if parts is None or parts.ldc or parts.level > 1:
        return None
    try:
        rp, vp = parse_provenance(rel), parse_provenance(vprov)
    except ProvenanceError:
        return None
    # the tuple made directly (half the time of the named tuple's __new__; same value)
    return _new(Response, (SUBMISSION, source, n, text, qtext, parts, slot, rp, value, vp, runid,
                           vtype, conf, None, None, None, None))


def parse_line(fields: list[str], kind: str, source: str, n: int, text: str) -> Response:
    """One split line of a file of ``kind`` as a :class:`Response`."""
    if kind == SUBMISSION:
        fast = _submission(fields, source, n, text)
        if fast is not None:
            return fast
    ncols = EXPANDED_NCOLS if kind == EXPANDED_ASSESSMENT else NCOLS
    if len(fields) != ncols:
        raise _err(source, n, 1, f"wrong number of columns ({len(fields)})",
                   f"{ncols} tab-separated columns")
    for i, f in enumerate(fields):
        if not f.strip():
            raise _err(source, n, i + 1, f"empty column {i + 1}")
    if kind == SUBMISSION:
        qtext, slot, runid, rel, value, vtype, vprov, conf = fields
        if slot.count(":") > 1:
            raise _err(source, n, 2, f"slot {slot!r} looks like an assessment's QUERYID:slot",
                       "a submission line")
        parts = _query(source, n, 1, qtext)
        _slot(source, n, 2, slot)
        if _WHITE.search(runid):
            raise _err(source, n, 3, f"run ID {runid!r} contains white space")
        if vtype.upper() not in VALUE_TYPES:
            raise _err(source, n, 6, f"value type {vtype!r}", "PER, ORG, GPE or STRING")
        if not _CONFIDENCE.match(conf):
            raise _err(source, n, 8, f"confidence {conf!r} is not a number in (0, 1]",
                       "e.g. 1.0 or 0.75")
        out = Response(SUBMISSION, source, n, text, qtext, parts, slot,
                       _prov(source, n, 4, rel), value, _prov(source, n, 7, vprov),
                       runid=runid, value_type=vtype, confidence=conf)
        if len(_GOOD_RUNIDS) < _GOOD_MAX and len(_GOOD_CONF) < _GOOD_MAX:
            _GOOD_SLOTS.add(slot)           # every check passed: later lines skip them
            _GOOD_RUNIDS.add(runid)
            _GOOD_CONF.add(conf)
        return out
    col = _ASSESS_COLS[ncols]
    f = {k: fields[c - 1] for k, c in col.items()}
    if "sprov" in f and not _TRIPLE1.match(f["sprov"]):
        raise _err(source, n, col["sprov"], f"subject provenance {f['sprov']!r}",
                   "one DOCID:START-END triple")
    qtext, sep, slot = f["qslot"].partition(":")
    if not sep or ":" not in slot:
        raise _err(source, n, col["qslot"], f"{f['qslot']!r} is not QUERYID:slot")
    parts = _query(source, n, col["qslot"], qtext)
    _slot(source, n, col["qslot"], slot)
    for key in ("vj", "pj"):
        if f[key] not in JUDGMENTS:
            raise _err(source, n, col[key], f"unknown judgment {f[key]!r}",
                       "one of C, W, X, I, S, L")
    vj, ec = f["vj"], f["ec"]
    judgment = JUDGMENTS[vj]
    root = qtext.rsplit("_", 1)[0] if parts.level else qtext
    if judgment in ("CORRECT", "INEXACT"):
        comps = ec.split(":")
        if (len(comps) != parts.level + 2 or comps[0] != root
                or not all(c.isdigit() for c in comps[1:]) or int(comps[-1]) == 0):
            raise _err(source, n, col["ec"], f"equivalence class {ec!r} of a {vj} judgment",
                       f"{root}:N" + (":M" if parts.level else "") + " with N, M > 0")
    elif ec != "0":
        raise _err(source, n, col["ec"], f"equivalence class {ec!r} of a {vj} judgment", "0")
    return Response(ASSESSMENT, source, n, text, qtext, parts, slot,
                    _prov(source, n, col["rel"], f["rel"]), f["value"],
                    _prov(source, n, col["vprov"], f["vprov"]), assessment_id=f["aid"],
                    judgment=judgment, provenance_judgment=JUDGMENTS[f["pj"]], ec=ec)


def _prov_columns(r: Response) -> tuple[int, int]:
    if r.kind == SUBMISSION:
        return 4, 7
    return (6, 8) if r.text.count("\t") == EXPANDED_NCOLS - 1 else (3, 5)


def check_documents(responses: list[Response], doc_lengths: Mapping[str, int]) -> None:
    """CS-ValidateSF's ``-docs`` checks: every provenance document is known and no offset lies
    beyond its length (in characters)."""
    for r in responses:
        for col, prov in zip(_prov_columns(r), (r.relation_provenance, r.value_provenance)):
            for t in prov.triples:
                length = doc_lengths.get(t.docid)
                if length is None:
                    raise _err(r.source, r.line, col, f"DOCID {t.docid} is not a valid DOCID "
                               "for this task", "a document of the -docs list")
                if t.start > length or t.end > length:
                    raise _err(r.source, r.line, col, f"{t.text()} lies beyond the end of "
                               f"{t.docid} ({length} characters)")


def _qid_ok(q: str) -> bool:
    parts = parse_queryid(q)
    return (parts is not None and not parts.ldc and parts.level <= 1
            and not q.lstrip().startswith("#"))


def _slot_ok(slot: str) -> bool:
    return slot.count(":") <= 1 and slot_quantity(slot) is not None


def _runid_ok(runid: str) -> bool:
    return bool(runid.strip()) and not _WHITE.search(runid)


def _vtype_ok(vtype: str) -> bool:
    return vtype.upper() in VALUE_TYPES


def _conf_ok(conf: str) -> bool:
    return _CONFIDENCE.match(conf) is not None


_PROVS: dict[str, Provenance] = {}     # provenance texts met (pooled answers recur in runs)
_PROVS_MAX = 1 << 17                    # emptied when over this, between files (as many as
                                        # parse_provenance keeps)


def parse_submissions(text: str, source: str) -> list[Response] | None:
    """A whole submission file in one pass: the same responses as :func:`parse_line`'s checks
    (each distinct query ID, slot, run ID, value type and confidence of the file checked once;
    provenance parsed by :func:`parse_provenance`), or ``None`` for anything else (an
    assessment file, a comment, a blank or malformed line, a carriage return): the caller then
    reads it line by line, which names the problem. Each line's objects are made together, as
    the line reader makes them (scoring reads them together: 10 % slower when apart)."""
    if "\r" in text or not text:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    first = lines[0].split("\t")
    if len(first) != NCOLS or first[1].count(":") >= 2:
        return None
    # each distinct query ID, slot, run ID, value type, confidence: checked once, and its first
    # string kept for every line (a line's own copy is freed at once: less memory to score in)
    parts_of: dict[str, tuple[str, QueryId]] = {}
    slots: dict[str, str] = {}
    runids: dict[str, str] = {}
    vtypes: dict[str, str] = {}
    confs: dict[str, str] = {}
    out: list[Response] = []
    append, known_prov, parse = out.append, _PROVS.get, parse_provenance.__wrapped__
    if len(_PROVS) > _PROVS_MAX:
        _PROVS.clear()
    try:
        for n, line in enumerate(lines, 1):
            qtext, slot, runid, rel, value, vtype, vprov, conf = line.split("\t")
            known = parts_of.get(qtext)
            if known is None:
                if not _qid_ok(qtext):
                    return None
                known = parts_of[qtext] = (qtext, parse_queryid(qtext))  # type: ignore[assignment]
            qtext, parts = known
            s = slots.get(slot)
            if s is None:
                if not _slot_ok(slot):
                    return None
                s = slots[slot] = slot
            r = runids.get(runid)
            if r is None:
                if not _runid_ok(runid):
                    return None
                r = runids[runid] = runid
            v = vtypes.get(vtype)
            if v is None:
                if not _vtype_ok(vtype):
                    return None
                v = vtypes[vtype] = vtype
            c = confs.get(conf)
            if c is None:
                if not _conf_ok(conf):
                    return None
                c = confs[conf] = conf
            if not value.strip():
                return None
            rp = known_prov(rel)
            if rp is None:
                rp = _PROVS[rel] = parse(rel)
            vp = known_prov(vprov)
            if vp is None:
                vp = _PROVS[vprov] = parse(vprov)
            append(_new(Response, (SUBMISSION, source, n, line, qtext, parts, s, rp, value, vp,
                                   r, v, c, None, None, None, None)))
    except (ValueError, ProvenanceError):   # not 8 columns; a malformed provenance
        return None
    return out


def parse_responses(text: str, source: str = "<responses>", kind: str | None = None,
                    doc_lengths: Mapping[str, int] | None = None) -> list[Response]:
    """Every line of a submission or assessment file; the kind is read off the first line.
    With ``doc_lengths`` (:func:`read_doc_lengths`), provenance is checked against it.
    A submission file is read by columns when it can be (:func:`parse_submissions`)."""
    out = parse_submissions(text, source) if kind in (None, SUBMISSION) else None
    if out is None:
        out = parse_lines(text, source, kind)
    if doc_lengths is not None:
        check_documents(out, doc_lengths)
    return out


def parse_lines(text: str, source: str = "<responses>", kind: str | None = None) -> list[Response]:
    """:func:`parse_responses` line by line (:func:`parse_line` of each line)."""
    out: list[Response] = []
    for n, line in _clean_lines(text):
        fields = line.split("\t")
        if kind is None:
            kind = _kind_of(fields)
            if kind is None:
                raise _err(source, n, 1, f"unknown file type ({len(fields)} columns)",
                           "an 8-column 2015 SF submission or assessment file, or an 11-column "
                           "expanded assessment file")
        out.append(parse_line(fields, kind, source, n, line))
    return out


def read_responses(path: str | Path, kind: str | None = None,
                   doc_lengths: Mapping[str, int] | None = None) -> list[Response]:
    """:func:`parse_responses` of a file (UTF-8)."""
    text = read_text(path)
    return parse_responses(text, str(path), kind, doc_lengths)


def read_doc_lengths(path: str | Path) -> dict[str, int]:
    """A ``DOCID<TAB>LENGTH`` file (CS-ValidateSF's ``-docs``)."""
    out: dict[str, int] = {}
    lines = read_text(path).split("\n")
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        docid, _, length = line.rstrip("\r").partition("\t")
        if not length.strip().isdigit():
            raise KBPInputError(str(path), f"length {length!r} of {docid!r}", line=n, column=2,
                                expected="DOCID<TAB>number of characters")
        out[docid] = int(length)
    return out


def format_submission(r: Response) -> str:
    """A submission line (original provenance order), the inverse of :func:`parse_line`."""
    return "\t".join([r.full_query_id, r.slot, r.runid or "", r.relation_provenance.original(),
                      r.value, r.value_type or "", r.value_provenance.original(), r.confidence or ""])


__all__ = ["ASSESSMENT", "EXPANDED_ASSESSMENT", "EXPANDED_NCOLS", "JUDGMENTS", "NCOLS",
           "Response", "SUBMISSION", "VALUE_TYPES", "check_documents", "format_submission", "parse_line", "parse_responses", "parse_submissions",
           "read_doc_lengths", "read_responses"]
