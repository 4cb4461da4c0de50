"""Prometheus metrics: what an operator graphs and alerts on (docs/operations.md#metrics).

Every metric is defined here, once, with a closed set of label values: routes are the
API's route templates, never raw paths, and no label carries an id of a publisher, game,
player or endpoint. The code that counts imports the metric it moves.

Several processes (`questwall api --workers N`, `questwall serve --workers N`) count into
one directory (`PROMETHEUS_MULTIPROC_DIR`, prometheus-client's multiprocess mode), which
the command that starts them empties first; a scrape of any of them adds every process's
counts up. A process started alone counts in its own memory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)
from sqlalchemy import Connection, Engine, event
from sqlalchemy.orm import Session
from sqlalchemy.pool import QueuePool

from api.core.config import PROJECT_ROOT

METRICS_PATH = "/metrics"
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
OTHER_ROUTE = "other"  # a path no API route matched: the portal's pages, a 404

BUILD_INFO = Gauge(
    "questwall_build_info",
    "The running code: its version and commit (always 1).",
    ["version", "commit"],
    multiprocess_mode="max",
)
HTTP_REQUESTS = Counter(
    "questwall_http_requests",
    "HTTP requests answered, by route template, method and status.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "questwall_http_request_duration_seconds",
    "Time from a request's arrival to its answer's last byte, by route template and method.",
    ["route", "method"],
    buckets=(0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
HTTP_IN_FLIGHT = Gauge(
    "questwall_http_requests_in_flight",
    "HTTP requests being answered now.",
    multiprocess_mode="livesum",
)

INGEST_ITEMS = Counter(
    "questwall_ingest_items",
    "Items of signed custom-events requests, by kind (event, identifier) and outcome "
    "(accepted, or the refusal's code).",
    ["kind", "outcome"],
)
SIGNED_REFUSED = Counter(
    "questwall_signed_requests_refused",
    "Signed requests refused as a whole, by the error's code (invalid_signature, ...).",
    ["reason"],
)
CLICKS = Counter(
    "questwall_clicks",
    "Tracking-link clicks, by outcome: redirected, or the refusal's reason.",
    ["outcome"],
)
CONVERSIONS = Counter(
    "questwall_conversions",
    "Conversions recorded, by the status they were recorded with (approved, pending).",
    ["status"],
)
MISSION_COMPLETIONS = Counter(
    "questwall_mission_completions",
    "Completions of a mission or a ladder's stage that made a conversion.",
)
RATE_LIMITED = Counter(
    "questwall_rate_limited",
    "Requests refused by a limit: ingest, reports, clicks_per_ip, clicks_per_uid, sign_in.",
    ["limit"],
)
DELIVERY_ATTEMPTS = Counter(
    "questwall_delivery_attempts",
    "Delivery attempts of each outbox (postback, webhook, mail, alert), by outcome: "
    "delivered, http_4xx, http_5xx, http_other, error (no answer), not_sent; mail: "
    "delivered, refused (for good), error.",
    ["kind", "outcome"],
)
DELIVERY_DURATION = Histogram(
    "questwall_delivery_attempt_duration_seconds",
    "How long one delivery attempt took, by outbox.",
    ["kind"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
DELIVERY_LAG = Histogram(
    "questwall_delivery_lag_seconds",
    "Time from a message's making to its first successful delivery, by outbox.",
    ["kind"],
    buckets=(1, 5, 15, 30, 60, 300, 900, 1800, 3600, 10800, 43200, 86400),
)
WORKER_HEARTBEAT = Gauge(
    "questwall_worker_heartbeat_timestamp_seconds",
    "When a `questwall worker` last went round its loop (Unix time; the latest of them).",
    multiprocess_mode="max",
)
DB_POOL = Gauge(
    "questwall_db_pool_connections",
    "Database connections of the serving processes' pools: in_use (checked out), idle "
    "(open, waiting in the pool), overflow (open beyond the pool's size; in_use or idle).",
    ["state"],
    multiprocess_mode="livesum",
)
OUTBOXES = ("postback", "webhook", "mail", "alert")
# Codes are the server's own (closed sets); anything else would be a bug, counted as such.
_CODE = re.compile(r"[a-z][a-z0-9_]{0,47}")


def code_label(code: object) -> str:
    return code if isinstance(code, str) and _CODE.fullmatch(code) else "other"


def count_attempt(
    kind: str,
    *,
    status_code: int | None,
    sent: bool,
    duration_seconds: float,
    outcome: str | None = None,
) -> None:
    """One delivery attempt of the `kind` outbox, counted once it is recorded; `outcome`
    names it outright where there is no HTTP status (mail: delivered, refused, error)."""
    if outcome is None:
        outcome = attempt_outcome(status_code, sent=sent)
    DELIVERY_ATTEMPTS.labels(kind=kind, outcome=outcome).inc()
    DELIVERY_DURATION.labels(kind=kind).observe(max(duration_seconds, 0.0))


def attempt_outcome(status_code: int | None, *, sent: bool) -> str:
    """An HTTP delivery attempt's outcome, as counted and logged."""
    if not sent:
        return "not_sent"
    if status_code is None:
        return "error"
    if 200 <= status_code < 300:
        return "delivered"
    if 400 <= status_code < 600:
        return f"http_{status_code // 100}xx"
    return "http_other"


