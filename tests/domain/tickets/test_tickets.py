"""Support tickets ("Missing reward?"): opening one keeps what Questwall knew of the player
and the offer (clicks, progress, events, conversions, made through the real API), the
checks and limits of opening, who may see and answer which ticket, and what the player
reads back (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from api.accounts import Forbidden, NotApproved
from api.app import create_api
from api.core.db import new_session, write_session
from api.publishers import offerwalls
from api.reports import dashboard
from api.tickets import desk, report
from api.tickets.report import TicketError
from models import Mission, Offerwall, Role, SupportTicket, TicketStatus
from models.types import utcnow
from portal.tickets.words import in_words
from tests.api.tracking_helpers import click, platform_id
from tests.factories import (
    FixedCountries,
    SignedClient,
    iso_now,
    make_account,
    make_click,
    make_game,
    make_mission,
    make_offerwall,
    make_paying_offerwall,
    make_quest,
    mission_data,
)

PROXY = "127.0.0.1"
STAFF = make_account(Role.STAFF)
KILLS_TWICE = {
    "title": "Kill 10 players, twice",
    "rule": {
        "event": "GAME_END",
        "conditions": [{"field": "traits.kills", "op": ">=", "value": 10}],
        "completion": {"kind": "count", "threshold": 2},
    },
}


@pytest.fixture
def client(engine, settings, box) -> TestClient:
    api_settings = settings.model_copy(update={"trusted_proxies": PROXY})
    app = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    return TestClient(app, client=(PROXY, 50000), follow_redirects=False)


@pytest.fixture
def game(engine, box):
    return make_game(engine, box)


@pytest.fixture
def signed(client, game) -> SignedClient:
    return SignedClient(client, game)


@pytest.fixture
def wall(engine, box):
    """An approved offerwall paying 100 Gems per USD, no decimals."""
    return make_paying_offerwall(engine, box)


def _open(engine: Engine, wall, uid: str, offer_id: str, message: str = "No gems yet!", **kw):
    with write_session(engine) as session:
        return report.open_ticket(
            session, offerwall_id=wall.id, uid=uid, offer_id=offer_id, message=message, **kw
        )


def _refusal(engine: Engine, wall, uid: str, offer_id: str, message: str = "Where?") -> str:
    with pytest.raises(TicketError) as refused:
        _open(engine, wall, uid, offer_id, message)
    return str(refused.value)


def _as(engine: Engine, account, work):
    with write_session(engine) as session:
        return work(session, account)


def _fresh(session, wall) -> Offerwall:
    found = session.get(Offerwall, wall.id)
    assert found is not None
    return found


def _player_sees(engine: Engine, wall, uid: str) -> list[tuple[str, str, str | None]]:
    with new_session(engine) as session:
        found = report.player_tickets(session, offerwall_id=wall.owid, uid=uid)
    return [(t.reference, t.status, t.answer) for t in found]


def _quest_mission_id(engine: Engine, quest_id: str) -> str:
    with new_session(engine) as session:
        return session.execute(
            sa.select(Mission.id).where(Mission.quest_id == quest_id)  # type: ignore[arg-type]
        ).scalar_one()


def test_a_ticket_keeps_the_players_clicks_progress_events_and_conversions(
    engine, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, **KILLS_TWICE)
    quest = make_quest(
        engine,
        game.game_id,
        [
            mission_data(title="Pass the gate", payout="0.50", rule={"event": "GATE"}),
            mission_data(
                title="Beat the boss",
                payout="2",
                rule={"steps": [{"event": "BOSS_SEEN"}, {"event": "BOSS"}]},
            ),
        ],
        name="Season opener",
    )
    # Events the game sent before the player opened anything do not count.
    signed.events({"userId": "g1", "event": "GAME_END", "time": iso_now(-600), "traits": {}})
    # The player opens the mission twice, from Germany on Android, and the game links them.
    player = platform_id(click(client, "mission", mission.id, wall.owid, uid="p1"))
    click(
        client,
        "mission",
        mission.id,
        wall.owid,
        uid="p1",
        platform_sub1="spring",
        ip="198.51.100.9",
    )
    assert signed.identifiers({"userId": "g1", "platformUserId": player}).status_code == 200
    signed.events(
        {"userId": "g1", "event": "GAME_END", "time": iso_now(1), "traits": {"kills": 12}},
        {"userId": "g1", "event": "GAME_END", "time": iso_now(2), "traits": {"kills": 3}},
        {"userId": "someone-else", "event": "GAME_END", "time": iso_now(2), "traits": {}},
    )
    # The quest: the gate passed (converted), the boss not yet.
    click(client, "quest", quest.id, wall.owid, uid="p1")
    signed.events(
        {"userId": "g1", "event": "GATE", "time": iso_now(3)},
        {"userId": "g1", "event": "BOSS_SEEN", "time": iso_now(3)},  # the boss's first step
    )

    ticket = _open(engine, wall, "p1", mission.id, "  I killed them twice!  ")
    assert (ticket.status, ticket.uid, ticket.mission_id, ticket.quest_id) == (
        TicketStatus.OPEN,
        "p1",
        mission.id,
        None,
    )
    assert ticket.message == "I killed them twice!"
    assert ticket.offer_title == "Kill 10 players, twice"
    assert desk.normal_reference(ticket.reference) == ticket.reference
    with new_session(engine) as session:  # as stored, JSON all the way
        stored = session.get(SupportTicket, ticket.id)
        assert stored is not None
        context = json.loads(json.dumps(stored.context))
    clicks = context["clicks"]
    assert clicks["count"] == 2
    assert (clicks["country"], clicks["os"], clicks["sub1"]) == ("DE", "Android", "spring")
    assert clicks["first_at"] <= clicks["last_at"]
    assert clicks["last_at"].endswith("Z")
    assert context["linked_game_users"] == 1
    assert context["offer"] == {"kind": "mission", "id": mission.id, "title": mission.title}
    [facts] = context["missions"]
    assert facts["rule"] == "GAME_END where kills ≥ 10, 2 times"
    assert (facts["completion"], facts["threshold"]) == ("count", 2)
    assert facts["progress"]["status"] == "started"
    assert (facts["progress"]["count"], facts["progress"]["completions"]) == (1, 0)
    assert facts["progress"]["expires_at"] is None
    assert facts["events"]["count"] == 2  # the player's two since the start, no one else's
    assert facts["events"]["last_at"] > facts["progress"]["started_at"]
    assert context["conversions"] == []

    on_quest = _open(engine, wall, "p1", quest.id, "The boss reward is missing")
    assert (on_quest.quest_id, on_quest.mission_id) == (quest.id, None)
    context = on_quest.context
    assert context["clicks"]["count"] == 1
    gate, boss = context["missions"]
    assert (gate["title"], gate["progress"]["status"], gate["events"]["count"]) == (
        "Pass the gate",
        "completed",
        1,
    )
    # Every event name of the boss's rule counts, not only its first step's.
    assert (boss["progress"]["status"], boss["events"]["count"]) == ("started", 1)
    assert boss["rule"] == "BOSS_SEEN, then BOSS"
    [converted] = context["conversions"]
    assert converted["mission_id"] == gate["id"]
    assert (converted["status"], converted["payout"], converted["payout_usd"]) == (
        "approved",
        "50",
        "0.50",
    )
    assert context["currency"] == "GEM"

    # The portal's reading of it, in words.
    with new_session(engine) as session:
        detail = in_words(desk.ticket_detail(session, account=STAFF, ticket_id=on_quest.id))
        first = in_words(desk.ticket_detail(session, account=STAFF, ticket_id=ticket.id))
    assert (detail.offer_kind, detail.publisher, detail.uid) == ("quest", "GemWall", "p1")
    assert detail.clicks.startswith("Opened once, ")
    assert detail.game_users == "1 game account linked to the player."
    assert [m.status for m in detail.missions] == ["completed", "started"]
    assert detail.missions[1].events.startswith("1 BOSS or BOSS_SEEN event since the start")
    assert detail.missions[1].tally == "1 of 2 steps done"
    [shown] = detail.conversions
    assert (shown.mission, shown.payout) == ("Pass the gate", "50 GEM ($0.50)")
    assert first.missions[0].tally == "1 of 2 passing events"
    assert first.missions[0].events.startswith("2 GAME_END events since the start, the last ")
    assert first.last_click == "country DE, device Android, sub1 spring"


def test_a_player_without_a_linked_game_account_is_told_apart(engine, box, game, wall):
    mission = make_mission(engine, game.game_id)
    make_click(engine, offer_id=mission.id, offerwall=wall, uid="lonely")
    ticket = _open(engine, wall, "lonely", mission.id)
    assert ticket.context["linked_game_users"] == 0
    assert ticket.context["missions"][0]["events"] == {"count": 0, "last_at": None}
    with new_session(engine) as session:
        detail = in_words(desk.ticket_detail(session, account=STAFF, ticket_id=ticket.id))
    assert detail.game_users.startswith("No game account is linked to the player")


def test_the_message_the_offer_and_the_player_are_checked(engine, box, game, wall):
    mission = make_mission(engine, game.game_id)
    other = make_mission(engine, game.game_id, title="Never opened")
    quest = make_quest(engine, game.game_id, [mission_data(title="Inside")])
    inside = _quest_mission_id(engine, quest.id)
    make_click(engine, offer_id=mission.id, offerwall=wall, uid="p1")

    assert _refusal(engine, wall, "p1", mission.id, "   \n ") == "Write your message first."
    assert "2,000 characters (it has 2,001)" in _refusal(engine, wall, "p1", mission.id, "x" * 2001)
    assert "NUL" in _refusal(engine, wall, "p1", mission.id, "a\x00b")
    assert _refusal(engine, wall, "p1", "no-such-offer") == "This offer does not exist."
    assert _refusal(engine, wall, "p1", inside) == (
        "This mission is part of the quest “Season opener”: report the quest instead."
    )
    # A player the offerwall never sent, and a known player on an offer they never opened.
    assert _refusal(engine, wall, "stranger", mission.id) == report.NO_RECORD
    assert _refusal(engine, wall, "p1", other.id) == report.NO_RECORD
    assert _refusal(engine, wall, "", mission.id) == report.NO_RECORD
    # What a hand-made link may carry is looked up safely (PostgreSQL refuses a NUL).
    assert _refusal(engine, wall, "p\x001", mission.id) == report.NO_RECORD
    assert _refusal(engine, wall, "p1", "m\x00") == "This offer does not exist."
    assert _player_sees(engine, wall, "p\x001") == []
    # Another offerwall's player of the same uid is another player.
    elsewhere, _ = make_offerwall(engine, box, name="Elsewhere")
    assert _refusal(engine, elsewhere, "p1", mission.id) == report.NO_RECORD
    with write_session(engine) as session:
        offerwalls.suspend(session=session, offerwall=_fresh(session, wall))
    assert _refusal(engine, wall, "p1", mission.id) == "This offer list is not available."
    with new_session(engine) as session:
        assert session.execute(sa.select(sa.func.count()).select_from(SupportTicket)).scalar() == 0

    with write_session(engine) as session:
        offerwalls.reinstate(session=session, offerwall=_fresh(session, wall))
    exactly = "y" * 2000
    assert _open(engine, wall, "p1", mission.id, f" {exactly}\n").message == exactly


def test_one_ticket_per_offer_and_five_waiting_at_most(engine, box, game, wall):
    missions = [make_mission(engine, game.game_id, title=f"M{n}") for n in range(7)]
    for mission in missions:
        make_click(engine, offer_id=mission.id, offerwall=wall, uid="busy")
    first = _open(engine, wall, "busy", missions[0].id)
    assert _refusal(engine, wall, "busy", missions[0].id) == (
        f"You already reported this offer (ticket {first.reference}): its answer will appear there."
    )
    # Answered still counts as the player's ticket on that offer.
    _as(
        engine,
        STAFF,
        lambda s, a: desk.answer(s, account=a, ticket_id=first.id, text="Soon.", close=False),
    )
    assert first.reference in _refusal(engine, wall, "busy", missions[0].id)
    for mission in missions[1:5]:
        _open(engine, wall, "busy", mission.id)
    assert _refusal(engine, wall, "busy", missions[5].id) == (
        "You have 5 reports waiting: wait for their answers before you report another offer."
    )
    # Closing one makes room, and its offer may be reported again.
    _as(engine, STAFF, lambda s, a: desk.close(s, account=a, ticket_id=first.id))
    again = _open(engine, wall, "busy", missions[0].id, "Still nothing")
    assert again.reference != first.reference
    assert "5 reports waiting" in _refusal(engine, wall, "busy", missions[5].id)
    # Reopening the closed one would make two on the same offer: refused.
    with pytest.raises(TicketError, match=again.reference):
        _as(engine, STAFF, lambda s, a: desk.reopen(s, account=a, ticket_id=first.id))
    # Another player has limits of their own.
    make_click(engine, offer_id=missions[0].id, offerwall=wall, uid="calm")
    _open(engine, wall, "calm", missions[0].id)


def test_two_reports_sent_together_make_one_ticket(engine, box, game, wall):
    mission = make_mission(engine, game.game_id)
    make_click(engine, offer_id=mission.id, offerwall=wall, uid="twice")
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def report() -> None:
        start.wait()
        try:
            outcomes.append(_open(engine, wall, "twice", mission.id).reference)
        except TicketError as refused:
            outcomes.append(str(refused))

    threads = [threading.Thread(target=report) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(outcomes) == 2
    assert sum(o.startswith("You already reported") for o in outcomes) == 1
    with new_session(engine) as session:
        assert session.execute(sa.select(sa.func.count()).select_from(SupportTicket)).scalar() == 1


def _two_publishers(engine, box, game):
    """Two approved offerwalls, each with a player's ticket; their publishers' accounts."""
    mission = make_mission(engine, game.game_id)
    walls = [make_offerwall(engine, box, name=name)[0] for name in ("Alpha Wall", "Beta Wall")]
    made = []
    for wall, uid in zip(walls, ("alpha-1", "beta-1"), strict=True):
        make_click(engine, offer_id=mission.id, offerwall=wall, uid=uid)
        made.append(_open(engine, wall, uid, mission.id, f"Ticket of {uid}"))
    accounts = [make_account(Role.PUBLISHER, offerwall_id=w.id) for w in walls]
    return walls, made, accounts


def test_a_publisher_sees_and_answers_their_offerwalls_tickets_only(engine, box, game):
    walls, (mine, theirs), (alpha, beta) = _two_publishers(engine, box, game)
    with new_session(engine) as session:
        seen = desk.search_tickets(session, account=alpha)
        assert [r.reference for r in seen.rows] == [mine.reference]
        assert seen.rows[0].publisher == "Alpha Wall"
        assert desk.status_counts(session, account=alpha) == {
            "open": 1,
            "answered": 0,
            "closed": 0,
        }
        assert desk.open_count(session, account=STAFF) == 2
        assert desk.open_count(session, account=alpha) == 1
        staff_view = dashboard.staff_dashboard(session=session, account=STAFF, now=utcnow())
        assert staff_view.open_tickets == 2
        everything = desk.search_tickets(session, account=STAFF)
        assert {r.reference for r in everything.rows} == {mine.reference, theirs.reference}
        # Another publisher's ticket is "no such ticket", like one that does not exist.
        for ticket_id in (theirs.id, 999_999, "not-a-number"):
            with pytest.raises(TicketError, match="No such ticket"):
                desk.ticket_detail(session, account=alpha, ticket_id=ticket_id)
        assert desk.search_tickets(session, account=alpha, text=theirs.reference).rows == []
    for act in (
        lambda s, a: desk.answer(s, account=a, ticket_id=theirs.id, text="Mine now", close=True),
        lambda s, a: desk.close(s, account=a, ticket_id=theirs.id),
    ):
        with pytest.raises(TicketError, match="No such ticket"):
            _as(engine, alpha, act)
    assert _player_sees(engine, walls[1], "beta-1") == [(theirs.reference, "open", None)]

    # Designers have no tickets; a publisher whose offerwall is suspended has none either.
    designer = make_account(Role.DESIGNER, studio_id="s1")
    with new_session(engine) as session, pytest.raises(Forbidden):
        desk.search_tickets(session, account=designer)
    with write_session(engine) as session:
        offerwalls.suspend(session=session, offerwall=_fresh(session, walls[1]))
    with new_session(engine) as session, pytest.raises(NotApproved):
        desk.search_tickets(session, account=beta)
    with pytest.raises(NotApproved):
        _as(
            engine,
            beta,
            lambda s, a: desk.answer(s, account=a, ticket_id=theirs.id, text="x", close=False),
        )

    # Staff answer any.
    _as(
        engine,
        STAFF,
        lambda s, a: desk.answer(s, account=a, ticket_id=theirs.id, text="Sent.", close=True),
    )
    assert _player_sees(engine, walls[1], "beta-1") == [(theirs.reference, "closed", "Sent.")]


def test_answers_and_closing_are_what_the_player_reads(engine, box, game, wall):
    publisher = make_account(Role.PUBLISHER, offerwall_id=wall.id)
    kills, gems = make_mission(engine, game.game_id), make_mission(engine, game.game_id)
    for mission in (kills, gems):
        make_click(engine, offer_id=mission.id, offerwall=wall, uid="reader")
    now = utcnow()
    older = _open(engine, wall, "reader", kills.id, now=now - timedelta(minutes=5))
    newer = _open(engine, wall, "reader", gems.id, now=now)
    assert _player_sees(engine, wall, "reader") == [
        (newer.reference, "open", None),
        (older.reference, "open", None),
    ]
    assert _player_sees(engine, wall, "nobody") == []

    def answer(text: str, close: bool = False) -> SupportTicket:
        return _as(
            engine,
            publisher,
            lambda s, a: desk.answer(s, account=a, ticket_id=older.id, text=text, close=close),
        )

    with pytest.raises(TicketError, match="Write the answer first"):
        answer("  ")
    with pytest.raises(TicketError, match="4,000 characters"):
        answer("z" * 4001)
    answered = answer(" The game sent one kill too few. ")
    assert (answered.status, answered.answered_by, answered.closed_at) == (
        "answered",
        "publisher@example.com",
        None,
    )
    assert _player_sees(engine, wall, "reader")[1] == (
        older.reference,
        "answered",
        "The game sent one kill too few.",
    )
    answer("Corrected: it was credited today.")  # a second answer replaces the first
    closed = _as(engine, publisher, lambda s, a: desk.close(s, account=a, ticket_id=older.id))
    assert closed.status == "closed" and closed.closed_at is not None
    assert _player_sees(engine, wall, "reader")[1] == (
        older.reference,
        "closed",
        "Corrected: it was credited today.",
    )
    with pytest.raises(TicketError, match="is closed: reopen it"):
        answer("Once more")
    with pytest.raises(TicketError, match="already closed"):
        _as(engine, publisher, lambda s, a: desk.close(s, account=a, ticket_id=older.id))
    reopened = _as(engine, publisher, lambda s, a: desk.reopen(s, account=a, ticket_id=older.id))
    assert (reopened.status, reopened.closed_at) == ("open", None)
    with pytest.raises(TicketError, match="is not closed"):
        _as(engine, publisher, lambda s, a: desk.reopen(s, account=a, ticket_id=older.id))
    final = answer("Paid, sorry for the wait.", close=True)
    assert (final.status, final.answered_by) == ("closed", "publisher@example.com")
    assert final.closed_at is not None and final.answered_at is not None
    with new_session(engine) as session:
        assert desk.status_counts(session, account=publisher) == {
            "open": 1,
            "answered": 0,
            "closed": 1,
        }


def test_the_list_filters_by_status_and_finds_a_reference_a_uid_or_a_title(engine, box, game, wall):
    boss = make_mission(engine, game.game_id, title="Beat the boss")
    gate = make_mission(engine, game.game_id, title="Open the gate")
    made = {}
    for uid, mission in (("ann", boss), ("bob", gate), ("cid", boss)):
        make_click(engine, offer_id=mission.id, offerwall=wall, uid=uid)
        made[uid] = _open(engine, wall, uid, mission.id, f"{uid}: where is my reward?")
    _as(
        engine,
        STAFF,
        lambda s, a: desk.answer(s, account=a, ticket_id=made["bob"].id, text="Ok", close=False),
    )

    def found(**query) -> list[str]:
        with new_session(engine) as session:
            window = desk.search_tickets(session, account=STAFF, **query)
        return [row.uid for row in window.rows]

    assert found() == ["cid", "bob", "ann"]
    assert found(status="open") == ["cid", "ann"]
    assert found(status="answered") == ["bob"]
    assert found(status="closed") == []
    compact = made["ann"].reference.replace("-", "").lower()
    assert found(text=compact) == ["ann"]
    assert found(text=made["ann"].reference) == ["ann"]
    assert found(text="bob") == ["bob"]
    assert found(text="boss") == ["cid", "ann"]
    assert found(text="boss", status="open") == ["cid", "ann"]
    assert found(text="%") == []
    with new_session(engine) as session:
        [row] = desk.search_tickets(session, account=STAFF, text="bob").rows
    assert (row.status, row.answered_by, row.preview) == (
        "answered",
        "staff@example.com",
        "bob: where is my reward?",
    )
