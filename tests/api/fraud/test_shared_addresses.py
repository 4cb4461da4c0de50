"""Shared addresses (docs/fraud.md#shared-addresses), SQLite and PostgreSQL, through
tracking links and signed events with the deployment's defaults: hundreds of players
behind one carrier address, each on their own phone, are paid; many accounts from one
address and one device signature are held for review. The click keeps a digest of its
device, never the languages or platform it was made of."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.app import create_api
from api.core.db import new_session
from api.core.geo import device_signature
from api.fraud import Policy
from models import Conversion, ConversionStatus
from models.tables import click as _click
from tests.api.steps import SCORE, at
from tests.api.tracking_helpers import platform_id
from tests.factories import ANDROID_UA, FixedCountries, SignedClient, make_mission

CARRIER_IP = "198.51.100.20"  # one carrier-grade NAT address
LANGUAGE = "en-GB,en;q=0.9"


@pytest.fixture
def defaults(engine, api_settings, box) -> TestClient:
    """The API with the deployment's default fraud screening: QUESTWALL_PLAYERS_PER_IP as
    shipped, every signal's built-in action."""
    settings = api_settings.model_copy(
        update={"players_per_ip": Policy().players_per_ip, "fraud_defaults": ""}
    )
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    return TestClient(app, client=("127.0.0.1", 50000), follow_redirects=False)


def phone(n: int) -> str:
    """The User-Agent of player n's own phone: another model or browser build."""
    return (
        f"Mozilla/5.0 (Linux; Android {11 + n % 4}; SM-A{100 + n}B) AppleWebKit/537.36 "
        f"(KHTML, like Gecko) Chrome/12{n % 3}.0.{6000 + n}.{n % 50} Mobile Safari/537.36"
    )


def _players(client, signed, mission_id: str, owid: str, agents: list[str]) -> None:
    """Each player clicks from the carrier address with their User-Agent, the game links
    its account, and every player completes the mission in one batch."""
    links = []
    for n, agent in enumerate(agents):
        answer = client.get(
            f"/missions/{mission_id}",
            params={"owid": owid, "uid": f"pub-{n}"},
            headers={
                "user-agent": agent,
                "accept-language": LANGUAGE,
                "x-forwarded-for": CARRIER_IP,
            },
        )
        links.append({"userId": f"acct-{n}", "platformUserId": platform_id(answer)})
    assert signed.identifiers(*links).status_code == 200
    events = [
        {"userId": f"acct-{n}", "event": "MATCH_END", "time": at(1), "value": 700}
        for n in range(len(agents))
    ]
    assert signed.events(*events).status_code == 200


def _statuses(engine) -> list[tuple[str, list[str] | None]]:
    with new_session(engine) as session:
        rows = session.scalars(sa.select(Conversion).order_by(Conversion.id))  # type: ignore[arg-type]
        return [(c.status, c.signals) for c in rows]


def test_200_players_behind_one_carrier_address_on_their_own_phones_are_not_held(
    engine, defaults, game, wall
):
    mission = make_mission(engine, game.game_id, **SCORE)
    _players(
        defaults,
        SignedClient(defaults, game),
        mission.id,
        wall[0].owid,
        [phone(n) for n in range(200)],
    )
    assert _statuses(engine) == [(ConversionStatus.APPROVED, None)] * 200


def test_25_accounts_from_one_address_and_one_device_are_held(engine, defaults, game, wall):
    mission = make_mission(engine, game.game_id, **SCORE)
    # A script adding a token to vary its User-Agent is still the same device.
    agents = [f"{ANDROID_UA} build/{n}" for n in range(25)]
    _players(defaults, SignedClient(defaults, game), mission.id, wall[0].owid, agents)
    assert _statuses(engine) == [(ConversionStatus.PENDING, ["shared_ip"])] * 25
    with new_session(engine) as session:
        stored = set(session.execute(sa.select(_click.c.device, _click.c.user_agent)).all())
    # Only the digest of the device is kept with each click (and the User-Agent, as before).
    assert {device for device, _ in stored} == {device_signature(ANDROID_UA, LANGUAGE)}
    assert all(LANGUAGE not in agent for _, agent in stored)


def test_a_device_signature_reads_the_parsed_user_agent_the_languages_and_the_platform():
    pixel = device_signature(ANDROID_UA, "en-GB,en;q=0.9", '"Android"')
    assert len(pixel) == 32 and int(pixel, 16) >= 0
    # The same device however the headers are spaced, cased or padded with tokens.
    assert device_signature(ANDROID_UA + " x/1", "EN-gb, en;q=0.9", "Android") == pixel
    # Another language, platform, phone model or browser build is another device.
    assert device_signature(ANDROID_UA, "de-DE", '"Android"') != pixel
    assert device_signature(ANDROID_UA, "en-GB,en;q=0.9", '"Linux"') != pixel
    assert device_signature(ANDROID_UA.replace("Pixel 8", "Pixel 7"), "en-GB,en;q=0.9") != (
        device_signature(ANDROID_UA, "en-GB,en;q=0.9")
    )
    assert device_signature(phone(1)) != device_signature(phone(2))
