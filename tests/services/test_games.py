"""Games and their credentials (`api/services/games.py`), SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from api.core.db import write_session
from api.services import games
from tests.factories import make_game


def test_a_third_live_credential_is_refused(engine, box):
    game = make_game(engine, box)
    with write_session(engine) as session:
        games.add_credential(session=session, box=box, game_id=game.game_id)
    with pytest.raises(games.CredentialError), write_session(engine) as session:
        games.add_credential(session=session, box=box, game_id=game.game_id)
