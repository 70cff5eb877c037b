"""The ``assay`` command line: ``evaluate``, ``label``, ``demo``, ``stratified``, ``senseval``.

Every user mistake (bad file, bad option) ends in one red line naming the file, the row and
what was expected, and exit code 2 — never a traceback.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from assay.errors import AssayInputError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Label-efficient, unbiased estimates of precision, recall and F1.")
err = Console(stderr=True)
out = Console()


class DesignName(str, Enum):
    auto = "auto"
    passive = "passive"
    stratified = "stratified"
    importance = "importance"
    oasis = "oasis"


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn an :class:`AssayInputError` into one line on stderr and exit code 2."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AssayInputError as exc:
            err.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err.print("interrupted: every label obtained so far is in the store; run the same "
                      "command again to resume.")
            raise typer.Exit(130) from None
    return wrapper


def _progress_runner(budget: int) -> tuple[Progress, Callable[..., None]]:
    prog = Progress(TextColumn("[bold]labels"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[f1]}"), TimeElapsedColumn(), console=err,
                    transient=False, disable=not err.is_terminal and "ASSAY_PROGRESS" not in
                    os.environ)
    task = prog.add_task("labels", total=budget, f1="F1 …")

    def update(n: int, total: int, est: dict[str, Any]) -> None:
        f = est["f1"]
        text = (f"F1 {f.estimate:.3f} [{f.ci_low:.3f}, {f.ci_high:.3f}]" if f.defined
                else "F1 undefined yet")
        prog.update(task, completed=n, f1=text)
    return prog, update


def _print_result(result: Any, truth: dict[str, float] | None = None) -> None:
    t = Table(title=f"{result.design} design · {result.labels_used} labels "
                    f"({result.new_labels} new, {result.reused_labels} reused) · "
                    f"{result.confidence:.0%} intervals")
    t.add_column("measure")
    t.add_column("estimate", justify="right")
    t.add_column("interval", justify="right")
    t.add_column("method")
    if truth:
        t.add_column("truth", justify="right")
    for m in ("precision", "recall", "f1"):
        e = result.estimates[m]
        row = [m, f"{e.estimate:.4f}" if e.defined else "—",
               f"[{e.ci_low:.4f}, {e.ci_high:.4f}]" if e.defined else "—",
               e.method if e.defined else e.note]
        if truth:
            row.append(f"{truth[m]:.4f}")
        t.add_row(*row)
    out.print(t)
    beside = [f"{m} {e.extra['design_estimate']:.4f} [{e.extra['design_interval'][0]:.4f}, "
              f"{e.extra['design_interval'][1]:.4f}]" for m, e in result.estimates.items()
              if e.defined and "design_estimate" in e.extra]
    if beside:
        out.print("design-based, without the model: " + ", ".join(beside), highlight=False)
    notes = {e.note for e in result.estimates.values() if e.defined and e.note}
    for n in sorted(notes):
        out.print(f"[yellow]note:[/] {n}", highlight=False)


def _design(design: Optional[DesignName]) -> str | None:
    return design.value if design is not None else None


def _write_json(result: Any, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _options(strata: str, n_strata: int, allocation: str, epsilon: float,
             replace: bool) -> dict[str, Any]:
    return {"strata": strata, "n_strata": n_strata, "allocation": allocation,
            "epsilon": epsilon, "replace": replace}


def _run(pool: Any, labels: Any, design: str, budget: int, seed: int, confidence: float,
         store: str, json_out: Optional[Path], report: Optional[Path], dataset: str,
         annotator: Optional[str], options: dict[str, Any], id_cols: list[str] | None,
         truth: dict[str, float] | None = None) -> Any:
    from assay.evaluation import evaluate
    from assay.interfaces.report import write_report
    for p in (json_out, report):
        if p is not None and not p.parent.exists():
            raise AssayInputError(str(p), "its folder does not exist")
    prog, update = _progress_runner(budget)
    with prog:
        result = evaluate(pool, labels, design=design, budget=budget, seed=seed,
                          confidence=confidence, store=store, dataset=dataset,
                          annotator=annotator, options=options, progress=update,
                          id_columns=id_cols)
    _print_result(result, truth)
    if json_out is not None:
        _write_json(result, json_out)
    if report is not None:
        write_report(result, report, truth)
    return result

# options shared by ``evaluate`` and ``label``
DESIGN_OPT = typer.Option(None, help="Sampling design (default: auto when the pool has a score "
                                      "or probability column, else passive).",
                          show_default=False)
SEED_OPT = typer.Option(0, help="Seed of the random generator.")
CONFIDENCE_OPT = typer.Option(0.95, help="Confidence level of the intervals.")
STORE_OPT = typer.Option("assay.db", help="Label store: SQLite path or SQLAlchemy URL.")
JSON_OPT = typer.Option(None, "--json", help="Write the estimates as JSON.")
REPORT_OPT = typer.Option(None, help="Write a self-contained HTML report.")
DATASET_OPT = typer.Option("default", help="Name under which labels are stored.")
ID_OPT = typer.Option(None, "--id", help="Id column(s) of the pool.")


@app.command()
@user_errors
def evaluate(
    pool: Path = typer.Argument(..., help="Pool: Parquet/CSV with id column(s), prediction, "
                                          "and optionally score/probability."),
    labels: Path = typer.Option(..., "--labels", help="Gold file (id + label) playing the "
                                                      "annotator."),
    design: Optional[DesignName] = DESIGN_OPT,
    budget: int = typer.Option(1000, min=1, help="Distinct labels to use."),
    seed: int = SEED_OPT,
    confidence: float = CONFIDENCE_OPT,
    store: str = STORE_OPT,
    json_out: Optional[Path] = JSON_OPT,
    report: Optional[Path] = REPORT_OPT,
    dataset: str = DATASET_OPT,
    annotator: Optional[str] = typer.Option(None, help="Whose labels these are."),
    id_col: Optional[list[str]] = ID_OPT,
    strata: str = typer.Option("csf", help="Stratified: 'csf' or 'equal' strata."),
    n_strata: int = typer.Option(30, help="Stratified: number of strata."),
    allocation: str = typer.Option("neyman", help="Stratified: 'neyman' or 'proportional'."),
    epsilon: float = typer.Option(0.1, help="Importance: weight of the uniform mixture."),
    replace: bool = typer.Option(False, help="Passive: sample with replacement."),
    fpr: float = typer.Option(0.0, help="Simulate an annotator with this false-positive rate."),
    fnr: float = typer.Option(0.0, help="Simulate an annotator with this false-negative rate."),
    votes: int = typer.Option(1, min=1, help="Simulate a panel of this many independent "
                                             "annotators (with --fpr/--fnr); the label is "
                                             "their majority."),
) -> None:
    """Estimate precision, recall and F1 of POOL's predictions from BUDGET labels.

    A gold file with an 'annotator' column may hold several labels per item: the label is then
    the annotators' majority."""
    from assay.labels.sources import label_source, simulated_panel
    from assay.formats.pool import load_pool
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", str(confidence), expected="a number in (0, 1)")
    p = load_pool(pool, id_columns=id_col or None)
    src = label_source(labels, p)
    if fpr or fnr or votes > 1:
        src = simulated_panel(src, votes, fpr, fnr, seed)
    _run(p, src, _design(design), budget, seed, confidence, store, json_out, report, dataset,
         annotator, _options(strata, n_strata, allocation, epsilon, replace), id_col)


