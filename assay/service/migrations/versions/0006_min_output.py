"""A campaign's smallest accepted output (min_output): a tiny output's scores would reveal the
labels of its few items (leaderboard probing).

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("assay_svc_campaign_settings") as batch:
        batch.add_column(sa.Column("min_output", sa.Integer(), nullable=False,
                                   server_default="20"))


def downgrade() -> None:
    with op.batch_alter_table("assay_svc_campaign_settings") as batch:
        batch.drop_column("min_output")
