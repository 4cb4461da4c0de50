"""Small factories and a signing client for tests."""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import Engine

from api.accounts import Account
from api.core.crypto import SecretBox, signed_headers
from api.core.db import new_session, write_session
from api.studios import games
from api.studios.games import IssuedCredential
from api.tracking.clicks import ClickIn, Tracked, record_click
from models import Offerwall, PlatformUser, PlatformUserIdentifier, Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import postback as _postback
from models.tables import progress as _progress
from models.types import new_uuid, utcnow


def make_game(
    engine: Engine, box: SecretBox, name: str = "Arena", *, studio_id: str | None = None
) -> IssuedCredential:
    with write_session(engine) as session:
        return games.create_game(session=session, box=box, name=name, studio_id=studio_id)


PASSWORD = "correct horse battery"  # passes the password rules


def make_user(
    engine: Engine, email: str = "owner@example.com", *, role: Role = Role.STAFF, **fields: Any
) -> str:
    """A portal account (staff by default) with `PASSWORD`; returns its email."""
    from api.accounts import sessions as accounts

    with write_session(engine) as session:
        accounts.create_user(session=session, email=email, password=PASSWORD, role=role, **fields)
    return email


def make_account(
    role: Role, *, studio_id: str | None = None, offerwall_id: str | None = None
) -> Account:
    """The signed-in account a service receives from the portal, without signing in."""
    return Account(
        id="account",
        email=f"{role}@example.com",
        name="",
        role=role,
        studio_id=studio_id,
        offerwall_id=offerwall_id,
    )


def make_studio(engine: Engine, name: str = "Studio A") -> str:
    """A studio; returns its id."""
    from api.studios import studios

    with write_session(engine) as session:
        return studios.create_studio(session=session, name=name).id


def make_platform_user(engine: Engine, **verified: str) -> str:
    """A platform user, with verified identifiers given as kind=value."""
    with write_session(engine) as session:
        user = PlatformUser()
        session.add(user)
        session.flush()
        for kind, value in verified.items():
            session.add(
                PlatformUserIdentifier(platform_user_id=user.id, kind=kind, value_normalized=value)
            )
        return user.id


def now_ms() -> int:
    return int(time.time() * 1000)


def today() -> date:
    """The UTC date, read when a test runs (not when its module is collected), so a run
    that crosses midnight compares its rows with the day they were made on."""
    return datetime.now(UTC).date()


def iso_now(offset_seconds: float = 0) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=offset_seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SignedClient:
    """Sends requests signed the way the official clients sign them."""

    def __init__(self, client: TestClient, credential: IssuedCredential):
        self.client = client
        self.credential = credential

    def headers(
        self,
        body: bytes,
        *,
        timestamp: int | None = None,
        secret: str | None = None,
        client_id: str | None = None,
    ) -> dict[str, str]:
        return signed_headers(
            client_id or self.credential.client_id,
            secret or self.credential.client_secret,
            body,
            timestamp=timestamp,
        )

    def post_raw(self, path: str, body: bytes, **kwargs: Any) -> Response:
        extra = kwargs.pop("extra_headers", {})
        headers = {**self.headers(body, **kwargs), **extra}
        return self.client.post(path, content=body, headers=headers)

    def send(
        self, payload: dict[str, Any], *, path: str = "/v2/custom-events", **kwargs: Any
    ) -> Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        return self.post_raw(path, body, **kwargs)

    def events(
        self,
        *events: dict[str, Any],
        identifiers: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> Response:
        payload = {
            "gameId": self.credential.game_id,
            "events": list(events),
            "identifiers": identifiers or [],
        }
        return self.send(payload, **kwargs)

    def identifiers(self, *items: dict[str, Any], **kwargs: Any) -> Response:
        return self.send({"gameId": self.credential.game_id, "identifiers": list(items)}, **kwargs)


# --- offerwalls, missions, quests, clicks --------------------------------------------


def make_offerwall(
    engine: Engine, box: SecretBox, *, name: str = "Wall", approve: bool = True, **currency: Any
):
    """An offerwall (approved by default); returns (offerwall, api_key or None)."""
    from api.publishers import offerwalls

    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name=name)
        key = (
            offerwalls.approve(session=session, box=box, offerwall=wall).api_key
            if approve
            else None
        )
        if currency:
            offerwalls.set_currency(session=session, offerwall=wall, **currency)
        return wall, key


def make_paying_offerwall(
    engine: Engine, box: SecretBox, *, name: str = "GemWall", postback_url: str | None = None
) -> Offerwall:
    """An approved offerwall paying 100 Gems per USD (no decimals) with a postback URL."""
    from tests.outbox import configure

    wall, _ = make_offerwall(engine, box, name=name)
    configure(engine, wall.id, postback_url)
    with new_session(engine) as session:
        configured = session.get(Offerwall, wall.id)
        assert configured is not None
        return configured


