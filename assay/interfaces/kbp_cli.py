"""``assay kbp score | ondemand | validate``: TAC KBP Cold Start files (docs/csscore.md).

* ``score``: CS-Score v2.4.4's command line and output, byte for byte
  (:mod:`assay.scorers.csscore.cli`; ``assay kbp score -help`` lists its switches).
* ``ondemand``: per run, the official pooled score beside the on-demand estimate with its
  interval and the number of answers never assessed (:mod:`assay.scorers.csscore.ondemand`).
* ``validate``: what CS-ValidateSF checks (:mod:`assay.scorers.csscore.validate`).

Bad input (a file, line, column or option) is one line on stderr naming it, exit code 2, no
traceback, nothing written.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from assay.errors import AssayInputError
from assay.interfaces.cli_errors import OneLineGroup, user_errors
from assay.outputs import check_output, write_text

app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  help="TAC KBP Cold Start: the CS-Score scorer, on-demand scoring, validation.")
_PASS = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
FILES = typer.Argument(..., help="Query files (*.xml), assessment files and run files, in the "
                       "order cs-score loads them")


@app.command(context_settings=_PASS)
def score(ctx: typer.Context) -> None:
    """CS-Score v2.4.4: the arguments of the cs-score command (-help lists them)."""
    from assay.scorers.csscore.cli import main as cs_main
    args = list(ctx.args)
    if args[:1] == ["--help"]:          # as the other assay commands; cs-score's own is -help
        args[0] = "-help"
    raise typer.Exit(cs_main(args))


def _unit_interval(value: float, option: str) -> float:
    if not 0 < value < 1:
        raise AssayInputError(f"{option} {value}: expected a number between 0 and 1")
    return value


@app.command()
@user_errors
def ondemand(files: List[str] = FILES,
             store: str = typer.Option(..., "--store", help="Label store: SQLite path or "
                                       "SQLAlchemy URL"),
             campaign: str = typer.Option(..., "--campaign", help="Campaign name (made if new)"),
             gold: Optional[Path] = typer.Option(None, "--gold", help="Labels of instances the "
                                                 "pool did not assess: QUERYID, slot, filler, "
                                                 "provenance, 0|1 (tab-separated)"),
             half_width: float = typer.Option(0.05, "--half-width"),
             confidence: float = typer.Option(0.90, "--confidence"),
             seed: int = typer.Option(0, "--seed", min=0),
             never_assessed: Optional[str] = typer.Option(None, "--never-assessed",
                                                          help="Write each run's answers never "
                                                          "assessed here (run, file, line, "
                                                          "instance)"),
             expand: Optional[str] = typer.Option(None, "--expand", help="as cs-score's -expand"),
             queries: Optional[str] = typer.Option(None, "--queries",
                                                   help="as cs-score's -queries")) -> None:
    """Per run: pooled score beside the on-demand estimate, interval, never-assessed count."""
    from assay.labels.store import LabelStore
    from assay.ondemand import OnDemandCampaign
    from assay.scorers.csscore.model import Options
    from assay.scorers.csscore.ondemand import format_comparison, read_runs, score_on_demand
    from assay.scorers.csscore.ondemand_cli import _gold_labels, read_gold

    _unit_interval(half_width, "--half-width")
    _unit_interval(confidence, "--confidence")
    if never_assessed:
        check_output(never_assessed, "--never-assessed")
    gold_labels = read_gold(str(gold)) if gold else {}
    runs = read_runs(files, Options(expand=expand), queries)
    labels = LabelStore(store)
    try:
        camp = OnDemandCampaign.open(labels, campaign)
    except AssayInputError:
        camp = OnDemandCampaign.create(labels, campaign, half_width=half_width,
                                       confidence=confidence, seed=seed)
    rows = score_on_demand(camp, runs, _gold_labels(gold_labels, str(gold) if gold else None))
    if never_assessed:
        write_text(never_assessed, "".join(
            f"{r.runid}\t{u.source}\t{u.line}\t{u.key}\n" for r in rows for u in r.never_assessed),
            "--never-assessed")
    sys.stdout.write(format_comparison(rows))


@app.command()
@user_errors
def validate(files: List[str] = FILES,
             docs: Optional[str] = typer.Option(None, "--docs", help="DOCID<TAB>LENGTH lines: "
                                                "every provenance document known, every offset "
                                                "within it (CS-ValidateSF's -docs)"),
             expand: Optional[str] = typer.Option(None, "--expand",
                                                  help="as cs-score's -expand")) -> None:
    """CS-ValidateSF's checks: a bad line is one error naming file, line, column (exit 2)."""
    from assay.scorers.csscore.validate import validate_files

    result = validate_files(files, docs=docs, expand=expand)
    for w in result.warnings:
        sys.stderr.write(f"WARNING: {w}\n")
    for f in result.files:
        runs = f", runs {', '.join(f.runids)}" if f.runids else ""
        sys.stdout.write(f"{f.path}: {f.lines} {f.kind} lines{runs}: OK\n"
                         if f.kind != "queries" else f"{f.path}: {f.lines} queries: OK\n")
