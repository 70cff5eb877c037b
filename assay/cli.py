"""The ``assay`` command line: ``evaluate``, ``label``, ``demo``, ``stratified``, ``senseval``."""
from __future__ import annotations

import sys

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Label-efficient, unbiased estimates of precision, recall and F1.")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                               "help_option_names": []})
def senseval(ctx: typer.Context) -> None:
    """Senseval scorer2 (same arguments as the ``scorer2`` command)."""
    from assay.scorers.senseval import main as scorer_main
    raise typer.Exit(scorer_main(list(ctx.args)))


def _mount_stratified() -> None:
    try:
        from assay.stratified.cli import app as stratified_app
    except ImportError:  # pragma: no cover - module under construction
        return
    app.add_typer(stratified_app, name="stratified",
                  help="Stratified evaluation of many runs with assessor-error correction.")


_mount_stratified()


def main() -> None:
    app(prog_name="assay")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
