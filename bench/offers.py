"""Offers API benchmark: pages of 20 out of 1,000 offers, next to a bare FastAPI route
answering the same bytes (bench/bare.py), served the same way in the same run (target: at
least 70% of it).

Seeds 700 standalone missions and 300 quests of 3 missions each, and an approved offerwall,
then sends GET /offerwall/offers?limit=20&offset=… with its API key to the server under
test (`--database-url`, `--api-workers`: the all-in-one `questwall serve` on SQLite by
default).

    .venv/bin/python bench/offers.py [--requests 6000] [--database-url URL] [--api-workers N]
        [--economics]   # pages priced by a revenue share, with a promotion running
"""

from __future__ import annotations

import argparse
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import sqlalchemy as sa

from api.core.crypto import SecretBox
from api.core.db import build_engine, write_session
from api.economics import PromotionIn, payout_rules, promotions
from api.publishers import offerwalls
from api.studios import games
from bench.common import (
    PHONE,
    add_target_arguments,
    api_workers,
    emit,
    fire_raw,
    http_request,
    load_figures,
    prepared,
    reference,
    serving,
    target_label,
)
from models import Mission, Quest
from models.types import new_uuid

MISSIONS, QUESTS = 700, 300


def seed(url: str, box: SecretBox, economics: bool = False) -> str:
    engine = build_engine(url)
    now = datetime.now(UTC)
    with write_session(engine) as session:
        game = games.create_game(session=session, box=box, name="Offers bench")
        wall = offerwalls.create_offerwall(session=session, name="Bench wall")
        key = offerwalls.approve(session=session, box=box, offerwall=wall).api_key
        common = {
            "game_id": game.game_id,
            "description": "An offer",
            "thumbnail": "https://cdn.example/t.png",
            "preview_url": "https://game.example/p",
            "destination_url": "https://game.example/",
            "is_active": True,
            "operating_systems": ["Android", "iOS"],
            "countries_include": ["US", "GB"],
            "countries_exclude": [],
            "tags": ["bench"],
            "instructions": "Play",
            "requirements": "None",
            "expiration_date": now + timedelta(days=30),
            "updated_at": now,
        }
        rule = {
            "rule_event": "GAME_END",
            "rule_conditions": [{"field": "traits.kills", "op": ">=", "value": 10}],
            "rule_completion": "count",
            "rule_threshold": 1,
        }
        quests, missions = [], []
        for i in range(QUESTS):
            quest_id = new_uuid()
            quests.append(
                {
                    **common,
                    "id": quest_id,
                    "name": f"Quest {i}",
                    "start_cap": 100_000,
                    "starts": 0,
                    "created_at": now - timedelta(seconds=random.random() * 1e5),
                }
            )
            for p in range(3):
                missions.append(
                    {
                        **common,
                        **rule,
                        "id": new_uuid(),
                        "quest_id": quest_id,
                        "quest_position": p,
                        "title": f"Q{i} step {p}",
                        "payout_micros": 500_000,
                        "conversions": 0,
                        "allow_multiple_conversions": False,
                        "created_at": now,
                    }
                )
        for i in range(MISSIONS):
            missions.append(
                {
                    **common,
                    **rule,
                    "id": new_uuid(),
                    "quest_id": None,
                    "quest_position": 0,
                    "title": f"Mission {i}",
                    "payout_micros": 1_250_000,
                    "cap": 10_000,
                    "conversions": 0,
                    "allow_multiple_conversions": bool(i % 2),
                    "created_at": now - timedelta(seconds=random.random() * 1e5),
                }
            )
        if economics:
            # Every mission has revenue, the offerwall a 70% share, and a sale runs.
            for m in missions:
                m["revenue_micros"] = m["payout_micros"] * 2
        session.execute(sa.insert(Quest.__table__), quests)  # type: ignore[attr-defined]
        session.execute(sa.insert(Mission.__table__), missions)  # type: ignore[attr-defined]
        if economics:
            payout_rules.set_share(session, wall.id, "70", by="bench")
            promotions.add(
                session,
                wall.id,
                PromotionIn(
                    name="Bench sale",
                    multiplier="2",
                    start=now - timedelta(hours=1),
                    end=now + timedelta(days=1),
                ),
                by="bench",
            )
    engine.dispose()
    return key


