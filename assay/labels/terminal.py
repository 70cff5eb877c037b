"""A person at the terminal as the label source: shows the item's fields, reads y/n/s/u/q."""
from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from assay.labels.sources import SKIP, UNDO, LabelSource
from assay.formats.pool import Pool

ANSWERS = {"y": 1, "yes": 1, "1": 1, "n": 0, "no": 0, "0": 0, "s": SKIP, "skip": SKIP,
           "u": UNDO, "undo": UNDO}


@dataclass
class TerminalAnnotator(LabelSource):
    """Asks at the keyboard: y (positive), n (negative), s (skip), u (undo the last), q (quit)."""

    pool: Pool
    annotator: str = "me"
    console: Console | None = None

    def label(self, index: int, key: str) -> int:
        con = self.console or Console()
        table = Table(show_header=False, title=f"item {key!r}")
        for k, v in self.pool.row(index).items():
            table.add_row(str(k), str(v))
        con.print(table)
        while True:
            try:
                ans = input("match? [y]es / [n]o / [s]kip / [u]ndo / [q]uit: ").strip().lower()
            except EOFError:
                raise KeyboardInterrupt from None
            if ans in ("q", "quit"):
                raise KeyboardInterrupt
            if ans in ANSWERS:
                return ANSWERS[ans]
            con.print("please answer y, n, s, u or q")
