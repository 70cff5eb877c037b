"""A person at the terminal as the label source: shows the item's fields, reads y/n/s/u/q.

Item fields are shown literally (never read as rich markup: ``[/INST]`` or ``[red]x[/red]``
appear as typed; control characters are shown escaped, so a field cannot drive the terminal).
Before each item one line says where the run stands (``label 12 of 100 · F1 …``); there is no
live progress bar to interleave with the questions. ``q`` (or the end of input) stops calmly
with :class:`QuitLabelling`: every answer given is already in the label store.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.formats.pool import Pool
from assay.labels.sources import SKIP, UNDO, LabelSource

ANSWERS = {"y": 1, "yes": 1, "1": 1, "n": 0, "no": 0, "0": 0, "s": SKIP, "skip": SKIP,
           "u": UNDO, "undo": UNDO}
PROMPT = "match? [y]es / [n]o / [s]kip / [u]ndo / [q]uit: "


class QuitLabelling(Exception):
    """The person chose to stop (``q`` or end of input); ``saved`` labels were given in this
    session and are stored."""

    def __init__(self, saved: int) -> None:
        super().__init__(f"stopped after {saved} labels")
        self.saved = saved


def literal(value: Any) -> Text:
    """``value`` as plain text for the terminal: no markup, control characters escaped.

    >>> literal("[/INST] [red]x[/red]").plain
    '[/INST] [red]x[/red]'
    >>> literal("a\\x1b[31mb").plain
    'a\\\\x1b[31mb'
    """
    text = "".join(c if c in "\n\t" or unicodedata.category(c) != "Cc"
                   else c.encode("unicode_escape").decode("ascii") for c in str(value))
    return Text(text)


@dataclass
class TerminalAnnotator(LabelSource):
    """Asks at the keyboard: y (positive), n (negative), s (skip), u (undo the last), q (quit).

    :meth:`progress` (an ``evaluate`` progress callback) keeps the status line current."""

    pool: Pool
    annotator: str = "me"
    console: Console | None = None
    total: int | None = None
    done: int = 0
    status: str = ""
    answers: list[tuple[str, int]] = field(default_factory=list)

    @property
    def saved(self) -> int:
        """Labels (not skips) given in this session and not undone."""
        return sum(1 for _, v in self.answers if v in (0, 1))

    def progress(self, n: int, total: int, est: dict[str, Any]) -> None:
        """Record where the run stands: ``n`` of ``total`` labels, the current F1."""
        self.done, self.total = n, total
        f = est.get("f1")
        if f is not None and getattr(f, "defined", False):
            self.status = f"F1 {f.estimate:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]"
        elif f is not None:
            self.status = "F1 not yet defined"

    def label(self, index: int, key: str) -> int:
        con = self.console or Console()
        if self.total is not None:
            line = f"label {min(self.done + 1, self.total)} of {self.total}"
            con.print(Text(line + (f" · {self.status}" if self.status else ""), style="bold"))
        table = Table(show_header=False, title=literal(f"item {key!r}"))
        for k, v in self.pool.row(index).items():
            table.add_row(literal(k), literal(v))
        con.print(table)
        while True:
            try:
                ans = con.input(Text(PROMPT)).strip().lower()
            except EOFError:
                con.print()
                raise QuitLabelling(self.saved) from None
            if ans in ("q", "quit"):
                raise QuitLabelling(self.saved)
            if ans not in ANSWERS:
                con.print(Text("please answer y, n, s, u or q"))
                continue
            value = ANSWERS[ans]
            if value == UNDO:
                if not self.answers:
                    con.print(Text("nothing to undo: no answer given yet in this session"))
                    continue
                _, last = self.answers.pop()
                self.done -= last in (0, 1)
                return UNDO
            self.answers.append((key, value))
            self.done += value in (0, 1)
            return value


__all__ = ["ANSWERS", "PROMPT", "QuitLabelling", "TerminalAnnotator", "literal"]
