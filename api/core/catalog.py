"""The catalog version: one row every process reads to learn that what it keeps in memory
of missions, quests, pools and a game's webhook endpoints changed (api/missions/index.py
reloads its index when it moved). Every change bumps it in the transaction that makes it."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlmodel import Session

from api.core.changes import mark
from api.core.sql import insert_ignore
from models.tables import catalog_version as _version

_READ_VERSION = sa.select(_version.c.version).where(_version.c.id == 1)  # every request reads it
# The same, to read alongside another query in one round trip.
VERSION_SUBQUERY = _READ_VERSION.scalar_subquery().label("version")


def read_version(session: Session | Connection) -> int:
    version = session.execute(_READ_VERSION).scalar()
    return int(version or 0)


def bump(session: Session | Connection) -> None:
    """Mark the catalog changed; call in the transaction that changes missions, quests,
    pools or webhook endpoints, or that fills an offer up (a cap or start cap reached)."""
    insert_ignore(session, _version, {"id": 1, "version": 0}, conflict=("id",))
    session.execute(
        sa.update(_version).where(_version.c.id == 1).values(version=_version.c.version + 1)
    )
    mark(session)  # every process's kept version drops when this commits
