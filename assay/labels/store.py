"""The label store: every label obtained is written at once, keyed by item and annotator.

A label belongs to an item (in a named dataset) and its annotator, never to a run, a design or a
system, so a later evaluation with another design, measure or system reuses it. Runs and their
draws are recorded beside the labels: each draw keeps its design, stratum and the probability it
had, so an interrupted run can be replayed and checked, and any estimator can reweight it later.

SQLite by default (a path), any SQLAlchemy URL otherwise (``postgresql+psycopg://…``).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import (Column, DateTime, Float, ForeignKey, Integer, MetaData, SmallInteger,
                        String, Table, Text, UniqueConstraint, create_engine, delete, event,
                        insert, select)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from assay.errors import AssayInputError

metadata = MetaData()

labels_table = Table(
    "labels", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("dataset", String(200), nullable=False),
    Column("item", Text, nullable=False),
    Column("annotator", String(200), nullable=False),
    Column("label", SmallInteger, nullable=False),
    Column("created_at", DateTime, nullable=False),
    UniqueConstraint("dataset", "item", "annotator", name="uq_label_item_annotator"),
)

runs_table = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_key", String(64), nullable=False, unique=True),
    Column("dataset", String(200), nullable=False),
    Column("pool", String(64), nullable=False),
    Column("design", String(50), nullable=False),
    Column("params", Text, nullable=False),
    Column("seed", Integer, nullable=False),
    Column("annotator", String(200), nullable=False),
    Column("created_at", DateTime, nullable=False),
)

draws_table = Table(
    "draws", metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("item", Text, nullable=False),
    Column("stratum", Integer, nullable=False),
    Column("probability", Float, nullable=False),
    Column("kind", String(10), nullable=False),
)


@dataclass(frozen=True)
class StoredDraw:
    seq: int
    item: str
    stratum: int
    probability: float
    kind: str


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def engine_for(store: str | Path) -> Engine:
    """An engine for a SQLite path or a SQLAlchemy URL (WAL mode for SQLite files)."""
    text = str(store)
    url = text if "://" in text else f"sqlite:///{Path(text).expanduser()}"
    try:
        engine = create_engine(url, future=True)
    except Exception as exc:  # noqa: BLE001 - bad URL or missing driver: a user error
        raise AssayInputError(text, f"cannot open label store: {exc}") from None
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _rec: Any) -> None:  # pragma: no cover - trivial
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()
    return engine


class LabelStore:
    """Labels keyed by (dataset, item, annotator), plus runs and their draws."""

    def __init__(self, store: str | Path | Engine = "assay.db") -> None:
        self.location = store if isinstance(store, (str, Path)) else str(store.url)
        self.engine = store if isinstance(store, Engine) else engine_for(store)
        try:
            metadata.create_all(self.engine)
        except SQLAlchemyError as exc:
            raise AssayInputError(str(self.location), f"cannot open label store: {exc.orig}"
                                  if getattr(exc, "orig", None) else str(exc)) from None

    # -- labels -------------------------------------------------------------------------
    def labels(self, dataset: str, annotator: str | None = None,
               include_skips: bool = False) -> dict[str, int]:
        """All labels of a dataset (of one annotator, or majority over annotators if None).

        An annotator's skip is kept as label −1 (so a resumed run does not ask again); it is
        left out unless ``include_skips``.
        """
        q = select(labels_table.c.item, labels_table.c.annotator, labels_table.c.label).where(
            labels_table.c.dataset == dataset)
        if not include_skips:
            q = q.where(labels_table.c.label >= 0)
        if annotator is not None:
            q = q.where(labels_table.c.annotator == annotator)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        if annotator is not None:
            return {r.item: int(r.label) for r in rows}
        votes: dict[str, list[int]] = {}
        for r in rows:
            votes.setdefault(r.item, []).append(int(r.label))
        return {k: int(2 * sum(v) > len(v)) for k, v in votes.items() if 2 * sum(v) != len(v)}

    def put(self, dataset: str, item: str, annotator: str, label: int,
            draws: Iterable[tuple[int, StoredDraw]] = ()) -> None:
        """Write one label (and any pending draws) in one committed transaction."""
        with self.engine.begin() as conn:
            conn.execute(insert(labels_table).values(dataset=dataset, item=item,
                                                     annotator=annotator, label=int(label),
                                                     created_at=_now()))
            self._insert_draws(conn, draws)

    def remove(self, dataset: str, item: str, annotator: str) -> None:
        """Delete a label (an annotator's undo)."""
        with self.engine.begin() as conn:
            conn.execute(delete(labels_table).where(
                (labels_table.c.dataset == dataset) & (labels_table.c.item == item)
                & (labels_table.c.annotator == annotator)))

    # -- runs and draws -----------------------------------------------------------------
    @staticmethod
    def run_key(dataset: str, pool: str, params: dict[str, Any], seed: int,
                annotator: str) -> str:
        blob = json.dumps([dataset, pool, params, seed, annotator], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def open_run(self, dataset: str, pool: str, params: dict[str, Any], seed: int,
                 annotator: str) -> tuple[int, list[StoredDraw]]:
        """The run with this configuration (created if new) and the draws it already made."""
        key = self.run_key(dataset, pool, params, seed, annotator)
        with self.engine.begin() as conn:
            row = conn.execute(select(runs_table.c.id).where(runs_table.c.run_key == key)).first()
            if row is None:
                res = conn.execute(insert(runs_table).values(
                    run_key=key, dataset=dataset, pool=pool, design=str(params.get("design")),
                    params=json.dumps(params, sort_keys=True), seed=int(seed),
                    annotator=annotator, created_at=_now()))
                return int(res.inserted_primary_key[0]), []
            run_id = int(row.id)
            rows = conn.execute(select(draws_table).where(draws_table.c.run_id == run_id)
                                .order_by(draws_table.c.seq)).all()
        return run_id, [StoredDraw(r.seq, r.item, r.stratum, r.probability, r.kind)
                        for r in rows]

    def add_draws(self, draws: Iterable[tuple[int, StoredDraw]]) -> None:
        with self.engine.begin() as conn:
            self._insert_draws(conn, draws)

    def draws(self, run_id: int) -> list[StoredDraw]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(draws_table).where(draws_table.c.run_id == run_id)
                                .order_by(draws_table.c.seq)).all()
        return [StoredDraw(r.seq, r.item, r.stratum, r.probability, r.kind) for r in rows]

    @staticmethod
    def _insert_draws(conn: Any, draws: Iterable[tuple[int, StoredDraw]]) -> None:
        rows = [{"run_id": run_id, "seq": d.seq, "item": d.item, "stratum": d.stratum,
                 "probability": d.probability, "kind": d.kind} for run_id, d in draws]
        if rows:
            conn.execute(insert(draws_table), rows)

    def close(self) -> None:
        self.engine.dispose()
