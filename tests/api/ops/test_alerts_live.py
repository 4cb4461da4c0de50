"""A real Prometheus scrapes a running `questwall api` and `questwall worker --http-port`,
loads the delivery-failure alert of deploy/prometheus/alerts.yml (its windows and `for`
shortened to seconds, its expression's logic kept), and sees it fire while the publisher's
receiver answers 500 and clear once it answers 200."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.api.live_server import serve_api, server_env
from tests.factories import make_conversion, make_game, make_mission, make_paying_offerwall
from tests.live import ROOT, free_port, wait_until_up
from tests.outbox import TEMPLATE, postback_rows
from tests.receiver import running_receiver

pytestmark = pytest.mark.slow

PROMETHEUS = Path("/usr/bin/prometheus")
ALERT = "QuestwallDeliveryFailing"


def shortened_rule(alert: str) -> dict[str, Any]:
    """The rule file of `alert` alone, its range windows 15 s and its `for` 2 s."""
    document = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    [rule] = [r for g in document["groups"] for r in g["rules"] if r.get("alert") == alert]
    rule["expr"] = re.sub(r"\[\d+[smhd]\]", "[15s]", rule["expr"])
    rule["for"] = "2s"
    return {"groups": [{"name": "shortened", "rules": [rule]}]}


def alert_states(http: httpx.Client) -> dict[str, str]:
    """The state of each firing or pending alert, by its `kind` label."""
    found = http.get("/api/v1/alerts").json()["data"]["alerts"]
    return {
        a["labels"].get("kind", ""): a["state"] for a in found if a["labels"]["alertname"] == ALERT
    }


def wait_for(check, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen in {timeout} s"
        time.sleep(0.5)


def test_the_delivery_failure_alert_fires_while_the_receiver_fails_and_clears(
    db_url, engine, box, tmp_path
):
    assert PROMETHEUS.exists(), "prometheus is missing: `make install-dev` installs it"
    processes: list[subprocess.Popen[bytes]] = []
    stop = threading.Event()
    with running_receiver() as receiver, serve_api(db_url, tmp_path) as api_url:
        receiver.statuses = [500] * 100_000  # until cleared: then 200
        wall = make_paying_offerwall(
            engine, box, postback_url=TEMPLATE.replace("{base}", receiver.url)
        )
        mission = make_mission(engine, make_game(engine, box).game_id)

        def convert() -> None:  # a conversion, hence a postback, every half second
            n = 0
            while not stop.wait(0.5):
                n += 1
                make_conversion(
                    engine, mission_id=mission.id, offerwall=wall, uid=f"p{n}", clickid=f"c{n}"
                )

        producer = threading.Thread(target=convert, daemon=True)
        try:
            worker_port, prometheus_port = free_port(), free_port()
            worker_log = tmp_path / "worker.log"
            with worker_log.open("wb") as out:
                command = [sys.executable, "-m", "api.cli", "worker", "--threads", "2"]
                command += ["--http-port", str(worker_port), "--http-host", "127.0.0.1"]
                env = server_env(db_url, tmp_path) | {"POSTBACK_ALLOW_PRIVATE": "true"}
                processes.append(
                    subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
                )
            worker_url = f"http://127.0.0.1:{worker_port}"
            wait_until_up(worker_url + "/livez", processes[0], timeout=60, log=worker_log)

            rules = tmp_path / "alerts.yml"
            rules.write_text(yaml.safe_dump(shortened_rule(ALERT)))
            config = tmp_path / "prometheus.yml"
            config.write_text(
                yaml.safe_dump(
                    {
                        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                        "rule_files": [str(rules)],
                        "scrape_configs": [
                            {
                                "job_name": "questwall-api",
                                "static_configs": [{"targets": [api_url.split("//")[1]]}],
                            },
                            {
                                "job_name": "questwall-worker",
                                "static_configs": [{"targets": [worker_url.split("//")[1]]}],
                            },
                        ],
                    }
                )
            )
            prometheus_log = tmp_path / "prometheus.log"
            with prometheus_log.open("wb") as out:
                command = [str(PROMETHEUS), f"--config.file={config}"]
                command += [f"--storage.tsdb.path={tmp_path / 'tsdb'}"]
                command += [f"--web.listen-address=127.0.0.1:{prometheus_port}"]
                processes.append(subprocess.Popen(command, stdout=out, stderr=out))
            prometheus_url = f"http://127.0.0.1:{prometheus_port}"
            wait_until_up(prometheus_url + "/-/ready", processes[1], timeout=60, log=prometheus_log)
            producer.start()

            with httpx.Client(base_url=prometheus_url, timeout=5) as http:

                def both_up() -> bool:
                    found = http.get("/api/v1/query", params={"query": "up"}).json()
                    values = {r["metric"]["job"]: r["value"][1] for r in found["data"]["result"]}
                    return values == {"questwall-api": "1", "questwall-worker": "1"}

                wait_for(both_up, "both targets scraped", timeout=60)
                wait_for(lambda: alert_states(http).get("postback") == "firing", "firing")
                assert "webhook" not in alert_states(http)
                with receiver.lock:
                    receiver.statuses.clear()  # the receiver recovers
                wait_for(lambda: "postback" not in alert_states(http), "clearing")
            # It cleared because deliveries succeed again, not because the worker stopped.
            assert any(p.status == "delivered" for p in postback_rows(engine))
            assert processes[0].poll() is None
        finally:
            stop.set()
            if producer.is_alive():
                producer.join(timeout=10)
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
