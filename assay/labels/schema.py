"""The label store's schema, its version table and the migrations from older layouts.

Version 1 keeps judgments and statuses apart: a *judgment* is a value (0/1 or a graded value)
given by an annotator in a :class:`Role` to an item of a dataset; *skipped*, *unassessable* and
*pending* are a :class:`Status` with no value — never a −1 in a value column. Every table is
prefixed ``assay_`` so it cannot collide with a user's own tables.

Version 2 (this release) adds the index ``ix_judgment_dataset_annotator`` on judgments
(dataset, annotator): one annotator's entries of a dataset (``LabelStore.judgments`` with an
annotator, an undo, the service's flag check at every item served) are read through it instead
of a scan of the dataset. Nothing else changes; an assay of version 1 refuses
a store migrated to 2 (the version check below), so upgrade every process that opens it.

Version 0 (release 0.1.0) had ``labels(dataset, item, annotator, label)`` with −1 for a skip,
``runs`` and ``draws``. :func:`ensure_schema` creates or migrates under a lock — PostgreSQL: a
transaction-scoped advisory lock; SQLite: ``BEGIN IMMEDIATE`` with a busy timeout (set by
:func:`assay.labels.connection.engine_for`) — so several processes may open a fresh store at once.
Migration steps are idempotent: a step already applied is skipped by the version number (and
the index is created only where it is missing).
"""
from __future__ import annotations

import datetime as dt
import enum
import json

from sqlalchemy import (CheckConstraint, Column, DateTime, Float, ForeignKey, Index, Integer,
                        MetaData, SmallInteger, String, Table, Text, UniqueConstraint, inspect,
                        select, text)
from sqlalchemy.engine import Connection

from assay.errors import StoreError

SCHEMA_VERSION = 2
NAME_LENGTH = 200
_PG_LOCK = 0x61737361   # "assa": the advisory lock of schema creation and migration


class Role(str, enum.Enum):
    """In which capacity an annotator judged an item."""

    ASSESSOR = "assessor"
    ADJUDICATOR = "adjudicator"
    JUDGE = "judge"          # e.g. a cheap automatic judge beside human assessors


class Status(str, enum.Enum):
    """The state of an annotator's entry for an item: judged (with a value) or one of the
    statuses that carry no value."""

    JUDGED = "judged"
    SKIPPED = "skipped"
    UNASSESSABLE = "unassessable"
    PENDING = "pending"


def _values(e: type[enum.Enum]) -> str:
    return ", ".join(f"'{m.value}'" for m in e)


metadata = MetaData()

schema_table = Table(
    "assay_schema", metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
    Column("migrated_at", DateTime, nullable=False),
)

datasets_table = Table(
    "assay_datasets", metadata,
    Column("name", String(NAME_LENGTH), primary_key=True),
    Column("id_columns", Text, nullable=True),        # JSON list; NULL until a pool claims it
    Column("created_at", DateTime, nullable=False),
)

judgments_table = Table(
    "assay_judgments", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(NAME_LENGTH), nullable=False),
    Column("item", Text, nullable=False),
    Column("annotator", String(NAME_LENGTH), nullable=False),
    Column("role", String(16), nullable=False),
    Column("value", SmallInteger, nullable=True),
    Column("status", String(16), nullable=False),
    Column("claim", String(80), nullable=True),          # who asks a pending item
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("dataset", "item", "annotator", name="uq_judgment_item_annotator"),
    CheckConstraint(f"role IN ({_values(Role)})", name="ck_judgment_role"),
    CheckConstraint(f"status IN ({_values(Status)})", name="ck_judgment_status"),
    CheckConstraint("(status = 'judged') = (value IS NOT NULL)", name="ck_judgment_value"),
)

judgments_by_annotator = Index("ix_judgment_dataset_annotator", judgments_table.c.dataset,
                               judgments_table.c.annotator)
"""Version 2: one annotator's entries of a dataset without a scan of the dataset."""

runs_table = Table(
    "assay_runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_key", String(64), nullable=False, unique=True),
    Column("dataset", String(NAME_LENGTH), nullable=False),
    Column("pool", String(64), nullable=False),          # ids, predictions and scores
    Column("pool_ids", String(64), nullable=False),      # ids and predictions only
    Column("design", String(50), nullable=False),
    Column("settings", Text, nullable=False),            # the full settings, JSON
    Column("seed", Text, nullable=False),                # any size of integer, as text
    Column("annotator", String(NAME_LENGTH), nullable=False),
    Column("extensions", Text, nullable=False),          # JSON [[budget, at_draw], ...]
    Column("created_at", DateTime, nullable=False),
)

