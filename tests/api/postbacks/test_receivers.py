"""The publisher guide's receivers accept a postback Questwall renders and refuse a forged
one. With QUESTWALL_SIGNING_SECRET set they take real deliveries from the dispatcher, also
during a rotation's overlap with the old secret, and refuse a tampered URL, an old
signature and none (docs/publisher-integration.md#signatures). The PHP receiver cannot run
here: it mirrors these two line by line."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from sqlalchemy import Engine

from api.conversions import ledger as conversions
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import write_session
from api.postbacks import endpoint as endpoints
from api.postbacks.signature import HEADER, header_value
from api.postbacks.url import hash_key, render
from models import Offerwall, PostbackKind, PostbackStatus
from tests.factories import make_offerwall, make_postback
from tests.live import ROOT, free_port, node, serving_example
from tests.outbox import attempt_rows, configure, postback_rows, run_once

EXAMPLES = ROOT / "docs" / "examples"
API_KEY = "qw_ak_receiver-test-key"
VALUES = {"transaction_id": "tx-9", "uid": "user 1", "payout": "1.50", "mission_name": "Kill & win"}
# What the offerwalls of the delivery tests post back: the receivers dedupe on tx.
TEMPLATE = "/pb?tx={transaction_id}&uid={uid}&amount={payout}&name={mission_name}&h={hash_key}"


@contextmanager
def running(
    kind: str, port: int, api_key: str, secret: str = "", public_url: str = ""
) -> Iterator[str]:
    """The example receiver of `kind` on `port`, checking signatures with `secret` (over
    `public_url` and the request target, when given)."""
    command = {
        "python": [sys.executable, str(EXAMPLES / "receiver.py")],
        "node": [node(), str(EXAMPLES / "receiver.mjs")],
    }[kind]
    env = {**os.environ, "QUESTWALL_API_KEY": api_key, "HASH_PARAM": "h", "PORT": str(port)}
    if secret:
        env["QUESTWALL_SIGNING_SECRET"] = secret
    if public_url:
        env["PUBLIC_URL"] = public_url
    with serving_example(command, env, port) as url:
        yield url


@pytest.fixture(params=["python", "node"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def receiver_url(kind) -> Iterator[str]:
    with running(kind, free_port(), API_KEY) as url:
        yield url


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
    # A hash of the right length with a character outside ASCII is refused like any other,
    # and the receiver goes on answering.
    forged = receiver_url + "/pb?tx=tx-9&amount=1.50&h=%C3%A9" + "a" * 39
    assert httpx.get(forged).status_code == 403
    assert httpx.get(url).status_code == 200


# --- signatures, on real deliveries -----------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """An approved offerwall posting back to `port` on 127.0.0.1: its API key and the
    signing secret its workspace revealed."""

    wall: Offerwall
    api_key: str
    secret: str
    port: int


@pytest.fixture
def endpoint(engine: Engine, box: SecretBox) -> Endpoint:
    port = free_port()
    wall, api_key = make_offerwall(engine, box, name="Signed Wall")
    assert api_key is not None
    configure(engine, wall.id, f"http://127.0.0.1:{port}{TEMPLATE}")
    with write_session(engine) as session:
        approved = session.get(Offerwall, wall.id)
        assert approved is not None
        secret = endpoints.reveal_signing_secret(session=session, box=box, offerwall=approved)
    return Endpoint(wall, api_key, secret, port)


@pytest.fixture
def private_ok(settings: Settings) -> Settings:
    return settings.model_copy(update={"postback_allow_private": True})


def _deliver(engine: Engine, box: SecretBox, settings: Settings) -> list[int | None]:
    """Run a dispatcher until its claim is recorded; the new attempts' answers."""
    before = len(attempt_rows(engine))
    assert run_once(engine, box, settings, threads=2) >= 1
    return [attempt.status_code for attempt in attempt_rows(engine)[before:]]


def _rotate(engine: Engine, box: SecretBox, wall: Offerwall, overlap: str) -> str:
    with write_session(engine) as session:
        current = session.get(Offerwall, wall.id)
        assert current is not None
        return endpoints.rotate_signing_secret(
            session=session, box=box, offerwall=current, overlap=overlap
        )


def _with_changed_amount(url: str, api_key: str) -> str:
    """`url` paying 999 instead, with a hash_key that matches: only the signature can tell."""
    parts = urlsplit(url)
    pairs = [(k, "999" if k == "amount" else v) for k, v in parse_qsl(parts.query) if k != "h"]
    query = urlencode([*pairs, ("h", hash_key(pairs, api_key))])
    return urlunsplit(parts._replace(query=query))


