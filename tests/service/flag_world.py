"""A campaign of the service's flag tests on SQLite or PostgreSQL (a fresh campaign name: the
PostgreSQL database is shared by the session), with the users of ``service_helpers`` and a
live flag written as :func:`assay.service.flags.check` writes it (under the campaign's lock)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import delete

from assay.labels.schema import now
from assay.labels.store import LabelStore
from assay.ondemand import OnDemandCampaign
from assay.service import auth, migrate, queue
from assay.service.queue import _lock_flag
from assay.service.schema import flags_table

from service_helpers import PASSWORD, USERS

BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])


def store_url(request, tmp_path, backend: str) -> str:
    return (str(tmp_path / "s.db") if backend == "sqlite"
            else request.getfixturevalue("postgres_url"))


class World:
    """A fresh campaign (queue k given) on the store at ``url``."""

    def __init__(self, url: str, k: int = 3) -> None:
        self.store = LabelStore(url)
        migrate.upgrade(self.store.engine)
        self.name = f"kb{uuid.uuid4().hex[:6]}"
        self.camp = OnDemandCampaign.create(self.store, self.name, annotator="consensus",
                                            corpus_units=10)
        queue.set_settings(self.store, self.name, queue.Settings(k=k))
        for who, role, team in USERS:
            if auth.user_by_name(self.store.engine, who) is None:
                auth.add_user(self.store.engine, who, role, PASSWORD, team)

    @property
    def row(self):
        return self.camp.row

    def flag(self, who: str, conn=None) -> None:
        """A live flag of ``who`` (a cleared one is replaced), under the campaign's lock."""
        if conn is None:
            with self.store.engine.begin() as c:
                _lock_flag(c, self.name)
                self.flag(who, c)
            return
        f = flags_table
        conn.execute(delete(f).where((f.c.campaign == self.name) & (f.c.annotator == who)))
        conn.execute(f.insert().values(campaign=self.name, annotator=who, flagged_at=now(),
                                       disagreements=11, compared=11))
