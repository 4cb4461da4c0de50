"""A rotating pool's picks hold for the whole period (docs/missions.md#rotating-pools): a
mission added to the pool, started or activated again in the middle of a day waits for the
next day; one that ends (expired, deactivated, taken out of the pool) gives its place to
the next of each player's order and the other picks stay. The offers API with `uid`, the
hosted wall and the tracking link agree. Time is moved, never slept."""

from __future__ import annotations

from urllib.parse import urlsplit

from api.core.db import write_session
from api.missions import offers
from models.offer_schemas import mission_in
from tests.api.listing.test_wall import cards, wall_page
from tests.api.missions.test_live_operations import import_file, listed, mission, utc
from tests.api.tracking_helpers import click

PLAYERS = [f"pub-p{n}" for n in range(40)]


def _picks(client, key: str, ids: set[str]) -> dict[str, frozenset[str]]:
    return {uid: frozenset(set(listed(client, key, uid=uid)) & ids) for uid in PLAYERS}


def _set_active(engine, mission_id: str, active: bool) -> None:
    with write_session(engine) as session:
        offers.set_active(session=session, kind="mission", offer_id=mission_id, active=active)


def _save(engine, game_id: str, stored, **changes) -> None:
    """Save a stored mission again with some of its definition changed (the editor's way)."""
    data = mission_in(stored).model_copy(update=changes)
    with write_session(engine) as session:
        offers.save_mission(session=session, game_id=game_id, data=data)


def test_a_pool_changed_mid_day_changes_no_ones_picks_but_replaces_the_ended_ones(
    client, game, wall, engine, clock
):
    clock.set(utc("2026-12-09T12:00:00+00:00"))  # the day before
    win = {"event": "WIN"}
    pooled = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily-pvp", "size": 3, "every": "day", "timeZone": "UTC"}],
        missions=[
            *(mission(f"PvP {n}", win, pool="daily-pvp") for n in range(8)),
            mission("Ends at 11", win, pool="daily-pvp", expirationDate="2026-12-10T11:00:00Z"),
            mission("Starts at 10", win, pool="daily-pvp", startDate="2026-12-10T10:00:00Z"),
            mission("Off at midnight", win, pool="daily-pvp", isActive=False),
            mission("Not pooled yet", win),
        ],
    )
    by_title = {m.title: m for m in pooled}
    ids = {m.id for m in pooled}
    key = wall[1]

    clock.set(utc("2026-12-10T08:00:00+00:00"))
    before = _picks(client, key, ids - {by_title["Not pooled yet"].id})  # listed to all
    assert all(len(p) == 3 for p in before.values())

    # The middle of the day: two members end, three missions come in.
    clock.set(utc("2026-12-10T09:00:00+00:00"))
    _set_active(engine, by_title["PvP 0"].id, False)
    _save(engine, game.game_id, by_title["PvP 1"], pool=None)
    _set_active(engine, by_title["Off at midnight"].id, True)
    _save(engine, game.game_id, by_title["Not pooled yet"], pool="daily-pvp")
    clock.set(utc("2026-12-10T12:00:00+00:00"))  # "Starts at 10" started, "Ends at 11" ended
    ended = {by_title[t].id for t in ("PvP 0", "PvP 1", "Ends at 11")}
    late = {by_title[t].id for t in ("Starts at 10", "Off at midnight", "Not pooled yet")}
    at_start = {by_title[f"PvP {n}"].id for n in range(8)} | {by_title["Ends at 11"].id}

    ids.discard(by_title["PvP 1"].id)  # on its own now: listed to all
    after = _picks(client, key, ids)
    replaced = [uid for uid in PLAYERS if before[uid] & ended]
    assert replaced and len(replaced) < len(PLAYERS)
    for uid in PLAYERS:
        assert len(after[uid]) == 3, uid
        assert not after[uid] & late, uid  # nothing new before tomorrow
        assert after[uid] <= at_start - ended, uid
        assert before[uid] - ended <= after[uid], uid  # the picks that did not end stay
        if uid not in replaced:
            assert after[uid] == before[uid], uid

    # The wall shows the same picks, and its links and the offers API's agree with a click.
    uid = replaced[0]
    page = cards(wall_page(client, wall[0].owid, uid))
    assert set(page.cards) & ids == after[uid]
    for n, mission_id in enumerate(sorted(after[uid])):
        link = urlsplit(page.links[mission_id])
        answer = client.get(
            f"{link.path}?{link.query}", headers={"x-forwarded-for": f"203.0.113.{20 + n}"}
        )
        assert answer.status_code == 302, answer.text
    for n, mission_id in enumerate(sorted(late | (at_start - ended - after[uid]))):
        refused = click(
            client, "mission", mission_id, wall[0].owid, uid=uid, ip=f"203.0.113.{40 + n}"
        )
        assert refused.status_code == 403, mission_id
        assert "not among your missions" in refused.text

    # The next day draws from every member: the late ones too.
    clock.set(utc("2026-12-11T09:00:00+00:00"))
    tomorrow = _picks(client, key, ids)
    assert all(len(p) == 3 and not p & ended for p in tomorrow.values())
    assert late <= set().union(*tomorrow.values())


