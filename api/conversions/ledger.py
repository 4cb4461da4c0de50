"""Conversions after they are made: finding them, and reversing one
(docs/publisher-integration.md#statuses-and-reversals).

A conversion is approved when made. Staff, and the designers of the studio whose game the
offer belongs to, may reverse an approved one with a reason: it becomes reversed once (a
second reversal is refused, also when two arrive together), counts as reversed payout in
reports, and its reversal postback joins the outbox in the same transaction. The
dispatcher sends it after the conversion's own postback has been delivered or given up,
so the publisher hears of both in order. Pending and rejected are the review's states
(conversions held for review); neither can be reversed, since neither was paid.

A reversed conversion gives its places under the mission's caps back in the same
transaction, as a rejected one does (`free_places`): under its `cap` and in every counter
it took (the period caps of the period it was counted in, its offerwall's cap), since a cap
counts the players the game gets, and a reversed one it did not get. Each place freed goes
to the earliest completion waiting for it, if any (docs/missions.md#caps)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from api import audit
from api.accounts import Account
from api.core.config import get_settings
from api.core.paging import Window, paged
from api.core.refusals import DomainError
from api.economics import budgets
from api.fraud import Policy
from api.missions import bump, pay_waiting
from api.postbacks import outbox as postbacks
from api.webhooks.conversions import tell_decided
from models import ConversionStatus, Game, PostbackKind, Role
from models.tables import cap_count as _cap_count
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import game_user as _game_user
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
from models.types import utcnow

REASON_MIN, REASON_MAX = 3, 500
# The scope of a designer without a studio: no game has this studio id, so they see no
# conversion (None would be every one).
NO_STUDIO = ""
_game: sa.Table = Game.__table__  # type: ignore[attr-defined]


class ConversionError(DomainError, ValueError):
    """A reversal the rules refuse, or a conversion the account may not see."""


@dataclass(frozen=True)
class ConversionRow:
    id: int
    transaction_id: str
    created_at: datetime
    game: str
    mission: str
    mission_id: str
    publisher: str
    uid: str  # the player's id at the publisher
    platform_user_id: str
    payout_micros: int  # USD millionths
    status: str
    reversed_at: datetime | None
    reversal_reason: str
    reversed_by: str
    # Review (docs/fraud.md#the-review-queue): the risk signals, when a held one is
    # approved by itself (None when flagged or decided), who decided, and the note.
    signals: str = ""
    review_due_at: datetime | None = None
    reviewed_by: str = ""
    review_note: str = ""
    # The offerwall's test player's (docs/publisher-integration.md#the-test-player).
    test: bool = False


def scope(account: Account) -> str | None:
    """The `studio_id` an account searches and reverses with: None (every conversion) for
    staff, their studio for a designer, and `NO_STUDIO` for a designer without one, so a
    missing studio never widens what a designer sees."""
    if account.role == Role.STAFF:
        return None
    return account.studio_id or NO_STUDIO


def _visible(studio_id: str | None) -> sa.ColumnElement[bool]:
    """Every conversion for staff (None); a designer's studio's games' otherwise."""
    if studio_id is None:
        return sa.true()
    return _game.c.studio_id == studio_id


def visible_ids(studio_id: str | None) -> sa.Select:
    """The ids of the conversions `studio_id` may see (None: all), to narrow further."""
    return (
        sa.select(_conversion.c.id)
        .select_from(
            _conversion.join(_mission, _mission.c.id == _conversion.c.mission_id).join(
                _game, _game.c.id == _mission.c.game_id
            )
        )
        .where(_visible(studio_id))
    )


def _listing() -> sa.Select:
    """The columns of a `ConversionRow`, newest first, before any filter."""
    return (
        sa.select(
            _conversion.c.id,
            _conversion.c.transaction_id,
            _conversion.c.created_at,
            _game.c.name.label("game"),
            _mission.c.title,
            _mission.c.id.label("mission_id"),
            _offerwall.c.name.label("publisher"),
            _click.c.uid,
            _conversion.c.platform_user_id,
            _conversion.c.payout_micros,
            _conversion.c.status,
            _conversion.c.reversed_at,
            _conversion.c.reversal_reason,
            _conversion.c.reversed_by,
            _conversion.c.signals,
            _conversion.c.review_due_at,
            _conversion.c.reviewed_by,
            _conversion.c.review_note,
            _conversion.c.test,
            _conversion.c.period,
            _conversion.c.stage,
            _mission.c.stages,
        )
        .select_from(
            _conversion.join(_mission, _mission.c.id == _conversion.c.mission_id)
            .join(_game, _game.c.id == _mission.c.game_id)
            .join(_offerwall, _offerwall.c.id == _conversion.c.offerwall_id)
            .join(_click, _click.c.id == _conversion.c.click_id)
        )
        .order_by(_conversion.c.created_at.desc(), _conversion.c.id.desc())
    )


