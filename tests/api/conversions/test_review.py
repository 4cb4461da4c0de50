"""Fraud review end to end (SQLite and PostgreSQL), through tracking links and signed
events: risk signals hold conversions, the review queue approves, rejects and flags them
(each postback once, none for a rejection), caps count held conversions under parallel
completions, and missions' anti-cheat limits set events aside where the debugger shows
them. Postbacks go to a real local receiver."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx
import pytest
import sqlalchemy as sa
from click.testing import Result
from fastapi.testclient import TestClient

from api.app import create_api
from api.conversions import ConversionError, review
from api.core.db import new_session, write_session
from api.fraud import Policy, blocklist
from api.fraud import rules as fraud_rules
from api.ingest import debugger
from api.reports import fraud_page
from models import Conversion, ConversionStatus, PostbackKind
from models.tables import conversion as _conversion
from models.tables import event as _event
from models.tables import mission as _mission
from models.tables import progress as _progress
from models.tables import refused_click as _refused
from models.types import utcnow
from tests.api.live_server import run_clients, serve_api
from tests.api.steps import (
    SCORE,
    at,
    link_over_http,
    score_batch,
    set_offerwall_rules,
    start,
)
from tests.api.tracking_helpers import click, platform_id
from tests.factories import (
    FixedCountries,
    SignedClient,
    iso_now,
    make_mission,
    make_paying_offerwall,
)
from tests.outbox import make_due, postback_rows, run_once
from tests.receiver import running_receiver

TEMPLATE = "/pb?tx={transaction_id}&status={status}&why={reason}"
STAFF = "staff@example.com"


@pytest.fixture
def receiver():
    with running_receiver() as running:
        yield running


@pytest.fixture
def private_ok(settings):
    return settings.model_copy(update={"postback_allow_private": True})


@pytest.fixture
def paying(engine, box, receiver):
    """An approved offerwall posting back to the receiver: (offerwall, None) as `start`
    takes it."""
    return (make_paying_offerwall(engine, box, postback_url=receiver.url + TEMPLATE), None)


def _deliver(engine, box, settings) -> None:
    for _ in range(4):
        make_due(engine)
        if run_once(engine, box, settings) == 0:
            return


def _conversions(engine) -> list[Conversion]:
    with new_session(engine) as session:
        return list(session.scalars(sa.select(Conversion).order_by(Conversion.id)))  # type: ignore[arg-type]


def _score(signed, user: str, value: float = 700, seconds: float = 1) -> None:
    answer = signed.events(
        {"userId": user, "event": "MATCH_END", "time": at(seconds), "value": value}
    )
    assert answer.status_code == 200, answer.text


def _statuses(receiver) -> list[tuple[str, str]]:
    return [(q["tx"], q["status"]) for q in (dict(p) for p in receiver.queries())]


def test_a_completion_faster_than_the_minimum_time_is_held_until_approved(
    engine, client, signed, game, paying, receiver, box, private_ok
):
    mission = make_mission(engine, game.game_id, minCompletionSeconds=600, **SCORE)
    start(client, signed, paying, mission.id, "p1")
    _score(signed, "p1")

    [held] = _conversions(engine)
    assert held.status == ConversionStatus.PENDING
    assert held.signals == ["fast_completion"]
    assert held.review_due_at is not None  # approved by itself after the review period
    assert postback_rows(engine) == []
    _deliver(engine, box, private_ok)
    assert receiver.requests == []  # nothing reaches the publisher while it is held

    with write_session(engine) as session:
        decided = review.approve(
            session=session, transaction_ids=[held.transaction_id], actor=STAFF, studio_id=None
        )
    assert decided == review.Decided(1, 0)
    with write_session(engine) as session:  # a second approval finds nothing pending
        again = review.approve(
            session=session, transaction_ids=[held.transaction_id], actor=STAFF, studio_id=None
        )
    assert again == review.Decided(0, 1)
    _deliver(engine, box, private_ok)
    assert _statuses(receiver) == [(held.transaction_id, "approved")]
    [approved] = _conversions(engine)
    assert (approved.status, approved.reviewed_by) == (ConversionStatus.APPROVED, STAFF)


def test_a_game_cannot_make_a_completion_look_slower_than_its_events_arrival(
    engine, client, signed, game, paying
):
    mission = make_mission(engine, game.game_id, minCompletionSeconds=200, **SCORE)
    start(client, signed, paying, mission.id, "p1")
    start(client, signed, paying, mission.id, "p2")
    _score(signed, "p1", seconds=240)  # the game says it took four minutes
    # p2's click was eleven minutes ago: a completion now is plausible.
    with write_session(engine) as session:
        session.execute(
            sa.update(_progress)
            .where(_progress.c.id == sa.select(sa.func.max(_progress.c.id)).scalar_subquery())
            .values(started_at=utcnow() - timedelta(minutes=11))
        )
    _score(signed, "p2")
    first, second = _conversions(engine)
    assert (first.status, first.signals) == (ConversionStatus.PENDING, ["fast_completion"])
    assert (second.status, second.signals) == (ConversionStatus.APPROVED, None)


def _held(engine, client, signed, game, wall, players: int, **mission) -> list[str]:
    offer = make_mission(engine, game.game_id, minCompletionSeconds=3600, **SCORE, **mission)
    for n in range(players):
        start(client, signed, wall, offer.id, f"p{n}")
        _score(signed, f"p{n}")
    held = [c.transaction_id for c in _conversions(engine)]
    assert len(held) == players
    return held


def test_bulk_approval_sends_each_postback_once_even_when_two_reviewers_approve_together(
    engine, client, signed, game, paying, receiver, box, private_ok
):
    held = _held(engine, client, signed, game, paying, 6)
    results: list[review.Decided] = []

    def approve() -> None:
        with write_session(engine) as session:
            results.append(
                review.approve(session=session, transaction_ids=held, actor=STAFF, studio_id=None)
            )

    reviewers = [threading.Thread(target=approve) for _ in range(2)]
    for reviewer in reviewers:
        reviewer.start()
    for reviewer in reviewers:
        reviewer.join()
    assert sorted(r.decided for r in results) == [0, 6]
    _deliver(engine, box, private_ok)
    assert sorted(_statuses(receiver)) == sorted((tx, "approved") for tx in held)
    assert len(postback_rows(engine)) == 6


def test_a_rejected_conversion_sends_no_postback_and_frees_its_place_under_the_cap(
    engine, client, signed, game, paying, receiver, box, private_ok
):
    held = _held(engine, client, signed, game, paying, 3, cap=3)
    with pytest.raises(ConversionError, match="reason"), write_session(engine) as session:
        review.reject(
            session=session, transaction_ids=held[:1], actor=STAFF, studio_id=None, reason=""
        )
    with write_session(engine) as session:
        decided = review.reject(
            session=session,
            transaction_ids=held[:2],
            actor=STAFF,
            studio_id=None,
            reason="  bot  farm ",
        )
    assert decided == review.Decided(2, 0)
    _deliver(engine, box, private_ok)
    assert receiver.requests == []
    assert postback_rows(engine) == []
    rejected = [c for c in _conversions(engine) if c.status == ConversionStatus.REJECTED]
    assert [c.review_note for c in rejected] == ["bot farm", "bot farm"]
    with new_session(engine) as session:
        assert session.scalar(sa.select(_mission.c.conversions)) == 1  # two places free again
    # A rejected conversion cannot be approved any more.
    with write_session(engine) as session:
        assert review.approve(
            session=session, transaction_ids=held[:1], actor=STAFF, studio_id=None
        ) == review.Decided(0, 1)


def test_an_offerwall_that_asks_hears_pending_then_approved_or_rejected(
    engine, client, signed, game, paying, receiver, box, private_ok
):
    with write_session(engine) as session:
        fraud_rules.set_offerwall_rules(
            session=session,
            offerwall_id=paying[0].id,
            actions={},
            review_postbacks=True,
            policy=review_policy(),
        )
    first, second = _held(engine, client, signed, game, paying, 2)
    _deliver(engine, box, private_ok)
    with write_session(engine) as session:
        review.approve(session=session, transaction_ids=[first], actor=STAFF, studio_id=None)
        review.reject(
            session=session, transaction_ids=[second], actor=STAFF, studio_id=None, reason="vpn"
        )
    _deliver(engine, box, private_ok)
    queries = [dict(p) for p in receiver.queries()]
    heard: dict[str, list[str]] = {}
    for q in queries:  # in order per conversion; the two conversions' may interleave
        heard.setdefault(q["tx"], []).append(q["status"])
    assert heard == {first: ["pending", "approved"], second: ["pending", "rejected"]}
    assert [q["why"] for q in queries if q["status"] == "rejected"] == ["vpn"]
    kinds = sorted(p.kind for p in postback_rows(engine))
    assert kinds == sorted(
        [PostbackKind.HELD, PostbackKind.HELD, PostbackKind.CONVERSION, PostbackKind.REJECTION]
    )


def review_policy():
    return Policy()


def test_held_conversions_are_approved_by_themselves_when_their_time_is_up_unless_flagged(
    engine, client, signed, game, paying, receiver, box, private_ok
):
    kept, due, later = _held(engine, client, signed, game, paying, 3)
    with write_session(engine) as session:
        assert review.flag(
            session=session, transaction_ids=[kept], actor=STAFF, studio_id=None
        ) == review.Decided(1, 0)
        session.execute(
            sa.update(_conversion)
            .where(_conversion.c.transaction_id == due)
            .values(review_due_at=utcnow())
        )
    assert review.auto_approve(engine, now=utcnow() + timedelta(seconds=1)) == 1
    by_tx = {c.transaction_id: c for c in _conversions(engine)}
    assert by_tx[due].status == ConversionStatus.APPROVED
    assert by_tx[due].reviewed_by == review.AUTO
    assert by_tx[kept].status == by_tx[later].status == ConversionStatus.PENDING
    assert by_tx[kept].review_due_at is None  # flagged: waits for a reviewer
    _deliver(engine, box, private_ok)
    assert _statuses(receiver) == [(due, "approved")]


def test_a_designer_reviews_only_their_studios_conversions(
    engine, client, signed, game, paying, box
):
    held = _held(engine, client, signed, game, paying, 1)
    with write_session(engine) as session:
        other = review.approve(
            session=session, transaction_ids=held, actor="d@example.com", studio_id="elsewhere"
        )
    assert other == review.Decided(0, 1)
    assert _conversions(engine)[0].status == ConversionStatus.PENDING


@pytest.mark.timeout(120)
def test_a_cap_with_held_conversions_is_not_overshot_under_20_parallel_completions(
    engine, db_url, box, tmp_path
):
    from tests.factories import make_game, make_offerwall

    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    offer = make_mission(engine, game.game_id, cap=5, minCompletionSeconds=3600, **SCORE)
    players = [f"p{n}" for n in range(20)]
    with serve_api(db_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, offer.id, wall.owid, players)
        answers = run_clients(url, game, [[score_batch(game, name)] for name in players])
    assert [status for status, _, _ in answers] == [200] * 20
    made = _conversions(engine)
    assert len(made) == 5
    assert {c.status for c in made} == {ConversionStatus.PENDING}
    with new_session(engine) as session:
        assert session.scalar(sa.select(_mission.c.conversions)) == 5
    # Approving every held one keeps the total at the cap.
    with write_session(engine) as session:
        review.approve(
            session=session,
            transaction_ids=[c.transaction_id for c in made],
            actor=STAFF,
            studio_id=None,
        )
    assert len(postback_rows(engine)) == 5


def test_an_event_over_the_missions_maximum_does_not_count_and_shows_in_the_debugger(
    engine, client, signed, game, paying
):
    mission = make_mission(engine, game.game_id, maxEventValue=1000, **SCORE)
    start(client, signed, paying, mission.id, "p1")
    _score(signed, "p1", value=5000)
    assert _conversions(engine) == []
    with new_session(engine) as session:
        [flag] = debugger.set_aside(session=session, game_id=game.game_id)
    assert (flag.user_id, flag.event, flag.rule) == ("p1", "MATCH_END", "max_value")
    assert flag.detail == "value 5000 is over the maximum 1000"
    assert flag.mission == "Score 500"
    _score(signed, "p1", value=900)  # within the limit: counts
    assert [c.status for c in _conversions(engine)] == [ConversionStatus.APPROVED]


def test_a_trait_over_its_maximum_and_too_many_events_a_minute_do_not_count(
    engine, client, signed, game, paying
):
    kills = {
        "title": "Three big games",
        "rule": {"event": "GAME_END", "completion": {"kind": "count", "threshold": 3}},
    }
    mission = make_mission(
        engine, game.game_id, maxTraitField="kills", maxTraitValue=50, maxEventsPerMinute=2, **kills
    )
    start(client, signed, paying, mission.id, "p1")
    moment = iso_now(1)

    def game_end(kills: int, time: str = moment) -> None:
        event = {"userId": "p1", "event": "GAME_END", "time": time, "traits": {"kills": kills}}
        assert signed.events(event).status_code == 200

    game_end(400)  # over the trait's maximum (and the first of this minute)
    game_end(10)  # the second of the minute: counts
    game_end(12)  # the third of the same minute: over the rate
    assert _conversions(engine) == []
    with new_session(engine) as session:
        rules = [f.rule for f in debugger.set_aside(session=session, game_id=game.game_id)]
    assert rules == ["rate", "max_trait"]  # newest first
    game_end(11, iso_now(70))  # another minute
    game_end(13, iso_now(71))
    assert len(_conversions(engine)) == 1


@pytest.fixture
def screened(engine, api_settings, box):
    """The API with the screening's defaults, and 203.0.113.0/24 listed as hosting."""
    settings = api_settings.model_copy(
        update={
            "hosting_networks": "203.0.113.0/24",
            "players_per_ip": 3,
            "fraud_defaults": "",
        }
    )
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    return TestClient(app, client=("127.0.0.1", 50000), follow_redirects=False)


