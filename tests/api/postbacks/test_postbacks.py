"""Postbacks of conversions made through the signed API: every value reaches the
publisher's receiver with a valid hash, and a worker process killed mid-delivery is
replaced once its lease runs out. The dispatcher's own rules are service tests
(`tests/domain/postbacks/test_postback_dispatcher.py`)."""

from __future__ import annotations

import hashlib

import pytest
from sqlmodel import select

from api.core.db import new_session
from models import Conversion
from tests.api.steps import convert
from tests.outbox import TEMPLATE, attempt_rows, configure, postback_rows, run_once
from tests.receiver import running_receiver


@pytest.fixture
def pb_settings(api_settings):
    return api_settings.model_copy(update={"postback_allow_private": True})


def test_a_conversion_is_posted_back_with_every_value_and_a_valid_hash(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        convert(client, signed, game, wall, engine)
        [postback] = postback_rows(engine)
        assert postback.status == "pending" and postback.url is None
        assert run_once(engine, box, pb_settings) == 1
    [query] = receiver.queries()
    values = dict(query)
    with new_session(engine) as session:
        conversion = session.exec(select(Conversion)).one()
    assert values["tx"] == conversion.transaction_id
    assert (values["uid"], values["payout"], values["usd"], values["cur"]) == (
        "pub-p1",
        "150",
        "1.5",
        "GEM",
    )
    assert values["ts"] == str(int(conversion.created_at.timestamp()))
    # The receiver recomputes the hash as documented.
    pairs = sorted((k, v) for k, v in query if k != "h")
    expected = hashlib.sha1(
        ("&".join(f"{k}={v}" for k, v in pairs) + "&" + wall[1]).encode()
    ).hexdigest()
    assert values["h"] == expected
    [postback] = postback_rows(engine)
    assert postback.status == "delivered" and postback.attempts == 1 and postback.url
    [attempt] = attempt_rows(engine)
    assert attempt.status_code == 200 and attempt.body_excerpt == "ok" and attempt.error is None


def test_a_worker_killed_mid_delivery_is_replaced_after_its_lease(
    client, signed, game, wall, engine, box, db_url, tmp_path
):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.live import ROOT

    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": "test-master-key-not-for-production",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "POSTBACK_ALLOW_PRIVATE": "true",
        "POSTBACK_LEASE_SECONDS": "3",
    }

    def worker() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "api.cli", "worker", "--threads", "2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    with running_receiver() as receiver:
        receiver.hang_seconds = 8  # the first delivery is still in flight when its worker dies
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        convert(client, signed, game, wall, engine)
        first = worker()
        deadline = time.monotonic() + 30
        while not receiver.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.requests, "the first worker never sent the postback"
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        receiver.hang_seconds = 0
        assert postback_rows(engine)[0].status == "pending"  # nothing was recorded
        second = worker()
        try:
            deadline = time.monotonic() + 30
            while postback_rows(engine)[0].status != "delivered" and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            second.terminate()
            second.wait(timeout=20)
    [postback] = postback_rows(engine)
    assert postback.status == "delivered"
    # At least once: the receiver saw the same transaction twice and dedupes on it.
    transactions = [dict(q)["tx"] for q in receiver.queries()]
    assert len(transactions) == 2 and len(set(transactions)) == 1
