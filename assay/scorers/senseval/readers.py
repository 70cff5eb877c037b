"""Reading scorer2's four file kinds: answers, key, sense map, and the seed's filter lists.

Files are read as bytes and decoded UTF-8 with ``surrogateescape`` so any byte survives to the
output unchanged.  Unlike the original, a last line without a newline is read and a CRLF line
ending is accepted (the ``\\r`` is dropped).
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .cnum import atof, c_div, f32
from .model import AnswerLine, KeyEntry, SensevalInputError

PathLike = str | os.PathLike[str]

_TOKEN_SPLIT = re.compile(r"[ \t\n]+")  # scorer2 separates tags by spaces, tabs (and newlines)
COMMENT = "!!"
WEIGHT = "/"


def read_lines(path: PathLike, role: str) -> list[str]:
    """The lines of *path*, without line terminators; a clear error if it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SensevalInputError(str(path), f"cannot read {role} file: {exc.strerror or exc}") from None
    return split_lines(data.decode("utf-8", "surrogateescape"))


def split_lines(text: str) -> list[str]:
    """Split on ``\\n``; keep an unterminated last line; drop one ``\\r`` before each ``\\n``."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def tokenize(text: str) -> list[str]:
    """scorer2's tokens: maximal runs of characters other than space, tab and newline."""
    return [t for t in _TOKEN_SPLIT.split(text) if t]


# ---------------------------------------------------------------------------------------- key
def parse_key(lines: Iterable[str], path: PathLike = "<key>") -> list[KeyEntry]:
    """Key lines ``lexelt instance sense+`` (single spaces between the first three fields).

    Blank lines are skipped.  A line without a sense tag is an error (the original segfaults
    when such an instance is answered).
    """
    entries: list[KeyEntry] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip(" \t"):
            continue
        entries.append(_parse_key_line(line, str(path), number))
    return entries


def _parse_key_line(line: str, path: str, number: int) -> KeyEntry:
    first = line.find(" ")
    second = line.find(" ", first + 1) if first >= 0 else -1
    tags = tokenize(line[second + 1:]) if second >= 0 else []
    if not tags:
        raise SensevalInputError(
            path, f"key line has no sense tag (expected 'lexelt instance sense+'): {line!r}", number)
    return KeyEntry(lexelt=line[:first], instance=line[first + 1:second], tags=tuple(tags),
                    line=number)


# ------------------------------------------------------------------------------------ answers
def parse_answer_line(text: str, index: int) -> AnswerLine:
    """One answer line, parsed the way scorer2 parses it (answer-format.txt, as measured).

    Everything from the first ``!!`` on is dropped, even glued to a tag.  The first space joins
    lexelt and instance with ``_``, the next space ends the instance; the rest is split into
    tags on spaces and tabs.  A tag's weight is the ``atof`` of what follows its first ``/``.
    """
    cut = text.find(COMMENT)
    if cut >= 0:
        text = text[:cut]
    first = text.find(" ")
    if first < 0:
        return AnswerLine(index, text, (), ())
    second = text.find(" ", first + 1)
    ident = text[:first] + "_" + text[first + 1:(second if second >= 0 else len(text))]
    if second < 0:
        return AnswerLine(index, ident, (), ())
    tags: list[str] = []
    weights: list[float | None] = []
    for token in tokenize(text[second + 1:]):
        tag, slash, weight = token.partition(WEIGHT)
        tags.append(tag)
        weights.append(atof(weight) if slash else None)
    return AnswerLine(index, ident, tuple(tags), tuple(weights))


def parse_answers(lines: Iterable[str]) -> list[AnswerLine]:
    """All answer lines in file order (none is ever an error: scorer2 reports them instead)."""
    return [parse_answer_line(line, i) for i, line in enumerate(lines)]


