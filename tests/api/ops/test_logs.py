"""Log lines: JSON objects (LOG_FORMAT=json) with the request's id, which every answer
echoes and a postback's or webhook's delivery attempts log under; one line per request
with its method, route template, status and duration; and no secret in any line, at
DEBUG, on every path that carries one."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from api.app import create_api
from api.core.crypto import signed_headers
from api.core.db import write_session
from api.ops import configure_logging, flush_observed, logs, route_templates, with_metrics
from api.ops.logs import JsonLines, TextLines, request_context, request_id_from
from api.postbacks import endpoint as endpoints
from models import Offerwall, Postback, WebhookMessage
from portal import routes
from portal.session_routes import SESSION_COOKIE, add_session_routes
from tests.api.steps import KILLS, at, start
from tests.api.webhooks.test_webhooks import add, deliver
from tests.factories import PASSWORD, FixedCountries, SignedClient, make_mission, make_user
from tests.outbox import TEMPLATE, configure, make_due, run_once
from tests.receiver import running_receiver

ORIGIN = "http://localhost:8000"


class Captured:
    """Every line this process logged while the block ran, as text."""

    def __init__(self, stream: io.StringIO):
        self.stream = stream

    @property
    def lines(self) -> list[str]:
        flush_observed()  # the request lines this process keeps for up to a second
        return self.stream.getvalue().splitlines()

    def records(self) -> list[dict]:
        return [json.loads(line) for line in self.lines]


@pytest.fixture
def logged() -> Iterator[Captured]:
    """This process's log lines in JSON, at DEBUG, while the test runs."""
    with configured("json", "DEBUG") as stream:
        yield Captured(stream)


@contextmanager
def configured(log_format: str, level: str) -> Iterator[io.StringIO]:
    """This process's logging as `configure_logging` sets it, into a string, and then as
    it was before (handlers, levels, the request lines' handler)."""
    root = logging.getLogger()
    before = (root.level, list(root.handlers), logs._LINES.handler, logs._LINES.json)
    quiet = {name: logging.getLogger(name).level for name in logs._QUIET}
    stream = io.StringIO()
    configure_logging(log_format, level, stream=stream)
    try:
        yield stream
    finally:
        flush_observed()
        root.setLevel(before[0])
        root.handlers[:] = before[1]
        logs._LINES.handler, logs._LINES.json = before[2], before[3]
        for name, was in quiet.items():
            logging.getLogger(name).setLevel(was)


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"postback_allow_private": True})


@pytest.fixture
def observed(engine, box, api_settings) -> TestClient:
    """The API with the portal's session routes, wrapped as it is served."""
    app = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    add_session_routes(app)
    served = with_metrics(app, routes=route_templates(app), allow="127.0.0.1/32")
    return TestClient(served, client=("127.0.0.1", 50000), follow_redirects=False)


def test_a_request_id_is_kept_when_it_is_a_short_token_and_made_otherwise():
    assert request_id_from([(b"x-request-id", b"lb-7f3a:42")]) == "lb-7f3a:42"
    made = {
        request_id_from(headers)
        for headers in (
            [],
            [(b"x-request-id", b"")],
            [(b"x-request-id", b"x" * 65)],
            [(b"x-request-id", b'a "quoted" id')],
            [(b"x-request-id", b"line\nbreak")],
            [(b"x-request-id", "é".encode())],
        )
    }
    assert len(made) == 6 and all(len(found) == 16 for found in made)


def test_every_answer_echoes_its_request_id_and_logs_one_line(observed, logged, wall):
    _, api_key = wall
    given = observed.get(
        "/offerwall/offers", headers={"x-api-key": api_key, "X-Request-ID": "edge-41"}
    )
    assert given.status_code == 200
    assert given.headers["x-request-id"] == "edge-41"
    missing = observed.get("/no/such/path")
    made = missing.headers["x-request-id"]
    assert missing.status_code == 404 and len(made) == 16

    lines = [r for r in logged.records() if r["logger"] == "questwall.http"]
    assert [(r["request_id"], r["method"], r["route"], r["status"]) for r in lines] == [
        ("edge-41", "GET", "/offerwall/offers", 200),
        (made, "GET", "other", 404),
    ]
    assert all(r["duration_ms"] >= 0 and r["level"] == "INFO" for r in lines)
    assert all(r["time"].endswith("+00:00") for r in lines)


