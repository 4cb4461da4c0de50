"""The publisher guide's receivers accept a postback Questwall renders and refuse a forged one."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from api.services.postback_url import render
from tests.live import ROOT, free_port, node

EXAMPLES = ROOT / "docs" / "examples"
API_KEY = "qw_ak_receiver-test-key"
VALUES = {"transaction_id": "tx-9", "uid": "user 1", "payout": "1.50", "mission_name": "Kill & win"}


@pytest.fixture(params=["python", "node"])
def receiver_url(request):
    port = free_port()
    command = {
        "python": [sys.executable, str(EXAMPLES / "receiver.py")],
        "node": [node(), str(EXAMPLES / "receiver.mjs")],
    }[request.param]
    env = {**os.environ, "QUESTWALL_API_KEY": API_KEY, "HASH_PARAM": "h", "PORT": str(port)}
    process = subprocess.Popen(command, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(url, timeout=0.5)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_receiver_accepts_a_rendered_postback(receiver_url):
    url = render(
        receiver_url
        + "/pb?tx={transaction_id}&uid={uid}&amount={payout}&name={mission_name}&h={hash_key}",
        VALUES,
        API_KEY,
    )
    assert httpx.get(url).status_code == 200


def test_receiver_refuses_a_changed_value_or_a_wrong_key(receiver_url):
    url = render(
        receiver_url + "/pb?tx={transaction_id}&amount={payout}&h={hash_key}", VALUES, API_KEY
    )
    assert httpx.get(url.replace("amount=1.50", "amount=9.50")).status_code == 403
    other = render(
        receiver_url + "/pb?tx={transaction_id}&amount={payout}&h={hash_key}", VALUES, "qw_ak_other"
    )
    assert httpx.get(other).status_code == 403
