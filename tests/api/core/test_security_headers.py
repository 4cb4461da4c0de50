"""Security headers on every HTTP answer: API JSON, errors, tracking links, the docs page."""

from __future__ import annotations

import base64
import hashlib
import os
import re

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from api.app import create_api
from api.security_headers import SecurityHeaders
from tests.api.tracking_helpers import click
from tests.factories import FixedCountries, iso_now, make_mission


def directives(response) -> dict[str, list[str]]:
    policy = response.headers["content-security-policy"]
    parsed = [part.split() for part in policy.split(";") if part.strip()]
    return {name: values for name, *values in parsed}


def assert_secure_headers(response) -> None:
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"
    policy = directives(response)
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["default-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "strict-transport-security" not in response.headers  # BASE_URL is http here


def test_an_api_json_answer_carries_the_headers(signed):
    response = signed.events({"userId": "p1", "event": "WIN", "time": iso_now()})
    assert response.status_code == 200
    assert_secure_headers(response)


def test_an_api_error_carries_the_headers(client):
    response = client.post("/v2/custom-events", content=b"{}")
    assert response.json()["code"] == "invalid_signature"
    assert_secure_headers(response)
    assert_secure_headers(client.get("/v2/no-such-endpoint"))


def test_an_unexpected_fault_answers_500_with_the_headers(engine, api_settings, box):
    app = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())

    async def boom():
        raise RuntimeError("a bug")

    app.add_api_route("/boom", boom)
    response = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"
    assert_secure_headers(response)


def test_a_tracking_redirect_carries_the_headers(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    response = click(client, "mission", mission.id, wall[0].owid, uid="u-1")
    assert response.status_code == 302
    assert response.headers["location"].startswith("https://")
    assert_secure_headers(response)


def test_a_tracking_refusal_page_carries_the_headers(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    response = click(client, "mission", mission.id, wall[0].owid)  # no uid, no clickid
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert_secure_headers(response)
    # The page's own <style> is allowed, nothing else inline.
    assert "'unsafe-inline'" in directives(response)["style-src"]


def test_hsts_only_when_base_url_is_https(engine, api_settings, box):
    https = api_settings.model_copy(update={"base_url": "https://quests.example"})
    app = create_api(engine=engine, settings=https, box=box, countries=FixedCountries())
    response = TestClient(app).get("/v2/no-such-endpoint")
    assert response.headers["strict-transport-security"] == "max-age=31536000"
    assert "wss://quests.example" in directives(response)["connect-src"]


def test_the_api_reference_has_its_own_policy_and_loads_nothing_from_elsewhere(client):
    response = client.get("/v2/docs")
    assert response.status_code == 200
    policy = directives(response)
    assert policy["script-src"] == ["'self'", "'unsafe-inline'"]  # Swagger UI starts inline
    assert policy["frame-ancestors"] == ["'none'"]
    assert response.headers["x-frame-options"] == "DENY"
    # Every file the page names is served here (fastapi-offline's package), none by a CDN.
    files = re.findall(r'(?:src|href)="([^"]+)"', response.text)
    assert files and all(path.startswith("/v2/docs/static/") for path in files), files
    for path in files:
        assert client.get(path).status_code == 200, path
    # Elsewhere inline scripts stay refused.
    assert "'unsafe-inline'" not in directives(client.get("/v2/openapi.json"))["script-src"]


# --- the middleware on its own: built pages, websockets --------------------------------


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _page(script: str) -> str:
    return (
        '<!doctype html><html><head><script type="module" src="/assets/app.js"></script>'
        f"<script>{script}</script></head><body></body></html>"
    )


async def _hello(_request):
    return PlainTextResponse("hello")


async def _echo(websocket: WebSocket):
    await websocket.accept()
    await websocket.send_text(await websocket.receive_text())
    await websocket.close()


@pytest.fixture
def inner_app() -> Starlette:
    return Starlette(routes=[Route("/", _hello), WebSocketRoute("/_event", _echo)])


def test_the_portal_policy_allows_exactly_the_built_inline_scripts(tmp_path, inner_app):
    (tmp_path / "login").mkdir()
    (tmp_path / "index.html").write_text(_page("window.a = 1;"))
    (tmp_path / "login" / "index.html").write_text(_page('import("/x.js");'))
    now = [0.0]
    app = SecurityHeaders(
        inner_app,
        base_url="http://127.0.0.1:8000",
        docs_path=None,
        build_dir=lambda: tmp_path,
        clock=lambda: now[0],
    )
    script_src = directives(TestClient(app).get("/"))["script-src"]
    hashes = [s for s in script_src if s.startswith("'sha256-")]
    assert sorted(hashes) == sorted([_sha256("window.a = 1;"), _sha256('import("/x.js");')])

    # A new build (the index page changes) is picked up without a restart, once the page
    # is looked at again (at most once a second).
    (tmp_path / "index.html").write_text(_page("window.b = 2;"))
    os.utime(tmp_path / "index.html", (1, 1))
    now[0] += 0.5
    assert _sha256("window.a = 1;") in directives(TestClient(app).get("/"))["script-src"]
    now[0] += SecurityHeaders.RECHECK_SECONDS
    script_src = directives(TestClient(app).get("/"))["script-src"]
    assert _sha256("window.b = 2;") in script_src
    assert _sha256("window.a = 1;") not in script_src


def test_websockets_pass_through_untouched(tmp_path, inner_app):
    app = SecurityHeaders(
        inner_app, base_url="http://127.0.0.1:8000", docs_path=None, build_dir=lambda: tmp_path
    )
    with TestClient(app).websocket_connect("/_event") as ws:
        ws.send_text("ping")
        assert ws.receive_text() == "ping"


def test_the_portal_loads_images_from_itself_and_https_hosts_only(tmp_path, inner_app):
    """Offer thumbnails in the editors' preview come from the designers' HTTPS hosts."""
    app = SecurityHeaders(
        inner_app, base_url="http://127.0.0.1:8000", docs_path=None, build_dir=lambda: tmp_path
    )
    policy = directives(TestClient(app).get("/"))
    assert policy["img-src"] == ["'self'", "https:"]
    assert policy["font-src"] == ["'self'"]
