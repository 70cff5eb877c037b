"""The ``assay`` command line: ``evaluate``, ``label``, ``demo``, ``stratified``, ``senseval``.

Every user mistake (bad file, bad option, unusable store or output path) ends in one red line
naming the file, the row or the option and what was expected, and exit code 2 — never a
traceback, and never a password (every message goes through :func:`assay.errors.redact`).
Output paths are checked before the first label; outputs are written by :mod:`assay.outputs`
(``-`` is stdout). A closed stdout (``assay evaluate … | head -1``) ends quietly with code 0,
after the outputs are written. ``q`` in ``assay label`` stops calmly (code 0); Ctrl-C exits 130.
"""
from __future__ import annotations

import inspect
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

from assay.designs.settings import DesignSettings, ImportanceSettings, OasisSettings
from assay.errors import AssayInputError, redact
from assay.interfaces.cli_errors import OneLineGroup, StdoutConsole, err, finish, user_errors
from assay.outputs import STDOUT, check_output, write_text

SEED_MAX = 2 ** 63 - 1
out = StdoutConsole()

app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  help="Label-efficient, unbiased estimates of precision, recall and F1.")


class DesignName(str, Enum):
    auto = "auto"
    passive = "passive"
    stratified = "stratified"
    importance = "importance"
    oasis = "oasis"


class StrataName(str, Enum):
    csf = "csf"
    equal = "equal"


class AllocationName(str, Enum):
    neyman = "neyman"
    proportional = "proportional"


class EngineName(str, Enum):
    memory = "memory"
    duckdb = "duckdb"
    spark = "spark"


class OnConflict(str, Enum):
    fail = "fail"
    keep = "keep"
    replace = "replace"


def _progress_runner(budget: int) -> tuple[Progress, Callable[..., None]]:
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