def test_a_signing_receiver_accepts_a_real_delivery_and_its_reversal(
    engine, box, private_ok, endpoint, kind
):
    with running(kind, endpoint.port, endpoint.api_key, endpoint.secret):
        make_postback(engine, box, endpoint.wall)
        assert _deliver(engine, box, private_ok) == [200]
        with write_session(engine) as session:
            [found] = conversions.search(session=session, studio_id=None).rows
            conversions.reverse(
                session=session,
                transaction_id=found.transaction_id,
                reason="chargeback",
                actor="staff@example.com",
                studio_id=None,
            )
        # The reversal's URL has status=reversed added, and is signed as sent.
        assert _deliver(engine, box, private_ok) == [200]
    rows = postback_rows(engine)
    assert [(row.kind, row.status) for row in rows] == [
        (PostbackKind.CONVERSION, PostbackStatus.DELIVERED),
        (PostbackKind.REVERSAL, PostbackStatus.DELIVERED),
    ]
    assert "status=reversed" in (rows[1].url or "")


def test_a_signing_receiver_refuses_a_tampered_url_an_old_signature_and_none(
    engine, box, private_ok, endpoint, kind
):
    with running(kind, endpoint.port, endpoint.api_key, endpoint.secret):
        make_postback(engine, box, endpoint.wall)
        assert _deliver(engine, box, private_ok) == [200]
        [row] = postback_rows(engine)
        assert row.url is not None
        sent = str(httpx.URL(row.url))  # as the dispatcher signs it
        signature = header_value(sent, [endpoint.secret])
        assert httpx.get(sent, headers={HEADER: signature}).status_code == 200
        changed = _with_changed_amount(sent, endpoint.api_key)
        assert httpx.get(changed, headers={HEADER: signature}).status_code == 403
        # The changed URL's hash_key is right: signed for itself, it would pass.
        own = header_value(changed, [endpoint.secret])
        assert httpx.get(changed, headers={HEADER: own}).status_code == 200
        # 301 s before now, or after it (the second more: `now` is rounded down).
        now = int(time.time())
        for stale in (now - 301, now + 302):
            old = header_value(sent, [endpoint.secret], timestamp=stale)
            assert httpx.get(sent, headers={HEADER: old}).status_code == 403
        other = header_value(sent, ["qw_ps_someone-else"])
        assert httpx.get(sent, headers={HEADER: other}).status_code == 403
        assert httpx.get(sent).status_code == 403


def test_during_a_rotations_overlap_the_old_secret_still_accepts_real_deliveries(
    engine, box, private_ok, endpoint, kind
):
    new = _rotate(engine, box, endpoint.wall, "1h")
    # The header carries two signatures: a receiver not yet told the new secret accepts…
    with running(kind, endpoint.port, endpoint.api_key, endpoint.secret):
        make_postback(engine, box, endpoint.wall)
        assert _deliver(engine, box, private_ok) == [200]
    # … and so does one already moved to the new one.
    with running(kind, endpoint.port, endpoint.api_key, new):
        make_postback(engine, box, endpoint.wall)
        assert _deliver(engine, box, private_ok) == [200]
    assert {row.status for row in postback_rows(engine)} == {PostbackStatus.DELIVERED}


def test_after_a_rotation_without_overlap_the_old_secret_refuses(
    engine, box, private_ok, endpoint, kind
):
    _rotate(engine, box, endpoint.wall, "none")
    with running(kind, endpoint.port, endpoint.api_key, endpoint.secret):
        make_postback(engine, box, endpoint.wall)
        assert _deliver(engine, box, private_ok) == [403]
    [row] = postback_rows(engine)
    assert row.status == PostbackStatus.PENDING  # retried later, as any refusal


def test_behind_a_proxy_the_signature_covers_the_public_url(kind):
    """Questwall signs the address it posts to; a proxy in front hands the receiver its own
    host. With PUBLIC_URL the receiver checks the public one."""
    public = "https://pub.example"
    with running(kind, free_port(), API_KEY, "qw_ps_proxied", public) as local:
        target = render("/pb?tx={transaction_id}&amount={payout}&h={hash_key}", VALUES, API_KEY)
        signed_public = header_value(public + target, ["qw_ps_proxied"])
        assert httpx.get(local + target, headers={HEADER: signed_public}).status_code == 200
        signed_local = header_value(local + target, ["qw_ps_proxied"])
        assert httpx.get(local + target, headers={HEADER: signed_local}).status_code == 403
