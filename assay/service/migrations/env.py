"""Alembic environment of the service's tables, run programmatically by
:func:`assay.service.migrate.upgrade` on the caller's connection (no alembic.ini)."""
from __future__ import annotations

from alembic import context

from assay.service.schema import service_metadata

VERSION_TABLE = "assay_svc_alembic"

conn = context.config.attributes["connection"]
context.configure(connection=conn, target_metadata=service_metadata,
                  version_table=VERSION_TABLE, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
