"""Create or migrate the service's tables with Alembic, run programmatically (the scripts are in
``assay/service/migrations``; no alembic.ini), inside one transaction that holds the store's
write lock: SQLite ``BEGIN IMMEDIATE`` (:func:`assay.labels.connection.engine_for`), PostgreSQL an
advisory lock, so several server processes may start on one store at once.

The same transaction creates the on-demand campaigns' tables the service reads
(:func:`assay.ondemand.schema.ensure_ondemand_schema`: missing tables and columns only), so a
label store of a release before them — or one only ever used by ``assay evaluate`` — is ready
for the service after :func:`upgrade` (``assay serve migrate``), not only once a page is served.
(The label store's own schema, judgments and their indexes, is migrated when it is opened:
:func:`assay.labels.schema.ensure_schema`.)
"""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Engine

from assay.labels.connection import retry_locked
from assay.ondemand.schema import ensure_ondemand_schema

SCRIPTS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "assay_svc_alembic"
_PG_LOCK = 0x61737376   # "assv"


def _config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPTS))
    return cfg


def head() -> str:
    """The newest revision shipped."""
    return str(ScriptDirectory.from_config(_config()).get_current_head())


def current(engine: Engine) -> str | None:
    """The revision the store is at (None: no service tables yet)."""
    with engine.connect() as conn:
        return MigrationContext.configure(
            conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Bring the service's tables to ``revision`` (and create the on-demand tables that are
    missing); returns the revision found before."""
    def attempt() -> str | None:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
            ensure_ondemand_schema(conn)
            before = MigrationContext.configure(
                conn, opts={"version_table": VERSION_TABLE}).get_current_revision()
            if before != head() or revision != "head":
                cfg = _config()
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
            return before
    return retry_locked(attempt)


__all__ = ["current", "head", "upgrade"]
