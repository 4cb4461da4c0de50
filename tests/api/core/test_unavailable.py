"""A database that is briefly unreachable answers 503 with Retry-After, never 500, and the
service recovers by itself when the database is back."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from api.app import create_api
from api.core.config import Settings
from api.core.db import build_engine
from tests.conftest import empty_postgres
from tests.factories import FixedCountries, SignedClient, iso_now, make_game, make_offerwall
from tests.tcp_proxy import TcpProxy


@pytest.fixture
def direct(postgres_server_url):
    engine = build_engine(postgres_server_url)
    yield engine
    empty_postgres(engine)
    engine.dispose()


@pytest.fixture
def proxied(postgres_server_url, tmp_path, box):
    """An API whose PostgreSQL connections go through a proxy the test can cut."""
    url = make_url(postgres_server_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    proxy.start()
    engine = build_engine(url.set(port=proxy.port).render_as_string(hide_password=False))
    settings = Settings(DATABASE_URL=postgres_server_url, QUESTWALL_DATA_DIR=tmp_path)
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    yield proxy, engine, TestClient(app, client=("127.0.0.1", 50000), follow_redirects=False)
    proxy.cut()
    engine.dispose()


def _assert_unavailable_json(response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "5"
    body = response.json()
    assert body["statusCode"] == 503 and body["code"] == "service_unavailable"
    assert body["error"] == "Service Unavailable" and body["details"] == []


@pytest.mark.postgres
def test_an_unreachable_database_answers_503_and_the_service_recovers(proxied, direct, box):
    proxy, _, client = proxied
    credential = make_game(direct, box)
    _, api_key = make_offerwall(direct, box)
    signed = SignedClient(client, credential)
    event = {"userId": "p1", "event": "GAME_OVER", "time": iso_now()}
    assert signed.events(event).status_code == 200  # pool warmed up through the proxy

    proxy.cut()
    _assert_unavailable_json(signed.events(event))
    _assert_unavailable_json(
        signed.send(
            {"gameId": credential.game_id, "userIds": ["p1"]}, path="/v2/platform-users/lookup"
        )
    )
    _assert_unavailable_json(client.get("/offerwall/offers", headers={"x-api-key": api_key}))
    page = client.get("/missions/m1?owid=w&uid=u")
    assert page.status_code == 503 and page.headers["retry-after"] == "5"
    assert page.headers["content-type"].startswith("text/html")
    assert "try again" in page.text
    german = client.get("/missions/m1?owid=w&uid=u&lang=de")  # from a German wall
    assert german.status_code == 503 and '<html lang="de">' in german.text
    assert "Bitte versuche es gleich noch einmal." in german.text

    proxy.start()
    assert signed.events(event).status_code == 200
    assert client.get("/offerwall/offers", headers={"x-api-key": api_key}).status_code == 200


def test_an_unopenable_sqlite_database_answers_503(tmp_path, box):
    folder = tmp_path / "not-a-file.db"
    folder.mkdir()  # a directory where the database file should be: SQLite cannot open it
    app = create_api(
        engine=build_engine(f"sqlite:///{folder}"),
        settings=Settings(QUESTWALL_DATA_DIR=tmp_path),
        box=box,
        countries=FixedCountries(),
    )
    _assert_unavailable_json(TestClient(app).get("/offerwall/offers", headers={"x-api-key": "k"}))
