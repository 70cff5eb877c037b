"""What ``evaluate``, ``label`` and ``demo`` share once their options are checked
(:mod:`assay.interfaces.cli_options`): the run itself, in memory (:func:`run`) or on an engine
(:func:`run_engine`), with a progress bar of the labels; its outputs (``--json``, ``--report``,
written before the table so a closed stdout cannot cost them); and the estimates' table, with
the line that says which interval to trust (:func:`trust_line`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Optional

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from assay.errors import redact
from assay.interfaces.cli_errors import StdoutConsole, err
from assay.interfaces.cli_options import check_run
from assay.outputs import STDOUT, write_text

out = StdoutConsole()


def progress_runner(budget: int) -> tuple[Progress, Callable[..., None]]:
    prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[f1]}"), TimeElapsedColumn(), console=err,
                    transient=False, redirect_stdout=False, redirect_stderr=False,
                    disable=not err.is_terminal and "ASSAY_PROGRESS" not in os.environ)
    task = prog.add_task("labels", total=budget, f1="F1 …")

    def update(n: int, total: int, est: dict[str, Any]) -> None:
        f = est["f1"]
        text = (f"F1 {f.estimate:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]" if f.defined
                else "F1 undefined yet")
        prog.update(task, completed=n, f1=text)
    return prog, update


def print_result(result: Any, truth: dict[str, float] | None = None,
                  con: Console | None = None) -> None:
    con = con or out
    t = Table(title=Text(f"{result.design} design · {result.labels_used} labels "
                         f"({result.new_labels} new, {result.reused_labels} reused) · "
                         f"{result.confidence:.0%} intervals"))
    for c in ("measure", "estimate", "interval", "method", "assumption-free") + (
            ("truth",) if truth else ()):
        t.add_column(c, justify="left" if c in ("measure", "method") else "right")
    for m in ("precision", "recall", "f1"):
        e = result.estimates[m]
        free = e.assumption_free if e.defined else None
        row = [m, f"{e.estimate:.4f}" if e.defined else "—",
               f"[{e.ci_low:.4f}, {e.ci_high:.4f}]" if e.defined else "—",
               (e.method + (" *" if e.assumes else "")) if e.defined else e.note,
               f"[{free[0]:.4f}, {free[1]:.4f}]" if free else "—"]
        if truth:
            row.append(f"{truth[m]:.4f}")
        t.add_row(*(Text(str(c)) for c in row))
    con.print(t)
    for line in beside_lines(result.estimates):
        con.print(Text(line))
    notes = {e.note for e in result.estimates.values() if e.defined and e.note}
    for n in sorted(notes):
        con.print(Text.assemble(("note:", "yellow"), " ", redact(n)))
    con.print(Text(trust_line(result.estimates)))


def beside_lines(estimates: dict[str, Any]) -> list[str]:
    """The design-based estimates printed beside model-based ones, grouped by what they
    assume: they do without the model, not without an assumption (on amazon_google at 375 and
    1,000 labels they covered recall in 0.80-0.81 of runs, F1 in 0.78-0.81: its deep strata
    hold matches that none of their labels showed; bench/out/s30_design_beside.md).

    >>> from assay.core.types import Estimate
    >>> e = Estimate("recall", 0.0, 0.5, 0.4, 0.6, 0.05, 0.95, "model", extra={
    ...     "design_estimate": 0.55, "design_interval": (0.5, 0.6),
    ...     "design_assumes": "the deep strata hold none"})
    >>> beside_lines({"recall": e})
    ['design-based, without the model but assuming the deep strata hold none: recall 0.5500 [0.5000, 0.6000]']
    """
    by: dict[str | None, list[str]] = {}
    for m, e in estimates.items():
        if e.defined and "design_estimate" in e.extra:
            lo, hi = e.extra["design_interval"]
            by.setdefault(e.extra.get("design_assumes"), []).append(
                f"{m} {e.extra['design_estimate']:.4f} [{lo:.4f}, {hi:.4f}]")
    return [("design-based, without the model" + (f" but assuming {a}" if a else "") + ": "
             + ", ".join(v)) for a, v in by.items()]


def trust_line(estimates: dict[str, Any]) -> str:
    """The one line that says which interval to trust (issue 11, must-have 6).

    >>> from assay.core.types import Estimate
    >>> e = Estimate("recall", 0.0, 0.5, 0.4, 0.6, 0.05, 0.95, "model", assumes="the model",
    ...              assumption_free=(0.1, 0.7))
    >>> trust_line({"recall": e})
    '* recall assumes the model: if that may fail here, trust the assumption-free interval'
    """
    by: dict[str, list[str]] = {}
    for m, e in estimates.items():
        if e.defined and e.assumes:
            by.setdefault(e.assumes, []).append(m)
    if not by:
        return "the intervals rest on the sampling design alone; the assumption-free ones "\
               "bound the same measures exactly, without the design's approximations"
    return "; ".join(f"* {', '.join(ms)} assume{'s' if len(ms) == 1 else ''} {a}"
                     for a, ms in by.items()) + ": if that may fail here, trust the "\
        "assumption-free interval"


def run(pool: Any, labels: Any, design: str | None, budget: int, seed: int,
         confidence: float, store: str, json_out: Optional[Path], report: Optional[Path],
         dataset: str | None, annotator: Optional[str], options: dict[str, Any],
         id_cols: list[str] | None, truth: dict[str, float] | None = None,
         progress: Callable[..., None] | None = None, on_conflict: str = "fail") -> Any:
    """Evaluate, write the outputs, then print the table (to stderr when stdout carries an
    output): a closed stdout cannot cost the outputs."""
    from assay.evaluation import evaluate
    from assay.interfaces.report import write_report
    check_run(seed, json_out, report)
    if progress is None:
        prog, update = progress_runner(budget)
    else:
        prog, update = Progress(disable=True), progress
    with prog:
        result = evaluate(pool, labels, design=design, budget=budget, seed=seed,
                          confidence=confidence, store=store, dataset=dataset,
                          annotator=annotator, options=options, progress=update,
                          id_columns=id_cols, on_conflict=on_conflict)
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_dict(), indent=2) + "\n", "--json")
    if report is not None:
        write_report(result, report, truth)
    to_stdout = STDOUT in (str(json_out), str(report))
    print_result(result, truth, err if to_stdout else out)
    return result


def run_engine(spec: str, labels: str, design: str, budget: int, seed: int,
                confidence: float, store: str, json_out: Optional[Path], report: Optional[Path],
                dataset: str | None, annotator: str, options: dict[str, Any],
                id_cols: list[str] | None, engine: str = "duckdb") -> None:
    """``evaluate`` on the DuckDB engine, or on Spark in a local session started for the run
    (assay.engines.run, assay.engines.spark_local): bars for the long passes and the labels,
    then the same outputs and table as :func:`run`."""
    from contextlib import nullcontext
    from assay.engines.duck import open_pool
    from assay.engines.progress import PassBars
    from assay.engines.run import evaluate_on_engine
    from assay.engines.spark_local import spark_pool
    from assay.interfaces.report import write_report
    show = err.is_terminal or "ASSAY_PROGRESS" in os.environ
    opened = spark_pool(spec, id_cols) if engine == "spark" else nullcontext(
        open_pool(spec, id_cols))
    with opened as eng:
        prog, update = progress_runner(budget)
        eng.progress = PassBars(err, enabled=show, progress=prog)
        with prog:
            result = evaluate_on_engine(eng, labels, design, budget, seed, confidence, store,
                                        dataset, annotator, options, progress=update)
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_dict(), indent=2) + "\n", "--json")
    if report is not None:
        write_report(result, report, None)
    print_result(result, None, err if STDOUT in (str(json_out), str(report)) else out)


def stored_labels(store: str, dataset: str, who: str, fallback: int) -> int:
    """How many labels ``who`` has in the store for ``dataset`` (``fallback`` if unknown)."""
    try:
        from assay.labels.store import LabelStore
        return len(LabelStore(store).labels(dataset, who))
    except Exception:  # noqa: BLE001 - only a count for a message
        return fallback


__all__ = ["out", "print_result", "progress_runner", "run", "run_engine", "stored_labels",
           "trust_line"]