def _print_result(result: Any, truth: dict[str, float] | None = None,
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
    beside = [f"{m} {e.extra['design_estimate']:.4f} [{e.extra['design_interval'][0]:.4f}, "
              f"{e.extra['design_interval'][1]:.4f}]" for m, e in result.estimates.items()
              if e.defined and "design_estimate" in e.extra]
    if beside:
        con.print(Text("design-based, without the model: " + ", ".join(beside)))
    notes = {e.note for e in result.estimates.values() if e.defined and e.note}
    for n in sorted(notes):
        con.print(Text.assemble(("note:", "yellow"), " ", redact(n)))
    con.print(Text(trust_line(result.estimates)))


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
        return "the intervals rest on the sampling design alone; the assumption-free ones are "\
               "its exact, wider, counterparts"
    return "; ".join(f"* {', '.join(ms)} assume{'s' if len(ms) == 1 else ''} {a}"
                     for a, ms in by.items()) + ": if that may fail here, trust the "\
        "assumption-free interval"


def _design(design: Optional[DesignName]) -> str | None:
    return design.value if design is not None else None


def _options(strata: str, n_strata: int, allocation: str, epsilon: float | None,
             replace: bool, design: str | None = None,
             defensive: float | None = None) -> dict[str, Any]:
    """The settings of every design from the command's options (each design keeps its own:
    :func:`assay.designs.settings.settings_from_options`); ``--epsilon`` is OASIS's ε when the
    design is OASIS, importance's otherwise, and None leaves each design's default."""
    opts = {"strata": strata, "n_strata": n_strata, "allocation": allocation,
            "epsilon": epsilon, "replace": replace}
    if design == "oasis":
        opts.update(oasis_epsilon=epsilon, defensive=defensive)
    return opts


def _checked(option: str, settings: type[DesignSettings], field: str, value: Any) -> None:
    """``value`` through the check of the settings that own ``field`` (the one place for the
    ranges, :mod:`assay.designs.settings`), its error re-raised naming the command's option.

    >>> _checked("--epsilon", ImportanceSettings, "epsilon", 0.5)
    >>> _checked("--epsilon", ImportanceSettings, "epsilon", 2.0)
    Traceback (most recent call last):
    assay.errors.AssayInputError: --epsilon: 2.0 (expected a number in (0, 1])
    """
    if value is None:
        return
    try:
        settings(**{field: value})
    except AssayInputError as exc:
        raise AssayInputError(option, str(value), expected=exc.expected) from None


def design_options(design: Optional[DesignName], strata: StrataName, n_strata: int,
                   allocation: AllocationName, epsilon: Optional[float],
                   defensive: Optional[float], replace: bool) -> dict[str, Any]:
    """The design options of ``evaluate`` and ``label`` checked (by the settings: ``--epsilon``
    as OASIS's ε with ``--design oasis``, else importance's; ``--defensive`` only with
    ``--design oasis``; ``--n-strata`` ≥ 1 by its typer option) and turned into the options
    dict of :func:`_options`."""
    name = _design(design)
    _checked("--epsilon", OasisSettings if name == "oasis" else ImportanceSettings, "epsilon",
             epsilon)
    _checked("--defensive", OasisSettings, "defensive", defensive)
    if defensive is not None and name != "oasis":
        raise AssayInputError("--defensive", f"{defensive} with --design {name or 'auto'}",
                              expected="--design oasis")
    return _options(strata.value, n_strata, allocation.value, epsilon, replace, name, defensive)


def _check_run(seed: int, json_out: Optional[Path], report: Optional[Path]) -> None:
    """Options and output paths that would fail late: checked before any file is read."""
    if not 0 <= seed <= SEED_MAX:
        raise AssayInputError("--seed", str(seed), expected="an integer in [0, 2^63 − 1]")
    if json_out is not None and report is not None and str(json_out) == str(report) == STDOUT:
        raise AssayInputError("--report -", "stdout is already taken by --json -",
                              expected="at most one output written to '-'")
    for option, path in (("--json", json_out), ("--report", report)):
        if path is not None:
            check_output(path, option)


def _run(pool: Any, labels: Any, design: str | None, budget: int, seed: int,
         confidence: float, store: str, json_out: Optional[Path], report: Optional[Path],
         dataset: str | None, annotator: Optional[str], options: dict[str, Any],
         id_cols: list[str] | None, truth: dict[str, float] | None = None,
         progress: Callable[..., None] | None = None, on_conflict: str = "fail") -> Any:
    """Evaluate, write the outputs, then print the table (to stderr when stdout carries an
    output): a closed stdout cannot cost the outputs."""
    from assay.evaluation import evaluate
    from assay.interfaces.report import write_report
    _check_run(seed, json_out, report)
    if progress is None:
        prog, update = _progress_runner(budget)
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
    _print_result(result, truth, err if to_stdout else out)
    return result


# options shared by ``evaluate`` and ``label``
DESIGN_OPT = typer.Option(None, help="Sampling design (default: auto when the pool has a score "
                                      "or probability column, else passive).",
                          show_default=False)
SEED_OPT = typer.Option(0, help="Seed of the random generator (0 to 2^63 − 1).")
CONFIDENCE_OPT = typer.Option(0.95, help="Confidence level of the intervals.")
STORE_OPT = typer.Option("assay.db", help="Label store: SQLite path or SQLAlchemy URL.")
JSON_OPT = typer.Option(None, "--json", help="Write the estimates as JSON ('-': stdout).")
REPORT_OPT = typer.Option(None, help="Write a self-contained HTML report ('-': stdout).")
DATASET_OPT = typer.Option(None, help="Name under which labels are stored (default: the "
                                      "pool's file name without extension).",
                           show_default=False)
ID_OPT = typer.Option(None, "--id", help="Id column of the pool; repeat for several "
                                         "(--id doc --id sec).")


STRATA_OPT = typer.Option(StrataName.csf, help="Stratified and OASIS: 'csf' or 'equal' strata.")
N_STRATA_OPT = typer.Option(30, min=1, help="Stratified and OASIS: number of strata.")
ALLOCATION_OPT = typer.Option(AllocationName.neyman, help="Stratified: 'neyman' or "
                                                          "'proportional'.")
EPSILON_OPT = typer.Option(None, help="Importance and OASIS: weight of the uniform mixture "
                                      f"(default {ImportanceSettings.epsilon} for importance, "
                                      f"{OasisSettings.epsilon} for OASIS).", show_default=False)
DEFENSIVE_OPT = typer.Option(None, help="OASIS: share d of v* taken from the prior's static "
                                        "v*_0, in [0, 1), so no weight exceeds 1/d of the prior "
                                        f"design's (default {OasisSettings.defensive}; 0 is the "
                                        "published algorithm).", show_default=False)
REPLACE_OPT = typer.Option(False, help="Passive: sample with replacement.")

# keyword-only parameter name → (annotation, typer option): what ``run_options`` declares
SHARED_OPTIONS: dict[str, tuple[Any, Any]] = {
    "design": (Optional[DesignName], DESIGN_OPT), "seed": (int, SEED_OPT),
    "confidence": (float, CONFIDENCE_OPT), "store": (str, STORE_OPT),
    "json_out": (Optional[Path], JSON_OPT), "report": (Optional[Path], REPORT_OPT),
    "dataset": (Optional[str], DATASET_OPT), "id_col": (Optional[list[str]], ID_OPT),
    "strata": (StrataName, STRATA_OPT), "n_strata": (int, N_STRATA_OPT),
    "allocation": (AllocationName, ALLOCATION_OPT), "epsilon": (Optional[float], EPSILON_OPT),
    "defensive": (Optional[float], DEFENSIVE_OPT), "replace": (bool, REPLACE_OPT)}


def run_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``fn``'s keyword-only parameters named like the options every labelling command
    shares (:data:`SHARED_OPTIONS`: design, seed, confidence, store, json, report, dataset, id,
    and the design options checked by :func:`design_options`) their typer options: typer reads
    a command's options from its signature, and this way they are declared once."""
    shared = SHARED_OPTIONS
    sig = inspect.signature(fn)
    params = [p.replace(annotation=shared[p.name][0], default=shared[p.name][1])
              if p.kind is p.KEYWORD_ONLY and p.name in shared else p
              for p in sig.parameters.values()]
    fn.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    fn.__annotations__.update({name: ann for name, (ann, _) in shared.items()
                               if name in sig.parameters})
    return fn


@app.command()
@user_errors
@run_options
def evaluate(
    pool: Path = typer.Argument(..., help="Pool: Parquet/CSV with id column(s), prediction, "
                                          "and optionally score/probability."),
    labels: Path = typer.Option(..., "--labels", help="Gold file (id + label) playing the "
                                                      "annotator."),
    budget: int = typer.Option(1000, min=1, help="Distinct labels to use."),
    annotator: Optional[str] = typer.Option(None, help="Whose labels these are."),
    fpr: float = typer.Option(0.0, help="Simulate an annotator with this false-positive rate."),
    fnr: float = typer.Option(0.0, help="Simulate an annotator with this false-negative rate."),
    votes: int = typer.Option(1, min=1, help="Simulate a panel of this many independent "
                                             "annotators (with --fpr/--fnr); the label is "
                                             "their majority."),
    on_conflict: OnConflict = typer.Option(OnConflict.fail, help="When the gold file "
                                           "disagrees with stored labels: fail, keep the "
                                           "stored ones, or replace them."),
    engine: Optional[EngineName] = typer.Option(None, help="Where the pool is read: 'duckdb' "
                                                "reads Parquet (a file, a glob, or "
                                                "FILE.duckdb:TABLE) where it lies, with bounded "
                                                "memory (auto, stratified, importance, passive; "
                                                "default auto); 'spark' reads a Parquet file, "
                                                "glob or folder in a local Spark session "
                                                "started for the run (pyspark and Java 17+); "
                                                "default duckdb for a glob or a table, else "
                                                "memory.",
                                                show_default=False),
    *, design: Any, seed: Any, confidence: Any, store: Any, json_out: Any, report: Any,
    dataset: Any, id_col: Any, strata: Any, n_strata: Any, allocation: Any, epsilon: Any,
    defensive: Any, replace: Any,
) -> None:
    """Estimate precision, recall and F1 of POOL's predictions from BUDGET labels.

    A gold file with an 'annotator' column may hold several labels per item: the label is then
    the annotators' majority."""
    from assay.labels.sources import label_source, simulated_panel
    from assay.formats.pool import load_pool
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", str(confidence), expected="a number in (0, 1)")
    options = design_options(design, strata, n_strata, allocation, epsilon, defensive, replace)
    for option, rate in (("--fpr", fpr), ("--fnr", fnr)):
        if not 0.0 <= rate <= 1.0:
            raise AssayInputError(option, str(rate), expected="a rate in [0, 1]")
    _check_run(seed, json_out, report)
    spec = str(pool)
    if engine in (EngineName.duckdb, EngineName.spark) or engine is None and (
            any(ch in spec for ch in "*?[") or ".duckdb:" in spec or ".db:" in spec):
        name = (engine or EngineName.duckdb).value
        if fpr or fnr or votes > 1:
            raise AssayInputError(f"--engine {name}", "--fpr/--fnr/--votes are not available "
                                  "on an engine yet", expected="a gold file alone")
        _run_engine(spec, str(labels), _design(design) or "auto", budget, seed,
                    confidence, store, json_out, report, dataset, annotator or "gold",
                    options, id_col or None, name)
        return
    p = load_pool(pool, id_columns=id_col or None)
    src = label_source(labels, p)
    if fpr or fnr or votes > 1:
        src = simulated_panel(src, votes, fpr, fnr, seed)
    _run(p, src, _design(design), budget, seed, confidence, store, json_out, report, dataset,
         annotator, options, id_col, on_conflict=on_conflict.value)


def _run_engine(spec: str, labels: str, design: str, budget: int, seed: int,
                confidence: float, store: str, json_out: Optional[Path], report: Optional[Path],
                dataset: str | None, annotator: str, options: dict[str, Any],
                id_cols: list[str] | None, engine: str = "duckdb") -> None:
    """``evaluate`` on the DuckDB engine, or on Spark in a local session started for the run
    (assay.engines.run, assay.engines.spark_local): bars for the long passes and the labels,
    then the same outputs and table as :func:`_run`."""
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
        prog, update = _progress_runner(budget)
        eng.progress = PassBars(err, enabled=show, progress=prog)
        with prog:
            result = evaluate_on_engine(eng, labels, design, budget, seed, confidence, store,
                                        dataset, annotator, options, progress=update)
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_dict(), indent=2) + "\n", "--json")
    if report is not None:
        write_report(result, report, None)
    _print_result(result, None, err if STDOUT in (str(json_out), str(report)) else out)


