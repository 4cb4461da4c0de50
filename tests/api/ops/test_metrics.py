"""GET /metrics: requests counted by route template (never a raw path), served only to
METRICS_ALLOW, in a format promtool accepts; and with `questwall api --workers 2` the
counts of both processes add up to exactly the traffic sent."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_api
from api.ops import flush_observed, route_templates, with_metrics
from api.ops.requests import _add_observations
from tests.api.live_server import post_signed, server_env
from tests.factories import FixedCountries, iso_now, make_game
from tests.live import ROOT, free_port, wait_until_up

OFFERS = "/offerwall/offers"


def count(route: str, method: str, status: str) -> float:
    flush_observed()  # this process's tallies, moved into the metrics once a second
    labels = {"route": route, "method": method, "status": status}
    return REGISTRY.get_sample_value("questwall_http_requests_total", labels) or 0.0


@pytest.fixture
def counted(engine, api_settings, box):
    api = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    app = with_metrics(api, routes=route_templates(api), allow="127.0.0.1,10.1.0.0/16")

    def client(address: str) -> TestClient:
        return TestClient(app, client=(address, 40000), follow_redirects=False)

    return client


def test_requests_are_counted_by_route_template_never_by_raw_path(counted):
    client = counted("127.0.0.1")
    mission = f"/missions/{uuid.uuid4().hex}"
    before = {
        "offers": count(OFFERS, "GET", "401"),
        "mission": count("/missions/{mission_id}", "GET", "404"),
        "other": count("other", "GET", "404"),
    }
    for _ in range(3):
        assert client.get(OFFERS).status_code == 401
    assert client.get(mission).status_code == 404  # no such mission
    assert client.get("/no/such/" + uuid.uuid4().hex).status_code == 404
    assert count(OFFERS, "GET", "401") == before["offers"] + 3
    assert count("/missions/{mission_id}", "GET", "404") == before["mission"] + 1
    assert count("other", "GET", "404") == before["other"] + 1
    text = client.get("/metrics").text
    assert mission not in text  # no raw path, no id, is ever a label
    durations = REGISTRY.get_sample_value(
        "questwall_http_request_duration_seconds_count", {"route": OFFERS, "method": "GET"}
    )
    assert durations is not None and durations >= 3


def test_metrics_are_served_to_the_allowed_addresses_only(counted):
    allowed = counted("10.1.2.3").get("/metrics")
    assert allowed.status_code == 200
    assert allowed.headers["content-type"].startswith("text/plain; version=")
    families = {f.name for f in text_string_to_metric_families(allowed.text)}
    assert {
        "questwall_build_info",
        "questwall_http_requests",
        "questwall_http_requests_in_flight",
    } <= families
    for address in ("10.2.0.1", "203.0.113.9"):
        refused = counted(address).get("/metrics")
        assert (refused.status_code, refused.text) == (404, "Not Found")


def test_promtool_accepts_the_live_output(counted):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: `make install-dev` installs Debian's prometheus"
    client = counted("127.0.0.1")
    client.get(OFFERS)
    checked = subprocess.run(
        [promtool, "check", "metrics"],
        input=client.get("/metrics").content,
        capture_output=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()


def _scraped(url: str) -> dict[tuple[str, tuple], float]:
    scraped = httpx.get(url + "/metrics", timeout=10)
    assert scraped.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scraped.text)
        for sample in family.samples
    }


def _requests(url: str) -> dict[tuple[str, str, str], float]:
    return {
        (labels["route"], labels["method"], labels["status"]): value
        for (name, pairs), value in _scraped(url).items()
        if name == "questwall_http_requests_total"
        for labels in [dict(pairs)]
    }


@pytest.mark.slow
def test_two_worker_processes_count_exactly_the_traffic_sent(db_url, engine, box, tmp_path):
    """Requests and ingested items, across both processes; and their JSON log lines, one
    per request."""
    game = make_game(engine, box)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "api.cli", "api", "--workers", "2"]
    log = tmp_path / "api.log"
    env = server_env(db_url, tmp_path) | {
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
        "LOG_FORMAT": "json",
    }
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "counter_999999.db").write_bytes(b"left by an earlier run")
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(url + "/livez", proc, timeout=60, log=log)
        assert not (tmp_path / "metrics" / "counter_999999.db").exists()  # emptied at start
        # New connections each time: both processes answer some of them.
        for _ in range(40):
            assert httpx.get(url + OFFERS).status_code == 401
        pids = {p.stem.rsplit("_", 1)[1] for p in (tmp_path / "metrics").glob("counter_*.db")}
        assert len(pids) >= 2, pids  # more than one process counted
        for n in range(12):
            event = {"userId": f"p{n}", "event": "GAME_START", "time": iso_now(n)}
            with httpx.Client(base_url=url) as http:  # a connection of its own
                answer = post_signed(http, game, {"gameId": game.game_id, "events": [event]})
            assert answer.status_code == 200, answer.text
        accepted = ("questwall_ingest_items_total", (("kind", "event"), ("outcome", "accepted")))
        # Each process moves its request tallies into the shared counts within a second.
        deadline = time.monotonic() + 5
        while _requests(url).get((OFFERS, "GET", "401")) != 40:
            assert time.monotonic() < deadline, _requests(url)
            time.sleep(0.2)
        for _ in range(3):  # whichever process answers the scrape sees the same total
            assert _requests(url)[(OFFERS, "GET", "401")] == 40
            assert _scraped(url)[accepted] == 12
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    answered = [line for line in lines if line["logger"] == "questwall.http"]
    assert len(answered) == 40 + 12  # scrapes and probes are not requests to log
    assert len({line["request_id"] for line in answered}) == len(answered)
    assert {line["route"] for line in answered} == {OFFERS, "/v2/custom-events"}


def test_the_metrics_directories_of_gone_processes_are_removed_at_start(monkeypatch, tmp_path):
    """uvicorn ends a process stopped by SIGTERM with the signal, before it can remove its
    temporary directory: the next `questwall api` or `serve` removes those of gone
    processes, and only those."""
    from api.cli.server import _metrics_directory

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "set")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    gone = tmp_path / "questwall-metrics-999999999"
    older = tmp_path / "questwall-metrics-k2j4x_9q"  # an earlier version's random name
    alive = tmp_path / f"questwall-metrics-{os.getppid()}"
    for folder in (gone, older, alive):
        folder.mkdir()
    with _metrics_directory():
        mine = tmp_path / f"questwall-metrics-{os.getpid()}"
        assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(mine) and mine.is_dir()
        assert not gone.exists() and not older.exists() and alive.is_dir()
    assert not mine.exists()


def test_observations_added_together_equal_those_observed_one_by_one():
    """The request tallies move into the duration histogram many at a time, through the
    client library's own series: the result is what `observe` would have made."""
    import bisect

    from prometheus_client import CollectorRegistry, Histogram, generate_latest

    values = [0.001, 0.0025, 0.003, 0.02, 0.5, 0.5, 7.0, 42.0]
    one_by_one, together = CollectorRegistry(), CollectorRegistry()
    first = Histogram("d", "d", ["route"], registry=one_by_one, buckets=(0.0025, 0.01, 1, 10))
    second = Histogram("d", "d", ["route"], registry=together, buckets=(0.0025, 0.01, 1, 10))
    for value in values:
        first.labels(route="/x").observe(value)
    series = second.labels(route="/x")
    buckets = [0.0] * len(series._upper_bounds)
    for value in values:
        buckets[bisect.bisect_left(series._upper_bounds, value)] += 1
    _add_observations(series, sum(values), buckets)
    created = re.compile(rb"^d_created.*$", re.M)  # when each was made: not the same
    assert created.sub(b"", generate_latest(one_by_one)) == created.sub(
        b"", generate_latest(together)
    )
