"""SIGTERM to a real `questwall api` process: `/readyz` answers 503 at once, the process
goes on serving for QUESTWALL_DRAIN_SECONDS, then stops by itself; a worker serves its
probes on `--http-port` and stops on SIGTERM too."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.api.live_server import server_env
from tests.live import ROOT, free_port, wait_until_up

pytestmark = pytest.mark.slow


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def test_sigterm_makes_the_api_unready_at_once_then_it_stops_by_itself(db_url, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = server_env(db_url, tmp_path) | {"QUESTWALL_DRAIN_SECONDS": "2"}
    command = [sys.executable, "-m", "uvicorn", "api.asgi:app", "--port", str(port)]
    proc = start([*command, "--host", "127.0.0.1"], env, tmp_path / "api.log")
    try:
        wait_until_up(url + "/livez", proc, timeout=60, log=tmp_path / "api.log")
        with httpx.Client(base_url=url, timeout=5) as http:
            assert http.get("/readyz").status_code == 200
            proc.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            ready = http.get("/readyz")
            assert ready.status_code == 503, ready.text
            assert ready.json()["checks"]["draining"]["status"] == "fail"
            assert http.get("/livez").status_code == 200
            assert http.get("/v2/openapi.json").status_code == 200  # still serving
        # uvicorn ends as the signal would have, once its requests are done.
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
        assert time.monotonic() - sent >= 1.5  # it served through the drain first
        assert "Finished server process" in (tmp_path / "api.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_worker_serves_its_probes_and_stops_on_sigterm(db_url, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "api.cli", "worker", "--threads", "2"]
    command += ["--http-port", str(port), "--http-host", "127.0.0.1"]
    proc = start(command, server_env(db_url, tmp_path), tmp_path / "worker.log")
    try:
        wait_until_up(url + "/livez", proc, timeout=60, log=tmp_path / "worker.log")
        with httpx.Client(base_url=url, timeout=5) as http:
            ready = http.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert set(ready.json()["checks"]) == {"database", "schema", "draining"}
            assert http.get("/anything").status_code == 404
            metrics = http.get("/metrics")  # the loopback may read them
            assert metrics.status_code == 200
            assert 'questwall_outbox_messages{kind="postback",state="due"} 0.0' in metrics.text
            assert "questwall_worker_heartbeat_timestamp_seconds" in metrics.text
            assert 'questwall_dependency_up{dependency="database"} 1.0' in metrics.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


SERVE_LIKE = """
import sys
from pathlib import Path
from api.cli.server import _run_reflex
child = [sys.executable, "-c", "import time; print('serving', flush=True); time.sleep(60)"]
sys.exit(_run_reflex(child, {}, Path(sys.argv[1]), float(sys.argv[2])))
"""


def test_questwall_serve_drains_before_it_passes_sigterm_on(tmp_path):
    """`questwall serve` runs its servers under Reflex: on SIGTERM it writes the drain file
    they read, waits, then stops them (here a stand-in for Reflex, to spare a build)."""
    marker = tmp_path / "serve-1.draining"
    command = [sys.executable, "-c", SERVE_LIKE, str(marker), "1.5"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "serving\n"
        assert not marker.exists()
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        sent = time.monotonic()
        time.sleep(0.5)
        assert proc.poll() is None  # still serving, unready
        proc.wait(timeout=20)
        assert time.monotonic() - sent >= 1.0
        assert "draining for 1.5 s" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