def test_a_hosting_networks_click_is_held_refused_or_allowed_as_the_offerwall_says(
    engine, screened, game, paying
):
    signed = SignedClient(screened, game)
    mission = make_mission(engine, game.game_id, **SCORE)
    start(screened, signed, paying, mission.id, "p1")  # from 203.0.113.7: hosting
    _score(signed, "p1")
    [held] = _conversions(engine)
    assert (held.status, held.signals) == (ConversionStatus.PENDING, ["hosting_network"])

    set_offerwall_rules(engine, paying[0].id, {"hosting_network": "refuse"}, review_policy())
    refused = click(screened, "mission", mission.id, paying[0].owid, uid="pub-p2")
    assert refused.status_code == 403
    assert "cannot be opened right now" in refused.text
    with new_session(engine) as session:
        assert session.scalar(sa.select(_refused.c.reason)) == "hosting_network"
    # From an address outside the list the click passes.
    assert (
        click(
            screened, "mission", mission.id, paying[0].owid, uid="pub-p2", ip="198.51.100.9"
        ).status_code
        == 302
    )


def test_many_players_from_one_address_and_one_player_on_two_offerwalls_are_held(
    engine, screened, game, paying, box
):
    signed = SignedClient(screened, game)
    mission = make_mission(engine, game.game_id, **SCORE)
    for n in range(3):  # the third player from 198.51.100.4 makes it a shared address
        answer = click(
            screened, "mission", mission.id, paying[0].owid, uid=f"u{n}", ip="198.51.100.4"
        )
        signed.identifiers({"userId": f"p{n}", "platformUserId": platform_id(answer)})
        _score(signed, f"p{n}")
    statuses = [(c.status, c.signals) for c in _conversions(engine)]
    assert statuses[:2] == [(ConversionStatus.APPROVED, None)] * 2
    assert statuses[2] == (ConversionStatus.PENDING, ["shared_ip"])

    other = make_paying_offerwall(engine, box, name="Other wall")
    second = make_mission(engine, game.game_id, **{**SCORE, "title": "Another"})
    first_click = click(screened, "mission", second.id, paying[0].owid, uid="x", ip="198.51.100.1")
    assert first_click.status_code == 302
    again = click(screened, "mission", second.id, other.owid, uid="y", ip="198.51.100.1")
    signed.identifiers({"userId": "twice", "platformUserId": platform_id(again)})
    _score(signed, "twice")
    last = _conversions(engine)[-1]
    assert (last.status, last.signals) == (ConversionStatus.PENDING, ["multi_offerwall"])


