"""Is this offer open now: the one predicate, in its SQL form and its Python form side by side.

An offer is **running** when it is active and not expired (`expiration_date` unset or later
than now). A mission is **under its cap** while `cap` is unset or `conversions < cap`; a quest
is **under its start cap** while `start_cap` is unset or `starts < start_cap`. An offer is
**open** when it is running and under its cap. The listing shows open offers, a tracking
link refuses the others (410), and a conversion or a quest's new player is counted only
under the cap, in the same conditional `UPDATE`.

Each SQL function takes a Core table (or alias) with the offer's columns; each Python
function takes anything with the same attributes (an ORM row or a Core row). A domain test
checks both forms agree on a table of cases, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement


def running_sql(table: Any, now: datetime) -> ColumnElement[bool]:
    return sa.and_(
        table.c.is_active,
        sa.or_(table.c.expiration_date.is_(None), table.c.expiration_date > now),
    )


def running(offer: Any, now: datetime) -> bool:
    return bool(offer.is_active) and (offer.expiration_date is None or offer.expiration_date > now)


def under_cap_sql(mission: Any) -> ColumnElement[bool]:
    return sa.or_(mission.c.cap.is_(None), mission.c.conversions < mission.c.cap)


def under_cap(mission: Any) -> bool:
    return mission.cap is None or mission.conversions < mission.cap


def under_start_cap_sql(quest: Any) -> ColumnElement[bool]:
    return sa.or_(quest.c.start_cap.is_(None), quest.c.starts < quest.c.start_cap)


def under_start_cap(quest: Any) -> bool:
    return quest.start_cap is None or quest.starts < quest.start_cap


def mission_open_sql(mission: Any, now: datetime) -> ColumnElement[bool]:
    return sa.and_(running_sql(mission, now), under_cap_sql(mission))


def mission_open(mission: Any, now: datetime) -> bool:
    return running(mission, now) and under_cap(mission)


def quest_open_sql(quest: Any, now: datetime) -> ColumnElement[bool]:
    """The quest's own part; the listing also wants one open mission inside it."""
    return sa.and_(running_sql(quest, now), under_start_cap_sql(quest))


def quest_open(quest: Any, now: datetime) -> bool:
    return running(quest, now) and under_start_cap(quest)
