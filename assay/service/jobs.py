"""Submissions and their jobs: an uploaded output is checked (one line naming the file and line
on error, nothing stored), kept as a job, and run by :func:`run_job`: the campaign plans the
draws it needs (:meth:`assay.ondemand.OnDemandCampaign.submit`), and every drawn item with no
decided label goes to the annotation queue; the job then waits. When every item it waits for
is decided (:func:`wake`), it runs again: the campaign records the decided labels, re-estimates,
maybe plans another round, and so on until the system is finished.

A job only ever resumes: the campaign's draws are stored per round and seeded by (seed, system,
round), so a job killed at any point (the server ``kill -9``-ed) is run again from the start by
the next worker (:func:`recover` at start-up) and asks no label twice.
"""
from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.engine import Engine

from assay.errors import AssayError, AssayInputError
from assay.formats.pool import read_table
from assay.interfaces.campaign_cli import _keys
from assay.labels.schema import Status, now
from assay.labels.sources import SKIP, LabelSource
from assay.labels.connection import CLAIM_SECONDS, claim_dead, claim_token
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.ondemand.store import STRUCTURE
from assay.service import queue
from assay.service.auth import User, audit
from assay.service.schema import (NAME, job_items_table, queue_table, submissions_table)

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
SUFFIXES = (".csv", ".tsv", ".txt", ".parquet")
_PG_SUBMIT_LOCK = 0x61737373    # "asss": a team's submissions to a campaign, one at a time


class NeedLabels(Exception):
    """Raised by :class:`QueueSource` for an item with no decided label yet."""


class QueueSource(LabelSource):
    """The campaign's label source in the service: an item is answered once the queue has
    decided it (a skip when it closed undecidable), with the queue's majority or, when the campaign aggregates by Dawid–Skene, the
    Dawid–Skene label of every vote of the campaign (crowd-kit; computed once per job run)."""

    def __init__(self, store: LabelStore, campaign: str, annotator: str,
                 aggregation: str = "majority", window: float | None = None) -> None:
        self.store, self.campaign, self.annotator = store, campaign, annotator
        self.aggregation, self.window = aggregation, window   # the undo window (settled_before)
        self._ds: dict[str, int] | None = None
        self._ds_flagged: set[str] = set()

    def label(self, index: int, key: str) -> int:
        """The item's settled decision (NeedLabels while it has none); with Dawid–Skene, its
        label computed once per job run, again when the live flags changed since (a flag
        takes the flagged votes out of every label)."""
        from assay.service.flags import flagged
        q = queue_table
        with self.store.engine.connect() as conn:
            got = conn.execute(select(q.c.value).where(
                (q.c.campaign == self.campaign) & (q.c.item == key)
                & (q.c.resolved_at <= queue.settled_before(self.window)))).first()
            out = flagged(conn, self.campaign) if self.aggregation == "dawid-skene" else set()
        if got is None:
            raise NeedLabels(key)
        v = got.value
        if v is None:                   # undecidable (queue.undecidable): the job goes on
            return SKIP
        if self.aggregation == "dawid-skene":
            if self._ds is None or out != self._ds_flagged:
                self._ds, self._ds_flagged = dawid_skene(self.store, self.campaign), out
            return int(self._ds.get(key, v))
        return int(v)


def dawid_skene(store: LabelStore, campaign: str) -> dict[str, int]:
    """Dawid–Skene labels (crowd-kit) of every item with a human vote in the campaign, the
    votes of live-flagged annotators left out (they count in no decision:
    :mod:`assay.service.resettle`)."""
    from assay.service.flags import flagged
    from assay.service.quality import votes
    v = votes(store, OnDemandCampaign.open(store, campaign).row)
    with store.engine.connect() as conn:
        v = v[~v["worker"].isin(flagged(conn, campaign))]
    if v.empty:
        return {}
    from crowdkit.aggregation import DawidSkene
    got = DawidSkene(n_iter=100).fit_predict(v[["task", "worker", "label"]])
    return {str(k): int(x) for k, x in got.items()}


def read_upload(filename: str, data: bytes) -> pd.DataFrame:
    """An uploaded CSV/TSV/Parquet file as text columns; a file too large, empty, of another
    type or unreadable is one :class:`AssayInputError` line naming ``filename``."""
    name = Path(filename or "upload").name
    if len(data) > MAX_UPLOAD_BYTES:
        raise AssayInputError(name, f"{len(data):,} bytes",
                              expected=f"at most {MAX_UPLOAD_BYTES:,} bytes")
    if not data.strip():
        raise AssayInputError(name, "empty file", expected="a header and one row per item")
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise AssayInputError(name, f"file type {suffix or '(none)'!r}",
                              expected="a .csv, .tsv or .parquet file")
    with tempfile.TemporaryDirectory(prefix="assay-upload-") as tmp:
        path = Path(tmp) / ("upload" + suffix)
        path.write_bytes(data)
        try:
            df, _, _ = read_table(path, "submission")
        except AssayInputError as exc:
            raise AssayInputError(str(exc).replace(str(path), name)) from None
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            detail = str(exc).replace(str(path), name).splitlines()[0]
            raise AssayInputError(name, f"cannot be read: {detail}") from None
    if len(df) == 0:
        raise AssayInputError(name, "no rows", expected="one row per item")
    return df


