"""Live operations through the real API (docs/missions.md#live-operations): a recurring
mission pays once a day across a DST change, late events count in their own day, a pool
shows each player their picks and refuses the others, a ladder reached in one batch sends
its stage postbacks in order, a period cap reopens the next day, and a scheduled offer
stays out until it starts. Time is moved, never slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy as sa

from api.core.db import new_session, write_session
from api.core.periods import picks
from api.missions import offers
from models.offer_schemas import OffersFile
from models.tables import conversion as _conversion
from models.tables import progress as _progress
from tests.api.steps import start
from tests.api.tracking_helpers import click
from tests.outbox import run_once
from tests.receiver import running_receiver

LIVE_TEMPLATE = (
    "{base}/pb?tx={transaction_id}&uid={uid}&mission={mission_id}&payout={payout}"
    "&period={period}&stage={stage}&stages={stage_count}"
)


@pytest.fixture
def api_settings(api_settings):
    """Events of earlier hours arrive in one request here, which the stale_event screen
    would hold for review (docs/fraud.md): it is off, and postbacks may go to the local
    receiver."""
    return api_settings.model_copy(update={"stale_event_hours": 0, "postback_allow_private": True})


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def import_file(engine, game_id: str, **parts) -> list:
    data = OffersFile.model_validate({"gameId": game_id, **parts})
    with write_session(engine) as session:
        missions, _ = offers.import_offers(session=session, data=data)
    return missions


def mission(title: str, rule: dict, **fields) -> dict:
    return {
        "title": title,
        "payout": "1.00",
        "destinationUrl": "https://game.example/m",
        "rule": rule,
        **fields,
    }


def wins(user: str, *moments: datetime) -> list[dict]:
    return [{"userId": user, "event": "WIN", "time": iso(m)} for m in moments]


def deliver(engine, box, settings, wall, receiver) -> list[dict[str, str]]:
    """Every postback due, delivered; the receiver's queries as dicts, in arrival order."""
    from tests.outbox import configure

    configure(engine, wall.id, LIVE_TEMPLATE.replace("{base}", receiver.url))
    while run_once(engine, box, settings, threads=1) > 0:
        pass
    return [dict(q) for q in receiver.queries()]


def listed(client, key: str, **params) -> dict:
    body = client.get("/offerwall/offers", params=params, headers={"x-api-key": key})
    assert body.status_code == 200, body.text
    return {m["id"]: m for m in body.json()["data"]["missions"]}


