"""Reading and writing an on-demand campaign's tables (:mod:`assay.ondemand.schema`) through the
label store's engine; the judgments themselves stay in the label store
(:class:`assay.labels.store.LabelStore`). Every write is one transaction; draws and outputs are
inserted insert-or-ignore on their unique keys, so a replayed step writes nothing twice.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from sqlalchemy import func, select, update

from assay.errors import StoreError
from assay.labels.schema import NAME_LENGTH, now
from assay.labels.connection import retry_locked, store_errors
from assay.labels.store import LabelStore
from assay.ondemand.schema import (OD_SCHEMA_VERSION, campaigns_table, ensure_ondemand_schema,
                                   fill_table, items_table, od_draws_table, outputs_table, systems_table,
                                   unit_truth_table, units_table)

STRUCTURE = ("unit", "subject", "relation", "object")
_CHUNK = 500


@dataclass(frozen=True)
class CampaignRow:
    """A campaign's settings as stored."""

    id: int
    name: str
    dataset: str
    annotator: str
    corpus_units: int | None
    confidence: float
    half_width: float
    submission_cap: int
    campaign_cap: int | None
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("name", "dataset", "annotator", "corpus_units",
                                              "confidence", "half_width", "submission_cap",
                                              "campaign_cap", "seed")}


@dataclass(frozen=True)
class SystemRow:
    """A submission as stored, in order of arrival."""

    id: int
    name: str
    fingerprint: str
    size: int
    finished: bool


