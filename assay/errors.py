"""The one error type a user sees for their own mistakes (bad files, bad options)."""
from __future__ import annotations


class AssayInputError(ValueError):
    """Bad input: names the source (file or object), the row/line, and what was expected.

    The CLI prints ``str(error)`` on one line and exits with code 2, never a traceback.
    """

    def __init__(self, source: str, problem: str, *, where: str | None = None,
                 expected: str | None = None) -> None:
        self.source, self.problem, self.where, self.expected = source, problem, where, expected
        parts = [source]
        if where:
            parts.append(where)
        msg = ", ".join(parts) + f": {problem}"
        if expected:
            msg += f" (expected {expected})"
        super().__init__(msg)