def test_a_daily_mission_pays_each_new_york_day_and_resets_across_the_dst_change(
    client, signed, game, wall, engine, box, api_settings, clock
):
    # America/New_York leaves daylight saving time on 2026-11-01: that day is 25 hours,
    # from 04:00 UTC to 05:00 UTC the next day.
    [daily] = import_file(
        engine,
        game.game_id,
        missions=[
            mission(
                "Win 2 a day",
                {"event": "WIN", "completion": {"threshold": 2}},
                recurrence={"every": "day", "timeZone": "America/New_York"},
            )
        ],
    )
    clock.set(utc("2026-10-31T10:00:00-04:00"))
    start(client, signed, wall, daily.id, "p1", uid="pub-p1")
    day1 = utc("2026-10-31T10:00:00-04:00")
    assert signed.events(*wins("p1", day1 + timedelta(minutes=1))).status_code == 200
    record = listed(client, wall[1], uid="pub-p1")[daily.id]
    assert record["resetsAt"] == "2026-11-01T04:00:00.000Z"
    assert (record["progress"]["current"], record["progress"]["status"]) == (1, "started")
    from tests.api.listing.test_wall import wall_page

    assert "Starts over on 1 Nov, 04:00 UTC" in wall_page(client, wall[0].owid, "pub-p1").text
    assert signed.events(*wins("p1", day1 + timedelta(minutes=2))).status_code == 200
    # A third win the same day: converted already, not repeatable.
    clock.set(day1 + timedelta(hours=13, minutes=1))
    assert signed.events(*wins("p1", day1 + timedelta(hours=13))).status_code == 200

    # Just after midnight in New York (still EDT): a new day, progress from zero.
    clock.set(utc("2026-11-01T00:30:00-04:00"))
    record = listed(client, wall[1], uid="pub-p1")[daily.id]
    assert (record["progress"]["current"], record["progress"]["status"]) == (0, "started")
    assert record["resetsAt"] == "2026-11-02T05:00:00.000Z"  # midnight EST: 25 hours on
    assert signed.events(*wins("p1", utc("2026-11-01T00:10:00-04:00"))).status_code == 200
    # 23:30 EST on 1 November is 04:30 UTC on the 2nd: still the same New York day.
    clock.set(utc("2026-11-01T23:40:00-05:00"))
    assert signed.events(*wins("p1", utc("2026-11-01T23:30:00-05:00"))).status_code == 200

    # The 2nd: one win; it arrives only on the 3rd with a second one timed on the 2nd.
    clock.set(utc("2026-11-02T12:00:00-05:00"))
    assert signed.events(*wins("p1", utc("2026-11-02T11:00:00-05:00"))).status_code == 200
    clock.set(utc("2026-11-03T08:00:00-05:00"))
    late = utc("2026-11-02T23:59:00-05:00")
    assert signed.events(*wins("p1", late)).status_code == 200
    assert listed(client, wall[1], uid="pub-p1")[daily.id]["progress"]["current"] == 0

    with running_receiver() as receiver:
        paid = deliver(engine, box, api_settings, wall[0], receiver)
    assert [p["period"] for p in paid] == ["2026-10-31", "2026-11-01", "2026-11-02"]
    assert len({p["tx"] for p in paid}) == 3  # each its own transaction id
    with new_session(engine) as session:
        periods = session.execute(
            sa.select(_progress.c.period, _progress.c.status, _progress.c.count)
            .where(_progress.c.mission_id == daily.id)
            .order_by(_progress.c.period)
        ).all()
    assert [tuple(p) for p in periods] == [
        ("2026-10-31", "completed", 2),
        ("2026-11-01", "completed", 2),
        ("2026-11-02", "completed", 2),
    ]


def test_a_repeatable_daily_mission_pays_each_completion_of_the_day(
    client, signed, game, wall, engine, box, api_settings, clock
):
    [daily] = import_file(
        engine,
        game.game_id,
        missions=[
            mission(
                "Every win",
                {"event": "WIN"},
                recurrence={"every": "day", "timeZone": "UTC"},
                allowMultipleConversions=True,
            )
        ],
    )
    clock.set(utc("2026-12-01T08:00:00+00:00"))
    start(client, signed, wall, daily.id, "p1", uid="pub-p1")
    moments = [utc("2026-12-01T09:00:00+00:00") + timedelta(minutes=n) for n in range(3)]
    clock.set(utc("2026-12-01T10:00:00+00:00"))
    assert signed.events(*wins("p1", *moments)).status_code == 200
    clock.set(utc("2026-12-02T10:00:00+00:00"))
    assert signed.events(*wins("p1", utc("2026-12-02T09:00:00+00:00"))).status_code == 200
    with new_session(engine) as session:
        made = session.execute(
            sa.select(_conversion.c.period, sa.func.count())
            .group_by(_conversion.c.period)
            .order_by(_conversion.c.period)
        ).all()
    assert [tuple(m) for m in made] == [("2026-12-01", 3), ("2026-12-02", 1)]


def test_a_player_who_never_clicked_takes_no_part_and_a_day_before_the_click_is_not_paid(
    client, signed, game, wall, engine, clock
):
    [daily] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win a day", {"event": "WIN"}, recurrence={"every": "day"})],
    )
    clock.set(utc("2026-12-05T12:00:00+00:00"))
    start(client, signed, wall, daily.id, "p1", uid="pub-p1")
    # A win of the day before the click, arriving late, and a stranger's win.
    earlier = utc("2026-12-04T12:00:00+00:00")
    assert signed.events(*wins("p1", earlier), *wins("stranger", earlier)).status_code == 200
    with new_session(engine) as session:
        assert session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar() == 0


