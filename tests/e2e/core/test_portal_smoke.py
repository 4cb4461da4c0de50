"""One process, one port: the portal renders in Chromium and the API answers beside it."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.e2e.conftest import screenshot
from tests.e2e.steps import send_events

pytestmark = pytest.mark.e2e


def test_home_page_renders_in_chromium(portal, page):
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    started = time.perf_counter()
    page.goto(portal.url + "/")
    page.get_by_role("heading", name="Questwall").wait_for()
    elapsed = time.perf_counter() - started
    print(f"\nfirst load of the home page: {elapsed * 1000:.0f} ms")
    assert page.title() == "Questwall"
    assert page.get_by_role("link", name="API reference").get_attribute("href") == "/v2/docs"
    screenshot(page, "home")
    page.wait_for_load_state("networkidle")
    assert failed == []  # every asset loads, the icon included


def test_api_is_served_on_the_portal_port(portal):
    assert httpx.get(portal.url + "/v2/no-such-endpoint").json()["code"] == "not_found"
    game = portal.game
    response = send_events(
        portal.url,
        game["clientId"],
        game["clientSecret"],
        {
            "gameId": game["gameId"],
            "events": [{"userId": "e2e", "event": "START_GAME", "time": "2026-11-21T10:00:00Z"}],
            "identifiers": [],
        },
    )
    assert response.status_code == 200
    assert response.json()["message"] == "OK"


def test_the_all_in_one_server_answers_its_probes(portal):
    assert httpx.get(portal.url + "/livez").json() == {"status": "ok"}
    ready = httpx.get(portal.url + "/readyz")
    assert ready.status_code == 200, ready.text
    assert set(ready.json()["checks"]) == {"database", "schema", "draining"}


def test_portal_refuses_other_origins(portal):
    allowed = httpx.options(
        portal.url + "/_event/",
        headers={"Origin": portal.url, "Access-Control-Request-Method": "GET"},
    )
    foreign = httpx.options(
        portal.url + "/_event/",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert allowed.headers.get("access-control-allow-origin") == portal.url
    assert "access-control-allow-origin" not in foreign.headers
