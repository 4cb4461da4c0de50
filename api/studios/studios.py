"""Studios, their designers and their games, as the portal shows them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api import audit
from api.accounts import Account, AccountError, create_user
from models import Game, GameCredential, Role, Studio, User


@dataclass(frozen=True)
class StudioRow:
    id: str
    name: str
    designers: str  # emails, comma-separated
    games: int


@dataclass(frozen=True)
class GameRow:
    id: str
    name: str
    studio: str
    live_credentials: int
    created_at: datetime


@dataclass(frozen=True)
class CredentialRow:
    client_id: str
    name: str
    created_at: datetime
    revoked_at: datetime | None  # None while live


def create_studio(*, session: Session, name: str) -> Studio:
    studio = Studio(name=_free_name(session, name))
    session.add(studio)
    session.flush()
    audit.note(session, "studio.created", _target(studio), {"name": [None, studio.name]})
    return studio


def _target(studio: Studio) -> audit.Target:
    return audit.Target.of_studio("studio", studio.id, studio.name, studio.id)


def rename_studio(*, session: Session, studio_id: str, name: str) -> Studio:
    """Give a studio another name, unique like a new one's (its own name is allowed)."""
    studio = session.get(Studio, studio_id) if studio_id else None
    if studio is None:
        raise AccountError("No such studio.")
    wanted = _free_name(session, name, keep=studio.id)
    renamed = ({"name": studio.name}, {"name": wanted})
    audit.note_changed(session, "studio.renamed", _target(studio), *renamed)
    studio.name = wanted
    session.add(studio)
    session.flush()
    return studio


def _free_name(session: Session, name: str, *, keep: str = "") -> str:
    """A studio name, checked: 2 to 200 characters, used by no other studio (whatever
    the case of its letters)."""
    name = name.strip()
    if not 2 <= len(name) <= 200:
        raise AccountError("A studio's name is 2 to 200 characters.", "name")
    taken = session.exec(
        select(Studio.id).where(sa.func.lower(Studio.name) == name.lower(), Studio.id != keep)
    ).first()
    if taken:
        raise AccountError("A studio with this name exists.", "name")
    return name


def add_designer(
    *, session: Session, studio_id: str, email: str, password: str, name: str = ""
) -> User:
    if session.get(Studio, studio_id) is None:
        raise AccountError("No such studio.", "studio")
    return create_user(
        session=session,
        email=email,
        password=password,
        role=Role.DESIGNER,
        name=name,
        studio_id=studio_id,
    )


def list_studios(*, session: Session) -> list[StudioRow]:
    studios = session.exec(select(Studio).order_by(col(Studio.name))).all()
    designers: dict[str, list[str]] = {}
    for studio_id, email in session.exec(
        select(User.studio_id, User.email)
        .where(User.role == Role.DESIGNER)
        .order_by(col(User.email))
    ).all():
        designers.setdefault(studio_id or "", []).append(email)
    games = dict(
        session.execute(
            sa.select(col(Game.studio_id), sa.func.count()).group_by(col(Game.studio_id))
        ).all()
    )
    return [
        StudioRow(s.id, s.name, ", ".join(designers.get(s.id, [])), int(games.get(s.id, 0)))
        for s in studios
    ]


def games_for(*, session: Session, account: Account) -> list[GameRow]:
    """The games an account manages, newest first: a designer's studio's, or all for staff."""
    live = (
        sa.select(sa.func.count())
        .where(
            col(GameCredential.game_id) == col(Game.id), col(GameCredential.revoked_at).is_(None)
        )
        .scalar_subquery()
    )
    query = (
        sa.select(Game, col(Studio.name), live)
        .outerjoin(Studio, col(Studio.id) == col(Game.studio_id))
        .order_by(col(Game.created_at).desc())
    )
    if account.role == Role.DESIGNER:
        query = query.where(col(Game.studio_id) == account.studio_id)
    return [
        GameRow(g.id, g.name, studio or "", int(n), g.created_at)
        for g, studio, n in session.execute(query).all()
    ]


def credentials(*, session: Session, game: Game) -> list[CredentialRow]:
    found = session.exec(
        select(GameCredential)
        .where(GameCredential.game_id == game.id)
        .order_by(col(GameCredential.created_at))
    ).all()
    return [CredentialRow(c.client_id, c.name, c.created_at, c.revoked_at) for c in found]