def test_a_pool_shows_each_player_the_same_picks_all_day_and_refuses_the_others(
    client, signed, game, wall, engine, clock
):
    pool = {"name": "daily-pvp", "size": 3, "every": "day", "timeZone": "UTC"}
    missions = import_file(
        engine,
        game.game_id,
        pools=[pool],
        missions=[mission(f"PvP {n}", {"event": "WIN"}, pool="daily-pvp") for n in range(6)],
    )
    ids = {m.id for m in missions}
    owid, key = wall[0].owid, wall[1]

    # Without a uid: the whole pool, each with its name.
    clock.set(utc("2026-12-10T08:00:00+00:00"))
    everything = listed(client, key)
    assert set(everything) == ids
    assert {m["pool"] for m in everything.values()} == {"daily-pvp"}

    def picks(uid: str) -> set[str]:
        return set(listed(client, key, uid=uid)) & ids

    first = picks("pub-anna")
    assert len(first) == 3
    clock.set(utc("2026-12-10T23:30:00+00:00"))
    assert picks("pub-anna") == first  # a reload later the same day
    days = [first]
    for day in range(11, 16):
        clock.set(datetime(2026, 12, day, 9, tzinfo=UTC))
        days.append(picks("pub-anna"))
    assert all(len(d) == 3 for d in days)
    assert len({frozenset(d) for d in days}) > 1  # other ones on other days

    # A click on one of today's picks goes through; on another mission it is refused.
    today = days[-1]
    chosen = next(iter(today))
    assert click(client, "mission", chosen, owid, uid="pub-anna").status_code == 302
    other = next(iter(ids - today))
    refused = click(client, "mission", other, owid, uid="pub-anna")
    assert refused.status_code == 403
    assert "not among your missions" in refused.text


def test_a_pool_of_6_shows_each_player_their_own_3_picks_through_the_api(
    client, game, wall, engine, clock
):
    """The listing shows each player the pool's picks for them, this offerwall and this day
    (`api.core.periods.picks`); how evenly those spread over 1,000 players is that
    function's own test (tests/unit/core/test_periods.py)."""
    missions = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily-pvp", "size": 3, "every": "day", "timeZone": "UTC"}],
        missions=[mission(f"PvP {n}", {"event": "WIN"}, pool="daily-pvp") for n in range(6)],
    )
    ids = sorted(m.id for m in missions)
    clock.set(utc("2026-12-10T08:00:00+00:00"))
    seen: set[str] = set()
    for n in range(40):
        uid = f"player-{n}"
        picked = set(listed(client, wall[1], uid=uid)) & set(ids)
        assert picked == picks(
            ids, 3, pool="daily-pvp", offerwall_id=wall[0].id, uid=uid, key="2026-12-10"
        )
        seen |= picked
    assert seen == set(ids)  # every member is someone's pick


def _kill_ladder(engine, game_id: str, title: str, stages: list[tuple[int, str]], **extra):
    """A ladder mission counting KILL events, imported: (threshold, payout) per stage."""
    [ladder] = import_file(
        engine,
        game_id,
        missions=[
            {
                "title": title,
                "destinationUrl": "https://game.example/m",
                "rule": {"event": "KILL"},
                **extra,
                "stages": [{"threshold": t, "payout": p} for t, p in stages],
            }
        ],
    )
    return ladder


def _kills(now: datetime, user: str, count: int, offset: int = 0) -> list[dict]:
    """`count` KILL events of a user, a second apart, from `offset` seconds after `now`."""
    return [
        {"userId": user, "event": "KILL", "time": iso(now + timedelta(seconds=offset + n))}
        for n in range(count)
    ]