def search(
    *,
    session: Session,
    studio_id: str | None,
    text: str = "",
    status: str = "",
    test: bool | None = None,
    page: int = 1,
) -> Window[ConversionRow]:
    """Conversions newest first, those `studio_id` may see (None: all). `text` matches a
    transaction id, the publisher's uid, a platform user id, the game's own user id, a
    mission id exactly, or part of a mission's title. `test`: the test player's only
    (True), real players' only (False), or both (None)."""
    query = _listing().where(_visible(studio_id))
    if status:
        query = query.where(_conversion.c.status == status)
    if test is not None:
        query = query.where(_conversion.c.test if test else sa.not_(_conversion.c.test))
    text = text.strip()
    if text:
        game_user = (
            sa.select(_game_user.c.id)
            .where(
                _game_user.c.platform_user_id == _conversion.c.platform_user_id,
                _game_user.c.game_id == _mission.c.game_id,
                _game_user.c.user_id == text,
            )
            .exists()
        )
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(
            sa.or_(
                _conversion.c.transaction_id == text,
                _click.c.uid == text,
                _conversion.c.platform_user_id == text,
                _mission.c.id == text,
                _mission.c.title.ilike(f"%{escaped}%", escape="\\"),
                game_user,
            )
        )
    rows, total, page, pages = paged(session, query, page)
    return Window([_row(r) for r in rows], total, page, pages)


def mission_label(title: str, period: str | None, stage: int | None, stages: int) -> str:
    """A conversion's mission as its lines say it: a ladder's stage and a recurring
    mission's period after the title ("Kill ladder · stage 2 of 3")."""
    parts = [title]
    if stage:
        parts.append(f"stage {stage} of {stages}")
    if period:
        parts.append(period)
    return " · ".join(parts)


def _row(r: sa.Row) -> ConversionRow:
    return ConversionRow(
        id=r.id,
        transaction_id=r.transaction_id,
        created_at=r.created_at,
        game=r.game,
        mission=mission_label(r.title, r.period, r.stage, len(r.stages or ())),
        mission_id=r.mission_id,
        publisher=r.publisher,
        uid=r.uid or "",
        platform_user_id=r.platform_user_id,
        payout_micros=r.payout_micros,
        status=r.status,
        reversed_at=r.reversed_at,
        reversal_reason=r.reversal_reason or "",
        reversed_by=r.reversed_by or "",
        signals=", ".join(r.signals or []),
        review_due_at=r.review_due_at,
        reviewed_by=r.reviewed_by or "",
        review_note=r.review_note or "",
        test=bool(r.test),
    )


