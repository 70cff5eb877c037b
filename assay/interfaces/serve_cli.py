"""``assay serve``: the on-demand evaluation service (:mod:`assay.service`) on a label store.

``assay serve [--store PATH|URL] [--host H] [--port P]`` migrates the service's tables (Alembic)
and serves the pages and the API with uvicorn, a background worker running the jobs.
``assay serve user NAME --role ROLE [--team T]`` adds a user (the password is read from the
``ASSAY_PASSWORD`` environment variable or asked for, never taken on the command line);
``assay serve token NAME`` prints a new API token for a user (only its hash is kept);
``assay serve revoke-sessions NAME`` logs a user out everywhere; ``assay serve migrate`` only
migrates. Bad input is one line, exit 2.
"""
from __future__ import annotations

import os
from typing import Optional

import typer

from assay.errors import AssayInputError
from assay.interfaces.cli_errors import OneLineGroup, StdoutConsole, user_errors

app = typer.Typer(cls=OneLineGroup, add_completion=False, invoke_without_command=True,
                  help="The on-demand evaluation service: submissions, annotation, scores.")
out = StdoutConsole()
STORE = typer.Option("assay.db", "--store", help="Label store: SQLite path or SQLAlchemy URL")
SUB_STORE = typer.Option(None, "--store", help="Label store (default: the one given to serve)")


def _store(store: str):  # type: ignore[no-untyped-def]
    try:
        from assay.service import migrate
    except ImportError as exc:
        raise AssayInputError("assay serve", f"the service's packages are missing ({exc.name})",
                              expected="pip install 'assay[service]'") from None
    from assay.labels.store import LabelStore
    labels = LabelStore(store)
    migrate.upgrade(labels.engine)
    return labels


@app.callback()
@user_errors
def serve(ctx: typer.Context, store: str = STORE,
          host: str = typer.Option("127.0.0.1", "--host"),
          port: int = typer.Option(8000, "--port", min=0, max=65535),
          workers: bool = typer.Option(True, "--worker/--no-worker",
                                       help="Run the jobs in this process"),
          secure: bool = typer.Option(False, "--secure-cookies",
                                      help="Cookies over HTTPS only (behind a TLS proxy)"),
          undo_seconds: float = typer.Option(
              60.0, "--undo-seconds", min=0.0,
              help="How long a decision stays open to its annotator's undo before the jobs "
                   "use it")
          ) -> None:
    """Serve the pages and the API (or run a sub-command)."""
    ctx.obj = store
    if ctx.invoked_subcommand is not None:
        return
    labels = _store(store)
    import uvicorn

    from assay.service.app import create_app
    out.print(f"assay service on http://{host}:{port} (store {labels.location})")
    uvicorn.run(create_app(labels, worker=workers, secure_cookies=secure,
                           undo_seconds=float(undo_seconds)), host=host, port=port,
                log_level="warning")


@app.command()
@user_errors
def migrate(ctx: typer.Context, store: Optional[str] = SUB_STORE) -> None:
    """Create or migrate the service's tables, then stop."""
    _store(store or ctx.obj)
    out.print("service tables are current")


@app.command()
@user_errors
def user(ctx: typer.Context, name: str = typer.Argument(..., help="Login name"),
         role: str = typer.Option(..., "--role", help="admin | submitter | annotator"),
         team: Optional[str] = typer.Option(None, "--team", help="A submitter's team"),
         store: Optional[str] = SUB_STORE) -> None:
    """Add a user (password from $ASSAY_PASSWORD, or asked)."""
    from assay.service.auth import add_user
    password = os.environ.get("ASSAY_PASSWORD") or typer.prompt("password", hide_input=True,
                                                                confirmation_prompt=True)
    add_user(_store(store or ctx.obj).engine, name, role, password, team)
    out.print(f"user {name!r} added ({role})")


@app.command()
@user_errors
def token(ctx: typer.Context, name: str = typer.Argument(..., help="Login name"),
          label: Optional[str] = typer.Option(None, "--label"),
          store: Optional[str] = SUB_STORE) -> None:
    """Make an API token for a user and print it (shown once; only its hash is kept)."""
    from assay.service.auth import new_token, user_by_name
    engine = _store(store or ctx.obj).engine
    u = user_by_name(engine, name)
    if u is None:
        raise AssayInputError("user", f"no user {name!r}", expected="a user added with "
                              "'assay serve user'")
    out.print(new_token(engine, u, label)[1])


@app.command("revoke-sessions")
@user_errors
def revoke_sessions(ctx: typer.Context, name: str = typer.Argument(...),
                    store: Optional[str] = SUB_STORE) -> None:
    """Log a user out everywhere (their sessions are revoked server-side)."""
    from assay.service.auth import revoke_sessions as revoke
    out.print(f"{revoke(_store(store or ctx.obj).engine, name)} sessions revoked")


__all__ = ["app"]