def test_a_ladder_reached_in_one_batch_sends_its_stage_postbacks_in_order(
    client, signed, game, wall, engine, box, api_settings
):
    ladder = _kill_ladder(
        engine, game.game_id, "Kill ladder", [(1, "0.10"), (5, "0.40"), (10, "1.00")]
    )
    start(client, signed, wall, ladder.id, "p1", uid="pub-p1")
    start(client, signed, wall, ladder.id, "p2", uid="pub-p2")
    kills = partial(_kills, datetime.now(UTC))

    # Before: the offers API lists the ladder with nothing reached.
    record = listed(client, wall[1], uid="pub-p2")[ladder.id]
    assert [(s["stage"], s["payout"], s["reached"]) for s in record["stages"]] == [
        (1, 0.1, False),
        (2, 0.4, False),
        (3, 1.0, False),
    ]  # in USD until the offerwall sets its currency (100 Gems per USD, below)
    # p2 reaches the first stage; p1 every stage at once, in one batch.
    assert signed.events(*kills("p2", 3)).status_code == 200
    record = listed(client, wall[1], uid="pub-p2")[ladder.id]
    assert [s["reached"] for s in record["stages"]] == [True, False, False]
    assert record["progress"]["stagesReached"] == 1
    assert signed.events(*kills("p1", 12)).status_code == 200
    # Of p1's three stage postbacks, only the first may be taken while it is unsent.
    from api.postbacks import outbox
    from models.tables import postback as _postback

    claimable = outbox.claim(engine, limit=10, lease_seconds=60)
    with new_session(engine) as session:
        stages = session.execute(
            sa.select(_conversion.c.stage)
            .select_from(_postback.join(_conversion, _conversion.c.id == _postback.c.conversion_id))
            .where(_postback.c.id.in_(list(claimable)))
        ).scalars()
        assert sorted(stages) == [1, 1]  # p1's first stage and p2's
    outbox.release_leases(engine, list(claimable))

    with running_receiver() as receiver:
        paid = deliver(engine, box, api_settings, wall[0], receiver)
    assert [(p["stage"], p["stages"], p["payout"]) for p in paid if p["uid"] == "pub-p1"] == [
        ("1", "3", "10"),
        ("2", "3", "40"),
        ("3", "3", "100"),
    ]
    assert [p["stage"] for p in paid if p["uid"] == "pub-p2"] == ["1"]
    # Each stage is its own line of the conversions ledger.
    from api.conversions import ledger

    with new_session(engine) as session:
        lines = ledger.search(session=session, studio_id=None).rows
    assert sorted(line.mission for line in lines) == [
        "Kill ladder · stage 1 of 3",
        "Kill ladder · stage 1 of 3",
        "Kill ladder · stage 2 of 3",
        "Kill ladder · stage 3 of 3",
    ]
    # Completed: the ladder leaves the player's list; its progress says all stages.
    progress = client.get("/offerwall/users/pub-p1/progress", headers={"x-api-key": wall[1]})
    [entry] = progress.json()["data"]["missions"]
    assert (entry["progress"]["stagesReached"], entry["progress"]["status"]) == (3, "completed")


def test_caps_count_stages_a_ladder_of_3_with_cap_4_pays_4_stages(
    client, signed, game, wall, engine
):
    stages = [(1, "0.10"), (2, "0.20"), (3, "0.30")]
    ladder = _kill_ladder(engine, game.game_id, "Capped ladder", stages, cap=4)
    start(client, signed, wall, ladder.id, "p1", uid="pub-p1")
    start(client, signed, wall, ladder.id, "p2", uid="pub-p2")
    kills = partial(_kills, datetime.now(UTC))

    assert signed.events(*kills("p1", 3)).status_code == 200  # three stages: three places
    assert signed.events(*kills("p2", 1)).status_code == 200  # the fourth and last place
    assert ladder.id not in listed(client, wall[1])  # full: out of the listing
    assert signed.events(*kills("p2", 2, offset=10)).status_code == 200  # no place left
    with new_session(engine) as session:
        stages = session.execute(
            sa.select(_conversion.c.stage).where(_conversion.c.mission_id == ladder.id)
        ).scalars()
        assert sorted(stages) == [1, 1, 2, 3]


def test_a_scheduled_offer_is_absent_and_refused_before_its_start(
    client, signed, game, wall, engine, clock
):
    clock.set(utc("2026-12-20T08:00:00+00:00"))
    [later] = import_file(
        engine,
        game.game_id,
        missions=[
            mission("Winter event", {"event": "WIN"}, startDate="2026-12-24T00:00:00Z"),
        ],
    )
    assert later.id not in listed(client, wall[1])
    early = click(client, "mission", later.id, wall[0].owid, uid="pub-p1")
    assert early.status_code == 403 and "not available yet" in early.text
    clock.set(utc("2026-12-24T00:00:01+00:00"))
    record = listed(client, wall[1])[later.id]
    assert record["startDate"] == "2026-12-24T00:00:00.000Z"
    went = click(client, "mission", later.id, wall[0].owid, uid="pub-p1")
    assert went.status_code == 302
    assert parse_qs(urlsplit(went.headers["location"]).query)["platformid"]