@app.command()
@user_errors
@run_options
def label(
    pool: Path = typer.Argument(..., help="Pool to label (Parquet/CSV)."),
    budget: int = typer.Option(100, min=1, help="Distinct labels to give."),
    annotator: Optional[str] = typer.Option(None, help="Your name (default: $USER)."),
    *, design: Any, seed: Any, confidence: Any, store: Any, json_out: Any, report: Any,
    dataset: Any, id_col: Any, strata: Any, n_strata: Any, allocation: Any, epsilon: Any,
    defensive: Any, replace: Any,
) -> None:
    """Label sampled items yourself: y = match, n = no match, s = skip, u = undo, q = quit."""
    from assay.campaign import default_dataset
    from assay.formats.pool import load_pool
    from assay.labels.terminal import QuitLabelling, TerminalAnnotator
    if not 0.0 < confidence < 1.0:
        raise AssayInputError("--confidence", str(confidence), expected="a number in (0, 1)")
    options = design_options(design, strata, n_strata, allocation, epsilon, defensive, replace)
    _check_run(seed, json_out, report)
    p = load_pool(pool, id_columns=id_col or None)
    who = annotator or os.environ.get("USER") or "me"
    src = TerminalAnnotator(p, annotator=who, total=budget)
    dataset = dataset or default_dataset(p)
    try:
        _run(p, src, _design(design), budget, seed, confidence, store, json_out, report,
             dataset, who, options, id_col,
             progress=src.progress)
    except QuitLabelling as q:
        n = _stored_labels(store, dataset, who, q.saved)
        err.print(Text(f"stopped: {n} label{'' if n == 1 else 's'} saved (dataset {dataset!r}, "
                       f"annotator {who!r}); "
                       "run the same command again to resume."), soft_wrap=True)
        raise typer.Exit(0) from None


