from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_api
from tests.factories import FixedCountries, SignedClient, make_game, make_offerwall

PROXY = "127.0.0.1"  # the test client connects from here; tracking tests pass X-Forwarded-For


@pytest.fixture
def api_settings(settings):
    """The API's settings for tests: 127.0.0.1 as a trusted proxy, and no click screening,
    since the tests' players click from a handful of addresses many times a minute, some
    with odd User-Agents, and many players share one (the shared_ip signal is off). The
    screening's own tests (test_click_screening.py, test_review.py) turn it on with its
    defaults."""
    return settings.model_copy(
        update={
            "trusted_proxies": PROXY,
            "clicks_per_ip_minute": 0,
            "clicks_per_uid_minute": 0,
            "refuse_scripted_agents": False,
            "players_per_ip": 0,
        }
    )


@pytest.fixture
def client(engine, api_settings, box) -> TestClient:
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
    """An approved offerwall: (offerwall, api_key)."""
    return make_offerwall(engine, box)
