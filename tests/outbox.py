"""Steps for postback tests: point an offerwall at a receiver, run a dispatcher, read the
outbox. Shared by the service tests of the outbox and the API tests that convert through
the signed endpoint."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import select

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.postbacks import Dispatcher
from api.postbacks.transport import http_client
from api.publishers import offerwalls
from api.worker import approve_held
from models import Postback, PostbackAttempt
from models.types import utcnow

# Every value the dispatcher fills, with the receiver's address as {base}.
TEMPLATE = (
    "{base}/pb?tx={transaction_id}&uid={uid}&mission={mission_id}&payout={payout}"
    "&usd={payout_usd}&cur={currency}&ts={timestamp}&sub={platform_sub1}&h={hash_key}"
)


def configure(engine: Engine, offerwall_id: str, url: str | None) -> None:
    """The offerwall pays 100 Gems per USD (no decimals) and posts back to `url`."""
    with write_session(engine) as session:
        ow = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        offerwalls.set_postback_url(session=session, offerwall=ow, url=url)
        offerwalls.set_currency(
            session=session, offerwall=ow, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )


def run_once(engine: Engine, box: SecretBox, settings: Settings, threads: int = 4) -> int:
    """One claim of a dispatcher, waited for until its attempts are recorded; how many."""
    dispatcher = Dispatcher(
        engine=engine,
        box=box,
        settings=settings,
        threads=threads,
        periodic=approve_held(engine),
    )
    with ThreadPoolExecutor(threads) as pool, http_client(settings) as http:
        return dispatcher.run_once(pool, http)


def make_due(engine: Engine) -> None:
    """Every postback is due now (its retry delay skipped)."""
    with write_session(engine) as session:
        session.execute(
            sa.update(Postback.__table__).values(next_attempt_at=utcnow() - timedelta(seconds=1))
        )


def postback_rows(engine: Engine) -> list[Postback]:
    with new_session(engine) as session:
        return list(session.exec(select(Postback).order_by(Postback.id)))


def attempt_rows(engine: Engine) -> list[PostbackAttempt]:
    with new_session(engine) as session:
        return list(session.exec(select(PostbackAttempt).order_by(PostbackAttempt.id)))
