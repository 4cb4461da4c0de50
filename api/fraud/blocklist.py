"""Staff's blocklist (docs/fraud.md#the-blocklist): IP addresses, networks and uids whose
clicks are refused, checked and stored normalised. Staff edit it on the Fraud page or with
`questwall fraud block`; the click screening (`api/tracking/screening.py`) reads it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from api import audit
from api.core.refusals import DomainError
from models import BlockKind
from models.tables import blocked_entry as _blocked
from models.types import utcnow

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
    created_at: datetime


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
    return [BlockRow(r.id, r.kind, r.value, r.note, r.created_by, r.created_at) for r in rows]


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
    added = {"kind": kind, "value": value, "note": note}
    audit.note_changed(session, "blocklist.added", _target(new_id, value), {}, added)
    return BlockRow(new_id, kind, value, note, actor, now)


def unblock(*, session: Session, entry_id: int) -> None:
    gone = session.execute(
        _blocked.delete()
        .where(_blocked.c.id == entry_id)
        .returning(_blocked.c.kind, _blocked.c.value, _blocked.c.note)
    ).first()
    if gone is not None:
        target = _target(entry_id, gone.value)
        audit.note_changed(session, "blocklist.removed", target, dict(gone._mapping), {})


def _target(entry_id: int, value: str) -> audit.Target:
    return audit.Target("blocked_entry", entry_id, value)
