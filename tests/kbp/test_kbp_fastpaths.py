"""The readers' fast paths (speed, docs/csscore.md) give exactly what the full checks give:
a one-triple provenance read with string methods against the triple regex, and a submission
line's fast path against parse_line's checks, on seeded random strings."""
from __future__ import annotations

import random
import re

from assay.formats.kbp.errors import KBPInputError
from assay.formats.kbp.provenance import (MAX_CHARS_PER_TRIPLE, ProvenanceError, Triple,
                                          parse_provenance)
from assay.formats.kbp import responses
from assay.formats.kbp.responses import SUBMISSION, _submission, parse_line

_TRIPLE = re.compile(r"^\s*([^:]+):(\d+)-(\d+)\s*$")


def _by_regex(text: str):
    """A one-triple provenance as the regex reads it (the reference of the fast path)."""
    m = _TRIPLE.match(text)
    if not m:
        return "error"
    docid, start, end = m.group(1), int(m.group(2)), int(m.group(3))
    if end < start:
        return "error"
    end = min(end, start + MAX_CHARS_PER_TRIPLE - 1)
    return ((Triple(docid, start, end),), f"{docid}:{start}-{end}")


def test_one_triple_provenance_fast_path_matches_the_regex():
    rng = random.Random(11)
    alphabet = ["D", "1", "0", ":", "-", " ", "\t", "²", "٣", "x", "9", "\n", "\u00a0"]
    for _ in range(30000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if rng.random() < 0.3:
            text = f"D{rng.randint(0, 9)}:{rng.randint(0, 300)}-{rng.randint(0, 300)}"
        if rng.random() < 0.1:
            text = rng.choice([" ", "x ", "\t"]) + text + rng.choice(["", " ", "\n"])
        parse_provenance.cache_clear()
        try:
            got = tuple(parse_provenance(text))
        except ProvenanceError:
            got = "error"
        assert got == _by_regex(text), repr(text)


def test_submission_fast_path_is_the_checked_parse_or_declines(monkeypatch):
    good = ["CSSF15_ENG_0458206f71", "per:title", "run1", "D1:0-9", "mayor", "STRING",
            "D1:3-7", "0.9"]
    parse_line(good, SUBMISSION, "f", 1, "\t".join(good))         # marks its columns checked
    rng = random.Random(3)
    declined = 0
    noise = ["", " ", "x y", "1.5", "0", "per:titles", "D1:9-3", "D1:0-9,D2:1-2", "ORG", "Per",
             "CSSF15_ENG_0458206f71_a0b1c2d3e4f5", "CS15_ENG_0001", "1", "run 1", "D1:0-400"]
    for _ in range(3000):
        fields = list(good)
        for _ in range(rng.randint(1, 2)):
            fields[rng.randrange(8)] = rng.choice(noise)
        if rng.random() < 0.1:
            fields = fields[:rng.randint(1, 7)]
        text = "\t".join(fields)
        with monkeypatch.context() as m:             # the checks alone, no fast path
            m.setattr(responses, "_submission", lambda *a: None)
            try:
                full = parse_line(list(fields), SUBMISSION, "f", 1, text)
            except KBPInputError:
                full = None
        fast = _submission(list(fields), "f", 1, text)
        declined += fast is None
        assert fast is None or fast == full, fields
    assert 0 < declined < 3000
