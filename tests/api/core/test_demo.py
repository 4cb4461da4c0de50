"""`questwall demo` leaves data on every page: conversions, delivered postbacks, events."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import sqlalchemy as sa

from api.core.db import build_engine
from tests.live import cli, free_port


def test_the_demo_seeds_plays_and_delivers(tmp_path: Path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path),
        "SECRET_KEY": "demo-test-key",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    cli(env, "migrate")
    printed = cli(env, "demo", "--players", "40", "--receiver-port", str(free_port()))
    engine = build_engine(env["DATABASE_URL"])
    with engine.connect() as conn:
        count = lambda table: conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()  # noqa: E731
        conversions, clicks, events = count("conversion"), count("click"), count("event")
        refused = count("refused_click")
        delivered = conn.execute(
            sa.text("SELECT count(*) FROM postback WHERE status = 'delivered'")
        ).scalar_one()
        designers = conn.execute(
            sa.text("SELECT count(*) FROM portal_user WHERE role = 'designer'")
        ).scalar_one()
    # 40 players, more than one address may click in a minute: each has their own.
    assert clicks == 40 and refused == 0 and events > 40 and designers == 1
    assert conversions > 0 and delivered == conversions
    assert f"got {conversions} postbacks" in printed