def parse_output(filename: str, data: bytes, key: str = "item"
                 ) -> tuple[list[str], pd.DataFrame]:
    """Check an uploaded output (the format ``assay campaign submit`` takes): its keys (first
    occurrences, in order) and structure columns; any problem is one
    :class:`AssayInputError` line naming ``filename`` and the line."""
    name = Path(filename or "upload").name
    df = read_upload(name, data)
    kind = "row" if name.lower().endswith(".parquet") else "line"
    keys = _keys(df, key, name, kind)
    first = ~keys.duplicated().to_numpy()
    structure = df[[c for c in STRUCTURE if c in df.columns]][first].reset_index(drop=True)
    return keys[first].tolist(), structure


def submit(store: LabelStore, user: User, campaign: str, system: str, filename: str,
           data: bytes, key: str = "item") -> int:
    """Check and keep a team's submission as a pending job; returns its id. The day's count
    and the insert are one write transaction (SQLite ``BEGIN IMMEDIATE``; PostgreSQL an
    advisory lock per (campaign, team)), so concurrent submits cannot pass the daily limit."""
    camp = OnDemandCampaign.open(store, campaign)
    team = user.team or user.name
    if not system or len(system) > 80 or "/" in system:
        raise AssayInputError("system", repr(system), expected="1-80 characters, no '/'")
    keys, structure = parse_output(filename, data, key)
    cs = queue.settings(store.engine, camp.row.name)
    limit = cs.daily_limit
    if user.role != "admin" and len(keys) < cs.min_output:
        n = len(keys)
        raise AssayInputError(Path(filename or "upload").name,
                              f"{n} item{'' if n == 1 else 's'}",
                              expected=f"at least {cs.min_output} items, the campaign's "
                              "min_output: a tiny output's scores would reveal its labels")
    s = submissions_table
    midnight = now().replace(hour=0, minute=0, second=0, microsecond=0)
    full = f"{team}/{system}"
    with store.engine.begin() as conn:
        if conn.dialect.name == "postgresql":   # count-then-insert, one (campaign, team) at once
            conn.execute(text("SELECT pg_advisory_xact_lock(:a, hashtext(:k))"),
                         {"a": _PG_SUBMIT_LOCK, "k": f"{campaign}\n{team}"})
        today = conn.execute(select(func.count()).select_from(s).where(
            (s.c.campaign == campaign) & (s.c.team == team) & (s.c.created_at >= midnight))
        ).scalar_one()
        if user.role != "admin" and today >= limit:
            raise AssayInputError("submission", f"team {team!r} has made {today} submissions "
                                  "today", expected=f"at most {limit} a day (UTC)")
        if conn.execute(select(s.c.id).where((s.c.campaign == campaign)
                                             & (s.c.system == full))).first() is not None:
            raise AssayInputError("system", f"{system!r} was already submitted by team "
                                  f"{team!r}", expected="a new system name")
        res = conn.execute(insert(s).values(
            campaign=campaign, team=team, system=full, user=user.name,
            filename=Path(filename).name[:NAME], items=json.dumps(keys),
            structure=structure.to_json(orient="records") if len(structure.columns) else None,
            state="pending", created_at=now(), updated_at=now()))
        sid = int(res.inserted_primary_key[0])
        audit(store.engine, user.name, "submission", campaign,
              detail={"submission": sid, "system": full, "items": len(keys)}, conn=conn)
    return sid


def submission(engine: Engine, sid: int) -> Any:
    with engine.connect() as conn:
        return conn.execute(select(submissions_table).where(submissions_table.c.id == sid)
                            ).first()


def _state(engine: Engine, sid: int, state: str, error: str | None = None,
           when: str | None = None, worker: str | None = None) -> bool:
    s = submissions_table
    cond = s.c.id == sid
    if when is not None:
        cond = cond & (s.c.state == when)
    with engine.begin() as conn:
        return bool(conn.execute(update(s).where(cond).values(
            state=state, error=error, worker=worker, updated_at=now())).rowcount)