def mission_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "title": "Kill 10 players in one game",
        "payout": "1.50",
        "destinationUrl": "https://game.example/play?source=qw",
        "rule": {
            "event": "GAME_END",
            "conditions": [{"field": "traits.kills", "op": ">=", "value": 10}],
            "completion": {"kind": "count", "threshold": 1},
        },
    }
    data.update(overrides)
    return data


def make_mission(engine: Engine, game_id: str, **overrides: Any):
    from api.missions import offers
    from models.offer_schemas import MissionIn

    with write_session(engine) as session:
        return offers.save_mission(
            session=session,
            game_id=game_id,
            data=MissionIn.model_validate(mission_data(**overrides)),
        )


def make_quest(engine: Engine, game_id: str, missions: list[dict[str, Any]], **overrides: Any):
    from api.missions import offers
    from models.offer_schemas import QuestIn

    data = {
        "name": "Season opener",
        "destinationUrl": "https://game.example/quest",
        "missions": missions,
        **overrides,
    }
    with write_session(engine) as session:
        return offers.save_quest(
            session=session, game_id=game_id, data=QuestIn.model_validate(data)
        )


def make_click(
    engine: Engine,
    *,
    offer_id: str,
    offerwall: Offerwall,
    kind: str = "mission",
    uid: str = "pub-p1",
    ip: str = "203.0.113.7",
    clickid: str = "ck-9",
    subs: tuple[str | None, str | None, str | None] = ("s1", None, None),
    user_agent: str = "test",
) -> Tracked:
    """A click on a tracking link, recorded by the tracking service (it starts the offer);
    203.0.113.7 is a US address and 198.51.100.9 a German one (`FixedCountries`). The
    default user agent names no operating system (`ANDROID_UA`, … below do)."""
    click = ClickIn(
        kind=kind,
        offer_id=offer_id,
        owid=offerwall.owid,
        uid=uid,
        clickid=clickid,
        subs=subs,
        ip=ip,
        user_agent=user_agent,
    )
    return record_click(engine=engine, click=click, countries=FixedCountries())


def make_conversion(
    engine: Engine,
    *,
    mission_id: str,
    offerwall: Offerwall,
    payout_micros: int = 1_500_000,
    **click: Any,
) -> int:
    """A click on a mission through the offerwall (`click`: its `uid` and `ip`) and its
    conversion, queued through `postbacks.enqueue` in the conversion's transaction as the
    ingestion does; returns the postback id. `click` may also give its `clickid`, `subs` and
    `user_agent`; the test player's click (uid `TEST_UID`) makes a test conversion, which
    has a postback when its offerwall wants test postbacks (`test_postbacks`)."""
    from api.postbacks import outbox as postbacks

    tracked = make_click(engine, offer_id=mission_id, offerwall=offerwall, **click)
    now = utcnow()
    with write_session(engine) as session:
        progress = session.execute(
            sa.select(_progress).where(
                _progress.c.mission_id == mission_id,
                _progress.c.platform_user_id == tracked.platform_user_id,
            )
        ).one()
        conversion_id = session.execute(
            _conversion.insert()
            .values(
                transaction_id=new_uuid(),
                progress_id=progress.id,
                sequence=1,
                mission_id=mission_id,
                quest_id=None,
                platform_user_id=progress.platform_user_id,
                offerwall_id=offerwall.id,
                click_id=progress.click_id,
                payout_micros=payout_micros,
                created_at=now,
                test=sa.select(_click.c.test)
                .where(_click.c.id == progress.click_id)
                .scalar_subquery(),
            )
            .returning(_conversion.c.id)
        ).scalar_one()
        postbacks.enqueue(session, conversion_id=conversion_id, offerwall_id=offerwall.id, now=now)
        return session.execute(
            sa.select(_postback.c.id).where(_postback.c.conversion_id == conversion_id)
        ).scalar_one()


def make_postback(engine: Engine, box: SecretBox, offerwall: Offerwall) -> int:
    """A conversion of a new game's mission through the offerwall; its postback id."""
    mission = make_mission(engine, make_game(engine, box).game_id)
    return make_conversion(engine, mission_id=mission.id, offerwall=offerwall)


class FixedCountries:
    """A country lookup for tests: IP → country as given, anything else unknown."""

    def __init__(self, table: dict[str, str] | None = None):
        self.table = table or {"203.0.113.7": "US", "198.51.100.9": "DE", "192.0.2.44": "BR"}

    def country(self, ip: str) -> str | None:
        return self.table.get(ip)


ANDROID_UA = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36"
IPHONE_UA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1"
WINDOWS_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
