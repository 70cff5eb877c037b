"""How the ``assay`` command line fails: one line, the right exit code, never a traceback and
never a secret.

* :func:`handle` maps any exception out of a command to one redacted line on stderr and an
  exit code: a user's mistake (:class:`~assay.errors.AssayInputError`, a store URL whose host,
  login or file cannot be used, an OS error on a named file) exits 2; a closed stdout
  (``| head``) exits 0 quietly; Ctrl-C exits 130; anything else is an internal error, exit 1
  (``ASSAY_DEBUG=1`` shows its traceback).
* :func:`user_errors` wraps each command with :func:`handle`.
* :class:`OneLineGroup` prints click's usage errors (a bad option value) as one line, exit 2.
* :class:`StdoutConsole` ends quietly when its reader is gone.
* :func:`finish` runs the app as the console entry point and flushes stdout quietly.
"""
from __future__ import annotations

import functools
import os
import sys
from typing import Any, Callable, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from assay.errors import AssayInputError, redact

try:   # typer >= 0.20 vendors click
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover - older typer on the installed click
    from click.exceptions import ClickException, NoArgsIsHelpError

err = Console(stderr=True)


def _line(text: str) -> str:
    """One line, no secret."""
    return " ".join(redact(text).split())


def _error(text: str, code: int = 2) -> NoReturn:
    try:
        err.print(Text.assemble(("error: ", "bold red"), _line(text)), soft_wrap=True)
    except BrokenPipeError:     # stderr closed too: nothing more to say
        pass
    raise typer.Exit(code)


def _store_fault(exc: BaseException) -> bool:
    """A database error that comes from the store URL or file: host, login, permissions."""
    names = {c.__name__ for c in type(exc).__mro__}
    mods = {c.__module__.split(".")[0] for c in type(exc).__mro__}
    return bool(mods & {"sqlalchemy", "psycopg", "psycopg2", "sqlite3"}) and bool(
        names & {"OperationalError", "InterfaceError", "ArgumentError", "NoSuchModuleError",
                 "DatabaseError"})


def _quiet_stdout() -> None:
    """The reader of stdout is gone (``| head``): send what is left to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a test runner's in-memory stdout
        pass


class StdoutConsole(Console):
    """A rich console whose closed stdout ends the command quietly with code 0 (rich's own
    reaction is exit code 1)."""

    def on_broken_pipe(self) -> None:
        _quiet_stdout()
        raise typer.Exit(0)


def handle(exc: BaseException) -> NoReturn:
    """Turn any exception out of a command into one line and an exit code."""
    if isinstance(exc, AssayInputError):
        _error(str(exc))
    if isinstance(exc, BrokenPipeError):
        _quiet_stdout()
        raise typer.Exit(0)
    if isinstance(exc, KeyboardInterrupt):
        err.print("interrupted: every label obtained so far is in the store; run the same "
                  "command again to resume.")
        raise typer.Exit(130)
    if _store_fault(exc):
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _error(f"cannot use the label store: {detail}")
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}")
    if os.environ.get("ASSAY_DEBUG"):
        raise exc
    _error(f"internal error ({type(exc).__name__}: {exc}); please report it (ASSAY_DEBUG=1 "
           "shows the traceback)", 1)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Every exception out of ``fn`` becomes one redacted line and an exit code
    (:func:`handle`)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except BaseException as exc:  # noqa: BLE001 - the last line of defence
            if isinstance(exc, (SystemExit, GeneratorExit)):
                raise
            handle(exc)
    return wrapper


class OneLineGroup(TyperGroup):
    """Click's usage errors (a bad option value, an unknown option) as one line, exit 2."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:
            err.print(Text(exc.format_message()))
            code = 2
        except ClickException as exc:
            where = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "assay"
            code = _exit_code(_error, f"{exc.format_message()} (see '{where} --help')",
                              exc.exit_code)
        except typer.Exit as exc:
            code = exc.exit_code
        except BaseException as exc:  # noqa: BLE001 - Abort, or anything a command let through
            if isinstance(exc, SystemExit):
                raise
            code = _exit_code(handle, exc)
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


def _exit_code(fn: Callable[..., Any], *args: Any) -> int:
    """The exit code ``fn(*args)`` ends with (it raises :class:`typer.Exit`)."""
    try:
        fn(*args)
    except typer.Exit as exc:
        return exc.exit_code
    return 0  # pragma: no cover


def finish(app: typer.Typer, prog_name: str) -> NoReturn:
    """Run ``app`` as a console script; a stdout closed before the last flush is no error."""
    try:
        app(prog_name=prog_name)
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    sys.exit(code)


__all__ = ["OneLineGroup", "StdoutConsole", "err", "finish", "handle", "user_errors"]
