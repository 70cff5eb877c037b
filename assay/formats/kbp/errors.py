r"""The error every KBP reader raises: an :class:`~assay.errors.AssayInputError` naming file,
line and column (text quoted from a file stays on one line).

>>> str(KBPInputError("run.tab", "confidence '1.5' is out of range", line=3, column=8,
...                   expected="a number in (0, 1]"))
"run.tab, line 3, column 8: confidence '1.5' is out of range (expected a number in (0, 1])"
>>> str(KBPInputError("q.xml", "<b\nx> closed with </b>", line=2))
'q.xml, line 2: <b\\nx> closed with </b>'
"""
from __future__ import annotations

from pathlib import Path

from assay.errors import AssayInputError


class KBPInputError(AssayInputError):
    """A malformed TAC KBP Cold Start file (queries, submission, assessments, -queries list)."""

    def __init__(self, source: str, problem: str, *, line: int | None = None,
                 column: int | None = None, expected: str | None = None) -> None:
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column}")
        self.line, self.column = line, column
        one_line = problem.replace("\r", "\\r").replace("\n", "\\n")   # text quoted from a file
        super().__init__(source, one_line, where=", ".join(where) or None, expected=expected)


def read_text(path: str | Path) -> str:
    """A file's text (UTF-8), or a :class:`KBPInputError` naming it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KBPInputError(str(path), f"cannot read: {exc}") from None


__all__ = ["KBPInputError", "read_text"]
