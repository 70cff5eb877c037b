"""Connections to the label store's database and the helpers every store class shares:
an engine per SQLite path or URL (WAL, busy timeout, ``BEGIN IMMEDIATE``), retry while SQLite
says "locked", database errors as one-line :class:`~assay.errors.StoreError` messages with
passwords hidden, and the claim tokens by which processes on one store tell live claims from
dead ones. Used by :mod:`assay.labels.store`, :mod:`assay.ondemand.store`, the service's jobs
and migrations.

>>> engine_for("sqlite://").dialect.name
'sqlite'
>>> claim_dead("no-such-host:1:abc")     # another host's claim is never taken for dead
False
"""
from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from assay.errors import AssayError, StoreError, redact

SQLITE_BUSY_SECONDS = 120
CLAIM_SECONDS = 3600.0          # a pending claim older than this is taken over
T = TypeVar("T")


def engine_for(store: str | Path) -> Engine:
    """An engine for a SQLite path or a SQLAlchemy URL.

    SQLite: WAL, a busy timeout, and every transaction ``BEGIN IMMEDIATE`` (a writer waits for
    the lock instead of failing on a lock upgrade) — what several processes on one file need.
    """
    text_ = str(store)
    url = text_ if "://" in text_ else f"sqlite:///{Path(text_).expanduser()}"
    try:
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_SECONDS}
                               if url.startswith("sqlite") else {})
    except Exception as exc:  # noqa: BLE001 - bad URL or missing driver: a user error
        raise StoreError(redact(text_), f"cannot open label store: {exc}") from None
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn.isolation_level = None      # transactions are begun below
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")
            retry_locked(lambda: cur.execute("PRAGMA journal_mode=WAL"))
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    return engine


def retry_locked(fn: Callable[[], T], seconds: float = SQLITE_BUSY_SECONDS) -> T:
    """``fn()``, retried while SQLite says the database is locked (switching a fresh file to WAL
    does not always wait on the busy handler)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - sqlite3.OperationalError or SQLAlchemy's
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def store_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Database errors become one-line :class:`StoreError` messages (passwords hidden)."""
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        try:
            return fn(self, *args, **kwargs)
        except AssayError:
            raise
        except SQLAlchemyError as exc:
            detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
            raise StoreError(redact(str(self.location)), f"label store error: {detail}") from None
    return wrapper


def claim_token() -> str:
    """This process's claim token: host, process id and a random suffix."""
    import os
    import socket
    import uuid
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim_dead(token: str | None) -> bool:
    """True when ``token``'s process ran on this host and is gone."""
    import os
    import socket
    try:
        host, pid, _ = str(token).rsplit(":", 2)
        if host != socket.gethostname()[:40]:
            return False
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (ValueError, PermissionError, OSError):
        return False
    return False


__all__ = ["CLAIM_SECONDS", "SQLITE_BUSY_SECONDS", "claim_dead", "claim_token", "engine_for",
           "retry_locked", "store_errors"]
