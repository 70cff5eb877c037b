"""Progress bars for an engine's long passes (rich): one bar per pass, driven by the engine's
``progress(what, fraction)`` hook (DuckDB's query progress), written to stderr.

>>> from rich.console import Console
>>> bars = PassBars(Console(file=open("/dev/null", "w")), enabled=False)
>>> bars("score histogram", 0.5); bars("score histogram", None); bars.done
['score histogram']
"""
from __future__ import annotations

import threading
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn


class PassBars:
    """A callable ``(what, fraction | None)``: a bar per pass, completed when ``None`` comes."""

    def __init__(self, console: Console, enabled: bool = True,
                 progress: Progress | None = None) -> None:
        """``progress``: a live :class:`rich.progress.Progress` to add the bars to (rich shows
        one live display at a time; its columns may read a ``f1`` field, set empty here)."""
        self._own = progress is None
        self.progress = progress or Progress(
            TextColumn("[bold]{task.description}"), BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"), TimeElapsedColumn(), console=console,
            transient=False, disable=not enabled)
        self._task: TaskID | None = None
        self._lock = threading.Lock()
        self.done: list[str] = []

    def __call__(self, what: str, fraction: float | None) -> None:
        with self._lock:
            if fraction is None:
                if self._task is not None:
                    self.progress.update(self._task, completed=100)
                    self._task = None
                self.done.append(what)
                return
            if self._task is None:
                self._task = self.progress.add_task(what, total=100, f1="% of the pass")
            self.progress.update(self._task, completed=100 * fraction)

    def __enter__(self) -> "PassBars":
        if self._own:
            self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._own:
            self.progress.stop()


__all__ = ["PassBars"]
