"""The label store: every judgment is written at once, keyed by dataset, item and annotator.

A judgment belongs to an item (in a named dataset) and its annotator, never to a run, a design or
a system, so a later evaluation with another design, measure or system reuses it. Runs and their
draws are recorded beside the judgments: each draw keeps its stratum and the probability it had,
so a run can be replayed, resumed or extended, and any estimator can reweight it later.

Concurrency: a judgment is written with insert-or-ignore on its unique key, and read back: when
two processes judge the same item, the first judgment wins and both use it; draws of one run
(a deterministic replay) are inserted the same way. Nothing here raises on a race.

SQLite by default (a path), PostgreSQL by URL (``postgresql+psycopg://…``). The schema and the
migration from release 0.1.0 are in :mod:`assay.labels.schema`.
"""
from __future__ import annotations

import json
import numbers
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from assay.core.vote import NO_LABEL, Tie, majority
from assay.errors import StoreError, redact
from assay.labels.connection import (CLAIM_SECONDS, claim_dead, claim_token, engine_for,
                                     retry_locked, store_errors)
from assay.labels.schema import (NAME_LENGTH, Role, Status, datasets_table, draws_table,
                                 ensure_schema, judgments_table, now, runs_table)

@dataclass(frozen=True)
class Judgment:
    """One annotator's entry for one item: a value (status *judged*) or a status without one."""

    item: str
    annotator: str
    value: int | None = None
    status: Status = Status.JUDGED
    role: Role = Role.ASSESSOR

    def __post_init__(self) -> None:
        v = self.value
        if v is not None and type(v) is not int and isinstance(v, numbers.Real) \
                and float(v).is_integer():
            # a numpy integer would be stored by SQLite as its bytes: keep a Python int
            object.__setattr__(self, "value", int(v))
        if (self.status == Status.JUDGED) != (self.value is not None):
            raise ValueError(f"a judgment has a value exactly when its status is 'judged' "
                             f"(item {self.item!r}: value {self.value!r}, {self.status.value})")


@dataclass(frozen=True)
class StoredDraw:
    """A draw as stored: its place in the run, the item's key, stratum, probability and kind."""

    seq: int
    item: str
    stratum: int
    probability: float
    kind: str


@dataclass(frozen=True)
class StoredRun:
    """A run's row: its id, the budgets it was extended to (with the draw at which each took
    effect), its saved settings and the draws it made so far."""

    id: int
    extensions: list[tuple[int, int]]
    settings: dict[str, Any]
    draws: list[StoredDraw]


def _check_name(what: str, name: str) -> None:
    if not name or len(name) > NAME_LENGTH:
        raise StoreError(f"--{what}", f"{what} name of {len(name)} characters",
                         expected=f"1 to {NAME_LENGTH} characters")