draws_table = Table(
    "assay_draws", metadata,
    Column("run_id", Integer, ForeignKey("assay_runs.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("item", Text, nullable=False),
    Column("stratum", Integer, nullable=False),
    Column("probability", Float, nullable=False),
    Column("kind", String(10), nullable=False),
)

V0_COLUMNS = {"labels": {"id", "dataset", "item", "annotator", "label", "created_at"},
              "runs": {"id", "run_key", "dataset", "pool", "design", "params", "seed",
                       "annotator", "created_at"},
              "draws": {"run_id", "seq", "item", "stratum", "probability", "kind"}}


def now() -> dt.datetime:
    """UTC now without tzinfo (what both backends store)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def ensure_schema(conn: Connection, location: str) -> int:
    """Create or migrate the schema inside the caller's transaction; returns the version found
    before (−1 for an empty store, 0 for a 0.1.0 store, 1 for a store without the
    annotator index, :data:`SCHEMA_VERSION` when current).

    The caller's transaction must hold the store's write lock (SQLite ``BEGIN IMMEDIATE``);
    on PostgreSQL an advisory lock is taken here, so concurrent openers wait for the first.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
    names = set(inspect(conn).get_table_names())
    version = None
    if "assay_schema" in names:
        version = conn.execute(select(schema_table.c.version)).scalar()
        if version is not None and int(version) > SCHEMA_VERSION:
            raise StoreError(location, f"the store has schema version {version}, newer than "
                             f"this assay ({SCHEMA_VERSION})", expected="a newer assay release")
        if version == SCHEMA_VERSION:
            return SCHEMA_VERSION
    old = _v0_layout(conn, names, location)
    metadata.create_all(conn)           # a new table comes with its indexes
    if old:
        _migrate_v0(conn)
    _migrate_v1(conn)
    conn.execute(schema_table.delete())
    conn.execute(schema_table.insert().values(id=1, version=SCHEMA_VERSION, migrated_at=now()))
    return 0 if old else (-1 if version is None else int(version))


def _migrate_v1(conn: Connection) -> None:
    """Version 1 → 2: the index on judgments (dataset, annotator), where it is missing (a
    store made or migrated here has it from :meth:`MetaData.create_all` already). Built in the
    migration's transaction: on PostgreSQL writers of the table wait for it, readers do
    not."""
    judgments_by_annotator.create(conn, checkfirst=True)


def _v0_layout(conn: Connection, names: set[str], location: str) -> bool:
    """True if the store holds release 0.1.0's tables; a foreign ``labels``/``runs``/``draws``
    table (not assay's columns) is a :class:`StoreError`."""
    present = [t for t in V0_COLUMNS if t in names]
    if not present:
        return False
    insp = inspect(conn)
    for t in present:
        cols = {c["name"] for c in insp.get_columns(t)}
        if cols != V0_COLUMNS[t]:
            raise StoreError(location, f"has a table {t!r} that is not assay's (columns "
                             f"{sorted(cols)})", expected="an assay label store or a new file")
    if "labels" not in present:
        raise StoreError(location, f"has tables {present} but no 'labels' table",
                         expected="an assay label store or a new file")
    return True


def _migrate_v0(conn: Connection) -> None:
    """Release 0.1.0 → version 1: every label becomes a judgment (role assessor); label −1
    becomes status *skipped* with no value; runs and their draws are kept (their old key is
    prefixed ``v0:``, so they are history, not resumed: their labels are reused instead)."""
    rows = conn.execute(text("SELECT dataset, item, annotator, label, created_at FROM labels")
                        ).all()
    out = [{"dataset": r.dataset, "item": r.item, "annotator": r.annotator,
            "role": Role.ASSESSOR.value,
            "value": int(r.label) if int(r.label) >= 0 else None,
            "status": Status.JUDGED.value if int(r.label) >= 0 else Status.SKIPPED.value,
            "created_at": _as_datetime(r.created_at)} for r in rows]
    if out:
        conn.execute(judgments_table.insert(), out)
    datasets = sorted({r.dataset for r in rows})
    if datasets:
        conn.execute(datasets_table.insert(), [{"name": d, "id_columns": None,
                                                "created_at": now()} for d in datasets])
    names = set(inspect(conn).get_table_names())
    if "runs" in names:
        for r in conn.execute(text("SELECT * FROM runs ORDER BY id")).mappings().all():
            params = json.loads(r["params"])
            res = conn.execute(runs_table.insert().values(
                run_key=("v0:" + str(r["run_key"]))[:64], dataset=r["dataset"], pool=r["pool"],
                pool_ids=r["pool"], design=r["design"], settings=r["params"],
                seed=str(r["seed"]), annotator=r["annotator"],
                extensions=json.dumps([[params.get("budget"), 0]]),
                created_at=_as_datetime(r["created_at"])))
            new_id = int(res.inserted_primary_key[0])
            if "draws" in names:
                draws = conn.execute(text("SELECT seq, item, stratum, probability, kind FROM draws "
                                          "WHERE run_id = :r"), {"r": r["id"]}).all()
                if draws:
                    conn.execute(draws_table.insert(), [
                        {"run_id": new_id, "seq": d.seq, "item": d.item, "stratum": d.stratum,
                         "probability": d.probability, "kind": d.kind} for d in draws])
    for t in ("draws", "runs", "labels"):
        if t in names or t == "labels":
            conn.execute(text(f"DROP TABLE {t}"))


def _as_datetime(v: object) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v
    try:
        return dt.datetime.fromisoformat(str(v))
    except ValueError:
        return now()


__all__ = ["NAME_LENGTH", "Role", "SCHEMA_VERSION", "Status", "datasets_table", "draws_table",
           "ensure_schema", "judgments_by_annotator", "judgments_table", "metadata", "now",
           "runs_table", "schema_table"]