PLAYERS = 20


@pytest.mark.timeout(120)
def test_a_daily_cap_of_5_under_20_parallel_completions_gives_5_and_reopens_the_next_day(
    engine, db_url, box, tmp_path, client, signed, game, wall, clock
):
    from tests.api.live_server import post_signed, run_clients, serve_api
    from tests.api.steps import link_over_http

    [capped] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win once", {"event": "WIN"}, periodCaps={"day": 5, "timeZone": "UTC"})],
    )
    players = [f"p{n}" for n in range(PLAYERS)]
    with serve_api(db_url, tmp_path) as url:
        import httpx

        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, capped.id, wall[0].owid, players)
            plans = [
                [{"gameId": game.game_id, "identifiers": [], "events": wins(p, datetime.now(UTC))}]
                for p in players
            ]
            answers = run_clients(url, game, plans)
            assert [status for status, *_ in answers] == [200] * PLAYERS
            # Full for today: out of the listing, and a click is refused until midnight.
            gone = http.get("/offerwall/offers", headers={"x-api-key": wall[1]}).json()
            assert capped.id not in {m["id"] for m in gone["data"]["missions"]}
            refused = http.get(f"/missions/{capped.id}", params={"owid": wall[0].owid, "uid": "x"})
            assert refused.status_code == 410 and "opens again" in refused.text
            assert post_signed(http, game, plans[0][0]).status_code == 200
    with new_session(engine) as session:
        made = session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar()
    assert made == 5

    # The next day (UTC): listed again; a waiting player's next win converts.
    tomorrow = datetime.now(UTC).replace(hour=0, minute=5) + timedelta(days=1)
    clock.set(tomorrow)
    assert capped.id in listed(client, wall[1])
    waiting = next(p for p in players if not _converted(engine, p))
    assert signed.events(*wins(waiting, tomorrow)).status_code == 200
    assert _converted(engine, waiting)
    with new_session(engine) as session:
        made = session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar()
    assert made == 6


def _converted(engine, uid: str) -> bool:
    from models.tables import platform_user as _platform_user

    with new_session(engine) as session:
        found = session.execute(
            sa.select(sa.func.count())
            .select_from(
                _conversion.join(
                    _platform_user, _platform_user.c.id == _conversion.c.platform_user_id
                )
            )
            .where(_platform_user.c.uid == uid)
        ).scalar()
    return bool(found)


def test_a_cap_per_offerwall_closes_the_offer_at_that_offerwall_only(
    client, signed, game, wall, engine, box
):
    from tests.factories import make_offerwall

    other, other_key = make_offerwall(engine, box)
    [capped] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win once", {"event": "WIN"}, capPerOfferwall=1)],
    )
    start(client, signed, wall, capped.id, "p1", uid="pub-p1")
    assert signed.events(*wins("p1", datetime.now(UTC))).status_code == 200
    assert capped.id not in listed(client, wall[1])
    assert click(client, "mission", capped.id, wall[0].owid, uid="pub-p2").status_code == 410
    assert capped.id in listed(client, other_key)
    assert click(client, "mission", capped.id, other.owid, uid="pub-p2").status_code == 302


