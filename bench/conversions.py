"""Conversion benchmark: completions per second, each a conversion with its fraud
assessment (docs/fraud.md#signals), on a quiet offer and on a popular one.

Seeds a game with one mission (one WIN event completes it) and an approved offerwall.
Each round clicks the mission's tracking link for new players (an address and a phone of
their own each), then sends signed event batches that link each player to a game account
and complete the mission for them: every event makes one conversion. The popular round
first adds `--popular` clicks on the same mission through a second offerwall, from other
addresses, in the last 24 hours: the clicks the completion signals look back over.

    .venv/bin/python bench/conversions.py [--players 2000] [--popular 50000]
        [--database-url URL] [--api-workers N]
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api.core.crypto import SecretBox, signed_headers
from api.core.db import build_engine, write_session
from api.missions import offers
from api.publishers import offerwalls
from api.studios import games
from bench.common import (
    LoadResult,
    add_target_arguments,
    api_workers,
    bench_ip,
    count_rows,
    emit,
    fire_raw,
    http_request,
    prepared,
    serving,
    target_label,
)
from bench.wall import PHONE
from models import Click, PlatformUser
from models.offer_schemas import MissionIn
from models.types import new_uuid

PLAYERS_PER_BATCH = 10


def seed(url: str, box: SecretBox) -> tuple[dict[str, str], str, str, str]:
    """The game's credential, the mission, the tested offerwall's owid, and a second
    offerwall's id (the popular round's other clicks come through it)."""
    engine = build_engine(url)
    with write_session(engine) as session:
        issued = games.create_game(session=session, box=box, name="Conversions bench")
        data = MissionIn.model_validate(
            {
                "title": "Win once",
                "payout": 1,
                "destinationUrl": "https://game.example/",
                "rule": {"event": "WIN"},
            }
        )
        mission = offers.save_mission(session=session, game_id=issued.game_id, data=data)
        wall = offerwalls.create_offerwall(session=session, name="Bench wall")
        owid = offerwalls.approve(session=session, box=box, offerwall=wall).owid
        other = offerwalls.create_offerwall(session=session, name="Other wall")
        offerwalls.approve(session=session, box=box, offerwall=other)
        game = {
            "gameId": issued.game_id,
            "clientId": issued.client_id,
            "clientSecret": issued.client_secret,
        }
        ids = (mission.id, owid, other.id)
    engine.dispose()
    return game, *ids


def add_popular_clicks(url: str, mission_id: str, offerwall_id: str, count: int) -> None:
    """`count` clicks on the mission in the last 24 hours through another offerwall, by
    players of their own from addresses outside the benchmark's range."""
    engine = build_engine(url)
    now = datetime.now(UTC)
    players = [
        {"id": new_uuid(), "offerwall_id": offerwall_id, "uid": f"other-{i}", "created_at": now}
        for i in range(count)
    ]
    clicks = [
        {
            "offerwall_id": offerwall_id,
            "mission_id": mission_id,
            "platform_user_id": p["id"],
            "uid": p["uid"],
            "ip": f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
            "user_agent": PHONE["user-agent"],
            "started": True,
            "created_at": now - timedelta(seconds=i * 86_000 / count),
        }
        for i, p in enumerate(players)
    ]
    with write_session(engine) as session:
        for model, rows in ((PlatformUser, players), (Click, clicks)):
            for start in range(0, count, 5_000):
                session.execute(sa.insert(model.__table__), rows[start : start + 5_000])  # type: ignore[attr-defined]
    engine.dispose()


def click_requests(mission_id: str, owid: str, uids: list[str], first: int) -> list[bytes]:
    return [
        http_request(
            "GET",
            f"/missions/{mission_id}?owid={owid}&uid={uid}",
            headers={
                **PHONE,
                "user-agent": PHONE["user-agent"].replace("Chrome/120.0", f"Chrome/120.0.{n}"),
                "x-forwarded-for": bench_ip(first + n),
            },
        )
        for n, uid in enumerate(uids)
    ]


def completing_batches(url: str, game: dict[str, str], uids: list[str]) -> list[bytes]:
    """Signed batches of PLAYERS_PER_BATCH players each: the identifiers that link each
    clicked player to a game account, and one WIN each."""
    engine = build_engine(url)
    with engine.connect() as conn:
        found = dict(
            conn.execute(
                sa.select(Click.__table__.c.uid, Click.__table__.c.platform_user_id).where(  # type: ignore[attr-defined]
                    Click.__table__.c.uid.in_(uids)  # type: ignore[attr-defined]
                )
            ).all()
        )
    engine.dispose()
    when = (datetime.now(UTC) + timedelta(seconds=1)).isoformat(timespec="milliseconds")
    batches = []
    for start in range(0, len(uids), PLAYERS_PER_BATCH):
        group = uids[start : start + PLAYERS_PER_BATCH]
        body = json.dumps(
            {
                "gameId": game["gameId"],
                "identifiers": [{"userId": f"g-{u}", "platformUserId": found[u]} for u in group],
                "events": [{"userId": f"g-{u}", "event": "WIN", "time": when} for u in group],
            }
        ).encode()
        headers = signed_headers(game["clientId"], game["clientSecret"], body)
        headers["content-type"] = "application/json"
        batches.append(http_request("POST", "/v2/custom-events", headers=headers, body=body))
    return batches


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, default=2000)
    parser.add_argument("--popular", type=int, default=50_000)
    parser.add_argument("--concurrency", type=int, default=8)
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)
    figures: dict[str, tuple[LoadResult, int]] = {}
    with prepared(args.database_url, TRUSTED_PROXIES="127.0.0.1") as (data, env):
        url = env["DATABASE_URL"]
        game, mission_id, owid, other_id = seed(url, SecretBox([env["SECRET_KEY"]]))
        for label in ("quiet", "popular"):
            if label == "popular":
                add_popular_clicks(url, mission_id, other_id, args.popular)
            uids = [f"{label}-{i}" for i in range(args.players)]
            first = 0 if label == "quiet" else args.players
            before = count_rows(url, "SELECT count(*) FROM conversion")
            with serving(env, data, workers) as port:
                clicked = fire_raw(port, click_requests(mission_id, owid, uids, first), 8)
                assert set(clicked.statuses) == {302}, clicked.statuses
                batches = completing_batches(url, game, uids)
                sent = fire_raw(port, batches, args.concurrency)
            made = count_rows(url, "SELECT count(*) FROM conversion") - before
            figures[label] = (sent, made)

    print(f"server: {target_label(args)}; {args.players} completions a round")
    for label, (sent, made) in figures.items():
        extra = f" after {args.popular:,} other clicks on the mission" if label == "popular" else ""
        print(
            f"{label} offer{extra}: {sent.statuses}, {made} conversions, "
            f"{made / sent.seconds:,.0f} conversions/s, p50 {sent.p50:.1f} ms, "
            f"p99 {sent.pct(99):.1f} ms per batch of {PLAYERS_PER_BATCH}"
        )
        emit(
            f"conversions_{label}",
            {
                "statuses": sent.statuses,
                "conversions": made,
                "per_second": round(made / sent.seconds, 1),
                "p50_ms": round(sent.p50, 1),
                "p99_ms": round(sent.pct(99), 1),
            },
        )


if __name__ == "__main__":
    main()
