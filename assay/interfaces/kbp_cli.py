"""``assay kbp score | ondemand | validate``: TAC KBP Cold Start files (docs/csscore.md).

* ``score``: CS-Score v2.4.4's command line and output (:mod:`assay.scorers.csscore.cli`).
"""
from __future__ import annotations

import typer

from assay.interfaces.cli_errors import OneLineGroup

app = typer.Typer(cls=OneLineGroup, add_completion=False, no_args_is_help=True,
                  help="TAC KBP Cold Start: the CS-Score scorer, on-demand scoring, validation.")
_PASS = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}


@app.command(context_settings=_PASS)
def score(ctx: typer.Context) -> None:
    """CS-Score v2.4.4 (same arguments as the ``cs-score`` command)."""
    from assay.scorers.csscore.cli import main as cs_main
    raise typer.Exit(cs_main(list(ctx.args)))