def test_the_wall_shows_a_players_picks_the_ladder_and_when_the_round_turns(
    client, signed, game, wall, engine, clock
):
    from tests.api.listing.test_wall import cards, wall_page

    clock.set(utc("2026-12-10T08:00:00+00:00"))
    pooled = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily-pvp", "size": 2}],
        missions=[mission(f"PvP {n}", {"event": "WIN"}, pool="daily-pvp") for n in range(5)],
    )
    [ladder] = import_file(
        engine,
        game.game_id,
        missions=[
            {
                "title": "Kill ladder",
                "destinationUrl": "https://game.example/m",
                "rule": {"event": "KILL"},
                "stages": [{"threshold": 1, "payout": "0.10"}, {"threshold": 3, "payout": "0.30"}],
            }
        ],
    )
    owid, key = wall[0].owid, wall[1]
    page = wall_page(client, owid, "pub-anna")
    shown = set(cards(page).cards)
    picks = set(listed(client, key, uid="pub-anna")) - {ladder.id}
    assert len(picks) == 2 and shown == picks | {ladder.id}
    # A new pooled card says until when it is offered: midnight UTC.
    assert page.text.count("Available until 11 Dec, 00:00 UTC") == 2
    assert page.text.count("Reach ") == 2  # the ladder's two stages
    start(client, signed, wall, ladder.id, "p1", uid="pub-anna")
    assert (
        signed.events(
            {"userId": "p1", "event": "KILL", "time": iso(utc("2026-12-10T08:00:30+00:00"))}
        ).status_code
        == 200
    )
    again = wall_page(client, owid, "pub-anna").text

    assert again.count('class="reached"') == 1
    assert {m.id for m in pooled} >= picks


def test_a_quests_mission_scheduled_later_joins_the_quest_when_it_starts(
    client, signed, game, wall, engine, clock
):
    from models import Progress

    clock.set(utc("2026-12-20T08:00:00+00:00"))
    data = OffersFile.model_validate(
        {
            "gameId": game.game_id,
            "quests": [
                {
                    "name": "Winter quest",
                    "destinationUrl": "https://game.example/q",
                    "missions": [
                        mission("Now", {"event": "WIN"}),
                        mission("Later", {"event": "WIN"}, startDate="2026-12-24T00:00:00Z"),
                    ],
                }
            ],
        }
    )
    with write_session(engine) as session:
        _, [quest] = offers.import_offers(session=session, data=data)
    body = client.get("/offerwall/offers", headers={"x-api-key": wall[1]}).json()
    [listed_quest] = body["data"]["quests"]
    assert [m["title"] for m in listed_quest["missions"]] == ["Now"]
    assert click(client, "quest", quest.id, wall[0].owid, uid="pub-p1").status_code == 302
    with new_session(engine) as session:
        started = session.execute(sa.select(sa.func.count()).select_from(Progress)).scalar()
    assert started == 1  # not the mission that starts later
    clock.set(utc("2026-12-24T09:00:00+00:00"))
    body = client.get("/offerwall/offers", headers={"x-api-key": wall[1]}).json()
    assert [m["title"] for m in body["data"]["quests"][0]["missions"]] == ["Now", "Later"]
    assert click(client, "quest", quest.id, wall[0].owid, uid="pub-p1").status_code == 302
    with new_session(engine) as session:
        started = session.execute(sa.select(sa.func.count()).select_from(Progress)).scalar()
    assert started == 2


# --- what a change of definition, a clickid and review do to live operations ----------------


def test_a_daily_mission_made_weekly_carries_the_days_row_into_the_week(
    client, signed, game, wall, engine, clock
):
    rule = {"event": "WIN", "completion": {"threshold": 3}}
    [m] = import_file(
        engine, game.game_id, missions=[mission("Win 3", rule, recurrence={"every": "day"})]
    )
    monday = utc("2026-11-30T10:00:00+00:00")
    clock.set(monday)
    start(client, signed, wall, m.id, "p1", uid="pub-p1")
    assert signed.events(*wins("p1", monday + timedelta(minutes=1))).status_code == 200
    import_file(
        engine,
        game.game_id,
        missions=[mission("Win 3", rule, id=m.id, recurrence={"every": "week"})],
    )
    tuesday = monday + timedelta(days=1)
    clock.set(tuesday + timedelta(minutes=5))
    assert signed.events(*wins("p1", tuesday, tuesday + timedelta(minutes=1))).status_code == 200
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(_progress.c.period, _progress.c.status, _progress.c.resets_at).where(
                _progress.c.mission_id == m.id
            )
        ).all()
        paid = session.execute(sa.select(_conversion.c.period)).scalars().all()
    assert [tuple(r) for r in rows] == [
        ("2026-11-30", "completed", utc("2026-12-07T00:00:00+00:00"))
    ]
    assert paid == ["2026-11-30"]


