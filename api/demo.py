"""`questwall demo`: a studio, a game, missions and a quest, an approved publisher whose
postbacks go to a small local receiver, and players who click and play, so every portal
page and report has something to show.

Players go through the real API in-process (signed requests, tracking links), so what
they leave behind is exactly what real traffic leaves. The demo delivers its own
postbacks to its receiver (on 127.0.0.1) before it exits.
"""

from __future__ import annotations

import json
import random
import threading
import time
import warnings
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sqlmodel import select

from api.app import create_api
from api.core.config import Settings
from api.core.crypto import SecretBox, signed_headers
from api.core.db import write_session
from api.economics import PromotionIn, payout_rules, promotions
from api.missions import offers
from api.postbacks import Dispatcher
from api.publishers import offerwalls, signup_publisher
from api.studios import create_game, studios
from api.worker import approve_held
from models import Studio
from models.offer_schemas import OffersFile
from models.types import utcnow

STUDIO = "Demo Studio"
DESIGNER = ("designer@demo.example", "star-siege-2026")
PUBLISHER = ("publisher@demo.example", "gem-rewards-2026")
COUNTRIES = ["US", "DE", "GB", "BR", "FR", "IN", "JP"]


class DemoCountries:
    """Demo players come from everywhere (their documentation-range addresses have no
    country of their own)."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def country(self, ip: str) -> str | None:
        return self.rng.choice(COUNTRIES)


PHONE = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0 Mobile Safari/537.36"
)


def _offers_file(game_id: str) -> OffersFile:
    mission = {"destinationUrl": "https://demo.questwall.example/play", "isActive": True}
    return OffersFile.model_validate(
        {
            "gameId": game_id,
            "missions": [
                {
                    **mission,
                    "title": "Win 3 matches in a row with 1000+ points",
                    "payout": 1.5,
                    "revenue": 2.4,
                    "payouts": [{"countries": ["US", "CA", "GB"], "payout": 1.8}],
                    "tags": ["pvp"],
                    "rule": {
                        "event": "MATCH_END",
                        "conditions": [{"field": "value", "op": ">=", "value": 1000}],
                        "completion": {"kind": "consecutive", "threshold": 3},
                    },
                },
                {
                    **mission,
                    "title": "Kill 10 players",
                    "payout": 0.8,
                    "revenue": 1.2,
                    "budget": {"amount": 50, "every": "day", "timeZone": "UTC"},
                    "rule": {"event": "KILL", "completion": {"kind": "count", "threshold": 10}},
                },
                {
                    **mission,
                    "title": "Win a match with 1000+ points today",
                    "payout": 0.2,
                    "revenue": 0.35,
                    "recurrence": {"every": "day", "timeZone": "UTC"},
                    "rule": {
                        "event": "MATCH_END",
                        "conditions": [{"field": "value", "op": ">=", "value": 1000}],
                    },
                },
                {
                    **mission,
                    "title": "Kill ladder",
                    "rule": {"event": "KILL"},
                    "stages": [
                        {"threshold": 3, "payout": 0.1},
                        {"threshold": 6, "payout": 0.2},
                        {"threshold": 10, "payout": 0.5},
                    ],
                },
            ],
            "quests": [
                {
                    **mission,
                    "name": "Weekend warrior",
                    "missions": [
                        {
                            **mission,
                            "title": "Score 5000 points in total",
                            "payout": 1.0,
                            "rule": {
                                "event": "MATCH_END",
                                "completion": {"kind": "sum", "threshold": 5000, "field": "value"},
                            },
                        },
                        {
                            **mission,
                            "title": "Reach level 5",
                            "payout": 2.0,
                            "rule": {
                                "event": "LEVEL_UP",
                                "conditions": [{"field": "value", "op": ">=", "value": 5}],
                            },
                        },
                    ],
                }
            ],
        }
    )


class _Receiver(BaseHTTPRequestHandler):
    received: list[str] = []

    def do_GET(self) -> None:
        _Receiver.received.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


def run_demo(*, settings: Settings, box: SecretBox, players: int, port: int, echo: Any) -> None:
    if settings.environment == "production":
        raise RuntimeError("The demo seeds made-up data; it does not run in production.")
    rng = random.Random(2026)  # noqa: S311 (made-up players, not secrets)
    with write_session() as session:
        if session.exec(select(Studio).where(Studio.name == STUDIO)).first():
            raise RuntimeError("The demo is already seeded in this database.")
        studio = studios.create_studio(session=session, name=STUDIO)
        studios.add_designer(
            session=session,
            studio_id=studio.id,
            email=DESIGNER[0],
            password=DESIGNER[1],
            name="Demo Designer",
        )
        game = create_game(session=session, box=box, name="Star Siege", studio_id=studio.id)
        missions, quests = offers.import_offers(session=session, data=_offers_file(game.game_id))
        publisher = signup_publisher(
            session=session,
            company="Demo Rewards",
            website="https://rewards.demo.example",
            contact="Demo Publisher",
            email=PUBLISHER[0],
            password=PUBLISHER[1],
        )
        wall = offerwalls.get_offerwall(session=session, ref=publisher.offerwall_id or "")
        owid = offerwalls.approve(session=session, box=box, offerwall=wall).owid
        offerwalls.set_currency(
            session=session, offerwall=wall, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )
        offerwalls.set_postback_url(
            session=session,
            offerwall=wall,
            url=f"http://127.0.0.1:{port}/postback?uid={{uid}}&tx={{transaction_id}}&gems={{payout}}&hash={{hash_key}}",
        )
        # Staff agreed 65% of revenue with the publisher; a weekend sale doubles the gems.
        payout_rules.set_share(session, wall.id, "65", by="demo")
        now = utcnow()
        promotions.add(
            session,
            wall.id,
            PromotionIn(
                name="Double Gems Weekend",
                multiplier="2",
                start=now - timedelta(hours=1),
                end=now + timedelta(days=2),
            ),
            by=PUBLISHER[0],
        )
        links = [f"/missions/{m.id}" for m in missions] + [f"/quests/{q.id}" for q in quests]
    echo(
        f"Seeded {STUDIO}, the game Star Siege ({len(missions)} missions and a quest), Demo Rewards."
    )

    with warnings.catch_warnings():  # the test client's own deprecation notice is noise here
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient
    # Each player clicks from an address of their own (documentation ranges, through a
    # trusted proxy), as real players do: the click screening counts clicks per address.
    demo_settings = settings.model_copy(update={"trusted_proxies": "127.0.0.1"})
    client = TestClient(
        create_api(settings=demo_settings, box=box, countries=DemoCountries(rng)),
        client=("127.0.0.1", 50000),
    )

    def send(payload: dict[str, Any]) -> int:
        body = json.dumps(payload).encode()
        headers = signed_headers(game.client_id, game.client_secret, body)
        return client.post("/v2/custom-events", content=body, headers=headers).status_code

    start = datetime.now(UTC)
    for n in range(players):
        uid, user = f"player-{n + 1}", f"u{n + 1}"
        answer = client.get(
            rng.choice(links),
            params={"owid": owid, "uid": uid},
            headers={"user-agent": PHONE, "x-forwarded-for": f"198.51.100.{n % 254 + 1}"},
            follow_redirects=False,
        )
        player = parse_qs(urlsplit(answer.headers.get("location", "")).query).get(
            "platformid", [""]
        )[0]
        at = start + timedelta(seconds=1 + n)
        events = [
            {
                "userId": user,
                "event": "MATCH_END",
                "value": rng.choice([400, 1200, 1500, 2100]),
                "time": (at + timedelta(milliseconds=k)).isoformat(),
            }
            for k in range(rng.randint(2, 8))
        ]
        events += [
            {
                "userId": user,
                "event": "KILL",
                "time": (at + timedelta(milliseconds=100 + k)).isoformat(),
            }
            for k in range(rng.randint(0, 12))
        ]
        events.append(
            {
                "userId": user,
                "event": "LEVEL_UP",
                "value": rng.randint(1, 7),
                "time": (at + timedelta(milliseconds=500)).isoformat(),
            }
        )
        identifiers = [
            {"userId": user, "platformUserId": player, "email": f"{user}@players.example"}
        ]
        if n % 10 == 0:  # something for the debugger's rejected items
            events.append({"userId": user, "event": "MATCH_END", "time": "not a time"})
        send({"gameId": game.game_id, "identifiers": identifiers, "events": events})
    echo(f"{players} players clicked and played.")

    _Receiver.received = []
    server = ThreadingHTTPServer(("127.0.0.1", port), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    local = settings.model_copy(update={"postback_allow_private": True})
    engine = client.app.state.engine  # type: ignore[attr-defined]
    dispatcher = Dispatcher(engine=engine, box=box, settings=local, periodic=approve_held(engine))
    thread = threading.Thread(target=dispatcher.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    delivered = -1
    while time.monotonic() < deadline and delivered != len(_Receiver.received):
        delivered = len(_Receiver.received)
        time.sleep(1.0)
    dispatcher.stop()
    thread.join(timeout=15)
    server.shutdown()
    echo(f"The demo receiver on 127.0.0.1:{port} got {len(_Receiver.received)} postbacks.")
    echo("")
    echo("Sign in at /login as")
    echo(f"  designer   {DESIGNER[0]} / {DESIGNER[1]}")
    echo(f"  publisher  {PUBLISHER[0]} / {PUBLISHER[1]}")
    echo("  staff      the account from `questwall user create-staff`")
