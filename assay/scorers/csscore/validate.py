"""What CS-ValidateSF v1.9 checks, on the files ``cs-score`` reads: :func:`validate_files`.

Each query file is read (tags, entry points, IDs, slots); each submission or assessment file is
read line by line (column count, query ID syntax, slot names, run IDs, empty columns,
provenance syntax and offsets, value type, confidence in (0, 1], judgments, equivalence
classes), and with a document-length list (CS-ValidateSF's ``-docs``) every provenance document
must be known and every offset within its document. With query files, the answers are loaded
as ``cs-score`` loads them: every answer's query must be known (a hop-1 answer's parent answer on
an earlier line), and a line whose slot is not its query's is skipped with a warning. The first
problem raises :class:`~assay.formats.kbp.KBPInputError` naming file, line and column.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "run.tab")
>>> _ = open(p, "w").write("CSSF15_ENG_0458206f71\\tper:title\\trun1\\tD1:0-9\\tmayor\\tSTRING"
...                        "\\tD1:3-7\\t0.9\\n")
>>> validate_files([p]).files[0].lines
1
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

from assay.formats.kbp import SUBMISSION, read_doc_lengths, read_queries, read_responses

from .api import _files, _gc_paused
from .load import load


@dataclass(frozen=True)
class FileReport:
    """One file found well formed: its kind, its answer (or query) lines and run IDs."""

    path: str
    kind: str                   # "queries", "submission" or "assessment"
    lines: int
    runids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Validation:
    """Every file found well formed, and the warnings (lines the scorer skips)."""

    files: tuple[FileReport, ...]
    warnings: tuple[str, ...]


def validate_files(paths: Sequence[str], doc_lengths: Mapping[str, int] | None = None,
                   docs: str | None = None, expand: str | None = None) -> Validation:
    """Check query, submission and assessment files (``.xml`` files are queries); ``docs`` is
    a ``DOCID<TAB>LENGTH`` file (:func:`read_doc_lengths`), or give ``doc_lengths``."""
    if docs is not None:
        doc_lengths = read_doc_lengths(docs)
    with _gc_paused():
        query_files, response_files = _files(list(paths))
        reports = [FileReport(p, "queries", len(read_queries(p))) for p in query_files]
        for p in response_files:
            rs = read_responses(p, doc_lengths=doc_lengths)
            if not rs and os.path.getsize(p) > 0:
                load([], [p], None)         # the loader's own error for a file of blank lines
            kind = rs[0].kind if rs else SUBMISSION
            runids = tuple(sorted({r.runid for r in rs if r.runid is not None}))
            reports.append(FileReport(p, kind, len(rs), runids))
        warnings: list[str] = []
        if query_files and response_files:
            warnings = load(query_files, response_files, expand).warnings
    return Validation(tuple(reports), tuple(warnings))


__all__ = ["FileReport", "Validation", "validate_files"]