def test_a_pooled_missions_link_needs_the_players_uid(client, signed, game, wall, engine, clock):
    missions = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily", "size": 1}],
        missions=[mission(f"M{n}", {"event": "WIN"}, pool="daily") for n in range(4)],
    )
    # A clickid is the browser's to choose: with it alone, any mission could be had.
    for m in missions:
        refused = click(client, "mission", m.id, wall[0].owid, clickid="c1")
        assert refused.status_code == 400 and "needs the player" in refused.text


def test_a_mission_full_at_an_offerwall_leaves_its_listing_and_wall_at_once(
    client, signed, game, wall, engine, clock
):
    from tests.api.listing.test_wall import cards, wall_page

    [m] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win once", {"event": "WIN"}, capPerOfferwall=1)],
    )
    t0 = utc("2026-12-01T10:00:00+00:00")
    clock.set(t0)
    assert m.id in listed(client, wall[1])  # the listing is built and kept now
    assert m.id in cards(wall_page(client, wall[0].owid, "pub-p2")).cards
    start(client, signed, wall, m.id, "p1", uid="pub-p1")
    assert signed.events(*wins("p1", t0 + timedelta(minutes=1))).status_code == 200
    assert m.id not in listed(client, wall[1])
    assert m.id not in listed(client, wall[1], uid="pub-p2")
    assert m.id not in cards(wall_page(client, wall[0].owid, "pub-p2")).cards


def test_a_stage_held_for_review_holds_back_the_next_stages_postbacks(
    client, signed, game, wall, engine, box, api_settings, clock
):
    from api.conversions import review
    from api.postbacks import outbox

    [ladder] = import_file(
        engine,
        game.game_id,
        missions=[
            {
                "title": "Kill ladder",
                "destinationUrl": "https://game.example/m",
                "rule": {"event": "KILL"},
                "minCompletionSeconds": 600,  # sooner than 10 minutes: held
                "stages": [{"threshold": 1, "payout": "0.10"}, {"threshold": 2, "payout": "0.20"}],
            }
        ],
    )
    t0 = utc("2026-12-01T10:00:00+00:00")
    clock.set(t0)
    start(client, signed, wall, ladder.id, "p1", uid="pub-p1")
    kill = {"userId": "p1", "event": "KILL"}
    assert signed.events({**kill, "time": iso(t0 + timedelta(seconds=5))}).status_code == 200
    clock.set(t0 + timedelta(minutes=20))
    assert signed.events({**kill, "time": iso(t0 + timedelta(minutes=20))}).status_code == 200
    with new_session(engine) as session:
        made = session.execute(
            sa.select(
                _conversion.c.stage, _conversion.c.status, _conversion.c.transaction_id
            ).order_by(_conversion.c.stage)
        ).all()
    assert [(c.stage, c.status) for c in made] == [(1, "pending"), (2, "approved")]
    assert outbox.claim(engine, limit=10, lease_seconds=60) == {}  # stage 2 waits for 1
    with write_session(engine) as session:
        review.approve(
            session=session, transaction_ids=[made[0].transaction_id], actor="cli", studio_id=None
        )
    with running_receiver() as receiver:
        paid = deliver(engine, box, api_settings, wall[0], receiver)
    assert [p["stage"] for p in paid] == ["1", "2"]


def test_the_migration_refuses_to_go_down_once_a_player_was_paid_in_two_periods(
    client, signed, game, wall, engine, clock, db_url
):
    from alembic import command
    from api.core.db import alembic_config

    [daily] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win a day", {"event": "WIN"}, recurrence={"every": "day"})],
    )
    t0 = utc("2026-12-01T10:00:00+00:00")
    clock.set(t0)
    start(client, signed, wall, daily.id, "p1", uid="pub-p1")
    assert signed.events(*wins("p1", t0 + timedelta(minutes=1))).status_code == 200
    clock.set(t0 + timedelta(days=1))
    assert signed.events(*wins("p1", t0 + timedelta(days=1, minutes=1))).status_code == 200
    engine.dispose()
    with pytest.raises(RuntimeError, match="paid for a recurring or pooled mission"):
        command.downgrade(alembic_config(db_url), "0024")
    with new_session(engine) as session:  # nothing was changed
        assert session.execute(sa.select(sa.func.count()).select_from(_conversion)).scalar() == 2
