"""Fixtures of the service's tests (helpers in ``service_helpers``)."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

from service_helpers import Service, make_service  # noqa: E402

from assay.service import auth  # noqa: E402


@pytest.fixture(autouse=True)
def _quick_hashes(monkeypatch):
    """Cheaper argon2 parameters in tests (the service keeps argon2-cffi's defaults)."""
    from argon2 import PasswordHasher
    monkeypatch.setattr(auth, "_hasher", PasswordHasher(time_cost=1, memory_cost=8192))


@pytest.fixture(autouse=True)
def _decisions_settle_at_once(monkeypatch):
    """Jobs use a decision as soon as it is taken (the service holds it back UNDO_SECONDS for an
    undo: test_undo_of_the_deciding_vote sets the window itself)."""
    from assay.service import queue
    monkeypatch.setattr(queue, "UNDO_SECONDS", 0.0)


@pytest.fixture()
def service(tmp_path: Path) -> Service:
    return make_service(tmp_path)
