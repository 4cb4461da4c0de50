"""What waits in each outbox (`read_outboxes`), read from the database when `/metrics` is
scraped: by the workers that deliver (`questwall worker --http-port`), not by every API
process, so N processes do not ask the database the same questions N times a scrape. The
staff's System page reads the same when it opens.

Only waiting messages are counted (the `status, next_attempt_at` index answers that); what
was delivered or given up is counted as it happens (`questwall_delivery_attempts_total`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine

from api.ops.probes import redis_client
from models import AlertMessage, MailMessage, Offerwall, Postback, WebhookEndpoint, WebhookMessage
from models.mail import MailStatus
from models.postbacks import PostbackStatus
from models.webhooks import EndpointStatus, MessageStatus

log = logging.getLogger(__name__)

# kind -> (table, the status of a message that still waits)
OUTBOX_TABLES: dict[str, tuple[Any, str]] = {
    "postback": (Postback, PostbackStatus.PENDING.value),
    "webhook": (WebhookMessage, MessageStatus.PENDING.value),
    "mail": (MailMessage, MailStatus.QUEUED.value),
    "alert": (AlertMessage, MailStatus.QUEUED.value),
}


class OutboxCollector(Collector):
    """questwall_outbox_messages{kind,state} (state: `due` now, or `scheduled` for a later
    attempt), questwall_outbox_oldest_pending_timestamp_seconds{kind} (made),
    questwall_outbox_oldest_due_timestamp_seconds{kind} (due, waiting for a worker) and
    questwall_endpoints_paused{kind}, as of the scrape; questwall_dependency_up says
    whether the database answered them, and whether Redis answers a ping (with
    `redis_url`)."""

    def __init__(
        self,
        engine: Engine,
        *,
        redis_url: str = "",
        timeout: float = 1.0,
        sendable: Mapping[str, Sequence[Any]] | None = None,
    ):
        self._engine = engine
        # What a dispatcher takes of each outbox's due messages (the dispatchers' own
        # clauses, handed down by the worker): the rest wait for something else.
        self._sendable = sendable
        self._redis = redis_client(redis_url, timeout) if redis_url else None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        messages = GaugeMetricFamily(
            "questwall_outbox_messages",
            "Messages waiting in each outbox, due now or scheduled for a later attempt.",
            labels=["kind", "state"],
        )
        oldest = GaugeMetricFamily(
            "questwall_outbox_oldest_pending_timestamp_seconds",
            "When the oldest message still waiting in each outbox was made (Unix time).",
            labels=["kind"],
        )
        oldest_due = GaugeMetricFamily(
            "questwall_outbox_oldest_due_timestamp_seconds",
            "Since when the longest-due message of each outbox has waited for a dispatcher "
            "(Unix time; not the messages of paused endpoints).",
            labels=["kind"],
        )
        paused = GaugeMetricFamily(
            "questwall_endpoints_paused",
            "Endpoints whose deliveries are paused after failing (offerwalls' postback "
            "URLs, games' webhooks).",
            labels=["kind"],
        )
        up = GaugeMetricFamily(
            "questwall_dependency_up",
            "Whether a dependency answered this scrape's questions (1) or not (0).",
            labels=["dependency"],
        )
        if self._redis is not None:
            up.add_metric(["redis"], self._redis_up())
        try:
            with self._engine.connect() as conn:
                read = read_outboxes(conn, sendable=self._sendable)
        except Exception as exc:  # a scrape answers even when the database does not
            log.warning("the outboxes could not be read: %s", type(exc).__name__)
            up.add_metric(["database"], 0)
            yield up
            return
        for kind, backlog in read.backlogs.items():
            messages.add_metric([kind, "due"], backlog.due)
            messages.add_metric([kind, "scheduled"], backlog.scheduled)
            if backlog.oldest is not None:
                oldest.add_metric([kind], backlog.oldest.timestamp())
            if backlog.oldest_due is not None:
                oldest_due.add_metric([kind], backlog.oldest_due.timestamp())
        for kind, count in read.paused.items():
            paused.add_metric([kind], count)
        up.add_metric(["database"], 1)
        yield from (messages, oldest, oldest_due, paused, up)

    def _redis_up(self) -> int:
        try:
            self._redis.ping()  # type: ignore[union-attr]
        except Exception as exc:  # down, refused, timed out: all say the same here
            log.warning("Redis did not answer a ping: %s", type(exc).__name__)
            return 0
        return 1


@dataclass(frozen=True)
class Backlog:
    """What waits in one outbox: messages due now, messages scheduled for a later attempt,
    and when the oldest of them was made (None: nothing waits)."""

    due: int
    scheduled: int
    oldest: datetime | None
    # Since when the longest-due message a dispatcher would send now has waited for one
    # (None: none is due); a paused endpoint's messages are not counted.
    oldest_due: datetime | None = None


@dataclass(frozen=True)
class Outboxes:
    """Every outbox's backlog (by kind: postback, webhook, mail, alert), and the endpoints
    whose deliveries are paused (postback: offerwalls' URLs, webhook: games' endpoints)."""

    backlogs: dict[str, Backlog]
    paused: dict[str, int]


_walls = Offerwall.__table__  # type: ignore[attr-defined]
_hooks = WebhookEndpoint.__table__  # type: ignore[attr-defined]


def _aware(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=moment.tzinfo or UTC) if moment is not None else None


def read_outboxes(
    conn: Connection,
    *,
    now: datetime | None = None,
    sendable: Mapping[str, Sequence[Any]] | None = None,
) -> Outboxes:
    """What waits in each outbox as of `now`: one query per outbox (on the `status,
    next_attempt_at` index) and one per kind of paused endpoint. The worker's `/metrics`
    and the staff's System page both read it."""
    now = now or datetime.now(UTC)
    backlogs = {}
    for kind, (table, waiting) in OUTBOX_TABLES.items():
        t = table.__table__
        due, scheduled, first, first_due = conn.execute(
            sa.select(
                sa.func.count().filter(t.c.next_attempt_at <= now),
                sa.func.count().filter(t.c.next_attempt_at > now),
                sa.func.min(t.c.created_at),
                sa.func.min(t.c.next_attempt_at).filter(
                    t.c.next_attempt_at <= now, *(sendable or {}).get(kind, ())
                ),
            ).where(t.c.status == waiting)
        ).one()
        backlogs[kind] = Backlog(due, scheduled, _aware(first), _aware(first_due))
    paused = {
        "postback": conn.execute(
            sa.select(sa.func.count()).where(_walls.c.deliveries_paused_at.is_not(None))
        ).scalar_one(),
        "webhook": conn.execute(
            sa.select(sa.func.count()).where(_hooks.c.status == EndpointStatus.PAUSED.value)
        ).scalar_one(),
    }
    return Outboxes(backlogs, paused)