def _stored_labels(store: str, dataset: str, who: str, fallback: int) -> int:
    """How many labels ``who`` has in the store for ``dataset`` (``fallback`` if unknown)."""
    try:
        from assay.labels.store import LabelStore
        return len(LabelStore(store).labels(dataset, who))
    except Exception:  # noqa: BLE001 - only a count for a message
        return fallback


@app.command()
@user_errors
def demo(
    budget: int = typer.Option(1000, min=1, help="Distinct labels to use."),
    design: Optional[DesignName] = DESIGN_OPT,
    seed: int = typer.Option(0, help="Seed (0 to 2^63 − 1)."),
    report: Optional[Path] = typer.Option(None, help="Write the HTML report here."),
) -> None:
    """Evaluate the real Amazon–Google ER pool and print the estimates beside the truth."""
    import pandas as pd

    from assay.evaluation import truth_estimates
    from assay.formats.pool import load_pool
    _check_run(seed, None, report)
    data = resources.files("assay") / "data" / "amazon_google.parquet"
    with resources.as_file(data) as path:
        df = pd.read_parquet(path)
    pool = load_pool(df.drop(columns=["label"]))
    gold = df[["left_id", "right_id", "label"]]
    truth = truth_estimates(df["label"].to_numpy(), df["prediction"].to_numpy())
    (err if report is not None and str(report) == STDOUT else out).print(
        f"Amazon–Google: {len(df):,} candidate pairs, {int(df.label.sum())} true matches; "
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
app.add_typer(__import__("assay.interfaces.campaign_cli", fromlist=["app"]).app, name="campaign")
app.add_typer(__import__("assay.interfaces.serve_cli", fromlist=["app"]).app, name="serve")
app.add_typer(__import__("assay.interfaces.kbp_cli", fromlist=["app"]).app, name="kbp")


def main() -> None:
    finish(app, "assay")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
