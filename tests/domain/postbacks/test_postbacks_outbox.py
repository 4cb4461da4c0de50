"""The postbacks service owns the outbox: `enqueue` writes the row, one `PostbackValues`
gives the macros of a real conversion and of the portal's sample, and every attempt
records whether a request was sent (SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session
from api.postbacks import delivery_log as deliveries
from api.postbacks import trial
from api.postbacks.url import MACROS, PostbackValues
from api.publishers import api_key as api_keys
from models import Offerwall, PostbackStatus
from models.tables import postback as _postback
from models.types import utcnow
from tests.factories import make_paying_offerwall, make_postback
from tests.outbox import attempt_rows, run_once
from tests.receiver import running_receiver

# Every macro, each in a parameter of its own, so the rendered query shows which are filled.
EVERY_MACRO = "/pb?" + "&".join(f"{name}={{{name}}}" for name in MACROS)


def _deliver(engine: Engine, box: SecretBox, settings: Settings) -> None:
    assert run_once(engine, box, settings, threads=2) == 1


def _one_attempt(engine: Engine, box: SecretBox, settings: Settings, url: str | None):
    """A conversion posted back once to the URL template `url`; its one attempt."""
    wall = make_paying_offerwall(engine, box, postback_url=url)
    make_postback(engine, box, wall)
    _deliver(engine, box, settings)
    [attempt] = attempt_rows(engine)
    return attempt


def _macro_query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))


@pytest.fixture
def private_ok(settings: Settings) -> Settings:
    return settings.model_copy(update={"postback_allow_private": True})


def test_enqueue_writes_a_pending_postback_due_now(engine, box):
    wall = make_paying_offerwall(engine, box, postback_url="https://pub.example/pb")
    postback_id = make_postback(engine, box, wall)
    with new_session(engine) as session:
        row = session.execute(sa.select(_postback).where(_postback.c.id == postback_id)).one()
    assert (row.status, row.attempts, row.url, row.lease_until) == (
        PostbackStatus.PENDING,
        0,
        None,
        None,
    )
    assert row.offerwall_id == wall.id and row.next_attempt_at <= utcnow()


def test_the_value_object_lists_every_documented_macro():
    """The macro table for publishers, the value object and the renderer agree: a macro
    added to one of them and not the others fails here."""
    doc = (Path(__file__).parents[3] / "docs" / "publisher-integration.md").read_text()
    table = doc.split("| Macro | Value |", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"`\{([a-z_0-9]+)\}`", table))
    documented |= {"platform_sub2"}  # written as `{platform_sub1}` … `{platform_sub3}`
    fields = {field.name for field in dataclasses.fields(PostbackValues)}
    assert fields | {"hash_key"} == set(MACROS) == documented


def test_the_sample_and_a_real_delivery_fill_the_same_macros(engine, box, private_ok):
    with running_receiver() as receiver:
        wall = make_paying_offerwall(engine, box, postback_url=receiver.url + EVERY_MACRO)
        make_postback(engine, box, wall)
        _deliver(engine, box, private_ok)
        with new_session(engine) as session:
            ow = session.get(Offerwall, wall.id)
            assert ow is not None and ow.postback_url is not None
            api_key = api_keys.api_key(box=box, offerwall=ow)
            preview = trial.preview_url(template=ow.postback_url, offerwall=ow, api_key=api_key)
    [real] = receiver.queries()
    real_values, sample = dict(real), _macro_query(preview)
    # Both went through the same value object: the same macros, none left unfilled.
    assert set(real_values) == set(sample) == set(MACROS)
    assert not any("{" in value for value in [*real_values.values(), *sample.values()])
    # Money is written the same way (1.50 USD at 100 gems per dollar, no decimals).
    assert (real_values["payout"], real_values["payout_usd"]) == ("150", "1.5")
    assert (sample["payout"], sample["payout_usd"]) == ("150", "1.5")
    assert (real_values["uid"], real_values["clickid"], real_values["platform_sub1"]) == (
        "pub-p1",
        "ck-9",
        "s1",
    )
    assert sample["transaction_id"].startswith("test-")


def test_a_delivered_attempt_is_sent(engine, box, private_ok):
    with running_receiver() as receiver:
        attempt = _one_attempt(engine, box, private_ok, receiver.url + "/pb?tx={transaction_id}")
    assert attempt.status_code == 200 and attempt.sent is True


def test_an_attempt_that_failed_after_sending_is_sent(engine, box, private_ok):
    with running_receiver() as receiver:
        receiver.statuses = [500]
        attempt = _one_attempt(engine, box, private_ok, receiver.url + "/pb?tx={transaction_id}")
    assert attempt.status_code == 500 and attempt.sent is True
    assert len(receiver.requests) == 1


def test_a_refused_target_is_recorded_as_not_sent(engine, box, settings):
    with running_receiver() as receiver:
        # Loopback, with private addresses not allowed: refused before any request.
        attempt = _one_attempt(engine, box, settings, receiver.url + "/pb?tx={transaction_id}")
    assert receiver.requests == []
    assert attempt.sent is False and attempt.status_code is None
    assert "not a public address" in attempt.error


def test_a_postback_without_a_url_is_recorded_as_not_sent(engine, box, settings):
    attempt = _one_attempt(engine, box, settings, None)
    assert attempt.sent is False and attempt.error == "the offerwall has no postback URL"


def test_the_delivery_log_and_the_test_postback_say_whether_it_was_sent(engine, box, settings):
    with running_receiver() as receiver:
        wall = make_paying_offerwall(
            engine, box, postback_url=receiver.url + "/pb?tx={transaction_id}"
        )
        postback_id = make_postback(engine, box, wall)
        _deliver(engine, box, settings)  # refused: loopback is not allowed here
        with new_session(engine) as session:
            ow = session.get(Offerwall, wall.id)
            assert ow is not None
            postback = deliveries.owned_postback(
                session=session, offerwall=ow, postback_id=postback_id
            )
            [row] = deliveries.attempts(session=session, postback=postback)
        refused = trial.send_test_postback(settings=settings, box=box, offerwall=ow)
        allowed = settings.model_copy(update={"postback_allow_private": True})
        answered = trial.send_test_postback(settings=allowed, box=box, offerwall=ow)
    assert row.sent is False
    assert refused.sent is False and refused.status_code is None
    assert answered.sent is True and answered.status_code == 200
    assert len(receiver.requests) == 1