def _played_from(signed, user: str, player_ip: str | None) -> None:
    event = {"userId": user, "event": "MATCH_END", "time": at(1), "value": 700}
    answer = signed.events({**event, "playerIp": player_ip} if player_ip else event)
    assert answer.status_code == 200, answer.text


def test_a_player_the_game_sees_in_another_country_than_the_click_is_held(
    engine, client, signed, game, paying
):
    # Every click comes from 203.0.113.7 (US); FixedCountries knows 198.51.100.9 as DE.
    mission = make_mission(engine, game.game_id, **SCORE)
    for user, player_ip in (
        ("abroad", "198.51.100.9"),
        ("home", "203.0.113.7"),
        ("mapped", "::ffff:198.51.100.9"),  # an IPv4 address in IPv6 form
        ("unknown", "192.0.2.200"),  # no country known: nothing to compare
        ("silent", None),
    ):
        start(client, signed, paying, mission.id, user)
        _played_from(signed, user, player_ip)
    assert [(c.status, c.signals) for c in _conversions(engine)] == [
        (ConversionStatus.PENDING, ["country_mismatch"]),
        (ConversionStatus.APPROVED, None),
        (ConversionStatus.PENDING, ["country_mismatch"]),
        (ConversionStatus.APPROVED, None),
        (ConversionStatus.APPROVED, None),
    ]
    # Only the country is kept, never the player's address.
    with new_session(engine) as session:
        stored = session.execute(sa.select(_event).order_by(_event.c.id)).all()
    assert [row.country for row in stored] == ["DE", "US", "DE", None, None]
    assert not any("198.51.100.9" in str(tuple(row)) for row in stored)

    # Events sent before the game links its user are judged with their country when it does.
    player = platform_id(click(client, "mission", mission.id, paying[0].owid, uid="pub-late"))
    _played_from(signed, "late", "198.51.100.9")
    assert signed.identifiers({"userId": "late", "platformUserId": player}).status_code == 200
    assert _conversions(engine)[-1].signals == ["country_mismatch"]


