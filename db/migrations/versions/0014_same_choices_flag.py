"""same-choices flag: raised on the items already stored

A new text rule (``db.flag_rules.same_choices``) flags a revision two of whose choices
or events read the same.  Revisions made from now on get it when they are made; this
migration raises it on every current revision already stored whose text calls for it
(``db.flag_recompute.backfill_text_flag``: nothing else is recomputed or removed; one audit event
by ``migration`` counts what was added).  No table changes.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel import Session

from db.flag_recompute import backfill_text_flag
from db.vocabulary import FlagName

revision: str = "0014_same_choices_flag"
down_revision: str | None = "0013_review_filters"


def upgrade() -> None:
    # The session joins the migration's transaction: all of it, or none.
    with Session(bind=op.get_bind()) as session:
        backfill_text_flag(session, FlagName.SAME_CHOICES, "migration")
        session.flush()


def downgrade() -> None:
    # A flag name vetbench at 0013 does not know is a malformed row to it: none may stay.
    op.execute(sa.text("DELETE FROM item_flag WHERE name = :name").bindparams(name="same-choices"))