PLAYERS = 50


def start_players(port: int, key: str, players: list[str]) -> None:
    """Each player opens the first 3 offers of the listing through their tracking links."""
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base) as http:
        for uid in players:
            listed = http.get(
                f"/offerwall/offers?limit=3&uid={uid}", headers={"x-api-key": key}
            ).json()["data"]
            for offer in [*listed["missions"], *listed["quests"]]:
                link = urlsplit(offer["trackingLink"])
                clicked = http.get(f"{link.path}?{link.query}", headers=PHONE)
                assert clicked.status_code == 302, clicked.text[:300]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument(
        "--economics",
        action="store_true",
        help="price the pages by a revenue share, with a promotion running (no targets)",
    )
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)
    # The players' clicks come from one address (screening off: clicks are not measured here).
    screening_off = {"QUESTWALL_CLICKS_PER_IP": "0", "QUESTWALL_PLAYERS_PER_IP": "0"}
    with prepared(args.database_url, TRUSTED_PROXIES="127.0.0.1", **screening_off) as (
        data,
        env,
    ):
        key = seed(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), args.economics)
        rng = random.Random(5)
        requests = [
            http_request(
                "GET",
                f"/offerwall/offers?limit=20&offset={20 * rng.randrange(0, 50)}",
                headers={"x-api-key": key},
            )
            for _ in range(args.requests + 200)
        ]
        half = 200 + args.requests // 2
        # With `uid`: players who each opened 3 offers through their tracking links.
        players = [f"bench-player-{n}" for n in range(PLAYERS)]
        with_uid = [
            http_request(
                "GET",
                f"/offerwall/offers?limit=20&offset={20 * rng.randrange(0, 5)}&uid={rng.choice(players)}",
                headers={"x-api-key": key},
            )
            for _ in range(args.requests // 2 + 200)
        ]
        with serving(env, data, workers) as port:
            page = httpx.get(
                f"http://127.0.0.1:{port}/offerwall/offers?limit=20&offset=0",
                headers={"x-api-key": key},
            ).content
            # Warm-up on as many connections as the load: with several API processes,
            # each one builds its listing before the figures count (a cold process's first
            # requests wait seconds for it).
            fire_raw(port, requests[:200], 16)
            busy = fire_raw(port, requests[200:half], 16)
            light = fire_raw(port, requests[half:], 4)
            if not args.economics:
                start_players(port, key, players)
                fire_raw(port, with_uid[:200], 16)
                player = fire_raw(port, with_uid[200:], 16)
        # The reference: a bare FastAPI route answering one page's bytes, served the same way.
        (data / "page.json").write_bytes(page)
        with reference(
            "bench.bare:app", {**env, "BENCH_OFFERS_PAGE": str(data / "page.json")}, data, workers
        ) as port:
            fire_raw(port, requests[:200], 16)
            bare = fire_raw(port, requests[200:half], 16)
    priced = "; priced by a 70% share with a 2x promotion" if args.economics else ""
    print(f"server: {target_label(args)}; page of 20: {len(page):,} bytes{priced}")
    for label, result in (
        ("16 connections", busy),
        ("4 connections", light),
        ("bare FastAPI route, same bytes, 16 connections", bare),
    ):
        print(
            f"offers, page of 20 of {MISSIONS + QUESTS}, {label}: {result.statuses}, "
            f"{result.requests / result.seconds:,.0f} requests/s, p50 {result.p50:.1f} ms, p99 {result.pct(99):.1f} ms"
        )
    rate, bare_rate = busy.requests / busy.seconds, bare.requests / bare.seconds
    print(f"  offers / bare route: {rate / bare_rate:.0%}")
    if args.economics:
        return  # a comparison run: its figures are not the targets'
    print(
        f"offers with uid ({PLAYERS} players, 3 offers started each), 16 connections: "
        f"{player.statuses}, {player.requests / player.seconds:,.0f} requests/s, "
        f"p50 {player.p50:.1f} ms, p99 {player.pct(99):.1f} ms ({player.requests / player.seconds / bare_rate:.0%} of the bare route)"
    )
    emit("offers", load_figures(busy))
    emit("offers_uid", load_figures(player))
    emit("offers_light", load_figures(light))
    emit("bare_offers", load_figures(bare))


if __name__ == "__main__":
    main()