def test_the_country_mismatch_can_be_allowed_per_offerwall(
    engine, client, signed, game, paying, settings
):
    set_offerwall_rules(
        engine, paying[0].id, {"country_mismatch": "allow"}, Policy.from_settings(settings)
    )
    mission = make_mission(engine, game.game_id, **SCORE)
    start(client, signed, paying, mission.id, "abroad")
    _played_from(signed, "abroad", "198.51.100.9")
    [conversion] = _conversions(engine)
    assert (conversion.status, conversion.signals) == (
        ConversionStatus.APPROVED,
        ["country_mismatch"],  # recorded, not acted on
    )


def test_a_blocklisted_uid_address_or_network_is_refused(engine, screened, game, paying):
    mission = make_mission(engine, game.game_id, **SCORE)
    with write_session(engine) as session:
        blocklist.block(session=session, kind="uid", value="cheater", note="", actor=STAFF)
        blocklist.block(session=session, kind="ip", value="198.51.100.9", note="", actor=STAFF)
        blocklist.block(
            session=session, kind="network", value="192.0.2.0/25", note="farm", actor=STAFF
        )
        for kind, wrong in (
            ("ip", "10.0.0/8"),
            ("network", "0.0.0.0/0"),
            ("network", "::/0"),
            ("network", "10.0.0.0/8,11.0.0.0/8"),
            ("network", "\x00"),
            ("uid", "x" * 256),
        ):
            with pytest.raises(blocklist.BlocklistError):
                blocklist.block(session=session, kind=kind, value=wrong, note="", actor=STAFF)
        with pytest.raises(blocklist.BlocklistError, match="already"):
            blocklist.block(session=session, kind="uid", value=" cheater ", note="", actor=STAFF)
    screened.app.state.click_screen.blocklist.refresh()
    owid = paying[0].owid
    refused = [
        click(screened, "mission", mission.id, owid, uid="cheater", ip="192.0.2.200"),
        click(screened, "mission", mission.id, owid, uid="fine", ip="198.51.100.9"),
        click(screened, "mission", mission.id, owid, uid="fine", ip="192.0.2.44"),
    ]
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert (
        click(screened, "mission", mission.id, owid, uid="fine", ip="192.0.2.200").status_code
        == 302
    )
    with new_session(engine) as session:
        reasons = session.scalars(sa.select(_refused.c.reason)).all()
        assert reasons == ["blocked"] * 3
        overview = fraud_page.overview(session=session, studio_id=None)
    assert overview.refused == 3
    assert [(c.label, c.count) for c in overview.reasons] == [("blocked", 3)]
    assert {c.label for c in overview.ips} >= {"198.51.100.9", "192.0.2.44"}


