"""Reading TREC runs, qrels, document lists and sample files; writing SAMPLE.tsv atomically.

Formats (docs/stratified.md):

* run: ``topic Q0 docno rank score runid`` — six whitespace-separated fields per line;
* qrels: ``topic 0 docno rel`` with rel 1 (relevant), 0 (not relevant), −1 (unassessable);
* collection: one docno per line (blank lines ignored);
* sample: tab-separated with header ``docno  stratum  inclusion_probability  topic``
  (``topic`` may be omitted for a single topic).

Every problem raises :class:`AssayInputError` whose message names the file, the line and what was
expected; the CLI prints it as one line and exits with code 2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from assay.errors import AssayInputError
from assay.outputs import write_text

__all__ = ["read_runs", "read_collection", "read_qrels", "read_sample",
           "SampleRow", "write_sample", "atomic_write_text", "Runs"]


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    path = Path(path)
    if not path.exists():
        raise AssayInputError(f"{path}: file not found")
    if path.is_dir():
        raise AssayInputError(f"{path}: is a directory, expected a file")
    try:
        with open(path, encoding="utf-8") as fh:
            for i, line in enumerate(fh, 1):
                yield i, line.rstrip("\n").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise AssayInputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise AssayInputError(f"{path}: cannot read ({exc.strerror})") from None


@dataclass
class Runs:
    """``returned[topic][runid]`` = set of docnos; ``order`` = run ids in first-seen order;
    ``where[(topic, runid, docno)]`` = (file, line) for error messages."""
    returned: dict[str, dict[str, set[str]]]
    order: list[str]
    where: dict[tuple[str, str, str], tuple[str, int]]

    def topics(self) -> list[str]:
        return sorted(self.returned)


def read_runs(paths: Iterable[Path]) -> Runs:
    """TREC run files; a run id may not appear in two files, a docno twice in one topic."""
    returned: dict[str, dict[str, set[str]]] = {}
    order: list[str] = []
    owner: dict[str, str] = {}
    where: dict[tuple[str, str, str], tuple[str, int]] = {}
    paths = list(paths)
    if not paths:
        raise AssayInputError("no run files given (expected --runs RUN ...)")
    for path in paths:
        seen_any = False
        for i, line in _lines(path):
            if not line.strip():
                continue
            f = line.split()
            if len(f) != 6:
                raise AssayInputError(f"{path}:{i}: expected 6 fields 'topic Q0 docno rank score runid',"
                                 f" got {len(f)}")
            topic, _, docno, rank, score, runid = f
            try:
                int(rank)
            except ValueError:
                raise AssayInputError(f"{path}:{i}: expected an integer rank, got {rank!r}") from None
            try:
                float(score)
            except ValueError:
                raise AssayInputError(f"{path}:{i}: expected a numeric score, got {score!r}") from None
            if owner.setdefault(runid, str(path)) != str(path):
                raise AssayInputError(f"{path}:{i}: run id {runid!r} already used in {owner[runid]}")
            if runid not in order:
                order.append(runid)
            docs = returned.setdefault(topic, {}).setdefault(runid, set())
            if docno in docs:
                f0, l0 = where[(topic, runid, docno)]
                raise AssayInputError(f"{path}:{i}: docno {docno!r} returned twice by run {runid!r} "
                                 f"for topic {topic} (first at line {l0})")
            docs.add(docno)
            where[(topic, runid, docno)] = (str(path), i)
            seen_any = True
        if not seen_any:
            raise AssayInputError(f"{path}: empty run file (expected lines 'topic Q0 docno rank "
                             "score runid')")
    return Runs(returned, order, where)


def read_collection(path: Path) -> list[str]:
    """One docno per line; duplicates and embedded whitespace are errors."""
    docs: list[str] = []
    seen: dict[str, int] = {}
    for i, line in _lines(path):
        d = line.strip()
        if not d:
            continue
        if len(d.split()) != 1:
            raise AssayInputError(f"{path}:{i}: expected one docno per line, got {line!r}")
        if d in seen:
            raise AssayInputError(f"{path}:{i}: duplicate docno {d!r} (first at line {seen[d]})")
        seen[d] = i
        docs.append(d)
    if not docs:
        raise AssayInputError(f"{path}: empty collection (expected one docno per line)")
    return docs


def read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], dict[tuple[str, str], int]]:
    """``topic 0 docno rel`` with rel in {−1, 0, 1}; returns (qrels, line numbers)."""
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    for i, line in _lines(path):
        if not line.strip():
            continue
        f = line.split()
        if len(f) != 4:
            raise AssayInputError(f"{path}:{i}: expected 4 fields 'topic 0 docno rel', got {len(f)}")
        topic, _, docno, rel = f
        if rel not in ("-1", "0", "1"):
            raise AssayInputError(f"{path}:{i}: expected rel -1, 0 or 1, got {rel!r}")
        r = int(rel)
        prev = qrels.setdefault(topic, {}).get(docno)
        if prev is not None and prev != r:
            raise AssayInputError(f"{path}:{i}: docno {docno!r} topic {topic} judged {r} here but "
                             f"{prev} at line {lines[(topic, docno)]}")
        qrels[topic][docno] = r
        lines.setdefault((topic, docno), i)
    return qrels, lines


@dataclass(frozen=True)
class SampleRow:
    """One row of SAMPLE.tsv / ADJ.tsv."""
    docno: str
    stratum: str
    inclusion_probability: float
    topic: str
    line: int = 0

    def to_dict(self) -> dict:
        return {"docno": self.docno, "stratum": self.stratum,
                "inclusion_probability": self.inclusion_probability, "topic": self.topic}


REQUIRED = ("docno", "stratum", "inclusion_probability")


def read_sample(path: Path, default_topic: str | None = None) -> list[SampleRow]:
    """SAMPLE.tsv: header with docno, stratum, inclusion_probability [, topic]."""
    rows: list[SampleRow] = []
    header: list[str] | None = None
    seen: dict[tuple[str, str], int] = {}
    for i, line in _lines(path):
        if not line.strip():
            continue
        f = line.split("\t")
        if header is None:
            header = [h.strip() for h in f]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise AssayInputError(f"{path}:{i}: expected a tab-separated header with columns "
                                 f"docno, stratum, inclusion_probability[, topic]; missing "
                                 f"{', '.join(missing)}")
            continue
        if len(f) != len(header):
            raise AssayInputError(f"{path}:{i}: expected {len(header)} tab-separated fields, "
                             f"got {len(f)}")
        rec = dict(zip(header, (x.strip() for x in f)))
        try:
            prob = float(rec["inclusion_probability"])
        except ValueError:
            prob = float("nan")
        if not (math.isfinite(prob) and 0 < prob <= 1):
            raise AssayInputError(f"{path}:{i}: expected an inclusion_probability in (0, 1], got "
                             f"{rec['inclusion_probability']!r}")
        topic = rec.get("topic") or default_topic
        if topic is None:
            raise AssayInputError(f"{path}:{i}: no topic column; pass runs with a single topic")
        key = (topic, rec["docno"])
        if key in seen:
            raise AssayInputError(f"{path}:{i}: docno {rec['docno']!r} listed twice for topic {topic} "
                             f"(first at line {seen[key]})")
        seen[key] = i
        if not rec["docno"] or not rec["stratum"]:
            raise AssayInputError(f"{path}:{i}: expected a non-empty docno and stratum")
        rows.append(SampleRow(rec["docno"], rec["stratum"], prob, topic, i))
    if header is None:
        raise AssayInputError(f"{path}: empty file (expected a header docno, stratum, "
                         "inclusion_probability, topic)")
    return rows


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (:func:`assay.outputs.write_text`)."""
    write_text(path, text)


def write_sample(path: Path, rows: Iterable[SampleRow]) -> None:
    """SAMPLE.tsv / ADJ.tsv with columns docno, stratum, inclusion_probability, topic."""
    out = ["docno\tstratum\tinclusion_probability\ttopic"]
    for r in rows:
        out.append(f"{r.docno}\t{r.stratum}\t{float(r.inclusion_probability)!r}\t{r.topic}")
    atomic_write_text(path, "\n".join(out) + "\n")
