"""Questwall behind PgBouncer in transaction mode, set up as docs/operations.md says
(DATABASE_POOLER=pgbouncer, DATABASE_DIRECT_URL): `questwall api --workers 2` and a
`questwall worker` serve 30 players who complete a capped mission at once with no 5xx,
the cap holds and every postback is delivered; and what a process keeps in memory follows
another process's change, heard on a connection of its own to PostgreSQL.

The concurrency tests that also run through PgBouncer carry `also_pgbouncer`
(tests/databases.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from api.core.changes import HEARD_MAX_AGE, UNHEARD_MAX_AGE, changes_of, mark
from api.core.db import build_engine, listen_url, new_session
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import postback as _postback
from tests.api.live_server import post_signed, serve_api, server_env
from tests.api.tracking_helpers import platform_id
from tests.databases import only_pgbouncer
from tests.factories import iso_now, make_game, make_mission, make_offerwall
from tests.live import ROOT
from tests.outbox import TEMPLATE, configure
from tests.pgbouncer import direct_url
from tests.receiver import running_receiver

pytestmark = [only_pgbouncer, pytest.mark.slow]

PLAYERS, CAP = 30, 10


@contextmanager
def running_worker(db_url: str, tmp_path: Path) -> Iterator[None]:
    """`questwall worker` on `db_url`, allowed to post back to the loopback receiver."""
    env = {**server_env(db_url, tmp_path), "POSTBACK_ALLOW_PRIVATE": "true"}
    with (tmp_path / "worker.log").open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "worker", "--threads", "4"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _delivered(engine: sa.Engine) -> int:
    with new_session(engine) as session:
        return session.execute(
            sa.select(sa.func.count()).where(_postback.c.status == "delivered")
        ).scalar_one()


def _play(url: str, game, mission_id: str, owid: str, player: str, together) -> list[int]:  # type: ignore[no-untyped-def]
    """One player on a client of their own: clicks the mission's link, is linked by the
    game, and once every player is linked completes the mission; the answers' statuses."""
    with httpx.Client(base_url=url, timeout=60) as http:
        clicked = http.get(f"/missions/{mission_id}", params={"owid": owid, "uid": player})
        if clicked.status_code != 302:
            together.wait()
            return [clicked.status_code]
        link = {"userId": player, "platformUserId": platform_id(clicked)}
        linked = post_signed(http, game, {"gameId": game.game_id, "identifiers": [link]})
        together.wait()
        event = {"userId": player, "event": "GAME_END", "time": iso_now(), "traits": {"kills": 12}}
        completed = post_signed(http, game, {"gameId": game.game_id, "events": [event]})
        return [clicked.status_code, linked.status_code, completed.status_code]


@pytest.mark.timeout(180)
def test_30_players_completing_a_capped_mission_at_once_get_no_5xx_and_the_cap_holds(
    engine, db_url, box, tmp_path
):
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    mission = make_mission(engine, game.game_id, cap=CAP)
    together = threading.Barrier(PLAYERS)
    with running_receiver() as receiver:
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        with serve_api(db_url, tmp_path, workers=2) as url, running_worker(db_url, tmp_path):
            with ThreadPoolExecutor(PLAYERS) as pool:
                plays = [
                    pool.submit(_play, url, game, mission.id, wall.owid, f"p{n}", together)
                    for n in range(PLAYERS)
                ]
                statuses = [play.result() for play in plays]
            deadline = time.monotonic() + 30
            while _delivered(engine) < CAP and time.monotonic() < deadline:
                time.sleep(0.1)
        logs = (tmp_path / "api.log").read_text() + (tmp_path / "worker.log").read_text()

    assert statuses == [[302, 200, 200]] * PLAYERS, logs[-3000:]
    with new_session(engine) as session:
        made = session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar_one()
        counted = session.execute(
            sa.select(_mission.c.conversions).where(_mission.c.id == mission.id)
        ).scalar_one()
    assert (made, counted) == (CAP, CAP)
    assert _delivered(engine) == CAP
    assert len({dict(query)["tx"] for query in receiver.queries()}) == CAP
    assert "Traceback" not in logs, logs[-3000:]


def _wait(condition, seconds: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_another_process_change_is_heard_on_the_direct_connection(engine, db_url):
    """The listener LISTENs on DATABASE_DIRECT_URL; the change commits through PgBouncer."""
    changes = changes_of(engine)
    assert _wait(lambda: changes.listening), "the listener never connected"
    assert changes.max_age() == HEARD_MAX_AGE
    other = build_engine(db_url, pooler="pgbouncer")  # another process's engine
    try:
        before = changes.generation
        with other.begin() as conn:
            mark(conn)
        assert _wait(lambda: changes.generation > before, 2.0), "the change was not heard"
    finally:
        other.dispose()


def test_without_a_direct_url_nothing_listens_and_what_is_kept_expires_quickly(db_url):
    """LISTEN through PgBouncer would hear nothing while seeming to: it is not tried."""
    assert direct_url(db_url) is not None
    engine = build_engine(db_url, pooler="pgbouncer")
    try:
        assert listen_url(engine) is None
        changes = changes_of(engine)
        # A listener through PgBouncer would connect within this and say it listens.
        assert not _wait(lambda: changes.listening, 0.5)
        assert changes.max_age() == UNHEARD_MAX_AGE
    finally:
        engine.dispose()
