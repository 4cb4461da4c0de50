from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_api
from tests.factories import SignedClient, make_game


@pytest.fixture
def client(engine, settings, box) -> TestClient:
    return TestClient(create_api(engine=engine, settings=settings, box=box))


@pytest.fixture
def game(engine, box):
    return make_game(engine, box)


@pytest.fixture
def signed(client, game) -> SignedClient:
    return SignedClient(client, game)
