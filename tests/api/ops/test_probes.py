"""`/livez` and `/readyz`, answered by the outermost app: on both databases, with Redis
up and unreachable, with the database unreachable or silent, behind on its migrations,
and while the process drains."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_api
from api.core.db import build_engine
from api.ops import Readiness, with_probes
from tests.factories import FixedCountries
from tests.live import free_port


def probed(app, readiness: Readiness, address: str = "127.0.0.1") -> TestClient:
    """The probes as `address` reaches them; 127.0.0.1 may read the checks' errors."""
    wrapped = with_probes(app, readiness, detail_allow="127.0.0.1")
    return TestClient(wrapped, raise_server_exceptions=False, client=(address, 40000))


@pytest.fixture
def api(engine, api_settings, box):
    return create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())


async def broken(scope, receive, send) -> None:
    raise AssertionError("the probes answer before the app")


def test_a_live_and_ready_process_answers_200_with_each_check(api, engine):
    client = probed(api, Readiness(engine))
    live = client.get("/livez")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json() == {
        "status": "ok",
        "checks": {
            "database": {"status": "ok"},
            "schema": {"status": "ok"},
            "draining": {"status": "ok"},
        },
    }
    assert ready.headers["content-type"] == "application/json"
    assert ready.headers["cache-control"] == "no-store"
    head = client.head("/readyz")
    assert (head.status_code, head.content) == (200, b"")
    # Everything else is the app's, as before.
    assert client.get("/v2/openapi.json").status_code == 200


def test_the_probes_answer_before_the_app(engine):
    client = probed(broken, Readiness(engine))
    assert client.get("/livez").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/anything-else").status_code == 500  # the app itself ran


def test_redis_is_checked_when_it_is_set(engine, redis_url):
    document = probed(broken, Readiness(engine, redis_url=redis_url)).get("/readyz").json()
    assert document["checks"]["redis"] == {"status": "ok"}


def test_an_unreachable_redis_fails_readiness_not_liveness(engine):
    closed = free_port()  # nothing listens there
    client = probed(broken, Readiness(engine, redis_url=f"redis://127.0.0.1:{closed}/0"))
    assert client.get("/livez").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503
    document = ready.json()
    assert document["status"] == "fail"
    assert document["checks"]["redis"]["status"] == "fail"
    assert "Connection" in document["checks"]["redis"]["error"]
    assert document["checks"]["database"] == {"status": "ok"}


def test_a_database_behind_its_migrations_is_not_ready(tmp_path):
    empty = build_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        ready = probed(broken, Readiness(empty)).get("/readyz")
    finally:
        empty.dispose()
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["database"] == {"status": "ok"}
    assert checks["schema"]["status"] == "fail"
    assert "no migration" in checks["schema"]["error"]
    assert "questwall migrate" in checks["schema"]["error"]


@pytest.mark.postgres
def test_an_unreachable_database_fails_readiness_and_names_why():
    closed = free_port()
    engine = build_engine(f"postgresql+psycopg://postgres@127.0.0.1:{closed}/questwall")
    try:
        client = probed(broken, Readiness(engine))
        assert client.get("/livez").status_code == 200
        ready = client.get("/readyz")
    finally:
        engine.dispose()
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["database"]["status"] == "fail"
    assert "OperationalError" in checks["database"]["error"]
    assert checks["schema"] == {"status": "fail", "error": "the database did not answer"}


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never answers: a database that hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


@pytest.mark.postgres
def test_a_database_that_does_not_answer_fails_within_the_time_limit(silent_server):
    engine = build_engine(f"postgresql+psycopg://postgres@127.0.0.1:{silent_server}/questwall")
    readiness = Readiness(engine, timeout=0.5)
    client = probed(broken, readiness)
    try:
        started = time.monotonic()
        first = client.get("/readyz")
        took = time.monotonic() - started
        second = client.get("/readyz")  # the first check still waits: none is piled on it
    finally:
        engine.dispose()
    assert first.status_code == 503 and took < 5
    assert first.json()["checks"]["database"] == {
        "status": "fail",
        "error": "no answer within 0.5 s",
    }
    assert second.json()["checks"]["database"] == {
        "status": "fail",
        "error": "an earlier check is still waiting for an answer",
    }


def test_a_draining_process_is_live_but_not_ready(api, engine):
    draining = threading.Event()
    client = probed(api, Readiness(engine, draining=draining))
    assert client.get("/readyz").status_code == 200
    draining.set()
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["draining"] == {
        "status": "fail",
        "error": "the process is stopping (SIGTERM)",
    }
    assert client.get("/livez").status_code == 200
    assert client.get("/v2/openapi.json").status_code == 200  # it still serves meanwhile


def test_a_drain_file_makes_every_process_that_reads_it_unready(engine, tmp_path):
    """`questwall serve` receives the SIGTERM and writes the file; the server processes
    it started read it."""
    marker = tmp_path / "serve-1.draining"
    client = probed(broken, Readiness(engine, drain_file=str(marker)))
    assert client.get("/readyz").status_code == 200
    marker.touch()
    assert client.get("/readyz").json()["checks"]["draining"]["status"] == "fail"
    marker.unlink()
    assert client.get("/readyz").status_code == 200


def test_other_addresses_see_each_checks_status_but_not_its_error(engine):
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    readiness = Readiness(engine, redis_url=unreachable)
    outside = probed(broken, readiness, address="203.0.113.9").get("/readyz")
    assert outside.status_code == 503
    assert outside.json() == {
        "status": "fail",
        "checks": {
            "database": {"status": "ok"},
            "schema": {"status": "ok"},
            "redis": {"status": "fail"},
            "draining": {"status": "ok"},
        },
    }
    inside = probed(broken, readiness).get("/readyz").json()
    assert "Connection" in inside["checks"]["redis"]["error"]