def run_job(store: LabelStore, sid: int, worker: str | None = None,
            window: float | None = None) -> str:
    """Run (or resume) one pending job (``worker``: this process's claim token, by default a
    new one; ``window``: the undo window, :func:`assay.service.queue.settled_before`); returns
    its state afterwards."""
    if not _state(store.engine, sid, "running", when="pending",
                  worker=worker or claim_token()):
        row = submission(store.engine, sid)
        return "missing" if row is None else str(row.state)
    row = submission(store.engine, sid)
    camp = OnDemandCampaign.open(store, row.campaign)
    items = json.loads(row.items)
    structure = (pd.read_json(_io(row.structure), orient="records", dtype=False)
                 if row.structure else None)
    try:
        agg = queue.settings(store.engine, camp.row.name).aggregation
        camp.submit(row.system, items,
                    QueueSource(store, camp.row.name, camp.row.annotator, agg, window), structure)
    except NeedLabels:
        todo = _undecided(store, camp, row.system)
        k = queue.settings(store.engine, camp.row.name).k
        queue.enqueue(store, camp.row.name, todo, k)
        with store.engine.begin() as conn:
            conn.execute(store._insert(job_items_table),
                         [{"submission_id": sid, "item": i} for i in todo])
        _state(store.engine, sid, "waiting")
        return "waiting"
    except AssayError as exc:
        _state(store.engine, sid, "failed", str(exc))
        return "failed"
    except Exception as exc:  # noqa: BLE001 - a job must not kill the worker
        _state(store.engine, sid, "failed", f"internal error: {type(exc).__name__}")
        raise
    _state(store.engine, sid, "done")
    return "done"


def _io(text: str) -> Any:
    import io
    return io.StringIO(text)


def _undecided(store: LabelStore, camp: OnDemandCampaign, system: str) -> list[str]:
    """The system's drawn items with no entry of the campaign's annotator yet."""
    sysrow = next(s for s in camp.od.systems(camp.row.id) if s.name == system)
    d = camp.od.draws(camp.row.id)
    have = {j.item for j in store.judgments(camp.row.dataset, camp.row.annotator)
            if j.status != Status.PENDING}
    return [i for i in dict.fromkeys(d.loc[d["system_id"] == sysrow.id, "item"].tolist())
            if i not in have]


def wake(engine: Engine, window: float | None = None) -> int:
    """Waiting jobs whose every awaited item is decided (and settled: no undo can reopen it,
    :func:`assay.service.queue.settled_before`) become pending again."""
    s, ji, q = submissions_table, job_items_table, queue_table
    with engine.connect() as conn:
        waiting = conn.execute(select(s.c.id, s.c.campaign).where(s.c.state == "waiting")).all()
        ready = []
        for w in waiting:
            left = conn.execute(select(func.count()).select_from(ji.join(
                q, (q.c.item == ji.c.item) & (q.c.campaign == w.campaign))).where(
                (ji.c.submission_id == w.id) & (q.c.resolved_at.is_(None)
                                                | (q.c.resolved_at > queue.settled_before(window))))
            ).scalar_one()
            if left == 0:
                ready.append(w.id)
    return sum(_state(engine, i, "pending", when="waiting") for i in ready)


def recover(engine: Engine, stale_after: float = CLAIM_SECONDS) -> int:
    """At start-up: jobs left *running* by a worker that died (its process gone from this
    host, or running for longer than ``stale_after`` seconds) resume (become pending); a job of
    a live worker of another server process is left to it."""
    s = submissions_table
    with engine.connect() as conn:
        rows = conn.execute(select(s.c.id, s.c.worker, s.c.updated_at).where(
            s.c.state == "running")).all()
    dead = [r.id for r in rows if r.worker is None or claim_dead(r.worker)
            or (now() - r.updated_at).total_seconds() > stale_after]
    return sum(_state(engine, int(i), "pending", when="running") for i in dead)


def run_pending(store: LabelStore, worker: str | None = None,
                window: float | None = None) -> int:
    """Wake what can run and run every pending job once; returns how many ran."""
    wake(store.engine, window)
    with store.engine.connect() as conn:
        ids = conn.execute(select(submissions_table.c.id).where(
            submissions_table.c.state == "pending").order_by(submissions_table.c.id)
        ).scalars().all()
    for sid in ids:
        run_job(store, int(sid), worker, window)
    return len(ids)


class Worker(threading.Thread):
    """The server's background worker: runs pending jobs every ``interval`` seconds."""

    def __init__(self, store: LabelStore, interval: float = 0.5,
                 window: float | None = None) -> None:
        super().__init__(daemon=True, name="assay-jobs")
        self.store, self.interval, self.stopped = store, interval, threading.Event()
        self.window = window            # the undo window (assay.service.queue.settled_before)
        self.token = claim_token()

    def run(self) -> None:
        recover(self.store.engine)
        while not self.stopped.is_set():
            try:
                run_pending(self.store, self.token, self.window)
            except Exception:  # noqa: BLE001 - logged by the job's state; keep serving
                pass
            self.stopped.wait(self.interval)

    def stop(self) -> None:
        self.stopped.set()


__all__ = ["MAX_UPLOAD_BYTES", "NeedLabels", "QueueSource", "Worker", "parse_output",
           "read_upload",
           "recover", "run_job", "run_pending", "submission", "submit", "wake"]
