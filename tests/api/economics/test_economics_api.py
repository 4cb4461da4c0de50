"""Economics through the real API, tracking links and postbacks (docs/economics.md): the
payout precedence (country > offerwall > default) resolved the same in the listing, the
conversion and the postback; a rule change leaves earlier conversions as they were; a
daily budget under 20 parallel completions is never passed and reopens the next day; a
promotion boosts `{payout}` and the listing only inside its window, countries and
first-conversion rule, and `{payout_usd}` never changes. Time is moved, never slept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from api.core.db import new_session, write_session
from api.economics import PromotionIn, payout_rules, promotions
from models.tables import conversion as _conversion
from models.types import utcnow
from tests.api.missions.test_live_operations import import_file, listed, mission, wins
from tests.api.tracking_helpers import click
from tests.outbox import configure, run_once
from tests.receiver import running_receiver

TEMPLATE = (
    "{base}/pb?tx={transaction_id}&mission={mission_id}&payout={payout}&usd={payout_usd}"
    "&promotion={promotion}&multiplier={multiplier}"
)
US, DE, BR = "203.0.113.7", "198.51.100.9", "192.0.2.44"  # as the test lookup places them


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"stale_event_hours": 0, "postback_allow_private": True})


def deliver(engine, box, settings, wall, receiver) -> list[dict[str, str]]:
    configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
    while run_once(engine, box, settings, threads=1) > 0:
        pass
    return [dict(q) for q in receiver.queries()]


def stored(engine) -> dict[str, tuple]:
    """Every conversion: mission → (payout micros, rule, country, promotion, multiplier)."""
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(
                _conversion.c.mission_id,
                _conversion.c.payout_micros,
                _conversion.c.revenue_micros,
                _conversion.c.payout_rule,
                _conversion.c.country,
                _conversion.c.promotion,
                _conversion.c.multiplier,
            ).order_by(_conversion.c.id)
        ).all()
    return [tuple(r) for r in rows]


def play(client, signed, wall, mission_id: str, user: str, ip: str) -> None:
    """The player clicks from `ip`, the game links them, and they win once (now, by the
    clock the test moves)."""
    from tests.api.tracking_helpers import platform_id

    link = click(client, "mission", mission_id, wall[0].owid, uid=f"pub-{user}", ip=ip)
    player = platform_id(link)
    assert signed.identifiers({"userId": user, "platformUserId": player}).status_code == 200
    assert signed.events(*wins(user, utcnow())).status_code == 200


def test_the_precedence_is_resolved_the_same_in_listing_conversion_and_postback(
    client, signed, game, wall, engine, box, api_settings
):
    a, b, c = import_file(
        engine,
        game.game_id,
        missions=[
            mission(
                "A",
                {"event": "WIN"},
                revenue="2.00",
                payouts=[{"countries": ["US", "CA"], "payout": "1.50"}],
            ),
            mission("B", {"event": "WIN"}, revenue="3.00"),
            mission("C", {"event": "WIN"}),
        ],
    )
    with write_session(engine) as session:
        payout_rules.set_share(session, wall[0].id, "40", by="staff@example.com")
        payout_rules.set_for_mission(session, wall[0].id, b.id, payout="0.70", by="staff")
    # (mission, player's address, country, USD, the rule that applies)
    table = [
        (a, US, "US", "1.5", "country"),
        (a, BR, "BR", "0.8", "share"),  # 40% of 2.00
        (b, US, "US", "0.7", "offerwall"),
        (c, BR, "BR", "1", "default"),  # no revenue: the share does not apply
    ]
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        for n, (offer, ip, country, usd, _) in enumerate(table):
            # The listing for that country shows what the conversion then pays (100 GEM/USD).
            record = listed(client, wall[1], country=country)[offer.id]
            assert record["payout"] == float(usd) * 100, (offer.title, country)
            # Publishers never see revenue, budgets or the payouts of other countries.
            assert not {"revenue", "payouts", "budget", "basePayout"} & set(record)
            play(client, signed, wall, offer.id, f"p{n}", ip)
        sent = deliver(engine, box, api_settings, wall[0], receiver)
    rows = stored(engine)
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        (offer.id, int(float(usd) * 1_000_000), rule, country)
        for offer, _, country, usd, rule in table
    ]
    assert [(q["mission"], q["usd"], q["payout"]) for q in sent] == [
        (offer.id, usd, str(round(float(usd) * 100))) for offer, _, _, usd, _ in table
    ]
    assert [r[2] for r in rows] == [2_000_000, 2_000_000, 3_000_000, None]
    # The staff's margin report reads the same figures: per mission and per country.
    from api.reports.margin import build_margin
    from models import Role
    from tests.factories import make_account

    today = utcnow().date()
    with new_session(engine) as session:
        staff = make_account(Role.STAFF)
        by_mission = build_margin(
            session=session, account=staff, by="mission", first=today, last=today
        )
        by_country = build_margin(
            session=session, account=staff, by="country", first=today, last=today
        )
    per_mission = {row.key: (row.payout_micros, row.revenue_micros) for row in by_mission.rows}
    assert per_mission == {
        a.id: (2_300_000, 4_000_000),  # 1.50 (US) + 0.80 (BR, 40% of 2.00)
        b.id: (700_000, 3_000_000),
        c.id: (1_000_000, 0),
    }
    assert {row.key: row.payout_micros for row in by_country.rows} == {
        "US": 2_200_000,
        "BR": 1_800_000,
    }
    assert by_mission.totals.payout_micros == sum(r.payout_micros for r in by_mission.rows)


def test_a_rule_change_applies_from_then_on_and_never_rewrites_a_conversion(
    client, signed, game, wall, engine
):
    [paid] = import_file(
        engine,
        game.game_id,
        missions=[mission("Win", {"event": "WIN"}, revenue="2.00", allowMultipleConversions=True)],
    )
    with write_session(engine) as session:
        payout_rules.set_share(session, wall[0].id, "40", by="staff")
    play(client, signed, wall, paid.id, "p1", BR)
    with write_session(engine) as session:
        payout_rules.set_share(session, wall[0].id, "50", by="staff")
    assert listed(client, wall[1])[paid.id]["payout"] == 1.0  # 50% of $2.00 (in USD here)
    assert signed.events(*wins("p1", datetime.now(UTC))).status_code == 200
    assert [(r[1], r[3]) for r in stored(engine)] == [(800_000, "share"), (1_000_000, "share")]


PLAYERS = 20


def test_a_daily_budget_under_20_parallel_completions_is_never_passed_and_reopens_the_next_day(
    engine, db_url, box, tmp_path, client, signed, game, wall, clock
):
    from tests.api.live_server import run_clients, serve_api
    from tests.api.steps import link_over_http

    [budgeted] = import_file(
        engine,
        game.game_id,
        missions=[
            mission(
                "Win once",
                {"event": "WIN"},
                revenue="1.00",
                budget={"amount": "5", "every": "day", "timeZone": "UTC"},
            )
        ],
    )
    players = [f"p{n}" for n in range(PLAYERS)]
    with serve_api(db_url, tmp_path) as url:
        import httpx

        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, budgeted.id, wall[0].owid, players)
            plans = [
                [{"gameId": game.game_id, "identifiers": [], "events": wins(p, datetime.now(UTC))}]
                for p in players
            ]
            answers = run_clients(url, game, plans)
            assert [status for status, *_ in answers] == [200] * PLAYERS
            # Spent for today: out of the listing, a click refused until midnight.
            gone = http.get("/offerwall/offers", headers={"x-api-key": wall[1]}).json()
            assert budgeted.id not in {m["id"] for m in gone["data"]["missions"]}
            refused = http.get(
                f"/missions/{budgeted.id}", params={"owid": wall[0].owid, "uid": "x"}
            )
            assert refused.status_code == 410 and "opens again" in refused.text
    with new_session(engine) as session:
        made = session.execute(
            sa.select(sa.func.count(), sa.func.sum(_conversion.c.revenue_micros))
        ).one()
    assert tuple(made) == (5, 5_000_000)

    tomorrow = datetime.now(UTC).replace(hour=0, minute=5) + timedelta(days=1)
    clock.set(tomorrow)
    assert budgeted.id in listed(client, wall[1])
    with new_session(engine) as session:
        paid = {
            r.uid
            for r in session.execute(
                sa.text(
                    "SELECT platform_user.uid FROM conversion JOIN platform_user"
                    " ON platform_user.id = conversion.platform_user_id"
                )
            )
        }
    waiting = next(p for p in players if p not in paid)
    assert signed.events(*wins(waiting, tomorrow)).status_code == 200
    assert len(stored(engine)) == 6


def test_a_promotion_boosts_payout_only_inside_its_window_countries_and_first_conversion(
    client, signed, game, wall, engine, box, api_settings, clock
):
    first, second = import_file(
        engine,
        game.game_id,
        missions=[mission("First", {"event": "WIN"}), mission("Second", {"event": "WIN"})],
    )
    now = datetime.now(UTC).replace(microsecond=0)
    clock.set(now)
    with write_session(engine) as session:
        promotions.add(
            session,
            wall[0].id,
            PromotionIn(
                name="Double Gems",
                multiplier="2",
                start=now - timedelta(minutes=1),
                end=now + timedelta(hours=1),
                countries=["US"],
                firstConversionOnly=True,
            ),
            by="publisher@example.com",
        )
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        # Unknown country: a sale for the US does not apply; for a US player it does.
        plain = listed(client, wall[1])[first.id]
        assert plain["payout"] == 100 and "promotion" not in plain
        boosted = listed(client, wall[1], country="US")[first.id]
        assert (boosted["payout"], boosted["basePayout"]) == (200, 100)
        assert boosted["promotion"]["name"] == "Double Gems"
        assert boosted["promotion"]["multiplier"] == 2
        assert boosted["promotion"]["endsAt"].startswith(
            (now + timedelta(hours=1)).isoformat()[:16]
        )
        assert "promotion" not in listed(client, wall[1], country="DE")[first.id]

        play(client, signed, wall, first.id, "us1", US)  # a first conversion in the US
        # With uid: the player's country (their click's) and whether they converted.
        assert "promotion" not in listed(client, wall[1], uid="pub-us1")[second.id]
        play(client, signed, wall, second.id, "us1", US)  # not the first any more
        play(client, signed, wall, first.id, "de1", DE)  # not in the US
        clock.set(now + timedelta(hours=2))  # the window is over
        assert "promotion" not in listed(client, wall[1], country="US")[first.id]
        play(client, signed, wall, first.id, "us2", US)
        sent = deliver(engine, box, api_settings, wall[0], receiver)
    assert [(q["payout"], q["usd"], q["promotion"], q["multiplier"]) for q in sent] == [
        ("200", "1", "Double Gems", "2"),
        ("100", "1", "", "1"),
        ("100", "1", "", "1"),
        ("100", "1", "", "1"),
    ]
    assert [(r[5], r[6]) for r in stored(engine)] == [
        ("Double Gems", 200),
        (None, 100),
        (None, 100),
        (None, 100),
    ]


def test_the_wall_prices_each_offerwall_by_its_own_rules(client, game, wall, engine, box):
    """Two offerwalls with the same currency: the one with a revenue share sees its own
    payout on the hosted wall, the other the mission's (the wall's cards are cached
    per offerwall that has rules of its own)."""
    from tests.api.listing.test_wall import wall_page
    from tests.factories import make_offerwall

    other, _ = make_offerwall(engine, box, name="Wall")  # the same name: the same theme
    import_file(engine, game.game_id, missions=[mission("Win", {"event": "WIN"}, revenue="2.00")])
    with write_session(engine) as session:
        payout_rules.set_share(session, wall[0].id, "40", by="staff")
    plain = wall_page(client, other.owid, "pub-a").text  # cached first
    shared = wall_page(client, wall[0].owid, "pub-b").text
    assert "0.80" in shared and "1.00" not in shared
    assert "1.00" in plain and "0.80" not in plain
