"""Budgets through the real API (docs/economics.md#budgets): a game's budget is shared by
its missions, its designers get one mail at 80% and one when it closes, a held conversion
counts as spent, and a rejected or reversed one gives its revenue back and reopens the
offers."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from api.conversions import ledger, review
from api.core.db import new_session, write_session
from api.economics import budgets
from models import MailMessage, Role
from models.offer_schemas import BudgetIn
from models.tables import conversion as _conversion
from models.types import utcnow
from tests.api.economics.test_economics_api import BR, play, stored
from tests.api.missions.test_live_operations import import_file, listed, mission
from tests.api.steps import start
from tests.api.tracking_helpers import click
from tests.factories import SignedClient, make_game, make_studio, make_user


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"stale_event_hours": 0})


@pytest.fixture
def studio_game(engine, box):
    studio = make_studio(engine)
    make_user(engine, "designer@example.com", role=Role.DESIGNER, studio_id=studio)
    make_user(
        engine, "other@example.com", role=Role.DESIGNER, studio_id=make_studio(engine, "Studio B")
    )
    return make_game(engine, box, studio_id=studio)


def mails(engine) -> list[tuple[str, str]]:
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(MailMessage.to_address, MailMessage.subject).order_by(MailMessage.id)
        ).all()
    return [tuple(r) for r in rows if "budget" in r[1]]


def spent(engine) -> list[tuple[str, int]]:
    with new_session(engine) as session:
        return [
            (r.period, r.spent_micros)
            for r in session.execute(sa.text("SELECT period, spent_micros FROM budget_spend"))
        ]


def test_a_game_budget_is_shared_mailed_at_80_and_100_and_given_back(
    client, engine, studio_game, wall
):
    signed = SignedClient(client, studio_game)
    kill, win = import_file(
        engine,
        studio_game.game_id,
        missions=[
            mission("Kill", {"event": "KILL"}, revenue="1.00", allowMultipleConversions=True),
            mission("Win", {"event": "WIN"}, revenue="1.00", allowMultipleConversions=True),
        ],
    )
    with write_session(engine) as session:
        budgets.set_game_budget(session, studio_game.game_id, BudgetIn(amount="5", every="week"))
    start(client, signed, wall, kill.id, "p1")
    start(client, signed, wall, win.id, "p1")

    def event(name: str) -> None:
        body = {"userId": "p1", "event": name, "time": _now()}
        assert signed.events(body).status_code == 200

    for name in ("KILL", "KILL", "WIN"):
        event(name)
    assert spent(engine)[0][1] == 3_000_000 and mails(engine) == []
    event("WIN")  # 4 of 5: 80%
    assert mails(engine) == [("designer@example.com", "Arena: the game budget is at 80%")]
    assert {kill.id, win.id} <= set(listed(client, wall[1]))
    event("KILL")  # 5 of 5: closed, whichever mission comes next
    assert spent(engine)[0][1] == 5_000_000
    assert not {kill.id, win.id} & set(listed(client, wall[1]))
    assert mails(engine)[1] == ("designer@example.com", "Arena: the game budget is spent")
    refused = click(client, "mission", kill.id, wall[0].owid, uid="pub-p2")
    assert refused.status_code == 410 and "opens again" in refused.text
    # More wins change nothing: the budget is never passed, and no more mail is sent.
    event("WIN")
    assert spent(engine)[0][1] == 5_000_000 and len(mails(engine)) == 2
    assert len(stored(engine)) == 5

    with new_session(engine) as session:
        latest = session.execute(
            sa.select(_conversion.c.transaction_id).order_by(_conversion.c.id.desc())
        ).scalar()
    with write_session(engine) as session:
        ledger.reverse(
            session=session,
            transaction_id=latest,
            reason="chargeback",
            actor="staff",
            studio_id=None,
        )
    assert spent(engine)[0][1] == 4_000_000
    assert kill.id in listed(client, wall[1])


def test_a_held_conversion_counts_as_spent_and_its_rejection_gives_it_back(
    client, engine, studio_game, wall
):
    signed = SignedClient(client, studio_game)
    [slow] = import_file(
        engine,
        studio_game.game_id,
        missions=[
            mission(
                "Too fast",
                {"event": "WIN"},
                revenue="1.00",
                minCompletionSeconds=3600,  # any completion now is held for review
                budget={"amount": "1", "every": "total"},
            )
        ],
    )
    play(client, signed, wall, slow.id, "p1", BR)
    with new_session(engine) as session:
        held = session.execute(sa.select(_conversion.c.transaction_id, _conversion.c.status)).one()
    assert held.status == "pending" and spent(engine) == [("total", 1_000_000)]
    assert slow.id not in listed(client, wall[1])  # a total budget: closed for good
    with write_session(engine) as session:
        review.reject(
            session=session,
            transaction_ids=[held.transaction_id],
            actor="staff",
            studio_id=None,
            reason="too fast",
        )
    assert spent(engine) == [("total", 0)]
    assert slow.id in listed(client, wall[1])


def _now() -> str:
    return utcnow().isoformat().replace("+00:00", "Z")


def test_a_reversal_gives_back_only_what_its_conversion_drew_on(client, signed, game, wall, engine):
    """A conversion made before the game had a budget drew on none: reversing it leaves the
    budget as it is, and the budget is never passed."""
    [paying] = import_file(
        engine, game.game_id, missions=[mission("A", {"event": "WIN"}, revenue="1.00")]
    )
    play(client, signed, wall, paying.id, "p0", BR)  # before any budget
    with write_session(engine) as session:
        budgets.set_game_budget(session, game.game_id, BudgetIn(amount="1", every="day"))
    play(client, signed, wall, paying.id, "p1", BR)  # spends all of it
    with new_session(engine) as session:
        first = session.execute(
            sa.select(_conversion.c.transaction_id).order_by(_conversion.c.id)
        ).scalar()
    with write_session(engine) as session:
        ledger.reverse(
            session=session,
            transaction_id=first,
            reason="fraud found",
            actor="staff",
            studio_id=None,
        )
    assert [amount for _, amount in spent(engine)] == [1_000_000]
    # Still spent: the offer stays closed, and p2's click is refused.
    assert paying.id not in listed(client, wall[1])
    assert click(client, "mission", paying.id, wall[0].owid, uid="pub-p2").status_code == 410


def test_a_game_budget_closes_a_bigger_mission_as_soon_as_it_no_longer_fits(
    client, signed, game, wall, engine
):
    """$5 a day; A earns $1, B $3: after A's third conversion B no longer fits, so it
    leaves the listing at once (as its clicks are refused), while A stays."""
    a, b = import_file(
        engine,
        game.game_id,
        budget={"amount": "5", "every": "day"},
        missions=[
            mission("A", {"event": "WIN"}, revenue="1.00"),
            mission("B", {"event": "WIN"}, revenue="3.00"),
        ],
    )
    for n in range(2):
        play(client, signed, wall, a.id, f"p{n}", BR)
    assert b.id in listed(client, wall[1])
    play(client, signed, wall, a.id, "p2", BR)
    shown = listed(client, wall[1])
    assert b.id not in shown and a.id in shown
    assert click(client, "mission", b.id, wall[0].owid, uid="pub-z").status_code == 410