@app.command()
@user_errors
def label(
    pool: Path = typer.Argument(..., help="Pool to label (Parquet/CSV)."),
    design: Optional[DesignName] = DESIGN_OPT,
    budget: int = typer.Option(100, min=1, help="Distinct labels to give."),
    seed: int = SEED_OPT,
    confidence: float = CONFIDENCE_OPT,
    store: str = STORE_OPT,
    json_out: Optional[Path] = JSON_OPT,
    report: Optional[Path] = REPORT_OPT,
    dataset: str = DATASET_OPT,
    annotator: Optional[str] = typer.Option(None, help="Your name (default: $USER)."),
    id_col: Optional[list[str]] = ID_OPT,
) -> None:
    """Label sampled items yourself: y = match, n = no match, s = skip, u = undo, q = quit."""
    from assay.formats.pool import load_pool
    from assay.labels.terminal import TerminalAnnotator
    p = load_pool(pool, id_columns=id_col or None)
    who = annotator or os.environ.get("USER") or "me"
    src = TerminalAnnotator(p, annotator=who)
    _run(p, src, _design(design), budget, seed, confidence, store, json_out, report, dataset, who,
         _options("csf", 30, "neyman", 0.1, False), id_col)


@app.command()
@user_errors
def demo(
    budget: int = typer.Option(1000, min=1, help="Distinct labels to use."),
    design: Optional[DesignName] = DESIGN_OPT,
    seed: int = typer.Option(0, help="Seed."),
    report: Optional[Path] = typer.Option(None, help="Write the HTML report here."),
) -> None:
    """Evaluate the real Amazon–Google ER pool and print the estimates beside the truth."""
    import pandas as pd

    from assay.evaluation import truth_estimates
    from assay.formats.pool import load_pool
    data = resources.files("assay") / "data" / "amazon_google.parquet"
    with resources.as_file(data) as path:
        df = pd.read_parquet(path)
    pool = load_pool(df.drop(columns=["label"]))
    gold = df[["left_id", "right_id", "label"]]
    truth = truth_estimates(df["label"].to_numpy(), df["prediction"].to_numpy())
    out.print(f"Amazon–Google: {len(df):,} candidate pairs, {int(df.label.sum())} true matches; "
              f"the gold labels play the annotator. Design: {_design(design) or 'auto'}, "
              f"budget {budget}.")
    with tempfile.TemporaryDirectory() as tmp:
        _run(pool, gold, _design(design), budget, seed, 0.95, str(Path(tmp) / "demo.db"), None,
             report, "amazon_google", "gold", _options("csf", 30, "neyman", 0.1, False), None,
             truth)


def _mount_extensions() -> None:
    try:
        from assay.interfaces.stratified_cli import app as stratified_app
    except ImportError:  # pragma: no cover - optional module missing
        stratified_app = None
    if stratified_app is not None:
        app.add_typer(stratified_app, name="stratified",
                      help="Stratified evaluation of many runs with assessor-error correction.")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                               "help_option_names": []})
def senseval(ctx: typer.Context) -> None:
    """Senseval scorer2 (same arguments as the ``scorer2`` command)."""
    from assay.scorers.senseval import main as scorer_main
    raise typer.Exit(scorer_main(list(ctx.args)))


_mount_extensions()


def main() -> None:
    app(prog_name="assay")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
