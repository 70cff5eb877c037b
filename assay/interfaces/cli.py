"""The ``assay`` command line: ``evaluate``, ``label``, ``demo``, ``stratified``, ``senseval``.

Every user mistake (bad file, bad option, unusable store or output path) ends in one red line
naming the file, the row or the option and what was expected, and exit code 2 — never a
traceback, and never a password (every message goes through :func:`assay.errors.redact`).
Output paths are checked before the first label; outputs are written by :mod:`assay.outputs`
(``-`` is stdout). A closed stdout (``assay evaluate … | head -1``) ends quietly with code 0,
after the outputs are written. ``q`` in ``assay label`` stops calmly (code 0); Ctrl-C exits 130.

This module is the typer app (the ``assay`` entry point, ``python -m assay.interfaces.cli``) and
its commands; the options they share and their checks are in
:mod:`assay.interfaces.cli_options`, the run, its outputs and its table in
:mod:`assay.interfaces.cli_run`, the one-line errors in :mod:`assay.interfaces.cli_errors`.
"""
from __future__ import annotations

import os
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from assay.errors import AssayInputError
from assay.interfaces.cli_errors import OneLineGroup, err, finish, user_errors
from assay.interfaces.cli_options import (DESIGN_OPT, DesignName, EngineName, OnConflict,
                                          check_confidence, check_run, design_name,
                                          design_options, options_dict, run_options)
from assay.interfaces.cli_run import out, run, run_engine, stored_labels
from assay.outputs import STDOUT

app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  help="Label-efficient, unbiased estimates of precision, recall and F1.")


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
                                                "memory (auto, stratified, importance, oasis, "
                                                "passive without --replace; default auto); "
                                                "'spark' reads a Parquet file, "
                                                "glob or folder in a local Spark session "
                                                "started for the run (pyspark and Java 17+); "
                                                "default duckdb for a glob or a table, else "
                                                "memory.",
                                                show_default=False),
    *, design: Any, seed: Any, confidence: Any, store: Any, json_out: Any, report: Any,
    dataset: Any, id_col: Any, strata: Any, n_strata: Any, allocation: Any, epsilon: Any,
    defensive: Any, replace: Any, floors: Any,
) -> None:
    """Estimate precision, recall and F1 of POOL's predictions from BUDGET labels.

    A gold file with an 'annotator' column may hold several labels per item: the label is then
    the annotators' majority."""
    from assay.labels.sources import label_source, simulated_panel
    from assay.formats.pool import load_pool
    check_confidence(confidence)
    options = design_options(design, strata, n_strata, allocation, epsilon, defensive, replace,
                             floors)
    for option, rate in (("--fpr", fpr), ("--fnr", fnr)):
        if not 0.0 <= rate <= 1.0:
            raise AssayInputError(option, str(rate), expected="a rate in [0, 1]")
    check_run(seed, json_out, report)
    spec = str(pool)
    if engine in (EngineName.duckdb, EngineName.spark) or engine is None and (
            any(ch in spec for ch in "*?[") or ".duckdb:" in spec or ".db:" in spec):
        name = (engine or EngineName.duckdb).value
        if fpr or fnr or votes > 1:
            raise AssayInputError(f"--engine {name}", "--fpr/--fnr/--votes are not available "
                                  "on an engine yet", expected="a gold file alone")
        run_engine(spec, str(labels), design_name(design) or "auto", budget, seed,
                    confidence, store, json_out, report, dataset, annotator or "gold",
                    options, id_col or None, name)
        return
    p = load_pool(pool, id_columns=id_col or None)
    src = label_source(labels, p)
    if fpr or fnr or votes > 1:
        src = simulated_panel(src, votes, fpr, fnr, seed)
    run(p, src, design_name(design), budget, seed, confidence, store, json_out, report, dataset,
         annotator, options, id_col, on_conflict=on_conflict.value)


@app.command()
@user_errors
@run_options
def label(
    pool: Path = typer.Argument(..., help="Pool to label (Parquet/CSV)."),
    budget: int = typer.Option(100, min=1, help="Distinct labels to give."),
    annotator: Optional[str] = typer.Option(None, help="Your name (default: $USER)."),
    *, design: Any, seed: Any, confidence: Any, store: Any, json_out: Any, report: Any,
    dataset: Any, id_col: Any, strata: Any, n_strata: Any, allocation: Any, epsilon: Any,
    defensive: Any, replace: Any, floors: Any,
) -> None:
    """Label sampled items yourself: y = match, n = no match, s = skip, u = undo, q = quit."""
    from assay.campaign import default_dataset
    from assay.formats.pool import load_pool
    from assay.labels.terminal import QuitLabelling, TerminalAnnotator
    check_confidence(confidence)
    options = design_options(design, strata, n_strata, allocation, epsilon, defensive, replace,
                             floors)
    check_run(seed, json_out, report)
    p = load_pool(pool, id_columns=id_col or None)
    who = annotator or os.environ.get("USER") or "me"
    src = TerminalAnnotator(p, annotator=who, total=budget)
    dataset = dataset or default_dataset(p)
    try:
        run(p, src, design_name(design), budget, seed, confidence, store, json_out, report,
             dataset, who, options, id_col,
             progress=src.progress)
    except QuitLabelling as q:
        n = stored_labels(store, dataset, who, q.saved)
        err.print(Text(f"stopped: {n} label{'' if n == 1 else 's'} saved (dataset {dataset!r}, "
                       f"annotator {who!r}); "
                       "run the same command again to resume."), soft_wrap=True)
        raise typer.Exit(0) from None


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
    check_run(seed, None, report)
    data = resources.files("assay") / "data" / "amazon_google.parquet"
    with resources.as_file(data) as path:
        df = pd.read_parquet(path)
    pool = load_pool(df.drop(columns=["label"]))
    gold = df[["left_id", "right_id", "label"]]
    truth = truth_estimates(df["label"].to_numpy(), df["prediction"].to_numpy())
    (err if report is not None and str(report) == STDOUT else out).print(
        f"Amazon–Google: {len(df):,} candidate pairs, {int(df.label.sum())} true matches; "
        f"the gold labels play the annotator. Design: {design_name(design) or 'auto'}, "
        f"budget {budget}.")
    with tempfile.TemporaryDirectory() as tmp:
        run(pool, gold, design_name(design), budget, seed, 0.95, str(Path(tmp) / "demo.db"), None,
             report, "amazon_google", "gold", options_dict("csf", 30, "neyman", 0.1, False), None,
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
