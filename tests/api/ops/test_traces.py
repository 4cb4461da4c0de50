"""Traces, against a real OTLP receiver: with OTEL_EXPORTER_OTLP_ENDPOINT set, a real
`questwall api` process and a `questwall worker` export spans, and a conversion's
postback attempt, made later by the worker, is in the trace of the signed request that
completed the mission, with that request's SQL. Without the variable, nothing is sent."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from api.ops.traces import wanted
from tests.api.live_server import post_signed, server_env
from tests.api.steps import KILLS, at
from tests.api.tracking_helpers import click, platform_id
from tests.factories import make_game, make_mission, make_offerwall
from tests.live import free_port, wait_until_up
from tests.otlp import Collector, Span, running_collector
from tests.outbox import TEMPLATE, configure
from tests.receiver import running_receiver

pytestmark = pytest.mark.slow
SERVER, CLIENT = 2, 3  # span kinds, as OTLP numbers them


def test_traces_are_on_only_when_an_otlp_endpoint_is_named():
    assert not wanted({})
    assert wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    named = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    assert not wanted(named | {"OTEL_SDK_DISABLED": "true"})
    assert not wanted(named | {"OTEL_TRACES_EXPORTER": "none"})


@contextmanager
def running(command: list[str], env: dict[str, str], log: Path, probe: str) -> Iterator[None]:
    from tests.api.ops.test_drain import start

    proc = start(command, env, log)
    try:
        wait_until_up(probe, proc, timeout=60, log=log)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def until(found: Callable[[], list[Span]], what: str, seconds: float = 30) -> list[Span]:
    deadline = time.monotonic() + seconds
    while not (spans := found()):
        assert time.monotonic() < deadline, f"no {what} span arrived"
        time.sleep(0.1)
    return spans


def traced_env(db_url: str, tmp_path: Path, collector: Collector | None) -> dict[str, str]:
    env = server_env(db_url, tmp_path) | {
        "POSTBACK_ALLOW_PRIVATE": "true",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # export within a tenth of a second
        "OTEL_SERVICE_NAME": "questwall-test",
    }
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    if collector is not None:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.endpoint
    return env


def test_a_postback_attempt_is_in_the_trace_of_the_request_that_converted(
    db_url, engine, box, tmp_path
):
    game = make_game(engine, box)
    mission = make_mission(engine, game.game_id, **KILLS)
    wall, _ = make_offerwall(engine, box)
    api_port, worker_port = free_port(), free_port()
    api = [sys.executable, "-m", "uvicorn", "api.asgi:app", "--port", str(api_port)]
    api += ["--host", "127.0.0.1"]
    worker = [sys.executable, "-m", "api.cli", "worker", "--threads", "2"]
    worker += ["--http-port", str(worker_port), "--http-host", "127.0.0.1"]
    url = f"http://127.0.0.1:{api_port}"
    with running_collector() as collector, running_receiver() as receiver:
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        env = traced_env(db_url, tmp_path, collector)
        with (
            running(api, env, tmp_path / "api.log", url + "/livez"),
            running(
                worker,
                env,
                tmp_path / "worker.log",
                f"http://127.0.0.1:{worker_port}/livez",
            ),
            httpx.Client(base_url=url, timeout=10) as http,
        ):
            player = platform_id(click(http, "mission", mission.id, wall.owid, uid="pub-p1"))
            linked = {"userId": "p1", "platformUserId": player}
            assert post_signed(http, game, {"gameId": game.game_id, "identifiers": [linked]})
            kills = {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 11}}
            answer = post_signed(http, game, {"gameId": game.game_id, "events": [kills]})
            assert answer.status_code == 200, answer.text
            deadline = time.monotonic() + 30
            while not receiver.requests:
                assert time.monotonic() < deadline, "the postback never arrived"
                time.sleep(0.1)
            delivery = until(lambda: collector.named("deliver postback"), "delivery")

    requests = [s for s in collector.named("POST /v2/custom-events") if s.kind == SERVER]
    assert len(requests) == 2  # the identifiers, then the completing event
    assert all(s.attributes["http.route"] == '"/v2/custom-events"' for s in requests)
    [attempt] = delivery
    [converting] = [s for s in requests if s.trace_id == attempt.trace_id]
    in_trace = {s.span_id: s for s in collector.spans if s.trace_id == converting.trace_id}
    # The attempt hangs under the request's endpoint, which hangs under the request.
    assert in_trace[attempt.parent_id].parent_id == converting.span_id
    assert attempt.kind == CLIENT and attempt.service == converting.service == "questwall-test"
    assert attempt.attributes["questwall.outcome"] == '"delivered"'
    assert attempt.attributes["http.response.status_code"] == "200"
    statements = [s.attributes.get("db.statement", "") for s in in_trace.values()]
    assert any(statement.startswith('"INSERT INTO postback') for statement in statements)


def test_without_an_endpoint_nothing_is_exported(db_url, engine, box, tmp_path):
    api_port = free_port()
    url = f"http://127.0.0.1:{api_port}"
    api = [sys.executable, "-m", "uvicorn", "api.asgi:app", "--port", str(api_port)]
    api += ["--host", "127.0.0.1"]
    with running_collector() as collector:
        env = traced_env(db_url, tmp_path, None)
        # An exporter left on would post to its default, not here: point that here too.
        env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = ""
        with (
            running(api, env, tmp_path / "api.log", url + "/livez"),
            httpx.Client(base_url=url, timeout=10) as http,
        ):
            assert http.get("/v2/openapi.json").status_code == 200
            time.sleep(0.5)
        assert collector.spans == []