def check_inputs(answers: list[AnswerLine], key: list[KeyEntry], answer_path: str,
                 key_path: str) -> None:
    """An empty key, or a weight that is NaN, infinite or negative, is an error naming the file
    and the (1-based) line; the original scores such input without a word."""
    if not key:
        raise SensevalInputError(key_path, "the key is empty (expected lines "
                                 "'lexelt instance sense+')")
    for answer in answers:
        for tag, w in zip(answer.tags, answer.weights):
            if w is not None and not (math.isfinite(f32(w)) and w >= 0.0):
                raise SensevalInputError(answer_path, f"weight {w!r} of tag {tag!r} (expected a "
                                         "finite number >= 0 that fits a C float)", answer.index + 1)


# ---------------------------------------------------------------------------------- sense map
@dataclass(frozen=True)
class SenseEntry:
    """One sense-map line ``sense [b_1 parent_1 b_2 parent_2 ...]`` (seed 003, EXECUTION).

    ``root`` is the text after the line's last space (the coarse sense).  ``chain`` lists the
    line's sense fields with the product of the branching factors read before each one; the
    first field is the sense itself (product 1).
    """

    sense: str
    root: str
    chain: tuple[tuple[str, float, float], ...]  # (sense, float32 product, double product)
    line: int


def parse_sense_line(line: str, number: int) -> SenseEntry:
    """Fields are what follows each space (odd ones senses, even ones ``atof`` factors).

    Trailing spaces are dropped (the original would make the coarse tag of such a line empty).
    """
    line = line.rstrip(" ")
    parts = line.split(" ")
    chain: list[tuple[str, float, float]] = []
    p32, p64, pos = 1.0, 1.0, 0
    for k, part in enumerate(parts):
        if k % 2 == 0:
            chain.append((part, p32, p64))
        else:
            factor = atof(line[pos:])  # atof reads on past empty fields, like the original
            p32, p64 = f32(p32 * factor), p64 * factor
        pos += len(part) + 1
    root = line[line.rfind(" ") + 1:]
    return SenseEntry(sense=parts[0] if parts else "", root=root, chain=tuple(chain), line=number)


@dataclass
class SenseMap:
    """Sense-map lookups by exact sense id (the file need not be sorted; first line wins)."""

    entries: dict[str, SenseEntry] = field(default_factory=dict)

    def root(self, tag: str) -> str:
        """The coarse tag: the root of *tag*'s line, or *tag* itself if it has no line."""
        entry = self.entries.get(tag)
        return tag if entry is None else entry.root

    def subsumption32(self, subsumer: str, tag: str) -> float:
        """1 / (product of branching factors from *tag* up to *subsumer*), else 0 (C floats)."""
        entry = self.entries.get(tag)
        if entry is not None:
            for sense, p32, _ in entry.chain:
                if sense == subsumer:
                    return f32(c_div(1.0, p32))
        return 0.0

    def subsumption64(self, subsumer: str, tag: str) -> float:
        """As :meth:`subsumption32` in double precision (for assay's own policies)."""
        entry = self.entries.get(tag)
        if entry is not None:
            for sense, _, p64 in entry.chain:
                if sense == subsumer:
                    return c_div(1.0, p64)
        return 0.0


def parse_sensemap(lines: Iterable[str]) -> SenseMap:
    """Build the sense map; any order of lines is read correctly."""
    smap = SenseMap()
    for number, line in enumerate(lines, start=1):
        entry = parse_sense_line(line, number)
        smap.entries.setdefault(entry.sense, entry)
    return smap


# ------------------------------------------------------------------------------ filter lists
def parse_instance_list(lines: Iterable[str], path: PathLike = "<instances>") -> frozenset:
    """Instance filter: ``lexelt instance`` pairs or bare instance ids, one per line."""
    items: set = set()
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) > 2:
            raise SensevalInputError(
                str(path), f"expected 'lexelt instance' or 'instance', got {line!r}", number)
        items.add(tuple(fields) if len(fields) == 2 else fields[0])
    return frozenset(items)


def parse_sense_list(lines: Iterable[str]) -> frozenset[str]:
    """Sense-tag filter: tags separated by white space, any number per line."""
    return frozenset(tag for line in lines for tag in line.split())