def test_the_text_format_names_the_request_and_the_fields():
    record = logging.makeLogRecord(
        {"name": "questwall.http", "levelname": "INFO", "msg": "GET %s", "args": ("/x",)}
    )
    record.status = 200
    with request_context("abc"):
        text, line = TextLines().format(record), json.loads(JsonLines().format(record))
    assert text.endswith("INFO questwall.http [abc] GET /x status=200")
    assert line["request_id"] == "abc" and line["message"] == "GET /x" and line["status"] == 200


def test_a_conversions_postback_and_webhook_attempts_log_under_its_request(
    observed, logged, engine, box, game, wall, api_settings
):
    signed = SignedClient(observed, game)
    mission = make_mission(engine, game.game_id, **KILLS)
    start(observed, signed, wall, mission.id, "p1")
    with running_receiver() as receiver:
        add(engine, box, game.game_id, receiver.url + "/hooks")
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        kills = {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 11}}
        answer = signed.events(kills, extra_headers={"X-Request-ID": "conversion-7"})
        assert answer.status_code == 200, answer.text
        with write_session(engine) as session:
            [postback] = session.exec(select(Postback)).all()
            messages = session.exec(select(WebhookMessage)).all()
        assert postback.request_id == "conversion-7"
        assert messages and {m.request_id for m in messages} == {"conversion-7"}
        make_due(engine)
        assert run_once(engine, box, api_settings) == 1
        deliver(engine, box, api_settings)

    attempts = [r for r in logged.records() if "attempt" in r["message"]]
    assert {(r["logger"], r["request_id"], r["outcome"]) for r in attempts} == {
        ("questwall.postbacks", "conversion-7", "delivered"),
        ("questwall.webhooks", "conversion-7", "delivered"),
    }
    assert len(attempts) == 1 + len(messages)


