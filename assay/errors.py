"""The one error hierarchy of assay.

* :class:`AssayError` — every error assay raises on purpose.
* :class:`AssayInputError` — the user's own mistake (a bad file, row, option or store): the CLI
  prints ``str(error)`` on one line and exits with code 2, never a traceback.
* :class:`LabelConflict` — a label source disagrees with labels already stored for the same
  items and annotator (an input error: the user chooses keep, replace or another annotator).
* :class:`StoreError` — the label store cannot be used as asked (also an input error: a foreign
  table, a schema it cannot migrate, a value too large for a column).
* :class:`EstimationError` — a statistical routine was called with arrays that break its
  contract (a programming error of the caller, not of the user).

>>> str(AssayInputError("pool.csv", "duplicate id '7'", where="line 9", expected="each id once"))
"pool.csv, line 9: duplicate id '7' (expected each id once)"
>>> str(AssayInputError("--prior: expected STRATUM=P, got 'x'"))
"--prior: expected STRATUM=P, got 'x'"
>>> issubclass(LabelConflict, AssayInputError) and issubclass(AssayInputError, AssayError)
True
"""
from __future__ import annotations

import re

_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)(?P<pw>[^@\s/]+)(?P<tail>@)")
# a secret passed as a URL query parameter (libpq's ?password=, tokens, keys)
_QUERY_SECRET = re.compile(r"(?P<head>[?&;](?:password|passwd|pwd|sslpassword|secret|token|"
                           r"access_token|api_key|apikey|key)=)(?P<pw>[^&;\s]+?)(?=[&;\s]|:\s|:?$)",
                           re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***`` (never print secrets).

    >>> redact("cannot open postgresql+psycopg://ann:s3cret@db:5432/x")
    'cannot open postgresql+psycopg://ann:***@db:5432/x'
    >>> redact("postgresql+psycopg://u@h:1/db?sslmode=off&password=S3cret: cannot open")
    'postgresql+psycopg://u@h:1/db?sslmode=off&password=***: cannot open'
    """
    text = _URL_PASSWORD.sub(lambda m: m.group("head") + "***" + m.group("tail"), str(text))
    return _QUERY_SECRET.sub(lambda m: m.group("head") + "***", text)


class AssayError(Exception):
    """Base class of every error assay raises on purpose."""


class AssayInputError(AssayError, ValueError):
    """Bad input: names the source (file, option or object), the row/line, and what was expected.

    The CLI prints ``str(error)`` on one line and exits with code 2, never a traceback.
    """

    def __init__(self, source: str, problem: str | None = None, *, where: str | None = None,
                 expected: str | None = None) -> None:
        self.source, self.problem, self.where, self.expected = source, problem, where, expected
        if problem is None:          # a message already naming its source
            super().__init__(redact(source))
            return
        parts = [source]
        if where:
            parts.append(where)
        msg = ", ".join(parts) + f": {problem}"
        if expected:
            msg += f" (expected {expected})"
        super().__init__(redact(msg))


class StoreError(AssayInputError):
    """The label store cannot be used as asked (foreign table, unmigratable schema, a value too
    large for a column). The message never contains a password."""


class LabelConflict(AssayInputError):
    """A label source disagrees with stored labels of the same items and annotator."""


class EstimationError(AssayError, ValueError):
    """Arrays passed to a statistical routine break its contract (shapes, ranges)."""


__all__ = ["AssayError", "AssayInputError", "EstimationError", "LabelConflict", "StoreError",
           "redact"]