@pytest.fixture
def questwall(db_url, tmp_path, monkeypatch):
    """Runs `questwall …` in this process on this test's database, with the settings a
    process of its own would read from its environment: its exit status, stdout and stderr.
    (tests/unit/core/test_cli.py runs the real command line; a process costs 3 s here.)"""
    from click.testing import CliRunner

    from api.cli import main
    from tests.conftest import MASTER_KEY
    from tests.live import forget_process_settings as clear

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("SECRET_KEY", MASTER_KEY)
    monkeypatch.setenv("QUESTWALL_DATA_DIR", str(tmp_path / "data"))
    clear()

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    yield run
    clear()


def test_the_command_line_reviews_sets_rules_and_edits_the_blocklist(
    engine, client, signed, game, paying, questwall
):
    import json

    def cli(*args: str) -> str:
        result = questwall(*args)
        assert result.exit_code == 0, result.stderr
        return result.stdout

    first, second = _held(engine, client, signed, game, paying, 2)
    held = json.loads(cli("fraud", "held"))
    assert held["total"] == 2
    assert held["conversions"][0]["signals"] == ["fast_completion"]
    assert json.loads(cli("fraud", "approve", first)) == {"decided": 1, "skipped": 0}
    refused = questwall("fraud", "reject", second, "--reason", "x")
    assert refused.exit_code == 1 and "reason of 3 to 500" in refused.stderr
    assert json.loads(cli("fraud", "reject", second, "--reason", "farm")) == {
        "decided": 1,
        "skipped": 0,
    }

    owid = paying[0].owid
    rules = json.loads(cli("fraud", "rules", owid, "--set", "hosting_network=refuse"))
    assert rules["actions"]["hosting_network"] == "refuse"
    assert rules["actions"]["shared_ip"] == "hold"  # the default, unchanged
    bad = questwall("fraud", "rules", owid, "--set", "shared_ip=refuse")
    assert bad.exit_code == 1 and "hold, allow" in bad.stderr

    entry = json.loads(cli("fraud", "block", "network", "192.0.2.7/24", "--note", "farm"))
    assert entry["value"] == "192.0.2.0/24"
    assert [e["value"] for e in json.loads(cli("fraud", "blocklist"))] == ["192.0.2.0/24"]
    cli("fraud", "unblock", str(entry["id"]))
    assert json.loads(cli("fraud", "blocklist")) == []


