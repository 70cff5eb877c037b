"""A campaign's locks (issue 15), taken inside a write transaction and held to its end. On
SQLite every write transaction begins ``IMMEDIATE`` and the writes are serial already: these
take nothing there. On PostgreSQL they are transaction-scoped advisory locks keyed by the
campaign's name:

* the *queue lock* (:func:`queue_lock`, exclusive): a serve (:func:`assay.service.queue.next_item`),
  a document's lease and every exhaustive write, a clear;
* the *flag lock*: taken shared by a vote or an undo before it reads the annotator's flag
  (:func:`flag_lock_shared`), exclusive by a flag's write or clear (:func:`flag_lock`, after
  the queue lock), so no vote lands after a flag's write and votes wait neither for one
  another nor for the serves.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import text

PG_QUEUE_LOCK = 0x61737171          # "assq"
PG_FLAG_LOCK = 0x61737166           # "assf": votes (shared) against a flag's write


def queue_lock(conn: Any, campaign: str) -> None:
    """Serialise a campaign's queue writes on PostgreSQL (SQLite's write transactions begin
    IMMEDIATE and are serial already)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:a, hashtext(:c))"),
                     {"a": PG_QUEUE_LOCK, "c": campaign})


def flag_lock_shared(conn: Any, campaign: str) -> None:
    """On PostgreSQL, the campaign's flag lock taken shared, by a vote or an undo before it
    reads the annotator's flag: votes wait neither for one another (the queue row's ``FOR
    UPDATE`` orders the votes of an item) nor for the serves, but a flag's write
    (:func:`flag_lock`) waits for the votes under way and they wait for it. SQLite's write
    transactions are serial already."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock_shared(:a, hashtext(:c))"),
                     {"a": PG_FLAG_LOCK, "c": campaign})


def flag_lock(conn: Any, campaign: str) -> None:
    """The locks of a flag's write or clear (:func:`assay.service.flags.check`,
    :func:`assay.service.resettle.clear`): the campaign's queue lock (:func:`queue_lock`: the
    serves and the exhaustive writes) and, on PostgreSQL, its flag lock exclusive (the votes,
    :func:`flag_lock_shared`), in that order."""
    queue_lock(conn, campaign)
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:a, hashtext(:c))"),
                     {"a": PG_FLAG_LOCK, "c": campaign})


__all__ = ["PG_FLAG_LOCK", "PG_QUEUE_LOCK", "flag_lock", "flag_lock_shared", "queue_lock"]
