"""The Fraud page's figures (docs/fraud.md#the-fraud-page): refused clicks by reason and
day, the riskiest addresses, networks and players (refused clicks and held conversions
counted together), and the latest events set aside by anti-cheat rules. Staff see
everything; a designer what concerns their studio's offers (`studio_id`, as
`conversions.scope` gives it).
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from api.conversions import visible_ids
from api.fraud import FlagRow, cheat_flags
from models import ConversionStatus, Game
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import quest as _quest
from models.tables import refused_click as _refused
from models.types import utcnow

DAYS = 14  # the window the page looks back over
TOP = 10
_game: sa.Table = Game.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Count:
    label: str
    count: int


@dataclass(frozen=True)
class DayCounts:
    day: str
    total: int
    by_reason: str  # "ip_rate 20, country 3"


@dataclass(frozen=True)
class Overview:
    held: int
    refused: int
    reasons: list[Count]
    days: list[DayCounts]
    ips: list[Count]
    networks: list[Count]
    uids: list[Count]
    flags: list[FlagRow]


def _studio_offers(studio_id: str) -> sa.ColumnElement[bool]:
    """A refused click on one of the studio's missions or quests."""
    games = sa.select(_game.c.id).where(_game.c.studio_id == studio_id)
    missions = sa.select(_mission.c.id).where(_mission.c.game_id.in_(games))
    quests = sa.select(_quest.c.id).where(_quest.c.game_id.in_(games))
    return sa.or_(_refused.c.offer_id.in_(missions), _refused.c.offer_id.in_(quests))


def network_of(ip: str) -> str:
    """The /24 (IPv4) or /48 (IPv6) an address belongs to."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    prefix = 24 if address.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def overview(*, session: Session, studio_id: str | None, now: datetime | None = None) -> Overview:
    now = now or utcnow()
    since = now - timedelta(days=DAYS)
    refused_where = [_refused.c.created_at >= since]
    if studio_id is not None:
        refused_where.append(_studio_offers(studio_id))
    day = sa.func.date(_refused.c.created_at)
    by_day_reason = session.execute(
        sa.select(day.label("day"), _refused.c.reason, sa.func.count())
        .where(*refused_where)
        .group_by(day, _refused.c.reason)
    ).all()
    reasons: Counter[str] = Counter()
    days: dict[str, Counter[str]] = {}
    for on, reason, count in by_day_reason:
        reasons[reason] += count
        days.setdefault(str(on), Counter())[reason] += count
    held_ips = session.execute(
        sa.select(_click.c.ip, sa.func.count())
        .select_from(_conversion.join(_click, _click.c.id == _conversion.c.click_id))
        .where(
            _conversion.c.id.in_(visible_ids(studio_id)),
            _conversion.c.status == ConversionStatus.PENDING,
        )
        .group_by(_click.c.ip)
    ).all()
    ips: Counter[str] = Counter(dict(held_ips))
    for ip, count in session.execute(
        sa.select(_refused.c.ip, sa.func.count()).where(*refused_where).group_by(_refused.c.ip)
    ):
        ips[ip] += count
    networks: Counter[str] = Counter()
    for ip, count in ips.items():
        networks[network_of(ip)] += count
    uids = session.execute(
        sa.select(_refused.c.uid, sa.func.count())
        .where(*refused_where, _refused.c.uid.is_not(None), _refused.c.uid != "")
        .group_by(_refused.c.uid)
        .order_by(sa.func.count().desc())
        .limit(TOP)
    ).all()
    held = session.scalar(
        sa.select(sa.func.count()).where(
            _conversion.c.id.in_(visible_ids(studio_id)),
            _conversion.c.status == ConversionStatus.PENDING,
        )
    )
    return Overview(
        held=held or 0,
        refused=sum(reasons.values()),
        reasons=[Count(r, c) for r, c in reasons.most_common()],
        days=[
            DayCounts(on, sum(c.values()), ", ".join(f"{r} {n}" for r, n in c.most_common()))
            for on, c in sorted(days.items(), reverse=True)
        ],
        ips=[Count(ip, c) for ip, c in ips.most_common(TOP)],
        networks=[Count(n, c) for n, c in networks.most_common(TOP)],
        uids=[Count(uid, c) for uid, c in uids],
        flags=cheat_flags(session=session, studio_id=studio_id),
    )
