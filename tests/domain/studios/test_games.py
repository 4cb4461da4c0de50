"""Games and their credentials (`api/studios/games.py`), SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from api.core.db import write_session
from api.studios import games
from tests.factories import make_game


def test_a_third_live_credential_is_refused(engine, box):
    game = make_game(engine, box)
    with write_session(engine) as session:
        games.add_credential(session=session, box=box, game_id=game.game_id)
    with pytest.raises(games.CredentialError), write_session(engine) as session:
        games.add_credential(session=session, box=box, game_id=game.game_id)


def test_credentials_are_named_key_n_unless_named_and_names_are_unique_per_game(engine, box):
    game = make_game(engine, box)
    other = make_game(engine, box, "Other")
    assert (game.name, other.name) == ("Key 1", "Key 1")
    with write_session(engine) as session:
        named = games.add_credential(
            session=session, box=box, game_id=game.game_id, name="  prod-key "
        )
    assert named.name == "prod-key"
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    with pytest.raises(games.CredentialError) as refused, write_session(engine) as session:
        games.add_credential(session=session, box=box, game_id=game.game_id, name="prod-key")
    assert refused.value.field == "name"
    assert "already has a credential named “prod-key”" in refused.value.message
    with write_session(engine) as session:
        third = games.add_credential(session=session, box=box, game_id=game.game_id)
    assert third.name == "Key 3"  # revoked ones keep their names