_PENDING = "questwall.metrics.pending"


def count_on_commit(session: Session | Connection, child: Any, amount: float = 1) -> None:
    """Count `amount` on `child` (a metric with its labels) when the transaction that
    `session` runs commits; nothing if it rolls back (a retried transaction counts once)."""
    _on_commit(session, child.inc, amount)


def delivered_on_commit(
    session: Session | Connection, kind: str, made_at: datetime, now: datetime
) -> None:
    """A `kind` message made at `made_at` was delivered for the first time at `now`:
    questwall_delivery_lag_seconds, once the transaction that records it commits."""
    lag = (now - made_at).total_seconds()
    _on_commit(session, DELIVERY_LAG.labels(kind=kind).observe, max(lag, 0.0))


def _on_commit(session: Session | Connection, move: Any, amount: float) -> None:
    conn = session.connection() if isinstance(session, Session) else session
    conn.info.setdefault(_PENDING, []).append((move, amount))


@event.listens_for(Engine, "commit")
def _committed(conn: Connection) -> None:
    for move, amount in conn.info.pop(_PENDING, ()):
        move(amount)


@event.listens_for(Engine, "rollback")
def _rolled_back(conn: Connection) -> None:
    conn.info.pop(_PENDING, None)


def _version() -> str:
    try:
        return metadata.version("questwall")
    except metadata.PackageNotFoundError:
        return "unknown"


def _commit() -> str:
    """QUESTWALL_COMMIT when the deployment sets it, else the checkout's, else unknown."""
    if found := os.environ.get("QUESTWALL_COMMIT", "").strip():
        return found[:40]
    if not (PROJECT_ROOT / ".git").exists() or shutil.which("git") is None:
        return "unknown"
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],  # noqa: S607
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


BUILD_INFO.labels(version=_version(), commit=_commit()).set(1)

POOL_EVERY = 5.0  # seconds between two readings of a pool


def watch_pool(engine: Engine, every: float = POOL_EVERY) -> threading.Event | None:
    """Read `engine`'s pool every `every` seconds into questwall_db_pool_connections (a
    thread of this process; a reading costs nothing per request). Returns the event that
    stops it; None for a pool that keeps no count (NullPool)."""
    pool = engine.pool
    if not isinstance(pool, QueuePool):
        return None
    children = {state: DB_POOL.labels(state=state) for state in ("in_use", "idle", "overflow")}
    stop = threading.Event()

    def read() -> None:
        while True:
            children["in_use"].set(pool.checkedout())
            children["idle"].set(pool.checkedin())
            children["overflow"].set(max(pool.overflow(), 0))
            if stop.wait(every):
                return

    threading.Thread(target=read, name="pool-metrics", daemon=True).start()
    return stop


def fresh_metrics_directory(path: Path) -> Path:
    """Make `path` the empty directory several processes count into (what an earlier run
    left there is gone); the processes started from here on find it in the environment."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.environ[MULTIPROCESS_VARIABLE] = str(path)
    return path


def _multiprocess_directory() -> Path | None:
    """The directory this process counts into, if it counts into one."""
    if isinstance(values.ValueClass, type) and values.ValueClass is values.MutexValue:
        return None  # prometheus-client chose memory when it was imported
    found = os.environ.get(MULTIPROCESS_VARIABLE)
    return Path(found) if found else None


def _forget_dead_processes(directory: Path) -> None:
    """A process that is gone no longer counts in the live gauges (in flight); its
    counters stay: what it counted happened."""
    for found in directory.glob("gauge_live*_*.db"):
        try:
            pid = int(found.stem.rsplit("_", 1)[1])
            os.kill(pid, 0)
        except ValueError:
            continue
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, str(directory))
        except PermissionError:
            continue


_READ_AT_SCRAPE = CollectorRegistry(auto_describe=True)


def read_at_scrape(collector: Any) -> None:
    """Add a collector that reads its figures when `/metrics` is scraped (the outboxes,
    in a worker), in this process's answer only."""
    _READ_AT_SCRAPE.register(collector)


def exposition() -> bytes:
    """Every metric in the Prometheus text format: all the processes' when they share a
    directory, else this process's; then what this process reads at scrape time."""
    directory = _multiprocess_directory()
    if directory is None:
        counted = generate_latest(REGISTRY)
    else:
        _forget_dead_processes(directory)
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=str(directory))
        counted = generate_latest(registry)
    return counted + generate_latest(_READ_AT_SCRAPE)