def test_reports_count_refused_clicks_in_their_own_column(engine, screened, game, paying, box):
    from datetime import date

    from api.reports import figures as reports
    from models import Role
    from tests.factories import make_account

    mission = make_mission(engine, game.game_id, **SCORE)
    other = make_paying_offerwall(engine, box, name="Other wall")
    with write_session(engine) as session:
        blocklist.block(session=session, kind="uid", value="cheater", note="", actor=STAFF)
    screened.app.state.click_screen.blocklist.refresh()
    owid = paying[0].owid
    assert click(screened, "mission", mission.id, owid, uid="ok").status_code == 302
    for _ in range(2):
        assert click(screened, "mission", mission.id, owid, uid="cheater").status_code == 403
    assert click(screened, "mission", mission.id, other.owid, uid="cheater").status_code == 403
    # A made-up offer id is refused too, and recorded, but is no offer's click.
    assert click(screened, "mission", "no-such-offer", owid, uid="x").status_code == 404

    def report(account, dimension):
        with new_session(engine) as session:
            return reports.build_report(
                session=session,
                account=account,
                dimension=dimension,
                first=date.today(),
                last=date.today(),
            )

    staff = report(make_account(Role.STAFF), "offer")
    assert [(r.key, r.clicks, r.refused) for r in staff.rows] == [(mission.id, 1, 3)]
    publisher = make_account(Role.PUBLISHER, offerwall_id=paying[0].id)
    assert report(publisher, "day").totals.refused == 2  # their own offerwall's only
    assert report(make_account(Role.DESIGNER, studio_id="elsewhere"), "day").totals.refused == 0


def test_the_deployments_defaults_are_checked_at_start_and_used(settings):
    from api.core.config import Settings
    from api.fraud import Policy

    with pytest.raises(ValueError, match="hold, allow"):
        Settings(QUESTWALL_FRAUD_DEFAULTS="shared_ip=refuse")
    with pytest.raises(ValueError, match="signal=action"):
        Settings(QUESTWALL_FRAUD_DEFAULTS="hosting_network")
    policy = Policy.from_settings(
        settings.model_copy(update={"fraud_defaults": "hosting_network=refuse"})
    )
    assert policy.action("hosting_network", None) == "refuse"
    assert policy.action("hosting_network", {"hosting_network": "allow"}) == "allow"
    assert policy.action("shared_ip", None) == "hold"
