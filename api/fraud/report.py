"""What the fraud page shows (docs/fraud.md#the-fraud-page): refused clicks by reason and
day, the riskiest addresses, networks and players, events set aside by anti-cheat rules,
staff's blocklist, and each offerwall's rules. Staff see everything; a designer sees
what concerns their studio's offers (`studio_id`, as `conversions.scope` gives it).
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from api.conversions.ledger import visible_ids
from api.core.refusals import DomainError
from api.fraud import policy as fraud
from models import BlockKind, ConversionStatus, Game
from models.tables import blocked_entry as _blocked
from models.tables import cheat_flag as _cheat_flag
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
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
class FlagRow:
    at: str
    mission: str
    user_id: str
    event: str
    rule: str
    detail: str


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


def cheat_flags(
    *, session: Session, studio_id: str | None, game_id: str = "", user_id: str = "", limit=50
) -> list[FlagRow]:
    """Events anti-cheat rules set aside, newest first (a game's, a user's)."""
    query = (
        sa.select(
            _cheat_flag.c.created_at,
            _mission.c.title,
            _cheat_flag.c.user_id,
            _cheat_flag.c.event,
            _cheat_flag.c.rule,
            _cheat_flag.c.detail,
        )
        .select_from(
            _cheat_flag.join(_mission, _mission.c.id == _cheat_flag.c.mission_id).join(
                _game, _game.c.id == _cheat_flag.c.game_id
            )
        )
        .order_by(_cheat_flag.c.id.desc())
        .limit(limit)
    )
    if studio_id is not None:
        query = query.where(_game.c.studio_id == studio_id)
    if game_id:
        query = query.where(_cheat_flag.c.game_id == game_id)
    if user_id:
        query = query.where(_cheat_flag.c.user_id == user_id)
    return [
        FlagRow(f"{r.created_at:%Y-%m-%d %H:%M:%S}", r.title, r.user_id, r.event, r.rule, r.detail)
        for r in session.execute(query)
    ]


# --- staff's blocklist ----------------------------------------------------------------------


# The widest network one blocklist entry may name, per IP version.
WIDEST_PREFIX = {4: 8, 6: 24}


class BlocklistError(DomainError, ValueError):
    """A blocklist entry that cannot be added."""


@dataclass(frozen=True)
class BlockRow:
    id: int
    kind: str
    value: str
    note: str
    created_by: str
    created_at: str


def _normalized(kind: str, value: str) -> str:
    value = value.strip()
    if not value or "\x00" in value or len(value) > 255:
        raise BlocklistError("Enter 1 to 255 characters.", field="value")
    if kind == BlockKind.IP:
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            raise BlocklistError(f"{value} is not an IP address.", field="value") from None
    if kind == BlockKind.NETWORK:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise BlocklistError(
                f"{value} is not a network; write it as 203.0.113.0/24 or 2001:db8::/32.",
                field="value",
            ) from None
        # A typo such as 0.0.0.0/0 would refuse every player; no farm is that wide.
        widest = WIDEST_PREFIX[network.version]
        if network.prefixlen < widest:
            raise BlocklistError(
                f"Block at most a /{widest} at once ({value} is wider).", field="value"
            )
        return str(network)
    if kind == BlockKind.UID:
        return value
    raise BlocklistError("Choose IP address, network or uid.", field="kind")


def blocklist(*, session: Session) -> list[BlockRow]:
    rows = session.execute(sa.select(_blocked).order_by(_blocked.c.id.desc())).all()
    return [
        BlockRow(r.id, r.kind, r.value, r.note, r.created_by, f"{r.created_at:%Y-%m-%d %H:%M}")
        for r in rows
    ]


def block(*, session: Session, kind: str, value: str, note: str, actor: str) -> BlockRow:
    """Add an entry (staff only; the caller checks). Clicks it names are refused within
    seconds in every process."""
    value = _normalized(kind, value)
    note = " ".join(note.split())[:300]
    exists = session.scalar(
        sa.select(_blocked.c.id).where(_blocked.c.kind == kind, _blocked.c.value == value)
    )
    if exists is not None:
        raise BlocklistError(f"{value} is already blocked.", field="value")
    now = utcnow()
    new_id = session.execute(
        _blocked.insert()
        .values(kind=kind, value=value, note=note, created_by=actor[:320], created_at=now)
        .returning(_blocked.c.id)
    ).scalar_one()
    return BlockRow(new_id, kind, value, note, actor, f"{now:%Y-%m-%d %H:%M}")


def unblock(*, session: Session, entry_id: int) -> None:
    session.execute(_blocked.delete().where(_blocked.c.id == entry_id))


# --- offerwalls' rules --------------------------------------------------------------------


@dataclass(frozen=True)
class OfferwallRules:
    id: str
    name: str
    owid: str
    actions: dict[str, str]  # every signal, the default where the offerwall sets none
    review_postbacks: bool


def offerwall_rules(*, session: Session, policy: fraud.Policy) -> list[OfferwallRules]:
    rows = session.execute(
        sa.select(
            _offerwall.c.id,
            _offerwall.c.name,
            _offerwall.c.owid,
            _offerwall.c.fraud_actions,
            _offerwall.c.review_postbacks,
        )
        .where(_offerwall.c.owid.is_not(None))
        .order_by(_offerwall.c.name)
    ).all()
    return [
        OfferwallRules(
            r.id,
            r.name,
            r.owid or "",
            {s: policy.action(s, r.fraud_actions) for s in fraud.SIGNALS},
            bool(r.review_postbacks),
        )
        for r in rows
    ]


def set_offerwall_rules(
    *,
    session: Session,
    offerwall_id: str,
    actions: dict[str, str],
    review_postbacks: bool,
    policy: fraud.Policy,
) -> None:
    """Store an offerwall's rules: only the actions that differ from the defaults, so a
    later change of a default reaches every offerwall that did not choose otherwise."""
    checked = fraud.checked_actions(actions)
    defaults = policy.defaults()
    own = {s: a for s, a in checked.items() if a != defaults[s]}
    result = session.execute(
        sa.update(_offerwall)
        .where(_offerwall.c.id == offerwall_id)
        .values(fraud_actions=own, review_postbacks=review_postbacks)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise fraud.FraudRuleError("No such offerwall.")