class OnDemandStore:
    """The on-demand tables of one label store (created on first use)."""

    def __init__(self, labels: LabelStore) -> None:
        self.labels, self.engine, self.location = labels, labels.engine, labels.location

        def create() -> None:
            with self.engine.begin() as conn:
                ensure_ondemand_schema(conn)
        retry_locked(create)

    # -- campaigns ---------------------------------------------------------------------------
    @store_errors
    def create_campaign(self, name: str, **settings: Any) -> CampaignRow:
        """A new campaign; a name already taken is a :class:`StoreError`."""
        if not name or len(name) > NAME_LENGTH:
            raise StoreError("CAMPAIGN", f"name of {len(name)} characters",
                             expected=f"1 to {NAME_LENGTH} characters")
        with self.engine.begin() as conn:
            if conn.execute(select(campaigns_table.c.id).where(
                    campaigns_table.c.name == name)).first() is not None:
                raise StoreError(self.location, f"campaign {name!r} exists",
                                 expected="a new campaign name")
            conn.execute(campaigns_table.insert().values(
                name=name, version=OD_SCHEMA_VERSION, created_at=now(),
                **{**settings, "seed": str(int(settings["seed"]))}))
        return self.campaign(name)

    @store_errors
    def campaign(self, name: str) -> CampaignRow:
        with self.engine.connect() as conn:
            r = conn.execute(select(campaigns_table).where(
                campaigns_table.c.name == name)).first()
        if r is None:
            raise StoreError(self.location, f"no campaign {name!r}",
                             expected="a campaign made with 'assay campaign new'")
        return CampaignRow(int(r.id), r.name, r.dataset, r.annotator,
                           None if r.corpus_units is None else int(r.corpus_units),
                           float(r.confidence), float(r.half_width), int(r.submission_cap),
                           None if r.campaign_cap is None else int(r.campaign_cap), int(r.seed))

    @store_errors
    def set_corpus_units(self, campaign_id: int, n: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(campaigns_table).where(campaigns_table.c.id == campaign_id)
                         .values(corpus_units=int(n)))

    # -- systems and their outputs -----------------------------------------------------------
    @store_errors
    def add_system(self, campaign_id: int, name: str, fingerprint: str, items: list[str],
                   structure: pd.DataFrame | None = None) -> tuple[SystemRow, bool]:
        """Record a submission (its output and the items' structure) unless it exists; returns
        the row and whether it existed. The same name with another output is a
        :class:`StoreError` (a system's output never changes under its name)."""
        if not name or len(name) > NAME_LENGTH:
            raise StoreError("--system", f"name of {len(name)} characters",
                             expected=f"1 to {NAME_LENGTH} characters")
        s = systems_table
        key = (s.c.campaign_id == campaign_id) & (s.c.name == name)
        with self.engine.begin() as conn:
            row = conn.execute(select(s).where(key)).first()
            if row is not None:
                if row.fingerprint != fingerprint:
                    raise StoreError(self.location, f"system {name!r} was submitted with another "
                                     "output", expected="the same output, or a new --system name")
                return _system(row), True
            conn.execute(s.insert().values(campaign_id=campaign_id, name=name,
                                           fingerprint=fingerprint, size=len(items), finished=0,
                                           created_at=now()))
            row = conn.execute(select(s).where(key)).one()
            rows = [{"campaign_id": campaign_id, "item": k} for k in items]
            if structure is not None:
                cols = [c for c in STRUCTURE if c in structure.columns]
                for r, (_, vals) in zip(rows, structure[cols].iterrows()):
                    r.update({c: None if pd.isna(vals[c]) else str(vals[c]) for c in cols})
            for a in range(0, len(rows), _CHUNK):
                conn.execute(self.labels._insert(items_table), rows[a:a + _CHUNK])
            out = [{"system_id": int(row.id), "item": k} for k in items]
            for a in range(0, len(out), _CHUNK):
                conn.execute(self.labels._insert(outputs_table), out[a:a + _CHUNK])
        return _system(row), False

    @store_errors
    def systems(self, campaign_id: int) -> list[SystemRow]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(systems_table).where(
                systems_table.c.campaign_id == campaign_id).order_by(systems_table.c.id)).all()
        return [_system(r) for r in rows]

    @store_errors
    def outputs(self, campaign_id: int) -> pd.DataFrame:
        """(system_id, item) of every submission of the campaign."""
        o, s = outputs_table, systems_table
        q = select(o.c.system_id, o.c.item).join(s, s.c.id == o.c.system_id).where(
            s.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            # plain tuples, here and below: pandas probes every Row object (slow), not a tuple
            rows = [tuple(r) for r in conn.execute(q)]
        return pd.DataFrame(rows, columns=["system_id", "item"])

    @store_errors
    def finish(self, system_id: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(systems_table).where(systems_table.c.id == system_id)
                         .values(finished=1))

    # -- draws -------------------------------------------------------------------------------
    @store_errors
    def add_draws(self, campaign_id: int, system_id: int, round_: int, items: Iterable[str],
                  probability: float | Iterable[float], proposal: str = "own",
                  fill: Mapping[str, float] | None = None) -> None:
        """Record a round's draws (``probability`` one for all, or one per draw) and, with the
        first draws of a fill proposal, its density per item (``fill``), in one transaction."""
        items = list(items)
        probs = ([float(probability)] * len(items) if np.ndim(probability) == 0
                 else [float(p) for p in probability])     # type: ignore[union-attr]
        rows = [{"campaign_id": campaign_id, "system_id": system_id, "round": round_,
                 "proposal": proposal, "position": k, "item": it, "probability": p}
                for k, (it, p) in enumerate(zip(items, probs))]
        with self.engine.begin() as conn:
            if fill:
                dens = [{"system_id": system_id, "item": k, "density": float(v)}
                        for k, v in fill.items()]
                for a in range(0, len(dens), _CHUNK):
                    conn.execute(self.labels._insert(fill_table), dens[a:a + _CHUNK])
            for a in range(0, len(rows), _CHUNK):
                conn.execute(self.labels._insert(od_draws_table), rows[a:a + _CHUNK])

    @store_errors
    def draws(self, campaign_id: int) -> pd.DataFrame:
        """Every draw in the order made: system_id, round, proposal, item, probability."""
        d = od_draws_table
        q = select(d.c.system_id, d.c.round, d.c.proposal, d.c.item, d.c.probability).where(
            d.c.campaign_id == campaign_id).order_by(d.c.id)
        with self.engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(q)]
        return pd.DataFrame(rows, columns=["system_id", "round", "proposal", "item", "probability"])

    @store_errors
    def structure(self, campaign_id: int) -> pd.DataFrame:
        """The items' structure columns (item, unit, subject, relation, object)."""
        t = items_table
        q = select(t.c.item, *[t.c[c] for c in STRUCTURE]).where(t.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(q)]
        return pd.DataFrame(rows, columns=["item", *STRUCTURE])

    @store_errors
    def fills(self, campaign_id: int) -> pd.DataFrame:
        """(system_id, item, density) of every fill proposal of the campaign."""
        fl, s = fill_table, systems_table
        q = select(fl.c.system_id, fl.c.item, fl.c.density).join(
            s, s.c.id == fl.c.system_id).where(s.c.campaign_id == campaign_id)
        with self.engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(q)]
        return pd.DataFrame(rows, columns=["system_id", "item", "density"])

    @store_errors
    def rounds(self, system_id: int) -> int:
        """The number of sampling rounds stored for a system."""
        with self.engine.connect() as conn:
            r = conn.execute(select(func.max(od_draws_table.c.round)).where(
                od_draws_table.c.system_id == system_id)).scalar()
        return 0 if r is None else int(r) + 1

    # -- exhaustively annotated units --------------------------------------------------------
    @store_errors
    def add_units(self, campaign_id: int, truth: Mapping[str, list[str]]) -> None:
        """Record units and their true items in one transaction; a unit already recorded with
        other true items is a :class:`StoreError` (nothing is written)."""
        have = self.units(campaign_id)
        for u, items in truth.items():
            if u in have and have[u] != set(items):
                raise StoreError(self.location, f"unit {u!r} is already annotated with other "
                                 "true items", expected="each unit annotated once")
        new = {u: items for u, items in truth.items() if u not in have}
        with self.engine.begin() as conn:
            if new:
                conn.execute(self.labels._insert(units_table), [
                    {"campaign_id": campaign_id, "unit": u, "created_at": now()} for u in new])
            rows = [{"campaign_id": campaign_id, "unit": u, "item": it}
                    for u, items in new.items() for it in set(items)]
            for a in range(0, len(rows), _CHUNK):
                conn.execute(self.labels._insert(unit_truth_table), rows[a:a + _CHUNK])

    @store_errors
    def units(self, campaign_id: int) -> dict[str, set[str]]:
        with self.engine.connect() as conn:
            us = conn.execute(select(units_table.c.unit).where(
                units_table.c.campaign_id == campaign_id)).scalars().all()
            rows = conn.execute(select(unit_truth_table.c.unit, unit_truth_table.c.item).where(
                unit_truth_table.c.campaign_id == campaign_id)).all()
        out: dict[str, set[str]] = {u: set() for u in us}
        for r in rows:
            out.setdefault(r.unit, set()).add(r.item)
        return out


def _system(r: Any) -> SystemRow:
    return SystemRow(int(r.id), r.name, r.fingerprint, int(r.size), bool(r.finished))


def fingerprint(items: list[str]) -> str:
    """sha256 of a system's sorted item keys."""
    import hashlib
    return hashlib.sha256(json.dumps(sorted(items)).encode("utf-8")).hexdigest()



__all__ = ["CampaignRow", "OnDemandStore", "STRUCTURE", "SystemRow", "fingerprint"]