class LabelStore:
    """Judgments keyed by (dataset, item, annotator), datasets, runs and their draws."""

    def __init__(self, store: str | Path | Engine = "assay.db") -> None:
        self.location = redact(str(store if isinstance(store, (str, Path)) else store.url))
        self.engine = store if isinstance(store, Engine) else engine_for(store)
        self.previous_version = self._open()

    @store_errors
    def _open(self) -> int:
        def attempt() -> int:
            with self.engine.begin() as conn:
                return ensure_schema(conn, self.location)
        try:
            return retry_locked(attempt)
        except OperationalError as exc:
            detail = str(exc.orig or exc).strip().splitlines()[0]
            raise StoreError(self.location, f"cannot open label store: {detail}") from None

    def _insert(self, table: Any, ignore: bool = True) -> Any:
        """An INSERT that skips rows whose unique key is taken (SQLite and PostgreSQL)."""
        name = self.engine.dialect.name
        if name == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as dialect_insert
        elif name == "sqlite":
            from sqlalchemy.dialects.sqlite import insert as dialect_insert
        else:  # pragma: no cover - other backends: plain insert
            return insert(table)
        stmt = dialect_insert(table)
        return stmt.on_conflict_do_nothing() if ignore else stmt

    # -- datasets ----------------------------------------------------------------------------
    @store_errors
    def claim_dataset(self, name: str, id_columns: list[str]) -> None:
        """Record which id columns ``name``'s items are keyed by; a pool with other id columns
        in the same dataset is a :class:`StoreError` naming both."""
        _check_name("dataset", name)
        with self.engine.begin() as conn:
            conn.execute(self._insert(datasets_table).values(
                name=name, id_columns=json.dumps(id_columns), created_at=now()))
            stored = conn.execute(select(datasets_table.c.id_columns).where(
                datasets_table.c.name == name)).scalar()
            if stored is None:   # a dataset migrated from 0.1.0: the first pool claims it
                conn.execute(update(datasets_table).where(datasets_table.c.name == name)
                             .values(id_columns=json.dumps(id_columns)))
            elif json.loads(stored) != list(id_columns):
                raise StoreError(self.location, f"dataset {name!r} holds items keyed by id "
                                 f"columns {json.loads(stored)}, this pool by {list(id_columns)}",
                                 expected="another --dataset for a pool with other ids")

    # -- judgments ---------------------------------------------------------------------------
    @store_errors
    def judgments(self, dataset: str, annotator: str | None = None) -> list[Judgment]:
        """Every entry of a dataset (of one annotator, or of all)."""
        t = judgments_table
        q = select(t.c.item, t.c.annotator, t.c.value, t.c.status, t.c.role).where(
            t.c.dataset == dataset)
        if annotator is not None:
            q = q.where(t.c.annotator == annotator)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        return [Judgment(r.item, r.annotator, None if r.value is None else int(r.value),
                         Status(r.status), Role(r.role)) for r in rows]

    def labels(self, dataset: str, annotator: str | None = None) -> dict[str, int]:
        """Judged values of a dataset: one annotator's, or the strict majority over annotators
        (ties left out) when ``annotator`` is None. Statuses are not labels."""
        rows = [j for j in self.judgments(dataset, annotator) if j.status == Status.JUDGED]
        if annotator is not None:
            return {j.item: int(j.value) for j in rows}  # type: ignore[arg-type]
        items = sorted({j.item for j in rows})
        where = {k: i for i, k in enumerate(items)}
        ones, zeros = np.zeros(len(items), np.int64), np.zeros(len(items), np.int64)
        for j in rows:
            (ones if j.value else zeros)[where[j.item]] += 1
        label = majority(ones, zeros, tie=Tie.ABSTAIN)
        return {k: int(v) for k, v in zip(items, label) if v != NO_LABEL}

    def statuses(self, dataset: str, annotator: str) -> dict[str, Status]:
        """Items of ``annotator`` with a status and no value (skipped, unassessable, pending)."""
        return {j.item: j.status for j in self.judgments(dataset, annotator)
                if j.status != Status.JUDGED}

    @store_errors
    def record(self, dataset: str, judgments: Iterable[Judgment], replace: bool = False,
               draws: Iterable[tuple[int, StoredDraw]] = ()) -> dict[tuple[str, str], Judgment]:
        """Write judgments (and pending draws) in one transaction; returns what the store holds
        for them afterwards. Without ``replace`` an entry already stored wins (the first
        judgment of an item by an annotator is kept, whoever wrote it); with ``replace`` the
        new one overwrites it."""
        js = list(judgments)
        for j in js:
            _check_name("annotator", j.annotator)
        _check_name("dataset", dataset)
        rows = [{"dataset": dataset, "item": j.item, "annotator": j.annotator,
                 "role": j.role.value, "value": j.value, "status": j.status.value,
                 "created_at": now()} for j in js]
        t = judgments_table
        with self.engine.begin() as conn:
            if rows:
                stmt = self._insert(t, ignore=False)
                stmt = stmt.on_conflict_do_update(
                    index_elements=["dataset", "item", "annotator"],
                    set_={"value": stmt.excluded.value, "status": stmt.excluded.status,
                          "role": stmt.excluded.role, "created_at": stmt.excluded.created_at,
                          "claim": None},
                    where=None if replace else t.c.status == Status.PENDING.value)
                conn.execute(stmt, rows)
            self._insert_draws(conn, draws)
            out: dict[tuple[str, str], Judgment] = {}
            for who in {j.annotator for j in js}:
                items = [j.item for j in js if j.annotator == who]
                for start in range(0, len(items), 500):
                    got = conn.execute(select(t.c.item, t.c.value, t.c.status, t.c.role).where(
                        (t.c.dataset == dataset) & (t.c.annotator == who)
                        & t.c.item.in_(items[start:start + 500]))).all()
                    for r in got:
                        out[(r.item, who)] = Judgment(r.item, who, None if r.value is None
                                                      else int(r.value), Status(r.status),
                                                      Role(r.role))
        return out

    @store_errors
    def claim(self, dataset: str, item: str, annotator: str, token: str,
              stale_after: float = CLAIM_SECONDS) -> Judgment | None:
        """Claim the right to ask ``annotator`` about ``item`` (a *pending* entry carrying
        ``token``). Returns None when the claim is this caller's (go and ask), else what the
        store holds: a judgment or status to use, or another live claim's pending entry (wait).
        A claim whose process is gone (same host) or older than ``stale_after`` is taken over."""
        t = judgments_table
        key = (t.c.dataset == dataset) & (t.c.item == item) & (t.c.annotator == annotator)
        with self.engine.begin() as conn:
            conn.execute(self._insert(t).values(
                dataset=dataset, item=item, annotator=annotator, role=Role.ASSESSOR.value,
                value=None, status=Status.PENDING.value, claim=token, created_at=now()))
            row = conn.execute(select(t).where(key)).one()
            if row.status != Status.PENDING.value:
                return Judgment(row.item, annotator, None if row.value is None else
                                int(row.value), Status(row.status), Role(row.role))
            if row.claim == token:
                return None
            age = (now() - row.created_at).total_seconds()
            if claim_dead(row.claim) or age > stale_after:
                conn.execute(update(t).where(key & (t.c.claim == row.claim))
                             .values(claim=token, created_at=now()))
                return None
        return Judgment(item, annotator, None, Status.PENDING)

    @store_errors
    def release(self, dataset: str, token: str) -> None:
        """Drop the pending claims of ``token`` (a campaign that stops without answering)."""
        t = judgments_table
        with self.engine.begin() as conn:
            conn.execute(delete(t).where((t.c.dataset == dataset) & (t.c.claim == token)
                                         & (t.c.status == Status.PENDING.value)))

    @store_errors
    def withdraw(self, dataset: str, item: str, annotator: str) -> None:
        """Delete an annotator's entry for an item (an undo)."""
        t = judgments_table
        with self.engine.begin() as conn:
            conn.execute(delete(t).where((t.c.dataset == dataset) & (t.c.item == item)
                                         & (t.c.annotator == annotator)))

    remove = withdraw

    # -- runs and draws ----------------------------------------------------------------------
    @store_errors
    def open_run(self, key: str, *, dataset: str, pool: str, pool_ids: str, design: str,
                 settings: dict[str, Any], seed: int, annotator: str, budget: int) -> StoredRun:
        """The run with identity ``key`` (created if new, by whichever process comes first)
        and what it has stored."""
        _check_name("dataset", dataset)
        _check_name("annotator", annotator)
        with self.engine.begin() as conn:
            conn.execute(self._insert(runs_table).values(
                run_key=key, dataset=dataset, pool=pool, pool_ids=pool_ids, design=design,
                settings=json.dumps(settings, sort_keys=True), seed=str(int(seed)),
                annotator=annotator, extensions=json.dumps([[int(budget), 0]]),
                created_at=now()))
            row = conn.execute(select(runs_table).where(runs_table.c.run_key == key)).one()
            draws = self._draws(conn, int(row.id))
        return StoredRun(int(row.id), [(int(b), int(s)) for b, s in json.loads(row.extensions)],
                         json.loads(row.settings), draws)

    @store_errors
    def run_info(self, run_id: int) -> dict[str, Any]:
        """What a run saved: dataset, design, full settings, seed, annotator, extensions."""
        with self.engine.connect() as conn:
            row = conn.execute(select(runs_table).where(runs_table.c.id == int(run_id))).first()
        if row is None:
            raise StoreError(self.location, f"no run {run_id}", expected="a run id of this store")
        return {"dataset": row.dataset, "design": row.design, "seed": int(row.seed),
                "settings": json.loads(row.settings), "annotator": row.annotator,
                "extensions": json.loads(row.extensions), "pool": row.pool}

    @store_errors
    def extend_run(self, run_id: int, budget: int, at_draw: int) -> list[tuple[int, int]]:
        """Append an extension (new budget taking effect at draw ``at_draw``) unless the run was
        already extended as far; returns the run's extensions."""
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(select(runs_table.c.id).where(runs_table.c.id == run_id)
                             .with_for_update())
            raw = conn.execute(select(runs_table.c.extensions).where(
                runs_table.c.id == run_id)).scalar_one()
            ext = [(int(b), int(s)) for b, s in json.loads(raw)]
            if budget > ext[-1][0]:
                ext.append((int(budget), int(at_draw)))
                conn.execute(update(runs_table).where(runs_table.c.id == run_id)
                             .values(extensions=json.dumps(ext)))
        return ext

    @store_errors
    def related_runs(self, dataset: str, pool_ids: str, design: str, seed: int,
                     annotator: str, exclude: int) -> list[tuple[int, str]]:
        """Other runs of the same pool ids and predictions, design, seed and annotator (e.g.
        before the pool was re-scored): (id, pool fingerprint)."""
        r = runs_table
        q = select(r.c.id, r.c.pool).where(
            (r.c.dataset == dataset) & (r.c.pool_ids == pool_ids) & (r.c.design == design)
            & (r.c.seed == str(int(seed))) & (r.c.annotator == annotator) & (r.c.id != exclude))
        with self.engine.connect() as conn:
            return [(int(x.id), str(x.pool)) for x in conn.execute(q.order_by(r.c.id)).all()]

    @store_errors
    def add_draws(self, draws: Iterable[tuple[int, StoredDraw]]) -> None:
        with self.engine.begin() as conn:
            self._insert_draws(conn, draws)

    @store_errors
    def draws(self, run_id: int) -> list[StoredDraw]:
        with self.engine.connect() as conn:
            return self._draws(conn, run_id)

    @staticmethod
    def _draws(conn: Connection, run_id: int) -> list[StoredDraw]:
        rows = conn.execute(select(draws_table).where(draws_table.c.run_id == run_id)
                            .order_by(draws_table.c.seq)).all()
        return [StoredDraw(r.seq, r.item, r.stratum, r.probability, r.kind) for r in rows]

    def _insert_draws(self, conn: Connection, draws: Iterable[tuple[int, StoredDraw]]) -> None:
        rows = [{"run_id": run_id, "seq": d.seq, "item": d.item, "stratum": d.stratum,
                 "probability": d.probability, "kind": d.kind} for run_id, d in draws]
        if rows:
            conn.execute(self._insert(draws_table), rows)

    def close(self) -> None:
        self.engine.dispose()


@contextmanager
def opened_store(store: str | LabelStore | None) -> Iterator[LabelStore | None]:
    """``store`` (a URL, a :class:`LabelStore` or None) as a store for a ``with`` block: one
    opened here from its URL is closed on the way out, return or error, so its connections go
    back at once (eight processes on one PostgreSQL store ran out of slots while such stores
    waited for garbage collection); one passed in stays open: its caller owns it.

    >>> with opened_store("sqlite://") as st:
    ...     type(st).__name__
    'LabelStore'
    >>> with opened_store(None) as st:
    ...     st is None
    True
    """
    st = store if isinstance(store, LabelStore) or store is None else LabelStore(store)
    try:
        yield st
    finally:
        if st is not None and st is not store:
            st.close()


__all__ = ["CLAIM_SECONDS", "Judgment", "LabelStore", "Role", "Status", "StoredDraw", "StoredRun",
           "claim_token", "engine_for", "opened_store"]