def reverse(
    *,
    session: Session,
    transaction_id: str,
    reason: str,
    actor: str,
    studio_id: str | None,
    policy: Policy | None = None,
) -> ConversionRow:
    """Reverse an approved conversion the actor may see (`studio_id` as in `search`), with
    a reason the publisher receives as {reason}; its reversal postback is queued in the
    same transaction, and its places under the mission's caps are freed (`take_back`,
    `policy` screening a waiting completion paid: None, this process's settings). Refused:
    an unknown or hidden conversion (the same answer), a reason out of 3 to 500
    characters, a conversion not approved (reversed twice, pending, rejected)."""
    reason = " ".join(reason.split())
    if not REASON_MIN <= len(reason) <= REASON_MAX:
        raise ConversionError(
            f"Give a reason of {REASON_MIN} to {REASON_MAX} characters.", field="reason"
        )
    found = session.execute(
        sa.select(_conversion.c.id, _conversion.c.offerwall_id, _conversion.c.mission_id)
        .select_from(
            _conversion.join(_mission, _mission.c.id == _conversion.c.mission_id).join(
                _game, _game.c.id == _mission.c.game_id
            )
        )
        .where(_conversion.c.transaction_id == transaction_id.strip(), _visible(studio_id))
    ).first()
    if found is None:
        raise ConversionError("No such conversion.")
    now = utcnow()
    # One statement decides: of two reversals at once, one finds it approved.
    result = session.execute(
        sa.update(_conversion)
        .where(_conversion.c.id == found.id, _conversion.c.status == ConversionStatus.APPROVED)
        .values(
            status=ConversionStatus.REVERSED,
            reversed_at=now,
            reversal_reason=reason,
            reversed_by=actor[:320],
        )
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        status = session.scalar(sa.select(_conversion.c.status).where(_conversion.c.id == found.id))
        raise ConversionError(_not_reversible(status))
    take_back(session, [found.id], now, policy)
    postbacks.enqueue(
        session,
        conversion_id=found.id,
        offerwall_id=found.offerwall_id,
        now=now,
        kind=PostbackKind.REVERSAL,
    )
    tell_decided(session, [found.id], "conversion.reversed", now, reason=reason)
    # The trail's head is the transaction's last lock, as in every writer: no cycle.
    audit.record(
        session,
        "conversion.reversed",
        target_type="conversion",
        target_id=found.id,
        target_name=transaction_id.strip(),
        scope=("offerwall", found.offerwall_id),
        changes={"status": ["approved", "reversed"], "reversal_reason": [None, reason]},
        at=now,
    )
    # Read back by its id: the text of a transaction id may also be another player's uid.
    return _row(session.execute(_listing().where(_conversion.c.id == found.id)).one())


def _not_reversible(status: str | None) -> str:
    """Why a conversion that is not approved (any more) cannot be reversed."""
    if status == ConversionStatus.REVERSED:
        return "This conversion is already reversed."
    return f"This conversion is {status}: only an approved conversion can be reversed."


def take_back(
    session: Session, conversion_ids: list[int], now: datetime, policy: Policy | None = None
) -> None:
    """Give what conversions taken back (rejected or reversed) held back: their places
    under their missions' caps (`free_places`), then their revenue to the budgets they
    drew on; then each freed place goes to the earliest completion waiting for it, paid
    as a completion is (`pay_waiting`, screened by `policy`: None, this process's
    settings, as the server's own requests are), and the offer listings show a mission
    again. The catalog's row is locked last, as a conversion locks it."""
    taken = session.execute(
        sa.select(_conversion.c.mission_id, _conversion.c.cap_places)
        .where(_conversion.c.id.in_(conversion_ids), sa.not_(_conversion.c.test))
        .order_by(_conversion.c.id)
    ).all()
    free_places(session, taken)
    budgets.refund(session, conversion_ids)
    policy = policy or Policy.from_settings(get_settings())
    for row in taken:
        pay_waiting(
            session, mission_id=row.mission_id, places=row.cap_places or (), now=now, policy=policy
        )
    bump(session)


def free_places(session: Session, taken: Sequence[sa.Row]) -> None:
    """Give the places of conversions taken back (their `mission_id` and `cap_places`)
    back: one under the mission's `cap` each, and one in every counter each took (the
    period caps of the period it was counted in, its offerwall's cap; none recorded before
    they were). Missions in id order as conversions lock them, each one's counters after
    its row. The test player's conversions took no place and are not among them."""
    per_mission = Counter(row.mission_id for row in taken)
    per_counter = Counter(
        (row.mission_id, scope, period) for row in taken for scope, period in row.cap_places or ()
    )
    for mission_id in sorted(per_mission):
        session.execute(
            sa.update(_mission)
            .where(_mission.c.id == mission_id)
            .values(
                conversions=sa.case(
                    (_mission.c.conversions < per_mission[mission_id], 0),
                    else_=_mission.c.conversions - per_mission[mission_id],
                )
            )
        )
        for (of, scope, period), count in sorted(per_counter.items()):
            if of != mission_id:
                continue
            session.execute(
                sa.update(_cap_count)
                .where(
                    _cap_count.c.mission_id == mission_id,
                    _cap_count.c.scope == scope,
                    _cap_count.c.period == period,
                )
                .values(
                    count=sa.case((_cap_count.c.count < count, 0), else_=_cap_count.c.count - count)
                )
            )
