"""A ladder under a budget (docs/economics.md#budgets): each stage draws its part of the
revenue, so a ladder is judged by the stage a player would be paid next, not by its whole
revenue. A new player starts at the first stage: the listing without a player and the
tracking link take the ladder while its first stage fits; a player whose next stage no
longer fits waits, and their own listing leaves the ladder out."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

import pytest
import sqlalchemy as sa

from api.core.db import new_session
from models import Role
from models.tables import conversion as _conversion
from tests.api.economics.test_budgets import mails, spent
from tests.api.missions.test_live_operations import _kills, import_file, iso, listed
from tests.api.missions.test_live_operations import mission as plain_mission
from tests.api.steps import start
from tests.api.tracking_helpers import click
from tests.factories import SignedClient, make_game, make_studio, make_user

# Revenue 3.00 split as the payouts 0.10, 0.40 and 1.00: the stages bring 0.20, 0.80, 2.00.
STAGES = [(1, "0.10"), (5, "0.40"), (10, "1.00")]


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"stale_event_hours": 0})


@pytest.fixture
def studio_game(engine, box):
    studio = make_studio(engine)
    make_user(engine, "designer@example.com", role=Role.DESIGNER, studio_id=studio)
    return make_game(engine, box, studio_id=studio)


def paid(engine) -> list[tuple[str, int, int]]:
    """Every conversion: (uid, stage, revenue micros), in order."""
    with new_session(engine) as session:
        rows = session.execute(
            sa.text(
                "SELECT platform_user.uid, conversion.stage, conversion.revenue_micros"
                " FROM conversion JOIN platform_user"
                " ON platform_user.id = conversion.platform_user_id ORDER BY conversion.id"
            )
        ).all()
    return [tuple(r) for r in rows]


def available(client, key: str, uid: str) -> bool:
    answer = client.get(f"/offerwall/users/{uid}/progress", headers={"x-api-key": key}).json()
    [entry] = answer["data"]["missions"]
    return entry["available"]


def ladder(**extra) -> dict:
    return {
        "title": "Kill ladder",
        "destinationUrl": "https://game.example/m",
        "rule": {"event": "KILL"},
        "revenue": "3.00",
        "stages": [{"threshold": t, "payout": p} for t, p in STAGES],
        **extra,
    }


@pytest.mark.parametrize("whose", ["mission", "game"])
def test_a_ladder_is_judged_by_the_stage_each_player_is_paid_next(
    client, engine, studio_game, wall, whose
):
    signed = SignedClient(client, studio_game)
    budget = {"amount": "1.50", "every": "day"}
    if whose == "mission":
        [kill] = import_file(engine, studio_game.game_id, missions=[ladder(budget=budget)])
    else:
        [kill] = import_file(engine, studio_game.game_id, budget=budget, missions=[ladder()])
    # The whole revenue (3.00) is more than the budget; the first stage (0.20) fits.
    assert kill.id in listed(client, wall[1])
    start(client, signed, wall, kill.id, "p1")
    kills = partial(_kills, datetime.now(UTC))
    assert signed.events(*kills("p1", 5)).status_code == 200
    assert paid(engine) == [("pub-p1", 1, 200_000), ("pub-p1", 2, 800_000)]

    # 0.50 left: p1's next stage (2.00) no longer fits, a new player's first still does.
    assert kill.id in listed(client, wall[1])
    assert kill.id in listed(client, wall[1], uid="pub-p2")
    assert kill.id not in listed(client, wall[1], uid="pub-p1")
    assert not available(client, wall[1], "pub-p1")
    start(client, signed, wall, kill.id, "p2")
    assert available(client, wall[1], "pub-p2")
    kills = partial(_kills, datetime.now(UTC))
    assert signed.events(*kills("p1", 5, offset=10)).status_code == 200  # p1's top: waits
    assert signed.events(*kills("p2", 1, offset=20)).status_code == 200
    assert paid(engine)[2:] == [("pub-p2", 1, 200_000)]
    assert not [subject for _, subject in mails(engine) if "spent" in subject]

    # 0.30 left: one more first stage, then nothing of the ladder fits.
    start(client, signed, wall, kill.id, "p3")
    kills = partial(_kills, datetime.now(UTC))
    assert signed.events(*kills("p3", 1, offset=30)).status_code == 200
    assert [amount for _, amount in spent(engine)] == [1_400_000]
    assert kill.id not in listed(client, wall[1])
    assert click(client, "mission", kill.id, wall[0].owid, uid="pub-p4").status_code == 410
    spent_mails = [subject for _, subject in mails(engine) if "spent" in subject]
    label = "“Kill ladder”" if whose == "mission" else "the game"
    assert spent_mails == [f"Arena: {label} budget is spent"]
    with new_session(engine) as session:
        made = session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar()
    assert made == 4


def test_a_game_budget_keeps_a_ladder_open_while_its_first_stage_fits(
    client, engine, studio_game, wall
):
    """$1.50 a day for the game: a ladder of 3.00 and a plain mission of 0.50 share it."""
    signed = SignedClient(client, studio_game)
    kill, win = import_file(
        engine,
        studio_game.game_id,
        budget={"amount": "1.50", "every": "day"},
        missions=[ladder(), plain_mission("Win", {"event": "WIN"}, revenue="0.50")],
    )
    assert {kill.id, win.id} <= set(listed(client, wall[1]))
    start(client, signed, wall, kill.id, "p1")
    kills = partial(_kills, datetime.now(UTC))
    assert signed.events(*kills("p1", 10)).status_code == 200  # the top (2.00) waits
    assert [stage for _, stage, _ in paid(engine)] == [1, 2]
    assert {kill.id, win.id} <= set(listed(client, wall[1]))
    start(client, signed, wall, win.id, "p2")
    win_now = {"userId": "p2", "event": "WIN", "time": iso(datetime.now(UTC))}
    assert signed.events(win_now).status_code == 200  # the last 0.50: nothing fits now
    shown = listed(client, wall[1])
    assert kill.id not in shown and win.id not in shown
    assert click(client, "mission", kill.id, wall[0].owid, uid="pub-p9").status_code == 410
