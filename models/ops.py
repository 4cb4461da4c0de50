"""What the System page reads of the processes themselves: each process that delivers the
outboxes and when it last said it was alive, and each `questwall prune` and what it
removed (api/ops/workers.py, api/ops/prune_runs.py)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, UTCDateTime, utcnow


class WorkerHeartbeat(SQLModel, table=True):
    """One process that runs the dispatchers: `questwall serve`'s (each of its backend
    processes) or a `questwall worker`. Written once a minute by its heartbeat."""

    __tablename__ = "worker_heartbeat"

    # "host:pid": a process that comes back with the same host and pid takes its row over.
    id: str = Field(primary_key=True, max_length=200)
    kind: str = Field(max_length=16)  # "serve" or "worker"
    # What it delivers, in words: "postbacks, webhooks, mail, alerts".
    delivers: str = Field(max_length=100)
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    last_beat_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class PruneRun(SQLModel, table=True):
    """One `questwall prune` that ran to its end, and how many rows it removed."""

    __tablename__ = "prune_run"

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    finished_at: datetime = Field(sa_type=UTCDateTime, nullable=False, index=True)
    # Expired records: retries, idempotency keys, sessions, reset links, sent mail, …
    # Counts as BIGINT: a month of events dropped at once can pass 2^31.
    records: int = Field(sa_type=sa.BigInteger)
    events: int = Field(sa_type=sa.BigInteger)
    # Refused clicks and events set aside by anti-cheat rules.
    refused: int = Field(sa_type=sa.BigInteger)
