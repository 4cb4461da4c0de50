"""`questwall offers import`, run as a user runs it: a file whose text no database can store
is refused under each field's path, and nothing is written (docs/missions.md)."""

from __future__ import annotations

import json
import os

import pytest
from sqlmodel import select

from api.core.db import new_session
from models import Mission
from tests.conftest import MASTER_KEY
from tests.factories import mission_data
from tests.live import run_cli


@pytest.mark.slow  # a real subprocess
def test_the_command_line_refuses_a_title_holding_nul_on_every_database(
    db_url, engine, tmp_path, game
):
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": MASTER_KEY,
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
    }
    path = tmp_path / "offers.json"
    missions = [mission_data(title="Duel\x00"), mission_data(tags=["pvp", "ranked\ud800"])]
    path.write_text(json.dumps({"gameId": game.game_id, "missions": missions}))

    refused = run_cli(env, "offers", "import", str(path))
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert "missions.0.title: Remove the NUL character: text cannot hold it." in refused.stderr
    assert (
        "missions.1.tags.1: Remove the broken character (U+D800): text cannot hold it."
        in refused.stderr
    )
    with new_session(engine) as session:
        assert session.exec(select(Mission)).all() == []
