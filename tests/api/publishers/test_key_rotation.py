"""Master key rotation: data made under key A, rotated to B (A previous), then served
with B alone: signed requests, API keys, postback rendering and portal sessions work."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from urllib.parse import parse_qsl, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from api import webhooks
from api.accounts import AccountError, IpThrottle
from api.accounts import sessions as accounts
from api.app import create_api
from api.cli.server import rotate_master_key as rotate_secrets
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.core.keycheck import MasterKeyMismatch, verify_master_keys
from api.postbacks import outbox as postbacks
from api.publishers import offerwalls
from models import GameCredential, Offerwall, Role, SignInThrottle, WebhookEndpoint
from models.types import utcnow
from tests.api.conftest import PROXY
from tests.api.steps import at, convert
from tests.conftest import MASTER_KEY
from tests.factories import FixedCountries, SignedClient
from tests.outbox import configure, postback_rows

KEY_B = "the-next-master-key"
EMAIL, PASSWORD = "staff@rotation.example", "amber-compass-2026"


def _staff_session(engine, box: SecretBox) -> str:
    with write_session(engine) as session:
        accounts.create_user(session=session, email=EMAIL, password=PASSWORD, role=Role.STAFF)
    ip = {"client_ip": "203.0.113.9", "ip_throttle": IpThrottle()}
    token = accounts.sign_in(engine=engine, box=box, email=EMAIL, password=PASSWORD, **ip).token
    with pytest.raises(AccountError):  # then one failed sign-in, kept by keyed digest
        accounts.sign_in(engine=engine, box=box, email=EMAIL, password="wrong-password-1", **ip)
    return token


def test_rotate_secrets_lets_the_previous_key_go(
    engine, box, client, signed, game, wall, api_settings
):
    # Under key A: a credential, an approved offerwall with a postback URL and a pending
    # postback, a portal session and a sign-in failure.
    configure(engine, wall[0].id, "https://pub.example/pb?tx={transaction_id}&h={hash_key}")
    convert(client, signed, game, wall, engine)
    [postback] = postback_rows(engine)
    token = _staff_session(engine, box)
    with write_session(engine) as session:  # and a game's webhook endpoint
        hook = webhooks.add_endpoint(
            session=session, box=box, game_id=game.game_id, url="https://game.example/hooks"
        )
        hook_id, hook_secret = hook.endpoint.id, hook.secret
    verify_master_keys(engine, box)

    only_b = SecretBox([KEY_B])
    with pytest.raises(MasterKeyMismatch):
        verify_master_keys(engine, only_b)  # B alone does not open A's secrets yet

    rotating = SecretBox([KEY_B, MASTER_KEY])
    verify_master_keys(engine, rotating)
    first = rotate_secrets(engine=engine, box=rotating)
    # A game secret, an API key, a postback signing secret and a webhook secret; two
    # digests and a failure.
    assert (first.resealed, first.digests) == (4, 3)
    again = rotate_secrets(engine=engine, box=rotating)
    assert (again.resealed, again.digests) == (0, 0)  # idempotent

    # Now B alone.
    verify_master_keys(engine, only_b)
    with new_session(engine) as session:
        endpoint = session.get(WebhookEndpoint, hook_id)
        assert webhooks.signing_secrets(only_b, endpoint, utcnow()) == [hook_secret]
    app = create_api(engine=engine, settings=api_settings, box=only_b, countries=FixedCountries())
    served = TestClient(app, client=(PROXY, 50000), follow_redirects=False)
    as_game = SignedClient(served, game)
    sent = as_game.events({"userId": "p9", "event": "GAME_END", "time": at(1)})
    assert sent.status_code == 200, sent.text
    offers = served.get("/offerwall/offers", headers={"x-api-key": wall[1]})
    assert offers.status_code == 200, offers.text

    target = postbacks.urls_for(engine, only_b, [postback.id])[postback.id]
    url = target.url
    assert target.problem == "" and url is not None and len(target.secrets) == 1
    query = dict(parse_qsl(urlsplit(url).query))
    expected = hashlib.sha1(f"tx={query['tx']}&{wall[1]}".encode()).hexdigest()
    assert query["h"] == expected

    user = accounts.user_for_token(engine=engine, token=token)
    assert user is not None and user.email == EMAIL
    with new_session(engine) as session:
        [failure] = session.exec(select(SignInThrottle)).all()
        credential = session.exec(select(GameCredential)).one()
        offerwall = session.exec(select(Offerwall)).one()
    assert failure.email_digest == only_b.digest(EMAIL)
    assert credential.secret_digest == only_b.digest(game.client_secret)
    assert offerwall.api_key_digest == only_b.digest(wall[1])
    assert not only_b.needs_reseal(credential.secret_sealed)


def test_a_replaced_api_key_keeps_its_grace_across_a_master_key_rotation(
    engine, box, wall, api_settings, clock
):
    """An API key replaced with an hour's grace under key A still lists offers with B
    alone, after rotate-secrets, until its hour is over; then it gets 401."""
    offerwall, old = wall
    with write_session(engine) as session:
        replaced = offerwalls.get_offerwall(session=session, ref=offerwall.id)
        new = offerwalls.rotate_key(session=session, box=box, offerwall=replaced, grace="1h")
    rotate_secrets(engine=engine, box=SecretBox([KEY_B, MASTER_KEY]))

    only_b = SecretBox([KEY_B])
    verify_master_keys(engine, only_b)
    app = create_api(engine=engine, settings=api_settings, box=only_b, countries=FixedCountries())
    served = TestClient(app, client=(PROXY, 50000), follow_redirects=False)

    def statuses() -> list[int]:
        return [
            served.get("/offerwall/offers", headers={"x-api-key": key}).status_code
            for key in (old, new.api_key)
        ]

    assert statuses() == [200, 200]
    start = utcnow()
    clock.set(start + timedelta(minutes=59))
    assert statuses() == [200, 200]
    clock.set(start + timedelta(hours=1, minutes=1))
    assert statuses() == [401, 200]