def test_no_secret_reaches_a_log_line(observed, logged, engine, box, game, wall, api_settings):
    """Every path that carries a secret, at DEBUG: passwords (sign-up, sign-in, a wrong
    one), the session cookie, API keys (header, Authorization, a wrong one), the game's
    client secret and its signatures (a refused one too), the postback and webhook
    signing secrets and the signatures made with them."""
    offerwall, api_key = wall
    make_user(engine, "staff@example.com")
    secrets = [PASSWORD, api_key, game.client_secret]

    signed_in = observed.post(
        f"{routes.AUTH}/sign-in",
        json={"email": "staff@example.com", "password": PASSWORD},
        headers={"Origin": ORIGIN},
    )
    assert signed_in.status_code == 200
    cookie = signed_in.cookies[SESSION_COOKIE]
    secrets.append(cookie)
    observed.get("/staff", headers={"Cookie": f"{SESSION_COOKIE}={cookie}"})
    wrong = "not the password 123"
    assert (
        observed.post(
            f"{routes.AUTH}/sign-in",
            json={"email": "staff@example.com", "password": wrong},
            headers={"Origin": ORIGIN},
        ).status_code
        == 401
    )
    signup_password = "a new publisher's passphrase"
    observed.post(
        f"{routes.AUTH}/sign-up",
        json={
            "company": "Leaky",
            "website": "https://leaky.example",
            "contact": "Lee",
            "email": "lee@leaky.example",
            "password": signup_password,
            "confirm": signup_password,
        },
        headers={"Origin": ORIGIN},
    )
    secrets += [wrong, signup_password]

    bad_key = "qw_ak_" + "z" * 40
    observed.get("/offerwall/offers", headers={"x-api-key": bad_key})
    observed.get("/offerwall/offers", headers={"Authorization": f"Bearer {api_key}"})
    observed.get("/offerwall/offers", headers={"x-api-key": api_key})
    secrets.append(bad_key)

    signed = SignedClient(observed, game)
    mission = make_mission(engine, game.game_id, **KILLS)
    start(observed, signed, wall, mission.id, "p1")
    with running_receiver() as receiver:
        hook = add(engine, box, game.game_id, receiver.url + "/hooks")
        configure(engine, offerwall.id, TEMPLATE.replace("{base}", receiver.url))
        with write_session(engine) as session:
            approved = session.get(Offerwall, offerwall.id)
            assert approved is not None
            signing = endpoints.reveal_signing_secret(session=session, box=box, offerwall=approved)
        kills = {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 11}}
        body = json.dumps({"gameId": game.game_id, "events": [kills]}).encode()
        headers = signed_headers(game.client_id, game.client_secret, body)
        refused = signed_headers(game.client_id, "a guessed secret", body)
        assert observed.post("/v2/custom-events", content=body, headers=refused).status_code == 401
        assert observed.post("/v2/custom-events", content=body, headers=headers).status_code == 200
        make_due(engine)
        assert run_once(engine, box, api_settings) == 1
        deliver(engine, box, api_settings)
        sent = [s for s in receiver.signatures if s] + [
            h.get("webhook-signature", "") for h in receiver.post_headers
        ]
    assert len(sent) >= 2 and all(sent)
    secrets += [headers["x-signature"], refused["x-signature"], "a guessed secret"]
    secrets += [signing, hook.secret, *sent]

    lines = logged.lines
    assert len(lines) > 20
    assert all(json.loads(line) for line in lines)  # every line is one JSON object
    text = "\n".join(lines)
    leaked = [secret for secret in secrets if secret in text]
    assert leaked == []


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_a_request_line_written_later_is_the_line_logging_would_write(log_format, observed):
    """Request lines go straight to our handler, a second's worth at a time; with any
    other handler beside it they go through logging. Both make the same line."""
    root = logging.getLogger()
    with configured(log_format, "INFO") as written:
        observed.get("/no/such/path", headers={"X-Request-ID": "same-1"})
        flush_observed()
        other = logging.StreamHandler(io.StringIO())
        root.addHandler(other)  # now the line goes through logging, at once
        observed.get("/no/such/path", headers={"X-Request-ID": "same-1"})
        root.removeHandler(other)
    later, at_once = [line for line in written.getvalue().splitlines() if "same-1" in line]
    if log_format == "json":
        later_line, at_once_line = json.loads(later), json.loads(at_once)
        later_line.pop("time"), at_once_line.pop("time")
        later_line.pop("duration_ms"), at_once_line.pop("duration_ms")
        assert later_line == at_once_line
    else:
        # the time (23 characters) and the duration differ; the rest is the same
        assert later[23:].rsplit("=", 1)[0] == at_once[23:].rsplit("=", 1)[0]


def test_clicks_written_together_keep_each_its_own_request_id(
    engine, box, game, wall, api_settings
):
    """Clicks that arrive together are written in one group (SQLite's group commit): the
    `mission.started` message each makes names its own request, not the group's first."""
    import asyncio

    import httpx

    from tests.factories import ANDROID_UA

    mission = make_mission(engine, game.game_id, **KILLS)
    add(engine, box, game.game_id, "http://127.0.0.1:9/hooks")
    app = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    served = with_metrics(app, routes=route_templates(app), allow="127.0.0.1/32")

    async def click_all() -> list[int]:
        transport = httpx.ASGITransport(app=served, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            answers = await asyncio.gather(
                *(
                    http.get(
                        f"/missions/{mission.id}",
                        params={"owid": wall[0].owid, "uid": f"pub-{n}"},
                        headers={
                            "X-Request-ID": f"click-{n}",
                            "user-agent": ANDROID_UA,
                            "x-forwarded-for": f"203.0.113.{n + 1}",
                        },
                    )
                    for n in range(6)
                )
            )
        return [answer.status_code for answer in answers]

    assert asyncio.run(click_all()) == [302] * 6
    with write_session(engine) as session:
        started = session.exec(select(WebhookMessage)).all()
    assert len(started) == 6  # one player each
    assert sorted(m.request_id for m in started) == [f"click-{n}" for n in range(6)]
