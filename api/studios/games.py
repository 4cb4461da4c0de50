"""Games and their credentials: create, list, add, rotate and revoke."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, select

from api import audit
from api.core.crypto import SecretBox, new_token, seal_client_secret
from api.core.refusals import DomainError
from models import Game, GameCredential
from models.types import utcnow

MAX_LIVE_CREDENTIALS = 2
MAX_CREDENTIAL_NAME = 60


class GameError(DomainError, ValueError):
    """A game that cannot be created as given."""


class CredentialError(DomainError, ValueError):
    """A credential operation that the rules forbid (e.g. a third live credential)."""


@dataclass(frozen=True)
class IssuedCredential:
    """A credential as shown once, at creation: the only time the secret is visible."""

    game_id: str
    credential_id: str
    client_id: str
    client_secret: str
    name: str = ""


def create_game(
    *, session: Session, box: SecretBox, name: str, studio_id: str | None = None
) -> IssuedCredential:
    """Create a game (for a studio, from the portal) and its first credential."""
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise GameError("a game's name must be 1 to 200 characters", "name")
    game = Game(name=name, studio_id=studio_id)
    session.add(game)
    session.flush()
    _note(session, game, "game.created", name=[None, name], studio_id=[None, studio_id])
    return add_credential(session=session, box=box, game_id=game.id)


def _note(session: Session, game: Game, action: str, **changes: list[Any]) -> None:
    """An audit event of the game, in its studio's scope."""
    audit.note(
        session, action, audit.Target.of_studio("game", game.id, game.name, game.studio_id), changes
    )


def add_credential(
    *, session: Session, box: SecretBox, game_id: str, name: str = ""
) -> IssuedCredential:
    """Issue a new credential; a game may hold two live ones at once. Unnamed, it is called
    "Key N" (N: the game's credentials so far, plus one); names are unique per game."""
    game = session.get(Game, game_id)
    if game is None:
        raise CredentialError(f"no game with id {game_id}")
    live = live_credentials(session=session, game_id=game_id)
    if len(live) >= MAX_LIVE_CREDENTIALS:
        raise CredentialError("This game already has two live credentials: revoke one first.")
    taken = set(
        session.exec(select(GameCredential.name).where(GameCredential.game_id == game_id)).all()
    )
    name = name.strip() or _free_name(taken)
    if len(name) > MAX_CREDENTIAL_NAME:
        raise CredentialError(
            f"A credential's name is at most {MAX_CREDENTIAL_NAME} characters.", "name"
        )
    if name in taken:
        raise CredentialError(f"This game already has a credential named “{name}”.", "name")
    secret = new_token("qw_cs_")
    client_id = new_token("qw_ci_", 12)
    credential = GameCredential(
        game_id=game_id,
        client_id=client_id,
        name=name,
        secret_sealed=seal_client_secret(box, secret, client_id=client_id),
        secret_digest=box.digest(secret),
    )
    session.add(credential)
    session.flush()
    # The client id names the credential; its secret is never a value.
    _note(session, game, "game.credential_created", client_id=[None, client_id], name=[None, name])
    return IssuedCredential(game_id, credential.id, credential.client_id, secret, name)


def _free_name(taken: set[str]) -> str:
    n = len(taken) + 1
    while f"Key {n}" in taken:
        n += 1
    return f"Key {n}"


def rotate_credential(
    *,
    session: Session,
    box: SecretBox,
    game_id: str,
    revoke_client_id: str | None = None,
    name: str = "",
) -> IssuedCredential:
    """Issue a new credential. With `revoke_client_id`, revoke that one in the same step;
    without it, the older credential stays live until it is revoked (zero-downtime rotation)."""
    if revoke_client_id:
        revoke_credential(session=session, game_id=game_id, client_id=revoke_client_id)
    return add_credential(session=session, box=box, game_id=game_id, name=name)


def revoke_credential(*, session: Session, game_id: str, client_id: str) -> GameCredential:
    """Revoke a credential: it stops working at once."""
    credential = session.exec(
        select(GameCredential).where(
            GameCredential.game_id == game_id, GameCredential.client_id == client_id
        )
    ).first()
    if credential is None:
        raise CredentialError(f"game {game_id} has no credential {client_id}")
    if credential.revoked_at is None:
        credential.revoked_at = utcnow()
        session.add(credential)
        session.flush()
        game = session.get(Game, game_id)
        if game is not None:
            _note(session, game, "game.credential_revoked", client_id=[client_id, None])
    return credential


def live_credentials(*, session: Session, game_id: str) -> list[GameCredential]:
    return list(
        session.exec(
            select(GameCredential)
            .where(GameCredential.game_id == game_id, GameCredential.revoked_at.is_(None))  # type: ignore[union-attr]
            .order_by(GameCredential.created_at)  # type: ignore[arg-type]
        )
    )


def list_games(*, session: Session) -> list[tuple[Game, list[GameCredential]]]:
    games = session.exec(select(Game).order_by(Game.created_at)).all()  # type: ignore[arg-type]
    result = []
    for game in games:
        creds = session.exec(select(GameCredential).where(GameCredential.game_id == game.id)).all()
        result.append((game, list(creds)))
    return result