def test_a_mission_added_in_a_new_york_pools_last_hour_across_the_dst_change_waits_for_its_next_day(
    client, game, wall, engine, clock
):
    """New York leaves DST on 2026-11-01: that day runs from 04:00 to 05:00 UTC the next
    day (25 hours). A mission added at 04:30 UTC on 2 November is still in 1 November there."""
    clock.set(utc("2026-10-30T12:00:00+00:00"))
    pool = {"name": "ny", "size": 2, "every": "day", "timeZone": "America/New_York"}
    win = {"event": "WIN"}
    members = import_file(
        engine,
        game.game_id,
        pools=[pool],
        missions=[mission(f"NY {n}", win, pool="ny") for n in range(5)],
    )
    ids = {m.id for m in members}
    key = wall[1]

    clock.set(utc("2026-11-02T04:00:00+00:00"))  # 23:00 EST on 1 November
    before = _picks(client, key, ids)
    clock.set(utc("2026-11-02T04:30:00+00:00"))
    [added] = import_file(engine, game.game_id, missions=[mission("NY late", win, pool="ny")])
    ids.add(added.id)

    clock.set(utc("2026-11-02T04:59:00+00:00"))
    assert _picks(client, key, ids) == before
    clock.set(utc("2026-11-02T05:00:00+00:00"))  # midnight in New York: 2 November
    turned = _picks(client, key, ids)
    assert any(added.id in p for p in turned.values())
    assert turned != before


def test_a_member_deactivated_and_activated_again_the_same_day_waits_for_the_next(
    client, game, wall, engine, clock
):
    clock.set(utc("2026-12-09T12:00:00+00:00"))
    win = {"event": "WIN"}
    members = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily", "size": 1}],
        missions=[mission(f"M{n}", win, pool="daily") for n in range(3)],
    )
    ids = {m.id for m in members}
    key = wall[1]
    clock.set(utc("2026-12-10T08:00:00+00:00"))
    before = _picks(client, key, ids)
    # The mission most players have: off and on again, it is not theirs until tomorrow.
    counts = {m.id: sum(m.id in p for p in before.values()) for m in members}
    target = next(m for m in members if counts[m.id] == max(counts.values()))
    _set_active(engine, target.id, False)
    clock.set(utc("2026-12-10T09:00:00+00:00"))
    _set_active(engine, target.id, True)
    clock.set(utc("2026-12-10T10:00:00+00:00"))
    after = _picks(client, key, ids)
    assert all(target.id not in p and len(p) == 1 for p in after.values())
    assert all(after[uid] == before[uid] for uid in PLAYERS if target.id not in before[uid])
    clock.set(utc("2026-12-11T10:00:00+00:00"))
    assert any(target.id in p for p in _picks(client, key, ids).values())


def test_two_games_pools_of_the_same_name_each_show_a_players_picks(
    client, game, wall, engine, box, clock
):
    from tests.factories import make_game

    other = make_game(engine, box, "Racer")
    clock.set(utc("2026-12-09T12:00:00+00:00"))
    drawn = {}
    for g in (game, other):
        members = import_file(
            engine,
            g.game_id,
            pools=[{"name": "daily", "size": 2}],
            missions=[
                mission(f"{g.game_id} {n}", {"event": "WIN"}, pool="daily") for n in range(4)
            ],
        )
        drawn[g.game_id] = {m.id for m in members}
    clock.set(utc("2026-12-10T08:00:00+00:00"))
    uid = "pub-anna"
    shown = set(listed(client, wall[1], uid=uid))
    page = cards(wall_page(client, wall[0].owid, uid))
    for ids in drawn.values():
        assert len(shown & ids) == 2
        assert set(page.cards) & ids == shown & ids
        for n, mission_id in enumerate(sorted(shown & ids)):
            answer = click(
                client, "mission", mission_id, wall[0].owid, uid=uid, ip=f"203.0.113.{60 + n}"
            )
            assert answer.status_code == 302, answer.text
